#!/usr/bin/env python3
# c100.py KEY V0 N [gap_ms]: N clustered 100 SELECTs through lwc --json-lines, gap_ms apart;
# prints per-statement client send/recv (epoch s) as TSV to stdout
import json, subprocess, sys, time
key, v0, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
gap = float(sys.argv[4]) / 1000 if len(sys.argv) > 4 else 0.026
p = subprocess.Popen(['/work/main/bin/lwc', '--key', key, '--json-lines'], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True, bufsize=1)
for i in range(n):
    v = (v0 + i) % 10000
    t0 = time.time()
    p.stdin.write(json.dumps({'sql': 'SELECT * FROM clus WHERE c100 = %d' % v}) + '\n')
    p.stdin.flush()
    line = p.stdout.readline()
    t1 = time.time()
    r = json.loads(line)
    assert 'error' not in r or not r['error'], r
    print('%.6f\t%.6f' % (t0, t1))
    time.sleep(gap)
p.stdin.close(); p.wait()
