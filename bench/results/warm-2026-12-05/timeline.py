#!/usr/bin/env python3
# timeline.py OUT.txt: medians from px_execute over lwc-bench's first SELECT line (probe_run.sh)
import sys, statistics
ev=[]
for l in open(sys.argv[1]):
    p=l.split()
    ev.append((float(p[1].rstrip(':')),int(p[0]),p[2].split(':')[1].rstrip(':')))
ev.sort()
stm=[]; cur={}
for t,tid,e in ev:
    if e=='px_execute': cur[tid]={'t0':t,'ev':{}}
    elif tid in cur:
        c=cur[tid]; c['ev'].setdefault(e,t)
        if e=='exec_ret__return': stm.append(c); del cur[tid]
sel=[c for c in stm if 'stmt_answer' in c['ev'] and 'cloud_read' in c['ev']]
# the load's last statements come seconds apart: the line starts after them
while len(sel) > 1 and sel[1]['t0'] - sel[0]['t0'] > 5:
    sel.pop(0)
sel.pop(0)
# the clustered 100 line: the next 21 (warm-up + 20)
rows=[]
for c in sel[:21]:
    e=c['ev']; t0=c['t0']
    rows.append([(e[k]-t0)*1e6 for k in ('plan_ret__return','cloud_read','read_ret__return','stmt_answer','exec_ret__return')])
for i,n in enumerate(['plan done','READ sent','READ back','answer','exec ret']):
    print("%-10s median %6.0f" % (n, statistics.median(r[i] for r in rows)))
print("statements", len(rows), "; gaps between the first ones (ms):", ["%.0f" % ((sel[i+1]['t0']-sel[i]['t0'])*1e3) for i in range(0,6)])
