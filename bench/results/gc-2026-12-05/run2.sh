#!/bin/sh
# $1 = label, $2 = repo root, $3 = serve args
cd "$2" && bin/lwc-bench --records 1000000 --store log --only load,reloc,clients --clients 1,64 \
  --serve-args "$3" --tag "exp-$1" --out /work/tmp/exp1/out --img /work/tmp/exp1/img > /work/tmp/exp1/$1.log 2>&1
