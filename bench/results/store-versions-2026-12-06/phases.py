#!/usr/bin/env python3
# phases.py CLIENT.tsv TRACE: per statement, client send -> READ -> WRITE -> answer (ms)
import sys, datetime, statistics as S
cl = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
t_lo = cl[0][0] - 1
ev = []
for l in open(sys.argv[2]):
    ts = l[:27]
    try:
        t = datetime.datetime.strptime(ts, '%Y-%m-%dT%H:%M:%S.%fZ').replace(tzinfo=datetime.timezone.utc).timestamp()
    except ValueError:
        continue
    if t < t_lo: continue
    f = dict(x.split('=', 1) for x in l[28:].split()[:3])
    ev.append((t, f['op'], int(f['n'])))
a, b, c, g = [], [], [], []
j = 0
for t0, t1 in cl[1:]:
    while j < len(ev) and ev[j][0] < t0: j += 1
    rd = next((e for e in ev[j:] if e[1] == 'READ'), None)
    wr = next((e for e in ev[j:] if e[1] == 'WRITE' and e[0] >= rd[0]), None)
    if rd is None or wr is None or wr[0] > t1: continue
    a.append((rd[0]-t0)*1e3); b.append((wr[0]-rd[0])*1e3); c.append((t1-wr[0])*1e3); g.append(rd[2])
def q(x): x = sorted(x); return '%.3f / %.3f' % (S.median(x), S.mean(x))
print('n %d  gamma med %d' % (len(a), S.median(g)))
print('send->READ   med/mean ms', q(a))
print('READ->WRITE  med/mean ms', q(b))
print('WRITE->answer med/mean ms', q(c))
print('total        med/mean ms', q([x+y+z for x, y, z in zip(a, b, c)]))
