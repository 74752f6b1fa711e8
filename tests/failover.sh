#!/bin/sh
# failover.sh - the Redis Cluster failover test, RUNS times in a row (default
# 20; `make test-failover`): each run a fresh deployment on a private
# cluster (tests/redis-cluster-tmp.sh: 3 masters + 3 replicas), a workload of
# acknowledged statements, kill -9 of a master in the middle of it, its
# replica takes over, the killed node comes back as a replica; every
# acknowledged statement must be there and the client must see no error
# (it_proxy test_cluster_failover).  Stops at the first failure.
#
# Environment: LWC_BIN, LWC_TESTS (as tests/run.sh), RUNS, and
# LWC_FAILOVER_ROUNDS (kills per run, default 1).
set -eu

: "${LWC_BIN:=bin}"
: "${LWC_TESTS:=build/release/tests}"
: "${RUNS:=20}"
export LWC_BIN

rcdir=$(mktemp -d /tmp/lwc-rc-XXXXXX)
cleanup() { sh tests/redis-cluster-tmp.sh stop "$rcdir/c" >/dev/null 2>&1 || true; rm -rf "$rcdir"; }
trap cleanup EXIT INT TERM
echo "== starting a private Redis Cluster, 3 masters + 3 replicas ($rcdir/c)"
LWC_TEST_REDIS=$(sh tests/redis-cluster-tmp.sh start "$rcdir/c" 3 1)
LWC_TEST_REDIS_DIR=$rcdir/c
export LWC_TEST_REDIS LWC_TEST_REDIS_DIR

i=1
start=$(date +%s)
while [ "$i" -le "$RUNS" ]; do
	echo "== failover run $i of $RUNS"
	if ! LWC_TEST_BACKEND=redis LWC_TEST_FILTER=test_cluster_failover \
		"$LWC_TESTS/it_proxy"; then
		echo "FAILED: failover run $i of $RUNS"
		exit 1
	fi
	i=$((i + 1))
done
echo "failover test passed $RUNS times in a row ($(($(date +%s) - start)) s)"
