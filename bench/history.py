#!/usr/bin/env python3
"""history.py - issue 11's figures over every whole lwc-bench run kept in
bench/results, oldest first: a table (stdout) and two plots.

    python3 bench/history.py [--records 1000000] [--img docs/img] [RESULTS_DIR]

A run counts when it has all ten SELECT lines without a simulated round
trip (a whole `make bench`, or `--only load,select` and more); its date is
the run's own start time.  Per run: the ten SELECT ratios (LWC median /
PostgreSQL median), their geometric mean, the two loads, INSERT / UPDATE /
DELETE of 1M rows and the 64 clients' speedup over one, beside the CPU
model and the cloud store engine, since runs were made on more than one
machine type and engine.  The plots (gnuplot, as lwc-bench's own):
IMG/history-<N>-select.png (the ratios of clustered 100, scattered 10k and
100k and the geometric mean, each with its target) and
IMG/history-<N>-other.png (loads, INSERT / UPDATE / DELETE, 64 clients).
Nothing is written to bench/results; the gnuplot script and its data go to
a temporary directory and are removed.
"""
import glob, json, math, os, subprocess, sys, tempfile

def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def load_runs(rdir, records):
    runs = []
    for f in glob.glob(os.path.join(rdir, "lwc-bench-*.json")):
        try:
            d = json.load(open(f))
        except (OSError, ValueError):
            continue
        if d.get("records") != records:
            continue
        sel = [s for s in d.get("select") or [] if s.get("rtt_ms", 0) == 0]
        if len(sel) != 10 or any(s.get("ratio") in (None, 0) for s in sel):
            continue
        tag = os.path.basename(f)[len("lwc-bench-"):-len(".json")]
        mod = {(m["op"], m["rows"]): m["ratio"] for m in d.get("modify") or []}
        c64 = [c["speedup_vs_1"] for c in d.get("clients") or [] if c["clients"] == 64]
        runs.append({
            "tag": tag,
            "started": d.get("started", ""),
            "cpu": (d.get("machine") or {}).get("cpu_model", "?"),
            "store": (d.get("lwc") or {}).get("cloud_store", "lmdb"),
            "sel": {(s["layout"], s["rows"]): s["ratio"] for s in sel},
            "gm": geomean([s["ratio"] for s in sel]),
            "load": [l["ratio"] for l in d.get("load") or []],
            "iud": [mod.get((op, records)) for op in ("INSERT", "UPDATE", "DELETE")],
            "c64": c64[0] if c64 else None,
        })
    runs.sort(key=lambda r: (r["started"], r["tag"]))
    return runs


def fmt(v, f="%.2f"):
    return f % v if v is not None else "-"


def table(runs):
    cols = [("clustered", k) for k in (100, 1000, 10000, 100000, 1000000)] + \
           [("scattered", k) for k in (100, 1000, 10000, 100000, 1000000)]
    names = ["c100", "c1k", "c10k", "c100k", "c1m", "s100", "s1k", "s10k", "s100k", "s1m"]
    print("# ratios LWC / PostgreSQL (medians); targets: clustered <= 4x, scattered <= 20x, "
          "geometric mean <= 6x, load <= 3x, INSERT <= 2x, UPDATE <= 1x, DELETE <= 3x, "
          "64 clients >= 40x one client")
    print("%-20s %-10s %-5s " % ("started", "cpu", "store") + " ".join("%6s" % n for n in names) +
          " %6s %11s %17s %6s  %s" % ("geo", "load", "ins/upd/del 1M", "64c", "run"))
    for r in runs:
        sel = " ".join("%6.2f" % r["sel"][c] for c in cols)
        load = "/".join(fmt(x) for x in r["load"]) or "-"
        iud = "/".join(fmt(x) for x in r["iud"])
        print("%-20s %-10s %-5s %s %6.2f %11s %17s %6s  %s" % (
            r["started"][:16], r["cpu"][:10], r["store"][:5], sel, r["gm"], load, iud,
            fmt(r["c64"], "%.1f"), r["tag"]))


def plots(runs, records, img):
    tmp = tempfile.mkdtemp(prefix="lwc-history-")
    dat = os.path.join(tmp, "runs.dat")
    with open(dat, "w") as f:
        f.write("# i started c100 s10k s100k gm load_c load_s ins upd del c64\n")
        for i, r in enumerate(runs):
            vals = [r["sel"][("clustered", 100)], r["sel"][("scattered", 10000)],
                    r["sel"][("scattered", 100000)], r["gm"]] + \
                   (r["load"] + [None, None])[:2] + r["iud"] + [r["c64"]]
            f.write("%d %s %s\n" % (i, r["started"][:10],
                                    " ".join(fmt(v, "%.4f") if v is not None else "NaN"
                                             for v in vals)))
    n = "%dm" % (records // 1000000) if records % 1000000 == 0 else "%d" % records
    xt = ", ".join('"%s" %d' % (r["started"][5:10], i) for i, r in enumerate(runs)
                   if i == 0 or r["started"][:10] != runs[i - 1]["started"][:10])
    gp = os.path.join(tmp, "history.gp")
    common = ("set terminal pngcairo size 1400,560 font 'Sans,11'\n"
              "set grid lc rgb '#dddddd'\nset key outside right top\n"
              "set xlabel 'whole runs in bench/results, oldest first (first run of each day marked)'\n"
              "set xtics (%s) rotate by -45\nset logscale y\nset format y '%%g'\n" % xt)
    with open(gp, "w") as f:
        f.write(common)
        f.write("set output '%s/history-%s-select.png'\n" % (img, n))
        f.write("set title 'SELECT, LWC / PostgreSQL (N = %d): the lines at or past their targets, "
                "and the geometric mean of all ten'\n" % records)
        f.write("set ylabel 'ratio (log scale)'\n")
        f.write("plot '%s' u 1:3 w lp pt 7 lc rgb '#1f77b4' t 'clustered 100', "
                "4 w l dt 2 lc rgb '#1f77b4' t 'clustered target 4x', "
                "'%s' u 1:4 w lp pt 5 lc rgb '#ff7f0e' t 'scattered 10k', "
                "'%s' u 1:5 w lp pt 4 lc rgb '#d62728' t 'scattered 100k', "
                "20 w l dt 2 lc rgb '#d62728' t 'scattered target 20x', "
                "'%s' u 1:6 w lp lw 2 pt 9 lc rgb '#2ca02c' t 'geometric mean, 10 lines', "
                "6 w l dt 2 lc rgb '#2ca02c' t 'geometric mean target 6x'\n" % (dat, dat, dat, dat))
        f.write("set output '%s/history-%s-other.png'\n" % (img, n))
        f.write("set title 'Load, INSERT / UPDATE / DELETE of %d rows (LWC / PostgreSQL) and "
                "64 clients (speedup over one)'\n" % records)
        f.write("set ylabel 'ratio or speedup (log scale)'\n")
        f.write("plot '%s' u 1:7 w lp pt 7 t 'load clustered (target 3x)', "
                "'%s' u 1:8 w lp pt 5 t 'load scattered', "
                "'%s' u 1:9 w lp pt 4 t 'INSERT (target 2x)', "
                "'%s' u 1:10 w lp pt 6 t 'UPDATE (target 1x)', "
                "'%s' u 1:11 w lp pt 8 t 'DELETE (target 3x)', "
                "'%s' u 1:12 w lp lw 2 pt 9 lc rgb 'black' t '64 clients (target 40x)', "
                "40 w l dt 2 lc rgb 'black' t '40x'\n" % ((dat,) * 6))
    try:
        subprocess.run(["gnuplot", gp], check=True)
        print("# plots: %s/history-%s-select.png, %s/history-%s-other.png" % (img, n, img, n))
    finally:
        for p in (dat, gp):
            os.unlink(p)
        os.rmdir(tmp)


def main(argv):
    records, img, rdir = 1000000, "docs/img", "bench/results"
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--records" and args:
            records = int(args.pop(0))
        elif a == "--img" and args:
            img = args.pop(0)
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        elif not a.startswith("-"):
            rdir = a
        else:
            sys.stderr.write("history.py: unknown option %s (--help)\n" % a)
            return 2
    runs = load_runs(rdir, records)
    if not runs:
        sys.stderr.write("history.py: no whole run of N = %d in %s\n" % (records, rdir))
        return 1
    table(runs)
    plots(runs, records, img)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
