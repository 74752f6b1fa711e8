#!/bin/bash
D=/tmp/lwc-bench-nIWyEt/lwc; V=400
for r in 1 2; do for b in new old; do
  if [ $b = new ]; then ./swap.sh /work/tmp/wt-sp/bin/lwc-cloudstore; else ./swap.sh /work/main/bin/lwc-cloudstore; fi
  t0=$(date -u +%Y-%m-%dT%H:%M:%S)
  ./grow.sh $D $V 6 4 | sed "s/^/$b r$r /"; V=$((V+24))
  echo "$b r$r: made ahead $(awk -v t=$t0 '$1 > t' $D/cloudstore.log | grep -c 'made ahead'), compacted $(awk -v t=$t0 '$1 > t' $D/cloudstore.log | grep -c 'compacted'), deleted $(awk -v t=$t0 '$1 > t' $D/cloudstore.log | grep 'compacted' | grep -vc 'kept as')"
done; done
