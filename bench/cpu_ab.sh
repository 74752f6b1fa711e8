#!/bin/bash
# cpu_ab.sh - the CPU two builds spend on the same statements: for each
# round and build (alternating old, new), a fresh N-row deployment loaded by
# `lwc-bench --only load --keep`, then fixed statements through the build's
# shell (clustered 100k-row SELECTs, scattered 10k, clustered 1M), and the
# CPU time the proxy and the cloud store used for each group, from
# /proc/PID/stat.  On a VM whose speed drifts between runs, CPU seconds move
# less than latencies (the fixed statements read the same blocks in both
# builds; relocation is off for statements this large).
#
#   bash bench/cpu_ab.sh OLD_BIN NEW_BIN [ROUNDS] [RECORDS]
#
# CPU_AB_STORE=log: the cloud store's engine (lwc-bench --store; default
# lmdb).  The CPU is read once the servers are idle again (CPU_AB_SETTLE
# seconds after a group, default 2), so that what a group set going in the
# background (the log store's compaction) counts for it; the wall time is
# the statements' own.  CPU_AB_PASSES=N runs the groups N times over on
# each deployment (default 1): the later passes see a store in its steady
# state (the log store compacting as it writes).
#
# Output: one line per build, round and group (wall seconds, proxy and store
# CPU seconds), then the totals of each build; results in $CPU_AB_OUT
# (default bench/results/cpu-ab).
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bash bench/cpu_ab.sh OLD_BIN NEW_BIN [ROUNDS] [RECORDS]" >&2; exit 2; }
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
rounds=${3:-2}
records=${4:-1000000}
out=${CPU_AB_OUT:-bench/results/cpu-ab}
mkdir -p "$out"
hz=$(getconf CLK_TCK)

cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

one() { # build-dir label
	local b=$1 tag=$2 keep dir pgdir key px cs
	keep=$(bin/lwc-bench --records "$records" --only load --tag "cpu-$tag" --out "$out" \
		--img "$out" --root "$PWD" --bin "$b" --store "${CPU_AB_STORE:-lmdb}" --keep 2>&1 |
		grep -- '--keep:')
	dir=$(echo "$keep" | sed 's/.*LWC in \([^ ,]*\),.*/\1/')
	pgdir=$(echo "$keep" | sed 's/.*PostgreSQL in \([^ ]*\) .*/\1/')
	key=$dir/users/admin.key
	px=$(cat "$dir/proxy.pid")
	cs=$(cat "$dir/cloudstore.pid")
	group() { # label sql...
		local lab=$1 p0 c0 t0 p1 c1 t1
		shift
		p0=$(cpu "$px"); c0=$(cpu "$cs"); t0=$(date +%s.%N)
		for q in "$@"; do
			"$b/lwc" --key "$key" -q -A -t -c "$q" > /dev/null
		done
		t1=$(date +%s.%N)
		sleep "${CPU_AB_SETTLE:-2}"
		p1=$(cpu "$px"); c1=$(cpu "$cs")
		awk -v tag="$tag" -v lab="$lab" -v w="$(echo "$t1 - $t0" | bc)" \
			-v p=$((p1 - p0)) -v c=$((c1 - c0)) -v hz="$hz" \
			'BEGIN { printf "%-6s %-10s wall %6.2f s  proxy %6.2f s  store %6.2f s  cpu %6.2f s\n",
				 tag, lab, w, p / hz, c / hz, (p + c) / hz }'
	}
	for pass in $(seq 1 "${CPU_AB_PASSES:-1}"); do
		group clus100k "SELECT * FROM clus WHERE c100k = 0" \
			"SELECT * FROM clus WHERE c100k = 1" "SELECT * FROM clus WHERE c100k = 2" \
			"SELECT * FROM clus WHERE c100k = 3" "SELECT * FROM clus WHERE c100k = 4" \
			"SELECT * FROM clus WHERE c100k = 5"
		group scat10k "SELECT * FROM scat WHERE c10k = 1" \
			"SELECT * FROM scat WHERE c10k = 2" "SELECT * FROM scat WHERE c10k = 3" \
			"SELECT * FROM scat WHERE c10k = 4"
		group clus1m "SELECT * FROM clus WHERE c1m = 0"
	done
	kill "$px" "$cs" 2>/dev/null || true
	sleep 1
	sh tests/pg-tmp.sh stop "$pgdir" > /dev/null 2>&1 || true
	rm -rf "$(dirname "$dir")" "$pgdir"
}

r=1
while [ "$r" -le "$rounds" ]; do
	one "$old" "old-$r"
	one "$new" "new-$r"
	r=$((r + 1))
done | tee "$out/cpu-ab.txt"
awk '{ split($1, t, "-"); w[t[1]] += $4; p[t[1]] += $7; c[t[1]] += $10 }
     END { for (k in w) printf "%-4s total: wall %7.2f s  proxy %7.2f s  store %7.2f s  cpu %7.2f s\n",
	   k, w[k], p[k], c[k], p[k] + c[k] }' "$out/cpu-ab.txt" | sort -r | tee -a "$out/cpu-ab.txt"
