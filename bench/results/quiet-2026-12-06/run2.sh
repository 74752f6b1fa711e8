#!/bin/bash
# run2.sh R0 R1: lwc-bench --only load,select,modify with --pg-quiet off and on, alternating
for r in $(seq $1 $2); do
  for m in off on; do
    /work/main/bin/lwc-bench --records 1000000 --store log --only load,select,modify --quiet-start $m --tag qs-$m-$r --out /work/tmp/pq/$m-$r --img /work/tmp/pq/img > /work/tmp/pq/$m-$r.log 2>&1
    echo "$m $r rc $? $(date +%T)"
  done
done
