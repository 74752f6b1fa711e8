#!/usr/bin/env python3
# phases_perf.py: read `perf script -F comm,tid,time,event,trace` of a
# `perf record -a -e syscalls:sys_enter_sendto,syscalls:sys_enter_sendmsg,
# syscalls:sys_enter_write,syscalls:sys_enter_fdatasync -- python3 c30.py ...`
# from stdin; per statement (from c30.py's write to lwc's stdin) the time of:
# the shell's send to the proxy, the proxy's READ, the store's READ answer,
# the proxy's WRITE, the rows to the shell, the shell's output; medians in ms.
import re, statistics, sys
ev = []
for l in sys.stdin:
    m = re.match(r'\s*(\S+)\s+(\d+)\s+([\d.]+):\s+syscalls:sys_enter_(\w+):(.*)', l)
    if not m:
        continue
    comm, tid, t, sc, rest = m.groups()
    ln = re.search(r'(len|count): 0x([0-9a-f]+)', rest)
    fd = re.search(r'fd: 0x([0-9a-f]+)', rest)
    ev.append((float(t) * 1000, comm, sc, int(fd.group(1), 16) if fd else -1,
               int(ln.group(2), 16) if ln else -1))
st, cur = [], None
for e in ev:
    if e[1].startswith('python') and e[2] == 'write':
        cur = {'t0': e[0], 'ev': []}
        st.append(cur)
    elif cur is not None:
        cur['ev'].append(e)
rows = []
for s in st:
    mk = {}
    for (t, comm, sc, fd, ln) in s['ev']:
        if comm == 'lwc' and sc in ('sendto', 'sendmsg') and 'cl_send' not in mk:
            mk['cl_send'] = t
        if comm == 'lwc-proxy' and sc == 'sendto' and 0 < ln < 200 and 'read_sent' not in mk \
                and 'cl_send' in mk and fd != 14:
            mk['read_sent'] = t
        if comm == 'lwc-cloudstore' and sc == 'sendto' and ln > 60000 and 'read_ans' not in mk:
            mk['read_ans'] = t
        if comm == 'lwc-proxy' and sc == 'sendmsg' and 'read_ans' in mk and 'write_sent' not in mk:
            mk['write_sent'] = t
        if comm == 'lwc-proxy' and sc == 'sendto' and ln > 10000 and 'rows' not in mk and 'read_ans' in mk:
            mk['rows'] = t
        if comm == 'lwc' and sc == 'write' and fd == 1 and 'out' not in mk:
            mk['out'] = t
    rows.append({k: v - s['t0'] for k, v in mk.items()})
for k in ['cl_send', 'read_sent', 'read_ans', 'write_sent', 'rows', 'out']:
    v = [r[k] for r in rows if k in r]
    print('%-10s n=%d median %.3f ms' % (k, len(v), statistics.median(v) if v else -1))
