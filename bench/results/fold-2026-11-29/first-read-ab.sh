#!/bin/sh
# first reads of 1,000-row ranges: bins alternate, each on values never read before
D=/tmp/lwc-bench-U4kslV/lwc
run=0
for r in 1 2; do
for b in A2 C; do
  B=/work/tmp/bin$b
  kill -TERM $(cat $D/proxy.pid) 2>/dev/null; while kill -0 $(cat $D/proxy.pid) 2>/dev/null; do sleep 0.1; done
  $B/lwc-proxy serve --state $D/proxy --listen 127.0.0.1:$(grep px_port $D/ports | cut -d= -f2) >> $D/proxy.log 2>&1 &
  echo $! > $D/proxy.pid
  for i in $(seq 1 50); do $B/lwc --key $D/users/admin.key -q -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done
  (printf '%s\n' '\timing on'; for i in $(seq 1 250); do echo "SELECT * FROM clus WHERE c1k = $((run*250 + i));"; done) > /work/tmp/qf-$r-$b.sql
  run=$((run+1))
  t0=$(date +%s.%N)
  $B/lwc --key $D/users/admin.key -q -A -t -f /work/tmp/qf-$r-$b.sql | grep -i "^time" | awk '{print $2}' > /work/tmp/tf-$r-$b.txt
  t1=$(date +%s.%N)
  st=$($B/lwc-proxy status --state $D/proxy 2>/dev/null | grep -E "journal_folds|journal_fold_ms_avg|commit_ms_avg|^statements" | tr -s ' ' | tr '\n' ' ')
  q=$(sort -n /work/tmp/tf-$r-$b.txt | awk '{a[NR]=$1; s+=$1} END{printf "med %s p99 %s max %s sum %.0f", a[int(NR/2)], a[int(NR*0.99)], a[NR], s}')
  echo "round $r bin $b wall $(echo "$t1 - $t0" | bc) $q $st"
done; done
