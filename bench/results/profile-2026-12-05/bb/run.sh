#!/bin/sh
cd /work/main
for r in 1 2; do
  for v in def b512; do
    if [ $v = b512 ]; then a="--batch-blocks 512"; else a=""; fi
    bin/lwc-bench --records 1000000 --store log --only load,select --serve-args "$a" \
      --tag bb-$v-$r --out /work/tmp/bb/out --img /work/tmp/bb/img > /work/tmp/bb/$v-$r.log 2>&1
  done
done
echo finished > /work/tmp/bb/done
