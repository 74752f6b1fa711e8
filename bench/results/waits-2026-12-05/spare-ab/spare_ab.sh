#!/bin/sh
# spare_ab.sh ROUND VARIANT(default|nospare) FIRSTVAL
R=$1; V=$2; F=$3
cd /work/tmp/wt-nospare
if [ "$V" = nospare ]; then export LWC_EXP_NO_SPARE=1; else unset LWC_EXP_NO_SPARE; fi
bin/lwc-bench --records 1000000 --store log --only load --keep --tag sp-$R-$V \
  --out /work/tmp/prof/sp/out --img /work/tmp/prof/sp/img > /work/tmp/prof/sp/load-$R-$V.log 2>&1
D=$(grep -o "LWC in [^,]*" /work/tmp/prof/sp/load-$R-$V.log | awk '{print $3}')
PG=$(grep -o "PostgreSQL in [^ ]*" /work/tmp/prof/sp/load-$R-$V.log | awk '{print $3}')
qs=""
for i in 0 1 2 3 4 5 6 7; do qs="$qs|SELECT count(*) FROM scat WHERE c10k = $((F + i))"; done
IFS='|'; set -- $qs; shift; unset IFS
/work/tmp/prof/cpu.sh $D "$@" > /work/tmp/prof/sp/sel-$R-$V.txt
ls $D/cloudstore/data >> /work/tmp/prof/sp/sel-$R-$V.txt
bash /work/main/scripts/lwc-local down --dir $D > /dev/null 2>&1
sh /work/main/tests/pg-tmp.sh stop $PG > /dev/null 2>&1
