#!/usr/bin/env python3
"""Shares of perf samples by process, library and leaf (kernel leaves
attributed to their system call), from `perf script -F comm,ip,sym,dso`."""
import collections, sys
samples, cur = [], None
for line in open(sys.argv[1]):
    if not line.strip():
        if cur:
            samples.append(cur)
        cur = None
        continue
    if cur is None:
        cur = {'comm': line.split()[0], 'stack': []}
    else:
        parts = line.strip().split(None, 1)
        if len(parts) == 2:
            cur['stack'].append(parts[1])
if cur:
    samples.append(cur)
N = len(samples)
print('samples', N)
def dso(f):
    return f[f.rfind('('):] if '(' in f else '?'
for comm in ('lwc-proxy', 'lwc-cloudstore'):
    c, d, tot = collections.Counter(), collections.Counter(), 0
    for s in samples:
        if s['comm'] != comm:
            continue
        tot += 1
        st = s['stack']
        leaf = st[0] if st else '?'
        d[dso(leaf)] += 1
        if 'kernel' in leaf:
            key = 'k:' + leaf.split()[0]
            for f in st:
                if '__x64_sys_' in f or 'asm_exc_page_fault' in f:
                    key = 'k:' + f.split()[0] + ' <- ' + leaf.split()[0]
                    break
                if 'finish_task_switch' in f:
                    key = 'k:context switch'
                    break
        else:
            key = leaf.split()[0]
            if key == '[unknown]':
                key += ' ' + dso(leaf)
        c[key] += 1
    print('%s %.1f%% of all samples' % (comm, 100 * tot / N))
    for k, v in d.most_common(8):
        print('   library %5.1f%% %s' % (100 * v / N, k))
    for k, v in c.most_common(25):
        print('  %5.1f%% %s' % (100 * v / N, k))
