#!/bin/bash
# watch.sh LOG OUT: per-process CPU and a perf profile over seconds 1-5 of the 64-client phase
LOG=$1; OUT=$2
until grep -qE "^ +1 +[0-9]+ " "$LOG" 2>/dev/null; do sleep 0.1; done; sleep 1.5
snap() { for n in lwc-proxy lwc-cloudstore lwc-bench; do for p in $(pgrep -x $n); do echo "$n $p $(awk '{print $14, $15}' /proc/$p/stat)"; done; done; }
snap > $OUT.a; t0=$(date +%s.%N)
perf record -a -g -o $OUT.perf -- sleep 3 > /dev/null 2>&1
snap > $OUT.b; t1=$(date +%s.%N)
echo "secs $(echo "$t1 - $t0" | bc)" >> $OUT.b
