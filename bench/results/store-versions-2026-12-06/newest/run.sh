#!/bin/bash
# run.sh ROUNDS: lwc-bench --only load,select, the same build with and without LWC_NEWEST_ONLY, alternating
B=/work/tmp/wt-sp/bin/lwc-bench
for r in $(seq ${2:-1} $1); do
  for m in two newest; do
    if [ $m = newest ]; then export LWC_NEWEST_ONLY=1; else unset LWC_NEWEST_ONLY; fi
    $B --records 1000000 --store log --only load,select --tag nw-$m-$r --out /work/tmp/newest/$m-$r --img /work/tmp/newest/img > /work/tmp/newest/$m-$r.log 2>&1
    echo "$m $r rc $?"
  done
done
