#!/bin/bash
# per build: restart the proxy, fill the stash with first reads of 100-row ranges, point SELECTs,
# one clustered 100k SELECT (its padding drains the stash: one statement writing back thousands of rows), point SELECTs
D=$1; shift; cd $D
LISTEN=$(tr '\0' ' ' < /proc/$(cat proxy.pid)/cmdline | sed 's/.*--listen \([^ ]*\).*/\1/')
start() { kill -TERM $(cat proxy.pid) 2>/dev/null; while pgrep -f "lwc-proxy serve --state $D/proxy" >/dev/null; do sleep 0.2; done
  (nohup $1/lwc-proxy serve --state $D/proxy --listen $LISTEN > /dev/null 2>&1 &); sleep 1.5; pgrep -f "lwc-proxy serve --state $D/proxy" > proxy.pid; }
st() { /work/tmp/binT/lwc-proxy status --state proxy 2>/dev/null | awk -v k=$1 '$1==k{print $2}'; }
pts() { python3 -c "
import random
print(''.join(f'SELECT * FROM clus WHERE id = {random.randrange(1000000)};\n' for i in range(300)))" > /tmp/pts.sql
  t0=$(date +%s.%N); /work/tmp/binT/lwc --key users/admin.key -q -A -t -f /tmp/pts.sql > /dev/null; t1=$(date +%s.%N); python3 -c "print(round(($t1-$t0)/300*1000,3))"; }
V=100; K=0
for r in 1 2; do
for b in "$@"; do
  start $b
  python3 -c "print(''.join(f'SELECT COUNT(*) FROM clus WHERE c100 = {v};\n' for v in range($V, $V+400)))" > /tmp/fill.sql; V=$((V+400))
  /work/tmp/binT/lwc --key users/admin.key -q -A -t -f /tmp/fill.sql > /dev/null
  s0=$(st stash_rows); a=$(pts); a2=$(pts); s1=$(st stash_rows)
  /work/tmp/binT/lwc --key users/admin.key -q -A -t -c "SELECT COUNT(*) FROM clus WHERE c100k = $K" > /dev/null; K=$((K+1))
  s2=$(st stash_rows); c=$(pts); c2=$(pts)
  echo "round $r $(basename $b): stash $s0 -> $s1, point SELECT ms $a / $a2; the 100k SELECT: stash -> $s2; point SELECT ms $c / $c2"
done; done
