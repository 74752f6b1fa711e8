#!/bin/sh
# $1 = label, rest = extra lwc-bench args
L=$1; shift
cd /work/main && bin/lwc-bench --records 1000000 --store log --only load,reloc,clients --clients 1,64 \
  --tag "th-$L" --out /work/tmp/th/out --img /work/tmp/th/img "$@" > /work/tmp/th/$L.log 2>&1
