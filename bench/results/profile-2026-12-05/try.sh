#!/bin/bash
# try.sh V [serve args]: restart the kept proxy (PXBIN, default bin/lwc-proxy) with the args, time 4 scattered 10k SELECTs from value V
D=/tmp/lwc-bench-1MBacP/lwc
v0=$1; shift
P=$(cat $D/proxy.pid); kill -TERM $P; while kill -0 $P 2>/dev/null; do sleep 0.2; done
cd /work/main
nohup ${PXBIN:-bin/lwc-proxy} serve --state $D/proxy --listen 127.0.0.1:56594 "$@" >> $D/proxy.log 2>&1 &
echo $! > $D/proxy.pid
for i in $(seq 50); do bin/lwc --key $D/users/admin.key -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done
rm -f /work/tmp/prof2/q.sql; for v in $(seq $v0 $((v0+3))); do echo "SELECT * FROM scat WHERE c10k = $v;" >> /work/tmp/prof2/q.sql; done
s=$(date +%s.%N); bin/lwc --key $D/users/admin.key -t -f /work/tmp/prof2/q.sql > /dev/null; e=$(date +%s.%N)
echo "args [$*] values $v0..: $(echo "($e - $s)/4" | bc -l | cut -c1-6) s a statement"
