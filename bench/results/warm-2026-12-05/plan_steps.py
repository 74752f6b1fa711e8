#!/usr/bin/env python3
# plan_steps.py OUT.txt N: the plan's steps (entry probes in sequence) over the first N planned SELECTs
import sys, statistics
ev=[]
for l in open(sys.argv[1]):
    p=l.split()
    tid=int(p[0]); t=float(p[1].rstrip(':')); e=p[2].split(':')[1].rstrip(':')
    ev.append((t,tid,e))
ev.sort()
stm=[]; cur={}
for t,tid,e in ev:
    if e=='px_execute':
        cur[tid]={'px_execute':t,'seq':[]}
    if tid in cur:
        c=cur[tid]; c['seq'].append((e,t))
        if e=='run_access':
            stm.append(c); del cur[tid]
sel=[c for c in stm if any(e=='pred_eval' for e,_ in c['seq'])]
n=int(sys.argv[2]) if len(sys.argv)>2 else 21
agg={}; order=[]
for c in sel[:n]:
    s=c['seq']
    for i in range(1,len(s)):
        k=s[i-1][0]+'->'+s[i][0]
        if k not in agg: order.append(k)
        agg.setdefault(k,[]).append((s[i][1]-s[i-1][1])*1e6)
for k in order:
    v=agg[k]; print("%-40s n=%3d median %7.0f  max %7.0f" % (k,len(v),statistics.median(v),max(v)))
tot=[(c['seq'][-1][1]-c['px_execute'])*1e6 for c in sel[:n]]
print("px_execute->run_access median %.0f" % statistics.median(tot))
