#!/bin/sh
# usage: foldab.sh ROUNDS ; alternates binA / binB proxies on the kept deployment
D=/tmp/lwc-bench-z5FIKz/lwc
off=0
for r in $(seq 1 $1); do
for b in A2 B; do
  B=/work/tmp/bin$b
  kill -TERM $(cat $D/proxy.pid) 2>/dev/null; while kill -0 $(cat $D/proxy.pid) 2>/dev/null; do sleep 0.1; done
  $B/lwc-proxy serve --state $D/proxy --listen 127.0.0.1:47466 >> $D/proxy.log 2>&1 &
  echo $! > $D/proxy.pid
  for i in $(seq 1 50); do $B/lwc --key $D/users/admin.key -q -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done
  (printf '%s\n' '\timing on'; for i in $(seq 1 250); do off=$((off+1)); echo "SELECT * FROM clus WHERE c1k = $(( (r*7919 + i*613 + $( [ $b = B ] && echo 500 || echo 0 )) % 999 + 1 + 0 ));"; done) > /work/tmp/qab-$r-$b.sql
  t0=$(date +%s.%N)
  $B/lwc --key $D/users/admin.key -q -A -t -f /work/tmp/qab-$r-$b.sql | grep -i "^time" | awk '{print $2}' > /work/tmp/tab-$r-$b.txt
  t1=$(date +%s.%N)
  st=$($B/lwc-proxy status --state $D/proxy 2>/dev/null | grep -E "journal_folds|journal_fold_ms_avg|commit_ms_avg" | tr -s ' ' | tr '\n' ' ')
  med=$(sort -n /work/tmp/tab-$r-$b.txt | awk '{a[NR]=$1} END{print a[int(NR/2)]}')
  echo "round $r bin $b wall $(echo "$t1 - $t0" | bc) med $med $st"
done; done
