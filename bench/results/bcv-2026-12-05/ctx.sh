#!/bin/bash
# ctx.sh BINDIR LABEL: 64-client phase; the proxy's context switches and CPU over 4 s of it
B=$1; L=$2; LOG=/work/tmp/ctx-$L.log
cd /work/main && $B/lwc-bench --root /work/main --bin $B --records 1000000 --store log --only load,reloc,clients --clients 1,64 \
  --tag ctx-$L --out /work/tmp/ctx/out --img /work/tmp/ctx/img > $LOG 2>&1 &
until grep -qE "^ +1 +[0-9]+ " "$LOG" 2>/dev/null; do sleep 0.1; done; sleep 1.5
P=$(pgrep -x lwc-proxy)
snap() { cat /proc/$P/task/*/status | awk '/^voluntary/ {v+=$2} /^nonvoluntary/ {n+=$2} END {print v, n}'; awk '{print $14+$15}' /proc/$P/stat; }
a=$(snap); sleep 4; b=$(snap)
echo "$L before: $a after: $b" | tr '\n' ' '; echo
wait
grep -E "^ +64 " $LOG
