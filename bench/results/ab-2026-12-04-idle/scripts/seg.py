import re,sys,collections
ev=[]
for l in open(sys.argv[1]):
    m=re.match(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+?):\s',l)
    if m: ev.append((float(m.group(4)),int(m.group(2)),m.group(5)))
last={}; inplan={}
d=collections.defaultdict(list)
for t,tid,e in ev:
    if 'sched' in e: continue
    if e.endswith('plan_stmt'): inplan[tid]=True
    if inplan.get(tid) and tid in last:
        d[(last[tid][1],e)].append((t-last[tid][0])*1e6)
    last[tid]=(t,e)
    if e.endswith('plan_stmt_r__return'): inplan[tid]=False
for k,v in sorted(d.items(), key=lambda kv:-sum(kv[1])):
    v.sort(); n=len(v)
    print('%-40s -> %-40s n=%4d med %7.1f p75 %7.1f p90 %7.1f sum %8.0f'%(k[0].split(':')[1],k[1].split(':')[1],n,v[n//2],v[int(n*.75)],v[int(n*.9)],sum(v)))
