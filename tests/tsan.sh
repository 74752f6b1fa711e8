#!/bin/sh
# tsan.sh - `make tsan`: the unit tests and the integration suites that
# drive the threads of the proxy (its block pool, READ ahead, WRITE behind,
# 32 concurrent clients, kill -9), of the cloud store and of the client
# (an INSERT's and an UPDATE's two halves), built with ThreadSanitizer, on
# LMDB, and the store's suite on the appending log store.  Every process writes its reports to a directory of its own; any
# report fails the run.
#
# Environment: LWC_BIN, LWC_TESTS (the tsan build's binaries and tests).
set -eu

: "${LWC_BIN:=build/tsan/bin}"
: "${LWC_TESTS:=build/tsan/tests}"
export LWC_BIN

dir=$(mktemp -d /tmp/lwc-tsan-XXXXXX)
export TSAN_OPTIONS="log_path=$dir/tsan:halt_on_error=0:second_deadlock_stack=1"
failed=0

. "$(dirname "$0")/lib.sh"

for t in "$LWC_TESTS"/test_*; do
	[ -x "$t" ] || continue
	run "unit $(basename "$t")" "$t"
done
for t in it_client it_cloudstore it_proxy it_diff; do
	run "integration $t [lmdb]" env LWC_TEST_BACKEND=lmdb "$LWC_TESTS/$t"
done
# the appending log store's writer, group commit and compaction threads
run "integration it_cloudstore [log]" env LWC_TEST_BACKEND=log "$LWC_TESTS/it_cloudstore"

if [ -n "$(ls -A "$dir")" ]; then
	echo "== ThreadSanitizer reports:"
	cat "$dir"/*
	failed=$((failed + 1))
else
	echo "== no ThreadSanitizer reports"
fi
rm -rf "$dir"
if [ "$failed" -ne 0 ]; then
	echo "$failed test program(s) FAILED under ThreadSanitizer"
	exit 1
fi
echo "all tests passed under ThreadSanitizer"
