#!/bin/bash
# pos-ab.sh LWC_DIR OLD_BIN NEW_BIN [ROUNDS] - a kept deployment's proxy
# (lwc-bench --only load --keep) run by two builds in turn on the same
# state, two clustered 1M SELECTs each (SELECT count(*) FROM clus WHERE
# c1m = 0), printing each statement's wall time and the proxy's CPU ticks.
# Used for the plan's positions read in order (29 November 2026, last).
set -eu
d=$1 old=$2 new=$3 rounds=${4:-3}
cd "$d"
. ./ports
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
run_px() {
	kill "$(cat proxy.pid)" 2>/dev/null || true
	while kill -0 "$(cat proxy.pid)" 2>/dev/null; do sleep 0.2; done
	"$1/lwc-proxy" serve --state "$d/proxy" --listen "127.0.0.1:$px_port" >> proxy.log 2>&1 &
	echo $! > proxy.pid
	sleep 1.5
}
for r in $(seq "$rounds"); do
	for b in old new; do
		if [ "$b" = old ]; then bin=$old; else bin=$new; fi
		run_px "$bin"
		p=$(cat proxy.pid)
		for i in 1 2; do
			c0=$(cpu "$p"); s=$(date +%s.%N)
			"$new/lwc" --key users/admin.key -q -A -t -c "SELECT count(*) FROM clus WHERE c1m = 0" > /dev/null
			e=$(date +%s.%N); c1=$(cpu "$p")
			echo "$b wall $(echo "$e - $s" | bc) proxy_cpu_ticks $((c1 - c0))"
		done
	done
done
