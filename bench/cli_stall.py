#!/usr/bin/env python3
"""How long other CLI clients wait while one lists a big table.

The CLI runs in the daemon's main loop: a step of a listing that takes
long holds every other CLI session (and reconfiguration) meanwhile. This
starts a daemon (ours or BIRD 2) with N static routes in table t (`sorted`
or not), lists it with `show route table t` from one connection, and
meanwhile sends `show status` from another, one at a time; it reports the
listing's time and how long each `show status` took to answer during it
(median and worst), per run.

  bench/cli_stall.py --bird build/bird --nets 1000000 [--sorted] [--runs 3]
"""
import argparse
import math
import os
import re
import socket
import statistics
import subprocess
import tempfile
import threading
import time

SPACE = 222 << 16           # the /24s of 1.0.0.0/8 to 223.0.0.0/8 but 127/8
MULT = 40507
assert math.gcd(MULT, SPACE) == 1


def read_until_end(s, buf=b""):
    """Read one reply: its last line has a code and a space (`0000 `, `0013 ...`)."""
    while True:
        lines = buf.split(b"\n")
        for i, line in enumerate(lines[:-1]):
            if len(line) >= 5 and line[:4].isdigit() and line[4:5] == b" ":
                return b"\n".join(lines[i + 1:])
        if len(lines) > 1:
            buf = lines[-1]
        chunk = s.recv(1 << 20)
        if not chunk:
            raise RuntimeError("connection closed")
        buf += chunk


def connect(sock):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    rest = read_until_end(s)
    return s, rest


def command(s, rest, cmd):
    s.sendall(cmd.encode() + b"\n")
    return read_until_end(s, rest)


def count_routes(sock):
    s, rest = connect(sock)
    try:
        s.sendall(b"show route table t count\n")
        buf = rest
        while b"routes for" not in buf:
            buf += s.recv(65536)
        return int(re.search(rb"(\d+) of \d+ routes for", buf).group(1))
    finally:
        s.close()


def write_conf(path, nets, table_opts="", covering=0):
    """A config of nets static routes in table t (with table_opts): a /24
    each of 1.0.0.0 to 223.255.255.0, in an order unlike the sorted one
    (i -> i * MULT mod SPACE is one to one: coprime); none in 127/8, which
    BIRD 2 takes for host scope and drops. covering: one /24 in that many
    also brings its /16 and /20, so that prefixes nest. The routes written."""
    routes = nets
    with open(path, "w") as f:
        f.write("router id 10.0.0.1;\nipv4 table t%s;\nprotocol static st {\n  ipv4 { table t; };\n"
                % (" { %s }" % table_opts if table_opts else ""))
        for i in range(nets):
            j = i * MULT % SPACE
            a = 1 + (j >> 16)
            a += a >= 127
            f.write("  route %d.%d.%d.0/24 blackhole;\n" % (a, (j >> 8) & 255, j & 255))
            if covering and j % covering == 0:
                f.write("  route %d.%d.0.0/16 blackhole;\n  route %d.%d.%d.0/20 blackhole;\n"
                        % (a, (j >> 8) & 255, a, (j >> 8) & 255, j & 0xf0))
                routes += 2
        f.write("}\n")
    return routes


def start_loaded(bird, d, nets, timeout=300):
    """Start bird on d's bird.conf and wait until table t holds nets routes:
    (process, control socket, seconds it took)."""
    sock = os.path.join(d, "bird.ctl")
    t0 = time.monotonic()
    p = subprocess.Popen([bird, "-f", "-c", os.path.join(d, "bird.conf"), "-s", sock, "-P",
                          os.path.join(d, "pid")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.time() + timeout
    while True:
        try:
            if count_routes(sock) >= nets:
                return p, sock, time.monotonic() - t0
        except (OSError, RuntimeError, AttributeError):
            pass
        if time.time() > end:
            p.terminate()
            p.wait()
            raise RuntimeError("the routes did not load")
        time.sleep(0.05)


def one_run(args, d):
    write_conf(os.path.join(d, "bird.conf"), args.nets, "sorted;" if args.sorted else "")
    p, sock, _ = start_loaded(args.bird, d, args.nets)
    try:
        probe, prest = connect(sock)
        lister, lrest = connect(sock)
        done = threading.Event()
        listing = {}

        def list_all():
            t0 = time.monotonic()
            lister.sendall(b"show route table t\n")
            read_until_end(lister, lrest)
            listing["s"] = time.monotonic() - t0
            done.set()

        th = threading.Thread(target=list_all)
        th.start()
        waits = []
        while not done.is_set():
            t0 = time.monotonic()
            prest = command(probe, prest, "show status")
            waits.append(time.monotonic() - t0)
            time.sleep(0.002)
        th.join()
        probe.close()
        lister.close()
        return listing["s"], waits
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bird", required=True)
    ap.add_argument("--nets", type=int, default=1000000)
    ap.add_argument("--sorted", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if args.nets > SPACE:
        ap.error("at most %d nets" % SPACE)
    for r in range(args.runs):
        with tempfile.TemporaryDirectory() as d:
            secs, waits = one_run(args, d)
        print("%s %s nets=%d run=%d: listing %.2f s; show status during it: %d answers, median %.1f ms, worst %.1f ms"
              % (os.path.basename(args.bird), "sorted" if args.sorted else "unsorted", args.nets, r + 1, secs,
                 len(waits), 1000 * statistics.median(waits), 1000 * max(waits)), flush=True)


if __name__ == "__main__":
    main()
