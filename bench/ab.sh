#!/bin/sh
# ab.sh - before/after of two builds on the same machine: lwc-bench with
# each build's binaries in turn, alternating (old, new, old, new ...), so
# that the machine's drift falls on both.  PostgreSQL runs in every round.
#
#   sh bench/ab.sh OLD_BIN NEW_BIN [ROUNDS] [-- lwc-bench options]
#
# OLD_BIN, NEW_BIN: directories holding lwc, lwc-proxy, lwc-cloudstore (a
# `make build` of each commit, e.g. a `git worktree` of the old one).  Each
# build's own lwc-bench drives it when the directory has one (lwc-bench
# links liblwc: the client is part of what is compared), else this tree's.
# Results: $AB_OUT, default bench/results/ab/ (one JSON per run, tags ab-old-R and
# ab-new-R), logs beside them.
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: sh bench/ab.sh OLD_BIN NEW_BIN [ROUNDS] [-- lwc-bench options]" >&2; exit 2; }
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
shift 2
rounds=2
if [ $# -gt 0 ] && [ "$1" != "--" ]; then rounds=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
out=${AB_OUT:-bench/results/ab}
mkdir -p "$out" "$out/img"
r=1
while [ "$r" -le "$rounds" ]; do
	for v in old new; do
		if [ "$v" = old ]; then b=$old; else b=$new; fi
		echo "ab.sh: round $r, $v ($b)"
		drv=bin/lwc-bench
		[ -x "$b/lwc-bench" ] && drv=$b/lwc-bench
		"$drv" --root "$PWD" --bin "$b" --tag "ab-$v-$r" --out "$out" --img "$out/img" "$@" \
			> "$out/ab-$v-$r.log" 2>&1
	done
	r=$((r + 1))
done
echo "ab.sh: logs and JSON in $out"
