#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""report.py - the plots and tables of docs/simulation.md from coltune-sim
outputs (their measure.csv files). A development helper, not installed:

  python3 smpi/report.py radix DIR... OUT.png    TuNA time against radix, one
                                                 line per size, each normalised
                                                 to its best radix ([Fan2024]
                                                 Fig. 7)
  python3 smpi/report.py scaling DIR... SIZE OUT.png
                                                 the best of each algorithm
                                                 family and every native
                                                 against P (the runs of
                                                 several DIRs together)
  python3 smpi/report.py sizes DIR P OUT.png     one collective at one P: every
                                                 algorithm and native against
                                                 the size
  python3 smpi/report.py table DIR...            markdown: per (P, size) the
                                                 best coltune algorithm, the
                                                 natives, the speedups
  python3 smpi/report.py sdde DIR                markdown: per (P, size) every
                                                 SDDE algorithm's time and the
                                                 most inter-node messages a
                                                 rank sent (from DIR/csv/, so
                                                 the sizes finished by a run
                                                 that timed out count)

Needs gnuplot (Debian: gnuplot-nox) for the pictures.
"""

import csv
import glob
import math
import os
import subprocess
import sys


def rows_of(dirs):
    rows = []
    for d in dirs:
        with open(os.path.join(d, "measure.csv"), newline="") as f:
            rows += [r for r in csv.DictReader(f) if r["status"] == "ok"]
    return rows


def fmt_size(n):
    for unit, mult in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= mult and n % mult == 0:
            return "%d %siB" % (n // mult, unit)
    return "%d B" % n


def family(r):
    """An algorithm family for the scaling plot."""
    if r["algorithm"] == "native":
        return "native " + r["params"].replace("smpi=", "")
    return r["algorithm"]


def plot(out, title, xlabel, ylabel, series, logx=True, logy=True, xtics=None):
    """series: [(name, [(x, y), ...])]."""
    data = out + ".dat"
    with open(data, "w") as f:
        for name, pts in series:
            f.write('# "%s"\n' % name)
            for x, y in sorted(pts):
                f.write("%g %g\n" % (x, y))
            f.write("\n\n")
    cmds = ["set terminal pngcairo size 900,560 font ',10'", "set output '%s'" % out,
            "set title '%s' noenhanced" % title, "set xlabel '%s'" % xlabel,
            "set ylabel '%s'" % ylabel, "set key outside right noenhanced", "set grid"]
    if logx:
        cmds.append("set logscale x 2")
    if logy:
        cmds.append("set logscale y")
    if xtics:
        cmds.append("set xtics (%s)" % ", ".join('"%s" %g' % (l, x) for l, x in xtics))
        xs = [x for _, x in xtics]
        cmds.append("set xrange [%g:%g]" % (min(xs) / 1.3, max(xs) * 1.3))
    cmds.append("plot " + ", ".join("'%s' index %d using 1:2 with linespoints title '%s'" % (
        data, i, name) for i, (name, _) in enumerate(series)))
    res = subprocess.run(["gnuplot"], input="\n".join(cmds), text=True, capture_output=True)
    if res.returncode != 0:
        sys.exit("gnuplot: %s" % res.stderr)
    os.remove(data)
    print(out)


def radix(dirs, out):
    rows = [r for r in rows_of(dirs) if r["algorithm"] == "tuna"]
    series = []
    for size in sorted({int(r["size"]) for r in rows}):
        pts = [(int(r["params"].split("=")[1]), float(r["median_us"])) for r in rows
               if int(r["size"]) == size]
        best = min(y for _, y in pts)
        series.append((fmt_size(size), [(x, y / best) for x, y in pts]))
    P = rows[0]["P"]
    plot(out, "TuNA on %s, P=%s: time / best time against radix" % (
        os.path.basename(dirs[0].rstrip("/")), P), "radix r", "time / time at best radix",
        series, logy=False)


def scaling(dirs, size, out):
    rows = [r for r in rows_of(dirs) if int(r["size"]) == size and r["algorithm"] != "pmpi"]
    best = {}
    for r in rows:
        k = (family(r), int(r["P"]))
        best[k] = min(best.get(k, float("inf")), float(r["median_us"]))
    names = sorted({k[0] for k in best})
    series = [(n, [(P, t) for (m, P), t in best.items() if m == n]) for n in names]
    plot(out, "%s on %s, S=%s: best of each algorithm, natives" % (
        rows[0]["collective"], " + ".join(os.path.basename(d.rstrip("/")) for d in dirs),
        fmt_size(size)), "P", "time (us, simulated)", series)


def sizes(d, P, out):
    rows = [r for r in rows_of([d]) if int(r["P"]) == P and r["algorithm"] != "pmpi"]
    coll = rows[0]["collective"]
    names = sorted({(r["algorithm"], r["params"]) for r in rows})
    series = [(("native " + p.replace("smpi=", "")) if a == "native" else
               (a + (":" + p if p else "")),
               [(int(r["size"]), float(r["median_us"])) for r in rows
                if (r["algorithm"], r["params"]) == (a, p)]) for a, p in names]
    ticks = sorted({int(r["size"]) for r in rows})
    plot(out, "%s on %s, P=%d" % (coll, os.path.basename(d.rstrip("/")), P),
         "size S per rank", "time (us, simulated)", series,
         xtics=[(fmt_size(x), x) for x in ticks])


def table(dirs):
    rows = rows_of(dirs)
    cells = {}
    for r in rows:
        cells.setdefault((r["collective"], int(r["P"]), int(r["size"])), []).append(r)
    print("| collective | P | nodes | S | best coltune algorithm | us | reference (pmpi) us "
          "| best native | us | vs reference | vs best native |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(cells):
        rs = cells[key]
        ref = [r for r in rs if r["algorithm"] == "pmpi"]
        nat = [r for r in rs if r["algorithm"] == "native"]
        algs = [r for r in rs if r["algorithm"] not in ("pmpi", "native")]
        if not algs:
            continue
        b = min(algs, key=lambda r: float(r["median_us"]))
        bt = float(b["median_us"])
        rt = float(ref[0]["median_us"]) if ref else None
        n = min(nat, key=lambda r: float(r["median_us"])) if nat else None
        print("| %s | %d | %s | %s | %s | %.1f | %s | %s | %s | %s | %s |" % (
            key[0], key[1], b["nodes"], fmt_size(key[2]),
            b["algorithm"] + (":" + b["params"] if b["params"] else ""), bt,
            "%.1f" % rt if rt else "-", n["params"].replace("smpi=", "") if n else "-",
            "%.1f" % float(n["median_us"]) if n else "-",
            "%.2fx" % (rt / bt) if rt else "-",
            "%.2fx" % (float(n["median_us"]) / bt) if n else "-"))


def run_rows(d):
    """The rows of every run coltune-sim made in d (d/csv/*.csv): the sizes a
    run finished count even when a later size timed out. Each run also
    measures the personalized exchange; an algorithm's own run gives its row."""
    rows = {}
    for path in sorted(glob.glob(os.path.join(d, "csv", "*.csv"))):
        label = os.path.basename(path)[:-4].split("-", 2)[2]
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                key = (r["algorithm"], r["P"], r["size"])
                if r["status"] == "ok" and (key not in rows or r["algorithm"] == label):
                    rows[key] = r
    return list(rows.values())


def sdde(d):
    rows = run_rows(d)
    algs = sorted({r["algorithm"] for r in rows})
    print("| P | nodes | S | " + " | ".join(algs) + " | best vs personalized |")
    print("|---|---|---|" + "---|" * len(algs) + "---|")
    for key in sorted({(int(r["P"]), int(r["size"])) for r in rows}):
        cell = {r["algorithm"]: r for r in rows if (int(r["P"]), int(r["size"])) == key}
        best = min(cell.values(), key=lambda r: float(r["median_us"]))
        ref = cell.get("personalized")
        print("| %d | %s | %s | %s | %s |" % (
            key[0], best["nodes"], fmt_size(key[1]), " | ".join(
                "%.1f (%s)" % (float(cell[a]["median_us"]), cell[a]["internode_msgs"] or "-")
                if a in cell else "-" for a in algs),
            "%.2fx %s" % (float(ref["median_us"]) / float(best["median_us"]), best["algorithm"])
            if ref else "-"))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what, args = sys.argv[1], sys.argv[2:]
    if what == "radix":
        radix(args[:-1], args[-1])
    elif what == "scaling":
        scaling(args[:-2], int(args[-2]), args[-1])
    elif what == "sizes":
        sizes(args[0], int(args[1]), args[2])
    elif what == "table":
        table(args)
    elif what == "sdde":
        sdde(args[0])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
