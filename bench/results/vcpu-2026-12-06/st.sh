#!/bin/bash
# st.sh D "SQL" : one statement, wall and CPU of proxy, store, client
D=$1; Q=$2
P=$(cat $D/proxy.pid); C=$(cat $D/cloudstore.pid)
cpu(){ awk '{print $14+$15}' /proc/$1/stat; }
echo "$Q" > /tmp/q1.sql
p0=$(cpu $P); c0=$(cpu $C); s=$(date +%s.%N)
/usr/bin/time -f "%U %S" -o /tmp/ct.txt "$(dirname "$0")/../../../bin/lwc" --key $D/users/admin.key -t -f /tmp/q1.sql > /tmp/q1.out
e=$(date +%s.%N); p1=$(cpu $P); c1=$(cpu $C)
read cu cs < /tmp/ct.txt
python3 -c "print('%s: wall %.3f proxy %.2f store %.2f client %.2f s; out %d lines' % ('$Q', $e-$s, ($p1-$p0)/100, ($c1-$c0)/100, $cu+$cs, $(wc -l < /tmp/q1.out)))"
