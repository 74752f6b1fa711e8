import json, os, subprocess, time, sys
LWC=os.path.join(os.path.dirname(os.path.abspath(__file__)),'..','..','..','bin','lwc')
key=sys.argv[1]; v0=int(sys.argv[2]); n=int(sys.argv[3]); gap=float(sys.argv[4])/1000
p=subprocess.Popen([LWC,'--key',key,'--json-lines'],stdin=subprocess.PIPE,stdout=subprocess.PIPE,text=True,bufsize=1)
ts=[]
for i in range(n):
    time.sleep(gap)
    t0=time.time()
    p.stdin.write(json.dumps({"sql":"SELECT * FROM clus WHERE c100 = %d"%(v0+i)})+"\n"); p.stdin.flush()
    l=p.stdout.readline()
    ts.append((time.time()-t0)*1000)
p.stdin.close(); p.wait()
ts.sort(); print("median %.2f ms, p10 %.2f p90 %.2f"%(ts[n//2],ts[n//10],ts[9*n//10]))
