#!/bin/sh
# audit.sh - lwc-audit (bench/lwc_audit.c) against a fresh private
# deployment: scripts/lwc-local up in a temporary directory on a free pair of
# loopback ports, lwc-audit run with the cloud store's trace and the proxy's
# state directory, and the deployment stopped and removed whatever happens.
#
#   scripts/audit.sh [LWC-AUDIT OPTION...]     e.g. --check --json out.json
#
# The options go to `lwc-audit run` (--key, --trace and --state are given
# here).  Exit status: lwc-audit's (0; 1 when --check found a figure over its
# threshold; 2 for errors).
#
# Environment: LWC_BIN (binaries, default bin/), AUDIT_INIT_ARGS (options of
# `lwc-proxy init`, e.g. "--relocate off" to compare), AUDIT_PROXY_ARGS
# (options of `lwc-proxy serve`, e.g. "--pad pow2"), AUDIT_KEEP=1 keeps the
# deployment's directory (logs, trace) after stopping it.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
: "${LWC_BIN:=$here/bin}"
case $LWC_BIN in /*) ;; *) LWC_BIN=$PWD/$LWC_BIN ;; esac
export LWC_BIN
if [ ! -x "$LWC_BIN/lwc-audit" ]; then
	echo "audit: $LWC_BIN/lwc-audit is missing; run 'make' first" >&2
	exit 2
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/lwc-audit-XXXXXX")
port=$("$here/scripts/free-port" 2)
if [ -z "$port" ]; then
	echo "audit: no free pair of loopback ports" >&2
	exit 2
fi

cleanup() {
	"$here/scripts/lwc-local" down --dir "$dir" >/dev/null 2>&1 || true
	if [ -n "${AUDIT_KEEP:-}" ]; then
		echo "audit: the deployment's directory is kept: $dir" >&2
	else
		rm -rf "$dir"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the servers' own messages, when something goes wrong
logs() {
	for f in proxy.log cloudstore.log; do
		if [ -s "$dir/$f" ]; then
			echo "audit: the last lines of $f:" >&2
			tail -n 15 "$dir/$f" >&2
		fi
	done
}

if ! LWC_INIT_ARGS="${AUDIT_INIT_ARGS:-}" LWC_PROXY_ARGS="${AUDIT_PROXY_ARGS:-}" \
	"$here/scripts/lwc-local" up --dir "$dir" --port-base "$port" >/dev/null; then
	echo "audit: the deployment did not start (lwc-proxy init options: '${AUDIT_INIT_ARGS:-}'," \
		"serve options: '${AUDIT_PROXY_ARGS:-}')" >&2
	logs
	exit 2
fi
echo "audit: deployment in $dir (ports $port, $((port + 1)))${AUDIT_INIT_ARGS:+, init $AUDIT_INIT_ARGS}${AUDIT_PROXY_ARGS:+, serve $AUDIT_PROXY_ARGS}" >&2

rc=0
"$LWC_BIN/lwc-audit" run --key "$dir/users/admin.key" --trace "$dir/cloudstore.trace" \
	--state "$dir/proxy" "$@" || rc=$?
[ "$rc" -le 1 ] || logs
exit "$rc"
