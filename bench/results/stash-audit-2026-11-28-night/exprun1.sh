#!/bin/sh
# exprun1.sh TAG I BIN IS PROXYARGS...
tag=$1; i=$2; bin=$3; is=$4; shift 4
cd /work/main
f=/work/tmp/expaud-$tag-$i.log
[ "$is" != 0 ] && export LWC_EXP_IS=$is
LWC_BIN=$bin AUDIT_PROXY_ARGS="$*" sh scripts/audit.sh --check --per-type 3200 --zipf-rounds 9 --targets 100 > $f 2>&1
echo "$tag $i rc $? freq $(grep 'beyond chance (20' $f | awk '{print $9}') $(grep -o 'Zipf [0-9]*,' $f) blocks $(grep 'blocks READ in the phase' $f | awk '{print $NF}')" >> /work/tmp/exp-summary.log
