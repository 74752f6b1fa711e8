#!/bin/bash
# prof64.sh [OUT]: the 64-client phase profiled system-wide (run from the repository's root)
O=${1:-/tmp/prof64}; mkdir -p $O/out $O/img
bin/lwc-bench --records 1000000 --store log --only load,reloc,clients --clients 1,64 --tag prof64 \
	--out $O/out --img $O/img > $O/bench.log 2>&1 &
B=$!
# wait for the one-client line of the clients table
while ! grep -q "^ *1 " $O/bench.log 2>/dev/null; do sleep 0.5; kill -0 $B || exit 1; done
sleep 2
perf record -a -g -F 499 -o $O/perf.data -- sleep 6 > $O/perf.out 2>&1
wait $B
