# SPDX-License-Identifier: BSD-3-Clause
"""Markdown tables of coltune-bench CSV files (docs/cluster.md):
   python3 table.py DIR FILE.csv ...  -> one table per file, speedup over the
   reference (its time in us), inter-host message counts in brackets for the
   sparse exchanges."""
import csv, sys, os
d = sys.argv[1]
def rows(f):
    return list(csv.DictReader(open(os.path.join(d, f))))
def size(s):
    s = int(s)
    return "%d KiB" % (s // 1024) if s >= 1024 and s % 1024 == 0 else "%d B" % s
def alg(r):
    return r["algorithm"] + (":" + r["params"] if r["params"] else "")
def pivot(f, with_msgs=False):
    rs = [r for r in rows(f) if r["status"] == "ok"]
    sizes = sorted({int(r["size"]) for r in rs})
    algs = []
    for r in rs:
        if alg(r) not in algs:
            algs.append(alg(r))
    cell = {(alg(r), int(r["size"])): r for r in rs}
    out = ["| algorithm | " + " | ".join(size(s) for s in sizes) + " |",
           "|---|" + "---|" * len(sizes)]
    for a in algs:
        cs = []
        for s in sizes:
            r = cell.get((a, s))
            if r is None:
                cs.append("-")
                continue
            t = "%.2fx" % float(r["speedup"])
            if a.startswith("pmpi") or a.startswith("personalized") and float(r["speedup"]) == 1.0:
                t = "%.0f us" % float(r["median_us"])
            if with_msgs and r["internode_msgs"]:
                t += " (%s)" % r["internode_msgs"]
            cs.append(t)
        out.append("| `%s` | " % a + " | ".join(cs) + " |")
    return "\n".join(out)
for f in sys.argv[2:]:
    print("#### " + f)
    print(pivot(f, with_msgs="crs" in f))
    print()
