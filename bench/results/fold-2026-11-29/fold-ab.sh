#!/bin/sh
# fold-ab.sh - the journal fold's before/after of 29 November 2026, on a kept
# deployment (lwc-bench --only load --keep): proxy builds alternate on the same
# state, each running 250 SELECTs of 1,000-row ranges through the shell; the
# proxy's status after each run gives the folds, their mean time and the
# commit's (the counters start with the proxy).
#
#   sh fold-ab.sh first|again LWC_DIR OLD_BIN NEW_BIN [ROUNDS]
#
# first: ranges never read before (each run takes the next 250 values of
# c1k, so ROUNDS <= 2); again: values spread over all 1,000 (after a few
# hundred statements, ranges read before: a block a row).  The two workloads
# of results.txt are these two modes (its runs used two copies of this loop).
set -eu
mode=$1 D=$2 old=$3 new=$4 rounds=${5:-2}
port=$(grep px_port "$D/ports" | cut -d= -f2)
run=0
for r in $(seq 1 "$rounds"); do
for B in "$old" "$new"; do
	kill -TERM "$(cat "$D/proxy.pid")" 2>/dev/null || true
	while kill -0 "$(cat "$D/proxy.pid")" 2>/dev/null; do sleep 0.1; done
	"$B/lwc-proxy" serve --state "$D/proxy" --listen "127.0.0.1:$port" >> "$D/proxy.log" 2>&1 &
	echo $! > "$D/proxy.pid"
	for i in $(seq 1 50); do
		"$B/lwc" --key "$D/users/admin.key" -q -c "SELECT 1" >/dev/null 2>&1 && break
		sleep 0.1
	done
	q=$(mktemp) t=$(mktemp)
	{
		printf '%s\n' '\timing on'
		for i in $(seq 1 250); do
			if [ "$mode" = first ]; then v=$((run * 250 + i))
			else v=$(( (r * 7919 + i * 613 + run * 500) % 999 + 1 )); fi
			echo "SELECT * FROM clus WHERE c1k = $v;"
		done
	} > "$q"
	run=$((run + 1))
	t0=$(date +%s.%N)
	"$B/lwc" --key "$D/users/admin.key" -q -A -t -f "$q" | awk '/^Time/ {print $2}' > "$t"
	t1=$(date +%s.%N)
	st=$("$B/lwc-proxy" status --state "$D/proxy" |
	     grep -E "journal_folds|journal_fold_ms_avg|commit_ms_avg" | tr -s ' ' | tr '\n' ' ')
	sort -n "$t" | awk -v r="$r" -v b="$B" -v w="$(echo "$t1 - $t0" | bc)" -v st="$st" \
	    '{a[NR] = $1} END {printf "round %s bin %s wall %s med %s p99 %s max %s %s\n",
	      r, b, w, a[int(NR / 2)], a[int(NR * 0.99)], a[NR], st}'
	rm -f "$q" "$t"
done; done
