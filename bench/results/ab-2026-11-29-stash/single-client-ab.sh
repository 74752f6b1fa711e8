#!/bin/bash
# A/B of proxies on one kept deployment: warm the stash, then alternate builds, ROUNDS rounds of 100 random c100 SELECTs each
D=$1; ROUNDS=$2; shift 2
cd $D
LISTEN=$(tr '\0' ' ' < /proc/$(cat proxy.pid)/cmdline | sed 's/.*--listen \([^ ]*\).*/\1/')
start() { kill -TERM $(cat proxy.pid) 2>/dev/null; while pgrep -f "lwc-proxy serve --state $D/proxy" >/dev/null; do sleep 0.2; done
  (nohup $1/lwc-proxy serve --state $D/proxy --listen $LISTEN > /dev/null 2>&1 &); sleep 1.5; pgrep -f "lwc-proxy serve --state $D/proxy" > proxy.pid; }
st() { /work/tmp/binS/lwc-proxy status --state proxy 2>/dev/null | awk -v k=$1 '$1==k{print $2}'; }
V=700; for r in $(seq 1 $ROUNDS); do
  for b in "$@"; do
    start $b
    python3 -c "
import random
print(''.join(f'SELECT COUNT(*) FROM clus WHERE c100 = {v};\n' for v in range($V, $V+50)))" > /tmp/ab.sql
    pid=$(cat proxy.pid); c0=$(awk '{print $14+$15}' /proc/$pid/stat); b0=$(st blocks_moved); t0=$(date +%s.%N)
    /work/tmp/binS/lwc --key users/admin.key -q -A -t -f /tmp/ab.sql > /dev/null; V=$((V+50))
    t1=$(date +%s.%N); c1=$(awk '{print $14+$15}' /proc/$pid/stat); b1=$(st blocks_moved)
    echo "round $r $(basename $b): $(python3 -c "print(round(($t1-$t0)*20,2))") ms/stmt, proxy CPU $(( (c1-c0)*10*1000/50 )) us/stmt (ticks), blocks/stmt $(( (b1-b0)/50 )), stash $(st stash_rows)"
  done
done
