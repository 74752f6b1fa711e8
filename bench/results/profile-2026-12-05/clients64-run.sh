#!/bin/sh
# profile the 64-client phase: lwc-bench in the background, perf on both servers
cd /work/main
bin/lwc-bench --records 1000000 --store log --only load,reloc,clients --clients 1,64 --client-seconds 20 \
  --tag prof --out /work/tmp/prof/out --img /work/tmp/prof/img > /work/tmp/prof/bench.log 2>&1 &
B=$!
while ! grep -q "64 LWC clients" /work/tmp/prof/bench.log 2>/dev/null; do sleep 0.5; kill -0 $B 2>/dev/null || exit 1; done
sleep 3
P=$(pgrep -f "lwc-proxy serve" | head -1); C=$(pgrep -f "lwc-cloudstore" | head -1)
echo "proxy $P store $C" > /work/tmp/prof/pids
perf record -F 999 -g -p $P,$C -o /work/tmp/prof/perf.data -- sleep 12 > /work/tmp/prof/perf.out 2>&1
wait $B
echo done >> /work/tmp/prof/pids
