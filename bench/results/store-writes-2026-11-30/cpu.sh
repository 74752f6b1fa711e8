#!/bin/bash
# usage: cpu.sh DIR B SQLFILE : runs the shell on SQLFILE and reports wall + CPU of proxy, store
D=$1; B=$2; F=$3
pp=$(cat $D/proxy.pid); cp=$(cat $D/cloudstore.pid)
tick=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
p0=$(cpu $pp); c0=$(cpu $cp); t0=$(date +%s.%N)
/usr/bin/time -f "client %U+%S s" $B/lwc --key $D/users/admin.key -q -A -t -f $F > /dev/null
t1=$(date +%s.%N); p1=$(cpu $pp); c1=$(cpu $cp)
echo "wall $(echo "$t1 - $t0" | bc) proxy $(echo "($p1-$p0)/$tick" | bc -l | cut -c1-6) store $(echo "($c1-$c0)/$tick" | bc -l | cut -c1-6)"
