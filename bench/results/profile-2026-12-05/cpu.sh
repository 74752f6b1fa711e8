#!/bin/bash
# cpu.sh V0 N: N scattered 10k SELECTs from V0; per-process CPU, machine idle
D=/tmp/lwc-bench-1MBacP/lwc; P=$(cat $D/proxy.pid); C=$(cat $D/cloudstore.pid)
cd /work/main
rm -f /work/tmp/prof2/q.sql; for v in $(seq $1 $(($1+$2-1))); do echo "SELECT * FROM scat WHERE c10k = $v;" >> /work/tmp/prof2/q.sql; done
cpu(){ awk '{print $14+$15}' /proc/$1/stat; }
idle(){ awk '/^cpu /{print $5+$6}' /proc/stat; }
p0=$(cpu $P); c0=$(cpu $C); i0=$(idle); s=$(date +%s.%N)
bin/lwc --key $D/users/admin.key -t -f /work/tmp/prof2/q.sql > /dev/null
e=$(date +%s.%N); p1=$(cpu $P); c1=$(cpu $C); i1=$(idle)
python3 -c "
w=($e-$s); n=$2
print('wall %.3f s a statement; proxy %.3f s, store %.3f s CPU a statement; servers %.2f cores; machine idle %.2f cores' % (w/n, ($p1-$p0)/100/n, ($c1-$c0)/100/n, ($p1-$p0+$c1-$c0)/100/w, ($i1-$i0)/100/w))"
