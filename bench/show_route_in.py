#!/usr/bin/env python3
"""What the `trie` table option costs and buys, ours against BIRD 2.

Starts each daemon with N static routes in table t (bench/cli_stall.py's
/24s, with one in COVER also bringing its /16 and /20), once without and
once with `trie`, runs interleaved. Per start it reports the time until
the table holds every route, the tables' memory by `show memory`, and the
median time `show route in PREFIX table t count` takes (over the control
socket, QUERIES times each) for a /16, a /8 and 0.0.0.0/0. Medians over
the runs at the end.

  bench/show_route_in.py --bird build/bird [--bird2 /usr/sbin/bird] [--nets 1000000] [--runs 3]
"""
import argparse
import os
import re
import statistics
import tempfile
import time

from cli_stall import connect, start_loaded, write_conf

COVER = 64
QUERIES = 5
PREFIXES = ["193.1.0.0/16", "193.0.0.0/8", "0.0.0.0/0"]


def ask(s, cmd):
    """The reply to cmd, up to its last line (a code and a space)."""
    s.sendall(cmd.encode() + b"\n")
    buf = b""
    while not re.search(rb"(^|\n)\d{4} [^\n]*\n$", buf):
        chunk = s.recv(1 << 20)
        if not chunk:
            raise RuntimeError("connection closed")
        buf += chunk
    return buf


def memory_of_tables(s):
    reply = ask(s, "show memory")
    m = re.search(rb"Routing tables:\s+([\d.]+)\s+(\S?B)", reply)
    scale = {b"B": 1, b"kB": 1e3, b"MB": 1e6, b"GB": 1e9}[m.group(2)]
    return float(m.group(1)) * scale


def one_start(bird, nets, trie):
    with tempfile.TemporaryDirectory() as d:
        total = write_conf(os.path.join(d, "bird.conf"), nets, "trie;" if trie else "", COVER)
        p, sock, load = start_loaded(bird, d, total)
        try:
            s, rest = connect(sock)
            assert not rest
            res = {"load": load, "tables": memory_of_tables(s)}
            for px in PREFIXES:
                took = []
                for _ in range(QUERIES):
                    t0 = time.monotonic()
                    ask(s, "show route in %s table t count" % px)
                    took.append(time.monotonic() - t0)
                res[px] = statistics.median(took)
            s.close()
            return total, res
        finally:
            p.terminate()
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bird", required=True, help="our daemon")
    ap.add_argument("--bird2", default="/usr/sbin/bird", help="BIRD 2")
    ap.add_argument("--nets", type=int, default=1000000, help="/24s (the /16s and /20s come on top)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    daemons = [("ours", args.bird)] + ([("bird2", args.bird2)] if os.access(args.bird2, os.X_OK) else [])
    results = {}
    for r in range(args.runs):
        for trie in (0, 1):
            for name, bird in daemons:
                total, res = one_start(bird, args.nets, trie)
                results.setdefault((name, trie), []).append(res)
                print("run %d %s %s: %d routes loaded in %.2f s, tables %.1f MB; show route in: %s" % (
                    r + 1, name, "trie" if trie else "no trie", total, res["load"], res["tables"] / 1e6,
                    ", ".join("%s %.1f ms" % (px, 1000 * res[px]) for px in PREFIXES)), flush=True)
    print("\nmedians of %d runs:" % args.runs)
    print("| daemon | trie | load s | tables MB | " + " | ".join("in %s ms" % px for px in PREFIXES) + " |")
    print("|---|---|--:|--:|" + "--:|" * len(PREFIXES))
    for (name, trie), rs in sorted(results.items()):
        med = {k: statistics.median(x[k] for x in rs) for k in rs[0]}
        print("| %s | %s | %.2f | %.1f | %s |" % (name, "yes" if trie else "no", med["load"], med["tables"] / 1e6,
                                                  " | ".join("%.1f" % (1000 * med[px]) for px in PREFIXES)))


if __name__ == "__main__":
    main()
