#!/bin/sh
cd /work/main
for r in 1 2; do
  for v in def bt0; do
    if [ $v = bt0 ]; then a="--block-threads 0"; else a=""; fi
    bin/lwc-bench --records 1000000 --store log --only load,reloc,clients --clients 1,64 --serve-args "$a" \
      --tag bt-$v-$r --out /work/tmp/bt/out --img /work/tmp/bt/img > /work/tmp/bt/$v-$r.log 2>&1
  done
done
echo finished > /work/tmp/bt/done
