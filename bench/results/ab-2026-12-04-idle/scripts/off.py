import re,sys,collections
ev=[]
for l in open(sys.argv[1]):
    m=re.match(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+?):\s(.*)',l)
    if m: ev.append((float(m.group(4)),int(m.group(2)),int(m.group(3)),m.group(5),m.group(6)))
start={}
res=[]
for i,(t,tid,cpu,e,tr) in enumerate(ev):
    if e.endswith('plan_stmt'): start[tid]=i
    if e.endswith('plan_stmt_r__return') and tid in start:
        a=start.pop(tid); dur=(t-ev[a][0])*1e6
        off=0; outs=[]; tout=None; others=collections.Counter()
        for j in range(a,i):
            tt,ttid,c,ee,trr=ev[j]
            if 'sched_switch' in ee:
                m=re.search(r'prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+)',trr)
                if int(m.group(1))==tid: tout=tt; outs.append(m.group(2)+'->'+m.group(3))
                if int(m.group(4))==tid and tout is not None: off+=(tt-tout)*1e6; tout=None
        res.append((dur,off,outs))
res.sort()
n=len(res)
for q in (0.1,0.5,0.75,0.9,0.99):
    d,o,outs=res[int(n*q)]
    print('q%.2f plan %6.0f off-cpu %6.0f %s'%(q,d,o,outs[:4]))
print('plans with a switch-out:',sum(1 for r in res if r[2]), 'of', n)
print('mean off among those', sum(r[1] for r in res if r[2])/max(1,sum(1 for r in res if r[2])))
