import datetime, random, statistics as st, sys
trace, kindsf = sys.argv[1], sys.argv[2]
L=open(trace).read().splitlines()
L=L[len(L)-8000:]
def t(l):
    return datetime.datetime.fromisoformat(l.split()[0].rstrip('Z')).timestamp()
ops=[(l.split()[2].split('=')[1], t(l)) for l in L]
kinds=[int(x) for x in open(kindsf).read().split()]
assert all(ops[2*i][0]=='READ' and ops[2*i+1][0]=='WRITE' for i in range(len(kinds)))
iv=[(kinds[i], ops[2*i+2][1]-ops[2*i+1][1]) for i in range(len(kinds)-1)]
gap=[(kinds[i], ops[2*i+1][1]-ops[2*i][1]) for i in range(len(kinds))]
def acc(data):
    random.seed(1); a=[]
    for sp in range(25):
        random.shuffle(data); h=len(data)//2; tr,te=data[:h],data[h:]
        mu=st.mean(d for _,d in tr); sd=st.pstdev(d for _,d in tr)
        cen={k:st.mean((d-mu)/sd for kk,d in tr if kk==k) for k in range(4)}
        a.append(sum(1 for k,d in te if min(range(4),key=lambda c:abs((d-mu)/sd-cen[c]))==k)/len(te))
    return st.mean(a)
for name,data in (('WRITE->next READ',iv),('READ->WRITE',gap)):
    med=[sorted(d for k,d in data if k==c)[len([1 for k,_ in data if k==c])//2]*1e3 for c in range(4)]
    print(name, 'accuracy %.3f'%acc(list(data)), 'medians ms SELECT %.3f INSERT %.3f UPDATE %.3f DELETE %.3f'%tuple(med))
