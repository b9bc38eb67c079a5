#!/usr/bin/env python3
"""Memory per route at 1M routes from 2 and from 10 BGP peers, ours and BIRD 2.

The table micro-benchmark (rt_bench's `mem/*` rows) measures our table
core alone, and bench/run.sh compares with BIRD 2 on static routes from
one source only. This runs the real load of the issue's memory item in
both daemons: bgpblast as N peers into one table (converge.py's `single`
layout), 1M routes in all (2 x 500k: every prefix from both peers;
10 x 100k: 2.5 paths per prefix), and reads the daemon once it settled:
RSS and `show memory`'s routing tables and attributes (effective plus
overhead). The same daemon with the same peers sending one route each is
the baseline the growth per route is taken over. Medians of --runs runs,
daemons interleaved run by run; a markdown table on stdout.

  bench/mem_peers.py --bird build/bird [--runs 3] [--settle 1]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOADS = [(2, 500000), (10, 100000)]
UNITS = {"B": 1, "kB": 1024, "MB": 1 << 20, "GB": 1 << 30}


def mem_bytes(text, key):
    """`show memory`'s line KEY: effective + overhead in bytes (last such line)."""
    found = re.findall(r"^ *%s: +([\d.]+) +(\S+) +([\d.]+) +(\S+)" % re.escape(key), text, re.M)
    if not found:
        raise RuntimeError("no %r in show memory" % key)
    a, au, b, bu = found[-1]
    return float(a) * UNITS[au] + float(b) * UNITS[bu]


def measure(args, daemon, peers, routes):
    cmd = [sys.executable, os.path.join(HERE, "converge.py"), "--daemon", daemon, "--layout", "single",
           "--peers", str(peers), "--routes", str(routes), "--runs", "1", "--show-memory",
           "--settle", str(args.settle), "--bird", args.bird, "--bird2", args.bird2]
    if args.bgpblast:
        cmd += ["--bgpblast", args.bgpblast]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=args.timeout).stdout
    later = re.search(r"^RSS [\d.]+ s later: (\d+) KiB$", out, re.M)
    if not later:
        raise RuntimeError("converge.py gave no RSS:\n" + out[-2000:])
    tables = mem_bytes(out, "Routing tables") + mem_bytes(out, "Route attributes")
    return int(later.group(1)) * 1024, tables


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bird", default=os.path.join(HERE, "..", "build", "bird"))
    ap.add_argument("--bird2", default="/usr/sbin/bird")
    ap.add_argument("--bgpblast")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--settle", type=float, default=1.0, help="seconds after convergence before reading")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()

    res = {}
    for run in range(args.runs):
        for peers, routes in LOADS:
            for daemon in ("ours", "bird2"):
                for key, per in (("base", 1), ("load", routes)):
                    r = measure(args, daemon, peers, per)
                    res.setdefault((daemon, peers, key), []).append(r)
                    sys.stderr.write("run %d %s %d x %d: RSS %.1f MiB, tables+attrs %.1f MiB\n"
                                     % (run + 1, daemon, peers, per, r[0] / 2**20, r[1] / 2**20))

    med = lambda xs: statistics.median(xs)
    print("| peers x routes | daemon | RSS MiB | RSS growth B/route | tables+attrs B/route | ratio ours / BIRD 2 (RSS growth) |")
    print("|---|---|--:|--:|--:|--:|")
    for peers, routes in LOADS:
        total = peers * routes
        growth = {}
        for daemon in ("ours", "bird2"):
            load, base = res[(daemon, peers, "load")], res[(daemon, peers, "base")]
            rss = med([x[0] for x in load])
            growth[daemon] = (rss - med([x[0] for x in base])) / total
            tab = (med([x[1] for x in load]) - med([x[1] for x in base])) / total
            ratio = "%.2f" % (growth["ours"] / growth["bird2"]) if daemon == "bird2" else ""
            print("| %d x %d | %s | %.1f | %.0f | %.0f | %s |"
                  % (peers, routes, "ours" if daemon == "ours" else "BIRD 2", rss / 2**20, growth[daemon], tab, ratio))


if __name__ == "__main__":
    main()
