#!/usr/bin/env python3
"""ab_compare.py - lwc-bench results side by side: one column per JSON file
(e.g. the runs of bench/ab.sh, in the order given), one line per figure:
load seconds and ratios, every SELECT line's LWC median, the geometric means
of the SELECT ratios and of LWC's SELECT medians, INSERT/UPDATE/DELETE
seconds and ratios, and the clients' statements per second and speedup, with
the blocks and the CPU (proxy, store, clients) a statement where the run has them.

    python3 bench/ab_compare.py DIR/lwc-bench-ab-old-1.json DIR/lwc-bench-ab-new-1.json ...

Sections a run does not have (an --only that left them out) print nothing.
"""
import json, sys, math
runs = sys.argv[1:]
D = [json.load(open(f)) for f in runs]
names = [f.split('lwc-bench-')[-1].replace('.json','') for f in runs]
def row(label, vals, fmt="%.2f"):
    print("%-28s " % label + " ".join(("%12s" % (fmt % v)) if v is not None else "%12s" % "-" for v in vals))
print("%-28s " % "" + " ".join("%12s" % n for n in names))
for i, l in enumerate(D[0].get('load') or []):
    row("load %s s (ratio)" % l['layout'], [d['load'][i]['lwc_s'] for d in D])
    row("", [d['load'][i]['ratio'] for d in D], "%.2fx")
sel = D[0].get('select') or []
for i, s in enumerate(sel):
    lab = "select %s %d ms" % (s['layout'][:4], s['rows'])
    row(lab, [d['select'][i]['lwc']['median_ms'] for d in D])
def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))
if sel:
    row("select geomean ratio", [geomean([s['ratio'] for s in d['select']]) for d in D], "%.2fx")
    row("select geomean LWC ms", [geomean([s['lwc']['median_ms'] for s in d['select']]) for d in D])
for i, m in enumerate(D[0].get('modify') or []):
    row("%s %d s" % (m['op'], m['rows']), [d['modify'][i]['lwc_s'] for d in D], "%.3f")
    row("", [d['modify'][i]['ratio'] for d in D], "%.2fx")
for i, c in enumerate(D[0].get('clients') or []):
    row("clients %d stm/s" % c['clients'], [d['clients'][i]['lwc_stmts_per_s'] for d in D], "%.1f")
    row("", [d['clients'][i]['speedup_vs_1'] for d in D], "%.2fx")
    row("  blocks a statement", [d['clients'][i].get('lwc_blocks_per_stmt') for d in D], "%.1f")
    row("  CPU ms a statement", [d['clients'][i].get('lwc_cpu_ms_per_stmt') for d in D], "%.2f")
    row("  plan waits a statement", [d['clients'][i].get('lwc_plan_waits_per_stmt') for d in D], "%.2f")
    row("  commit ms a statement", [d['clients'][i].get('lwc_commit_ms_per_stmt') for d in D], "%.2f")
