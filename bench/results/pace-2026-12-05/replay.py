#!/usr/bin/env python3
"""replay.py - the pace's D over recorded intervals, with four and with
sixteen histogram buckets a doubling (proxy/pace.c before and after
57bd0ee), to measure what the buckets' width alone changes.

Input: the lines an instrumented proxy (instrument.patch, LWC_PACE_DEBUG=FILE)
wrote for each statement of a bounded audit: previous type, type,
natural interval n (us), D used, alone, wait's return - end, READ sent -
return, gamma, WRITE sent - return, realtime of the return (us), realtime
of the reference (us).

D is replayed as the proxy computes it for point statements (gamma 4): the
largest, over types with 200 samples, of the 95th percentile's bucket top,
from samples taken while alone and under the 5 ms cap, every count halving
each 10 s (the rare-type rule is left out: every type has its samples).
Printed for the audit's timing phase (the longest run of point SELECT /
INSERT / UPDATE / DELETE): the mean D, the mean hold of the statements held,
the D the proxy used (the build recorded), and each previous type's share
of natural intervals at or past D (types 1-4: SELECT, INSERT, UPDATE,
DELETE).

    python3 replay.py FILE
"""
import sys


def b4(us):
    if us < 4:
        return us
    msb = us.bit_length() - 1
    return min(4 * msb + ((us >> (msb - 2)) & 3), 63)


def t4(b):
    if b < 8:
        return b + 1
    return (5 + b % 4) << (b // 4 - 2)


def b16(us):
    if us < 16:
        return us
    msb = us.bit_length() - 1
    return min(16 * (msb - 3) + ((us >> (msb - 4)) & 15), 207)


def t16(b):
    if b < 16:
        return b + 1
    return (17 + b % 16) << (b // 16 - 1)


rows = [list(map(int, l.split())) for l in open(sys.argv[1]) if len(l.split()) >= 11]
best, i = (0, 0), 0
while i < len(rows):
    j = i
    while j < len(rows) and rows[j][7] == 4 and 1 <= rows[j][1] <= 4:
        j += 1
    if j - i > best[1] - best[0]:
        best = (i, j)
    i = j + 1


def replay(bucket, top, nb):
    hist, cnt, halved, out = {}, {}, rows[0][9], []
    for idx, r in enumerate(rows):
        kind, n, now = r[0], r[2], r[9]
        if r[7] != 4:
            continue
        if now - halved >= 10_000_000:
            lives = (now - halved) // 10_000_000
            for k in hist:
                hist[k] = [x >> lives for x in hist[k]]
                cnt[k] = sum(hist[k])
            halved += lives * 10_000_000
        if n < 5000 and r[4] == 1:
            hist.setdefault(kind, [0] * nb)[bucket(n)] += 1
            cnt[kind] = cnt.get(kind, 0) + 1
        d = None
        for k, h in hist.items():
            if cnt[k] < 200:
                continue
            need, seen = (cnt[k] * 950 + 999) // 1000, 0
            for b in range(nb):
                seen += h[b]
                if seen >= need:
                    d = top(b) if d is None or top(b) > d else d
                    break
        if best[0] <= idx < best[1]:
            out.append((kind, n, d if d is not None else 1000))
    return out


used = sum(r[3] for r in rows[best[0]:best[1]]) / (best[1] - best[0])
print("timing phase: statements %d..%d; mean D the proxy used %.0f us" % (best[0], best[1], used))
for name, args in (("4 a doubling", (b4, t4, 64)), ("16 a doubling", (b16, t16, 208))):
    res = replay(*args)
    held = [d - n for _, n, d in res if n < d]
    shares = " ".join("%d:%.3f" % (k, sum(1 for x in res if x[0] == k and x[1] >= x[2]) /
                                   max(1, sum(1 for x in res if x[0] == k))) for k in (1, 2, 3, 4))
    print("%-14s mean D %.0f us, mean hold %.0f us, past D by previous type %s" %
          (name, sum(x[2] for x in res) / len(res), sum(held) / len(held), shares))
