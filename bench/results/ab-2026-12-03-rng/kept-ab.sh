#!/bin/sh
# usage: D=KEPT_DEPLOYMENT sh kept-ab.sh BINDIR SQLFILE  -- restart the kept deployment's servers with BINDIR, run SQLFILE, print wall and CPU (run from the repository root)
: "${D:?set D to a kept deployment (lwc-bench --only load --keep)}"; B=$1; . $D/ports
for f in proxy cloudstore; do p=$(cat $D/$f.pid 2>/dev/null); [ -n "$p" ] && kill $p 2>/dev/null; done
for i in $(seq 100); do kill -0 $(cat $D/proxy.pid) 2>/dev/null || kill -0 $(cat $D/cloudstore.pid) 2>/dev/null || break; sleep 0.1; done
nohup $B/lwc-cloudstore --listen 127.0.0.1:$cs_port --store log:$D/cloudstore/data --key-file $D/cloudstore/cs.key --trace $D/cloudstore.trace >> $D/cloudstore.log 2>&1 &
echo $! > $D/cloudstore.pid
sleep 0.5
nohup $B/lwc-proxy serve --state $D/proxy --listen 127.0.0.1:$px_port >> $D/proxy.log 2>&1 &
echo $! > $D/proxy.pid
for i in $(seq 100); do bin/lwc --key $D/users/admin.key -p 127.0.0.1:$px_port -q -A -t -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
pp=$(cat $D/proxy.pid); cp=$(cat $D/cloudstore.pid)
p0=$(cpu $pp); c0=$(cpu $cp); t0=$(date +%s.%N)
bin/lwc --key $D/users/admin.key -p 127.0.0.1:$px_port -q -A -t -f $2 > /dev/null
t1=$(date +%s.%N); p1=$(cpu $pp); c1=$(cpu $cp)
hz=$(getconf CLK_TCK)
echo "$B wall $(echo "$t1 - $t0" | bc) proxy_cpu $(echo "($p1 - $p0)/$hz" | bc -l | cut -c1-5) store_cpu $(echo "($c1 - $c0)/$hz" | bc -l | cut -c1-5)"
