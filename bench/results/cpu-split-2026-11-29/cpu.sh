#!/bin/sh
# usage: cpu.sh SQL ; prints wall, client user+sys, proxy and store cpu (ticks 100/s)
D=/tmp/lwc-bench-vxurGe/lwc; B=/work/tmp/binZ; cd $D
pp=$(cat proxy.pid); cp=$(cat cloudstore.pid)
t() { awk '{print $14+$15}' /proc/$1/stat; }
p0=$(t $pp); c0=$(t $cp); s0=$(date +%s.%N)
/usr/bin/time -f "client user %U sys %S" $B/lwc --key users/admin.key -q -A -t -c "$1" > /tmp/out.txt
s1=$(date +%s.%N); p1=$(t $pp); c1=$(t $cp)
echo "wall $(echo "$s1 - $s0" | bc) proxy $(( (p1-p0)*10 )) ms store $(( (c1-c0)*10 )) ms rows $(wc -l < /tmp/out.txt)"
