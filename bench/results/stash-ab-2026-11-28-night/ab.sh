cd /work/main
mkdir -p /work/tmp/ab
for r in 1 2; do
 for v in d s8; do
  if [ $v = s8 ]; then sa="--serve-args --stash-max=8192"; fi
  if [ $v = s8 ]; then
    bin/lwc-bench --records 1000000 --only load,clients --serve-args "--stash-max 8192" --tag ab-$v-$r --out /work/tmp/ab --img /work/tmp/ab --root $PWD --bin /work/tmp/binH > /work/tmp/ab/ab-$v-$r.log 2>&1
  else
    bin/lwc-bench --records 1000000 --only load,clients --tag ab-$v-$r --out /work/tmp/ab --img /work/tmp/ab --root $PWD --bin /work/tmp/binH > /work/tmp/ab/ab-$v-$r.log 2>&1
  fi
 done
done
echo done > /work/tmp/ab/DONE
