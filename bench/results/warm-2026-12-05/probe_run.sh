#!/bin/sh
# probe_run.sh BINDIR OUT : px_execute entry/return + plan_stmt return, during a load,select run
B=$1; O=$2
perf probe -d 'probe_lwc:*' >/dev/null 2>&1
perf probe -x $B/lwc-proxy -a 'probe_lwc:px_execute=px_execute' >/dev/null 2>&1
perf probe -x $B/lwc-proxy -a 'probe_lwc:exec_ret=px_execute%return' >/dev/null 2>&1
perf probe -x $B/lwc-proxy -a 'probe_lwc:plan_ret=plan_stmt%return' >/dev/null 2>&1
perf probe -x $B/lwc-proxy -a 'probe_lwc:cloud_read=cloud_read' >/dev/null 2>&1
perf probe -x $B/lwc-proxy -a 'probe_lwc:read_ret=cloud_read%return' >/dev/null 2>&1
perf probe -x $B/lwc-proxy -a 'probe_lwc:stmt_answer=stmt_answer' >/dev/null 2>&1
perf record -q -a -e 'probe_lwc:*' -o $O.data -- $B/lwc-bench --records 1000000 --store log --only load,select --tag probe --out /tmp/hb --img /tmp/hb > $O.log 2>&1
perf script -i $O.data -F tid,time,event 2>/dev/null > $O.txt
perf probe -d 'probe_lwc:*' >/dev/null 2>&1
grep -A1 "^layout.*reps" $O.log | tail -1
