#!/bin/sh
# $1 label, $2 LWC_EXP_SYNC value ('' none), rest lwc-bench args; instrumented build
L=$1; X=$2; shift 2
rm -f /tmp/ins.txt
cd /work/tmp/wt-ins && LWC_EXP_SYNC=$X bin/lwc-bench --records 1000000 --store log --only load,reloc,clients --clients 1,64 \
  --tag "th-$L" --out /work/tmp/th/out --img /work/tmp/th/img "$@" > /work/tmp/th/$L.log 2>&1
cp /tmp/ins.txt /work/tmp/th/$L.ins
