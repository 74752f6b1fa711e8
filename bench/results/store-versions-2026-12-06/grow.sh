#!/bin/bash
# grow.sh D V0 BATCHES PER: scattered 10k SELECTs in batches; per batch wall, CPU, log size
D=$1; V=$2; B=$3; K=$4
P=$(cat $D/proxy.pid); C=$(cat $D/cloudstore.pid)
cpu(){ awk '{print $14+$15}' /proc/$1/stat; }
idle(){ awk '/^cpu /{print $5+$6}' /proc/stat; }
for b in $(seq 1 $B); do
  rm -f q.sql; for i in $(seq 1 $K); do echo "SELECT * FROM scat WHERE c10k = $((V % 100 + 1));" >> q.sql; V=$((V+1)); done
  p0=$(cpu $P); c0=$(cpu $C); i0=$(idle); s=$(date +%s.%N)
  /work/main/bin/lwc --key $D/users/admin.key -t -f q.sql > /dev/null
  e=$(date +%s.%N); p1=$(cpu $P); c1=$(cpu $C); i1=$(idle)
  sz=$(du -sm $D/cloudstore/data | cut -f1); ns=$(ls $D/cloudstore/data | grep -c '^seg-'); sp=$(ls $D/cloudstore/data | grep -c '^spare-')
  python3 -c "
w=($e-$s); n=$K
print('batch $b: %.3f s/st; proxy %.3f store %.3f CPU s/st; idle %.2f; log %s MB, %s segs, %s spares' % (w/n, ($p1-$p0)/100/n, ($c1-$c0)/100/n, ($i1-$i0)/100/w, $sz, $ns, $sp))"
done
