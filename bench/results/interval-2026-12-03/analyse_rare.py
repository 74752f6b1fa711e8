# analyse_rare.py TRACE KINDS: the rare UPDATEs among SELECTs, from the
# interval after each statement's WRITE to the next READ.  The attack: as
# many SELECTs as UPDATEs drawn at random, a random half of each to learn
# the two medians, the other half guessed by the nearer median (chance
# 0.5), over 25 draws.
import datetime, random, statistics as st, sys
L = open(sys.argv[1]).read().splitlines()
kinds = [int(x) for x in open(sys.argv[2]).read().split()]
L = [l for l in L if ' op=READ ' in l or ' op=WRITE ' in l][-2 * len(kinds):]
t = lambda l: datetime.datetime.fromisoformat(l.split()[0].rstrip('Z')).timestamp()
ops = [(l.split()[2].split('=')[1], t(l)) for l in L]
assert all(ops[2*i][0] == 'READ' and ops[2*i+1][0] == 'WRITE' for i in range(len(kinds)))
iv = [(kinds[i], ops[2*i+2][1] - ops[2*i+1][1]) for i in range(len(kinds) - 1)]
upd = [d for k, d in iv if k == 2]
sel = [d for k, d in iv if k == 0]
random.seed(1)
acc = []
for _ in range(25):
    s = random.sample(sel, len(upd))
    u = upd[:]
    random.shuffle(u)
    h = len(u) // 2
    mu, ms = st.median(u[:h]), st.median(s[:h])
    test = [(2, d) for d in u[h:]] + [(0, d) for d in s[h:]]
    acc.append(sum(1 for k, d in test if (2 if abs(d - mu) < abs(d - ms) else 0) == k) / len(test))
print('rare UPDATEs: %d of %d; balanced attack by the nearer median: accuracy %.3f (chance 0.5); '
      'medians ms SELECT %.3f UPDATE %.3f; over 1 ms: SELECT %.3f UPDATE %.3f' %
      (len(upd), len(iv), st.mean(acc), st.median(sel) * 1e3, st.median(upd) * 1e3,
       sum(d > 1e-3 for d in sel) / len(sel), sum(d > 1e-3 for d in upd) / len(upd)))
