#!/bin/sh
# usage: scat.sh DIR v1 v2 ...   times one scattered 10k SELECT per value
D=$1; shift
PX=$(sed -n 's/px_port=//p' $D/ports)
CSPID=$(cat $D/cloudstore.pid); PXPID=$(cat $D/proxy.pid)
for v in "$@"; do
  echo "SELECT * FROM scat WHERE c10k = $v;" > /tmp/q.sql
  c0=$(awk '{print $14+$15}' /proc/$CSPID/stat); p0=$(awk '{print $14+$15}' /proc/$PXPID/stat)
  t0=$(date +%s%N)
  /work/main/bin/lwc --key $D/users/admin.key -p 127.0.0.1:$PX -t -A -f /tmp/q.sql | wc -l > /tmp/q.n
  t1=$(date +%s%N)
  c1=$(awk '{print $14+$15}' /proc/$CSPID/stat); p1=$(awk '{print $14+$15}' /proc/$PXPID/stat)
  echo "v=$v rows=$(cat /tmp/q.n) wall_ms=$(( (t1-t0)/1000000 )) store_cpu_ms=$(( (c1-c0)*10 )) proxy_cpu_ms=$(( (p1-p0)*10 ))"
done
