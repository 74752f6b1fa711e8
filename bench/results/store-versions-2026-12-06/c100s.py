#!/usr/bin/env python3
# c100s.py KEY STATE V0 N MODE: clustered 100 SELECTs; before each, MODE: sleep (26 ms) | status (lwc-proxy status, then 26 ms... no: status only) | both
import json, subprocess, sys, time
key, state, v0, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
p = subprocess.Popen(['/work/main/bin/lwc', '--key', key, '--json-lines'], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True, bufsize=1)
for i in range(n):
    v = (v0 + i) % 10000
    if mode in ('sleep', 'both'):
        time.sleep(0.026)
    if mode in ('status', 'both'):
        subprocess.run(['/work/main/bin/lwc-proxy', 'status', '--state', state], stdout=subprocess.DEVNULL)
    t0 = time.time()
    p.stdin.write(json.dumps({'sql': 'SELECT * FROM clus WHERE c100 = %d' % v}) + '\n')
    p.stdin.flush()
    line = p.stdout.readline()
    t1 = time.time()
    print('%.6f\t%.6f' % (t0, t1))
p.stdin.close(); p.wait()
