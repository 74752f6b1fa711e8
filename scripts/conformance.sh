#!/bin/sh
# conformance.sh - `make conformance`: the sqllogictest corpus of
# ../shared/conformance through `lwc --json-lines`, against a fresh local
# deployment that is stopped and removed whatever the outcome.
#
#   scripts/conformance.sh [RUN.PY OPTION...]   run every file (exit 0: all passed)
#   scripts/conformance.sh --engine KEYFILE the engine run.py starts per file
#
# Environment: LWC_BIN (binaries, default bin/), CONFORMANCE_DIR (default
# ../shared/conformance), CONF_STATE (deployment directory; default a new
# temporary one), CONF_PORT (first of two ports; default a free pair), so
# that runs side by side do not meet.
#
# sqllogictest expects every file to start on an empty database and not
# every file of the corpus drops what it creates; run.py starts one engine
# process per file, so the engine drops every table first, then becomes
# `lwc --json-lines`.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
: "${LWC_BIN:=$here/bin}"
case $LWC_BIN in /*) ;; *) LWC_BIN=$PWD/$LWC_BIN ;; esac
export LWC_BIN
lwc=$LWC_BIN/lwc

if [ "${1:-}" = "--engine" ]; then
	key=$2
	# \d in unaligned tuples-only form prints "name|table" per table
	"$lwc" --key "$key" -A -t -c '\d' |
		sed -n 's/|table$//p' |
		sed 's/"/""/g; s/.*/DROP TABLE "&";/' |
		"$lwc" --key "$key" -q -f - >&2
	exec "$lwc" --key "$key" --json-lines
fi

cdir=${CONFORMANCE_DIR:-$here/../shared/conformance}
if [ ! -f "$cdir/run.py" ]; then
	echo "conformance: no $cdir/run.py (set CONFORMANCE_DIR)" >&2
	exit 1
fi
cdir=$(cd "$cdir" && pwd)
state=${CONF_STATE:-}
own_state=
if [ -z "$state" ]; then
	state=$(mktemp -d "${TMPDIR:-/tmp}/lwc-conformance-XXXXXX")
	own_state=1
else
	rm -rf "$state"
fi
port=${CONF_PORT:-}
if [ -z "$port" ]; then
	port=$("$here/scripts/free-port" 2)
fi

cleanup() {
	"$here/scripts/lwc-local" down --dir "$state" >/dev/null 2>&1 || true
	[ -z "$own_state" ] || rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$here/scripts/lwc-local" up --dir "$state" --port-base "$port" >/dev/null
echo "conformance: deployment in $state (ports $port, $((port + 1)))"
python3 "$cdir/run.py" --name postgresql \
	--engine "sh $here/scripts/conformance.sh --engine $state/users/admin.key" \
	"$@" "$cdir"/*.test
