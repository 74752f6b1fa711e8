import sys, bisect, datetime
dbg=[list(map(int,l.split())) for l in open(sys.argv[1]) if len(l.split())==11]
tr=[]
for l in open(sys.argv[2]):
    f=l.split()
    t=datetime.datetime.strptime(f[0],"%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
    op=f[2][3:]
    tr.append((int(round(t*1e6)),op,f[1]))
tr.sort()
times=[x[0] for x in tr]
# timing phase run
best=(0,0); i=0
while i<len(dbg):
    j=i
    while j<len(dbg) and dbg[j][7]==4 and 1<=dbg[j][1]<=4: j+=1
    if j-i>best[1]-best[0]: best=(i,j)
    i=j+1
R=dbg[best[0]:best[1]]
names={1:'SELECT',2:'INSERT',3:'UPDATE',4:'DELETE'}
res={k:[] for k in names}
for r in R:
    send=r[9]; endrt=r[10]
    # next READ trace after send
    k=bisect.bisect_left(times,send)
    while k<len(tr) and tr[k][1]!='READ': k+=1
    if k>=len(tr): continue
    rt=tr[k][0]
    # last WRITE trace before endrt
    m=bisect.bisect_right(times,endrt)-1
    while m>=0 and tr[m][1]!='WRITE': m-=1
    wt=tr[m][0]
    # other ops between wt and rt
    others=[tr[x][1] for x in range(m+1,k)]
    res[r[0]].append((endrt-wt, send-endrt, rt-send, rt-wt, len(others)))
def q(v,p): v=sorted(v); return v[int(p*(len(v)-1))]
for kk in names:
    x=res[kk]
    allc=sorted(y[3] for k2 in names for y in res[k2])
    p95=allc[int(.95*(len(allc)-1))]
    print(names[kk], len(x))
    for j,lab in enumerate(["ack(rx-Wtrace)","pace(send-rx)","read(Rtrace-send)","total"]):
        v=[y[j] for y in x]
        print("   %-18s p10 %5d med %5d p90 %5d p95 %5d p99 %5d"%(lab,q(v,.1),q(v,.5),q(v,.9),q(v,.95),q(v,.99)))
    print("   share total past pooled p95 %d: %.3f; others-between %.3f"%(p95, sum(1 for y in x if y[3]>p95)/len(x), sum(1 for y in x if y[4]>0)/len(x)))
print("component tails: share past pooled p95 / p99")
for j,lab in enumerate(["ack","pace","read","total"]):
    allv=sorted(y[j] for k2 in names for y in res[k2])
    p95=allv[int(.95*(len(allv)-1))]; p99=allv[int(.99*(len(allv)-1))]
    print("  %-6s p95 %5d p99 %5d: "%(lab,p95,p99)+"; ".join("%s %.3f/%.3f"%(names[k],sum(1 for y in res[k] if y[j]>p95)/len(res[k]),sum(1 for y in res[k] if y[j]>p99)/len(res[k])) for k in names))
# unheld
for k in names:
    x=res[k]
    print(names[k],"unheld(pace>1800 or not at 1536/1537/1792/1793): %.3f"%(sum(1 for y in x if y[1] not in (1536,1537,1538,1792,1793,1794))/len(x)))
