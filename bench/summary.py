#!/usr/bin/env python3
"""Markdown summary of a stats CSV (BIRD's format): per layout, peers and
total routes, the median convergence time and RSS of each version, and the
ratio of the reference version to ours.

  bench/summary.py doc/threads/stats.csv [--ours bird-mt-0.1.0] [--ref bird-2.0.12]
                   [--since 2026-12-01@03:50]

--since keeps the rows of one matrix run (their DATETIME at or after it):
rows of different runs differ in method (RSS sampled or the high-water
mark) and in what the code was.
"""
import argparse
import collections
import csv
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--ours", default="bird-mt-0.1.0")
    ap.add_argument("--ref", default="bird-2.0.12")
    ap.add_argument("--since", default="", help="DATETIME as in the rows, e.g. 2026-12-01@03:50")
    a = ap.parse_args()
    g = collections.defaultdict(list)
    with open(a.csv) as f:
        for r in list(csv.reader(f, delimiter=";"))[1:]:
            if len(r) < 13 or r[12] < a.since:
                continue
            ver, typ, peers, _, _, total, _, rss = r[:8]
            g[(typ, int(peers), int(total), ver)].append((float(r[11]), int(rss)))
    print("| layout | peers | routes | ours: s | %s: s | ratio | ours: RSS MiB | %s: RSS MiB | runs |" % (a.ref, a.ref))
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for typ, peers, total in sorted({k[:3] for k in g}):
        o, b = g.get((typ, peers, total, a.ours)), g.get((typ, peers, total, a.ref))
        if not o or not b:
            continue
        mo, mb = statistics.median(x[0] for x in o), statistics.median(x[0] for x in b)
        ro, rb = statistics.median(x[1] for x in o) / 1024, statistics.median(x[1] for x in b) / 1024
        print("| %s | %d | %d | %.3f | %.3f | %.1fx | %.0f | %.0f | %d+%d |"
              % (typ, peers, total, mo, mb, mb / mo, ro, rb, len(o), len(b)))
    threads = sorted((k, x) for k, x in g.items() if k[3].startswith(a.ours + "/t"))
    if threads:
        print("\n| threads | layout | peers | routes | median s | runs |\n|---|---|--:|--:|--:|--:|")
        for (typ, peers, total, v), x in threads:
            print("| %s | %s | %d | %d | %.3f | %d |" % (v.split("/t")[1], typ, peers, total,
                                                      statistics.median(y[0] for y in x), len(x)))


if __name__ == "__main__":
    main()
