#!/bin/bash
# Upper bound of spares prepared ahead: a fresh 1M log-store deployment,
# the store restarted with (arm "spares") or without ("none") two 256 MB
# zero-filled spare files written through the page cache, then clustered
# 1M count(*) twice.
set -u
cd "$(dirname "$0")/../../.."
arm=$1
bin/lwc-bench --records 1000000 --only load --store log --keep --tag exp --out "${EXP_DIR:-/tmp}" --img "${EXP_DIR:-/tmp}" > ${EXP_DIR:-/tmp}/load.log 2>&1
line=$(grep -- '--keep' ${EXP_DIR:-/tmp}/load.log)
D=$(echo "$line" | sed 's/.*LWC in \([^,]*\), PostgreSQL in \([^ ]*\) .*/\1/')
PG=$(echo "$line" | sed 's/.*LWC in \([^,]*\), PostgreSQL in \([^ ]*\) .*/\2/')
. $D/ports
pid=$(cat $D/cloudstore.pid)
cmd=$(tr '\0' ' ' < /proc/$pid/cmdline)
kill $pid; while kill -0 $pid 2>/dev/null; do sleep 0.1; done
if [ "$arm" = spares ]; then
python3 - "$D/cloudstore/data" <<'PY'
import os, sys
d = sys.argv[1]
z = b'\0' * (1 << 20)
for k in range(2):
    fd = os.open('%s/spare-%016x.log' % (d, (1 << 63) + k), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    for i in range(256):
        os.write(fd, z)
    os.fdatasync(fd); os.close(fd)
dfd = os.open(d, os.O_RDONLY); os.fsync(dfd); os.close(dfd)
PY
fi
sleep 6
nohup $cmd >> $D/cloudstore.log 2>&1 &
echo $! > $D/cloudstore.pid
for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$cs_port) 2>/dev/null && break; sleep 0.1; done
echo "SELECT count(*) FROM clus WHERE id = 5;" > ${EXP_DIR:-/tmp}/q0.sql
bin/lwc --key $D/users/admin.key -p 127.0.0.1:$px_port -q -A -t -f ${EXP_DIR:-/tmp}/q0.sql > /dev/null 2>&1
bin/lwc --key $D/users/admin.key -p 127.0.0.1:$px_port -q -A -t -f ${EXP_DIR:-/tmp}/q0.sql > /dev/null 2>&1
echo "SELECT count(*) FROM clus WHERE c1m = 0;" > ${EXP_DIR:-/tmp}/q1m.sql
for k in 1 2; do
	/usr/bin/time -f "$arm clustered 1M #$k: %e s" bin/lwc --key $D/users/admin.key -p 127.0.0.1:$px_port -q -A -t -f ${EXP_DIR:-/tmp}/q1m.sql > /dev/null
done
echo "$arm: $(grep -c 'made from spare' $D/cloudstore.log) segments made from spares; $(grep -c 'compacted' $D/cloudstore.log) compactions"
grep 'log store .*spare)' $D/cloudstore.log | tail -1
kill $(cat $D/proxy.pid) $(cat $D/cloudstore.pid)
sleep 1
sh tests/pg-tmp.sh stop "$PG" > /dev/null 2>&1
rm -rf "$(dirname $D)" "$PG"
