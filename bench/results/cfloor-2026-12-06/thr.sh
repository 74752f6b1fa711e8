#!/bin/bash
# thr.sh D V0 N GAP: CPU ns per thread of proxy and store around c30.py
D=$1; P=$(cat $D/proxy.pid); C=$(cat $D/cloudstore.pid)
snap(){ for p in $P $C; do for t in /proc/$p/task/*; do echo "$p $(basename $t) $(cat $t/comm | tr ' ' _) $(cut -d' ' -f1 $t/schedstat)"; done; done; }
snap > /tmp/thr0
python3 "$(dirname "$0")/../vcpu-2026-12-06/c30.py" $D/users/admin.key $2 $3 $4
snap > /tmp/thr1
python3 - $3 <<'PY'
import sys
n=int(sys.argv[1])
a={ (l.split()[0],l.split()[1]):(l.split()[2],int(l.split()[3])) for l in open('/tmp/thr0')}
tot={}
for l in open('/tmp/thr1'):
    p,t,c,ns=l.split(); ns=int(ns)
    d=ns-a.get((p,t),(c,0))[1]
    if d>n*2000: print("%s %s %-16s %8.1f us/stmt"%(p,t,c,d/n/1e3))
    tot[p]=tot.get(p,0)+d
for p in tot: print(p,"total %.1f us/stmt"%(tot[p]/n/1e3))
PY
