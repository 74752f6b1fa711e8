#!/bin/sh
L=$1; shift
rm -f /tmp/mu-stats.txt
cd /work/tmp/wt-i2 && bin/lwc-bench --records 1000000 --store log --only load,reloc,clients --clients 1,64 \
  --tag "mu-$L" --out /work/tmp/th/out --img /work/tmp/th/img "$@" > /work/tmp/th/mu-$L.log 2>&1
cp /tmp/mu-stats.txt /work/tmp/th/mu-$L.txt
