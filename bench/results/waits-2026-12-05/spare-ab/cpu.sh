#!/bin/sh
# usage: cpu.sh D SQL...   prints wall and proxy/store CPU (s) for each SQL run by the shell
D=$1; shift
PX=$(cat $D/proxy.pid); CS=$(cat $D/cloudstore.pid)
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
for q in "$@"; do
  p0=$(cpu $PX); c0=$(cpu $CS); t0=$(date +%s.%N)
  /work/main/bin/lwc --key $D/users/admin.key -A -t -c "$q" > /tmp/out.$$ 2>&1
  t1=$(date +%s.%N); p1=$(cpu $PX); c1=$(cpu $CS)
  echo "$(head -c 40 /tmp/out.$$ | tr '\n' ' ') wall $(echo "$t1 - $t0" | bc) proxy $(( p1 - p0 ))cs store $(( c1 - c0 ))cs  :: $q"
done
