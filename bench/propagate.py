#!/usr/bin/env python3
"""Propagation bench (the ze-perf shape): one sender, one receiver, R routes
through the daemon under test, per-route latency on one clock.

For each iteration and each daemon (the order rotates every iteration, so
load from other work on the machine hits all of them alike): generate its
config, start a fresh daemon, run `bgpblast --propagate` (the sender peer
and the receiver peer in one process), read its JSON line, stop the daemon.
The sender (AS 65001) and the receiver (AS 64901) are eBGP neighbors of the
DUT (AS 64500); import all, export all. bgpblast checks that every route
arrives with its AS path behind the DUT's ASN (unchanged with --rs) and
with its origin and communities, then withdraws everything.

Daemons: ours (build/bird), bird2 (Debian's /usr/sbin/bird, the same
config), gobgp (gobgpd with the equivalent TOML). GoBGP treats an UPDATE
whose NEXT_HOP is a loopback address as a withdrawal, so the sender's routes
carry next hop 192.0.2.1 there (an attribute only; every socket stays on
127.80.0.0/16). ExaBGP is no DUT: it does not forward routes.

  bench/propagate.py                                  # 100k routes, 5 iterations, all three
  bench/propagate.py --daemons ours bird2 --routes 2000 --iterations 1
  bench/propagate.py --csv doc/bench/propagate.csv    # also append raw rows
  bench/propagate.py --table doc/bench/propagate.csv  # the table again, from the rows

Prints one line per run, then a Markdown table: the median and the range of
every metric per daemon, and ours/other ratios of the medians.
"""

import argparse
import datetime
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLAST_DIR = os.path.join(REPO, "bench", "bgpblast")
BGPBLAST = os.path.join(BLAST_DIR, "bgpblast")
DUT_AS, SENDER_AS, RECEIVER_AS = 64500, 65001, 64901
GOBGP_NEXT_HOP = "192.0.2.1"  # TEST-NET-1: GoBGP refuses loopback next hops


class Addrs:
    """DUT 127.80.B.1, sender 127.80.B+1.1, receiver 127.80.B+2.1."""

    def __init__(self, block):
        self.dut = "127.80.%d.1" % block
        self.sender_base = "127.80.%d.0" % (block + 1)
        self.receiver_base = "127.80.%d.0" % (block + 2)
        self.sender = "127.80.%d.1" % (block + 1)
        self.receiver = "127.80.%d.1" % (block + 2)


def bird_config(a, port, rs):
    rsc = " rs client;" if rs else ""
    proto = ("protocol bgp %s { local %s port %d as %d; neighbor %s as %d; passive; multihop;%s"
             " hold time 240; ipv4 { import all; export all; }; }")
    return "\n".join([
        "router id %s;" % a.dut,
        "protocol device {}",
        proto % ("sender", a.dut, port, DUT_AS, a.sender, SENDER_AS, rsc),
        proto % ("receiver", a.dut, port, DUT_AS, a.receiver, RECEIVER_AS, rsc),
    ]) + "\n"


def gobgp_config(a, port, rs):
    out = ['[global.config]', '  as = %d' % DUT_AS, '  router-id = "%s"' % a.dut, '  port = %d' % port,
           '  local-address-list = ["%s"]' % a.dut]
    for addr, asn in ((a.sender, SENDER_AS), (a.receiver, RECEIVER_AS)):
        out += ['[[neighbors]]',
                '  [neighbors.config]', '    neighbor-address = "%s"' % addr, '    peer-as = %d' % asn,
                '  [neighbors.timers.config]', '    hold-time = 240',
                '  [neighbors.transport.config]', '    passive-mode = true', '    local-address = "%s"' % a.dut,
                '  [neighbors.ebgp-multihop.config]', '    enabled = true', '    multihop-ttl = 255',
                '  [neighbors.route-server.config]', '    route-server-client = %s' % ("true" if rs else "false"),
                '  [[neighbors.afi-safis]]', '    [neighbors.afi-safis.config]',
                '      afi-safi-name = "ipv4-unicast"']
    return "\n".join(out) + "\n"


def tcp_sockets():
    """(local address:port in /proc hex, state) of every TCP socket."""
    out = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                out += [(l.split()[1], l.split()[3]) for l in f.readlines()[1:]]
        except OSError:
            pass
    return out


def listening(addr, port):
    """Is a socket of this host listening on addr:port or on *:port? (BIRD 2
    binds 0.0.0.0 even with `local`, ours the IPv6 wildcard.)"""
    o = [int(x) for x in addr.split(".")]
    want = {"%02X%02X%02X%02X:%04X" % (o[3], o[2], o[1], o[0], port), "00000000:%04X" % port, "0" * 32 + ":%04X" % port}
    return any(a in want and st == "0A" for a, st in tcp_sockets())


def free_port():
    """A port no socket uses, on any address."""
    while True:
        p = random.randrange(20000, 60000)
        if not any(a.endswith(":%04X" % p) for a, _ in tcp_sockets()):
            return p


def cpu_s(pid):
    """utime + stime of a running process, in seconds."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return None


def version(dut, binary):
    if dut == "gobgp":
        r = subprocess.run(["gobgpd", "--version"], capture_output=True, text=True)
        return "gobgp-" + r.stdout.split()[-1]
    r = subprocess.run([binary, "--version"], capture_output=True, text=True)
    v = (r.stdout + r.stderr).split()[-1]
    return ("bird-mt-" if dut == "ours" else "bird-") + v


def build_bgpblast():
    """Builds bgpblast when it is missing or older than a source file."""
    srcs = [os.path.join(BLAST_DIR, f) for f in os.listdir(BLAST_DIR) if f.endswith((".c", ".h"))]
    if os.path.exists(BGPBLAST) and all(os.path.getmtime(s) <= os.path.getmtime(BGPBLAST) for s in srcs):
        return
    subprocess.run([os.path.join(BLAST_DIR, "build.sh")], check=True)


def start_dut(dut, binary, a, port, rs, d):
    log = open(os.path.join(d, "daemon.log"), "wb")
    if dut == "gobgp":
        conf = os.path.join(d, "gobgpd.toml")
        with open(conf, "w") as f:
            f.write(gobgp_config(a, port, rs))
        api = "%s:%d" % (a.dut, free_port())
        cmd = ["gobgpd", "-f", conf, "-t", "toml", "--api-hosts", api, "--pprof-disable", "-p", "-l", "warn"]
    else:
        conf = os.path.join(d, "bird.conf")
        with open(conf, "w") as f:
            f.write(bird_config(a, port, rs))
        cmd = [binary, "-f", "-c", conf, "-s", os.path.join(d, "ctl"), "-P", os.path.join(d, "pid")]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    t0 = time.time()
    while not listening(a.dut, port):
        if proc.poll() is not None or time.time() - t0 > 30:
            stop_dut(proc)
            raise RuntimeError("%s did not start listening on %s:%d, see %s" % (dut, a.dut, port, d))
        time.sleep(0.01)
    return proc


def stop_dut(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def run_once(dut, routes, binary=None, rs=False, block=0, timeout=300, seed=1, keep=False):
    """One fresh daemon, one bgpblast --propagate run. Returns bgpblast's
    JSON summary plus dut, dut_cpu_s, dut_exit, dir (kept on failure)."""
    build_bgpblast()
    a = Addrs(block)
    port = free_port()
    d = tempfile.mkdtemp(prefix="prop.", dir="/tmp")
    proc = start_dut(dut, binary, a, port, rs, d)
    cmd = [BGPBLAST, "--propagate", "--dut", "%s:%d" % (a.dut, port), "--routes", str(routes),
           "--peer-base", a.sender_base, "--monitor-base", a.receiver_base,
           "--asn-base", str(SENDER_AS - 1), "--monitor-asn-base", str(RECEIVER_AS - 1),
           "--seed", str(seed), "--timeout", str(timeout), "--quiet"]
    if not rs:
        cmd += ["--prop-dut-as", str(DUT_AS)]
    if dut == "gobgp":
        cmd += ["--next-hop", GOBGP_NEXT_HOP]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 60)
        dut_cpu = cpu_s(proc.pid)
        alive = proc.poll() is None
    finally:
        code = stop_dut(proc)
    with open(os.path.join(d, "bgpblast.out"), "w") as f:
        f.write(out.stdout + out.stderr)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError("bgpblast printed no summary (exit %d), see %s" % (out.returncode, d))
    r = json.loads(lines[-1])
    r.update(dut=dut, dut_cpu_s=dut_cpu, dut_alive=alive, dut_exit=code, blast_exit=out.returncode, dir=d)
    if r["result"] == "ok" and alive and not keep:
        shutil.rmtree(d, ignore_errors=True)
        r["dir"] = None
    return r


# (JSON key, label, unit format, lower is better)
METRICS = [
    ("converge_s", "convergence, s", "%.3f", True),
    ("latency_p50_ms", "latency p50, ms", "%.1f", True),
    ("latency_p99_ms", "latency p99, ms", "%.1f", True),
    ("routes_per_s", "throughput, routes/s", "%.0f", False),
    ("withdraw_s", "withdrawal, s", "%.3f", True),
    ("lost", "lost routes", "%d", True),
    ("withdraw_lost", "withdrawals never seen", "%d", True),
    ("attr_bad", "wrong attributes", "%d", True),
    ("duplicates", "announced twice (implicit replace)", "%d", True),
    ("dut_cpu_s", "DUT CPU, s", "%.2f", True),
    ("updates_rcvd", "UPDATEs to the receiver, both phases", "%d", True),
    ("blast_cpu_s", "bgpblast CPU, s", "%.2f", True),
]

CSV_KEYS = ["dut", "version", "iteration", "routes", "result", "converge_s", "routes_per_s", "latency_min_ms",
            "latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "latency_max_ms", "withdraw_s",
            "withdraw_routes_per_s", "wd_latency_p50_ms", "wd_latency_p99_ms", "lost", "withdraw_lost",
            "attr_bad", "duplicates", "unexpected", "updates_rcvd", "next_hop", "dut_cpu_s", "blast_cpu_s",
            "datetime"]


def flatten(r):
    r["attr_bad"] = sum(r[k] for k in ("attr_bad_origin", "attr_bad_as_path", "attr_bad_communities",
                                       "attr_bad_large_communities"))
    r["blast_cpu_s"] = round(r["cpu_user_s"] + r["cpu_sys_s"], 3)
    return r


def fmt(f, v):
    return "n/a" if v is None else f % v


def table(rows, daemons, versions):
    by = {d: [r for r in rows if r["dut"] == d] for d in daemons}
    ok = [d for d in daemons if by[d]]
    head = "| metric | " + " | ".join("%s (%s): median [min, max]" % (d, versions[d]) for d in ok)
    others = [d for d in ok if d != "ours"] if "ours" in ok else []
    head += "".join(" | ours/%s" % d for d in others) + " |"
    out = [head, "|---" + "|--:" * (len(ok) + len(others)) + "|"]
    for key, label, f, _ in METRICS:
        cells, med = [], {}
        for d in ok:
            v = [r[key] for r in by[d] if r.get(key) is not None]
            if not v:
                cells.append("n/a")
                continue
            med[d] = statistics.median(v)
            cells.append("%s [%s, %s]" % (fmt(f, med[d]), fmt(f, min(v)), fmt(f, max(v))))
        for d in others:
            o, x = med.get("ours"), med.get(d)
            cells.append("%.2f" % (o / x) if o is not None and x else "n/a")
        out.append("| %s | %s |" % (label, " | ".join(cells)))
    out.append("| runs | %s |%s" % (" | ".join(str(len(by[d])) for d in ok), " |" * len(others)))
    return "\n".join(out)


def table_from_csv(path):
    with open(path) as f:
        lines = [l.rstrip("\n").split(";") for l in f if l.strip()]
    rows = []
    for v in lines[1:]:
        r = dict(zip(lines[0], v))
        for k, val in r.items():
            try:
                r[k] = float(val)
            except ValueError:
                r[k] = None if val in ("", "None") else val
        rows.append(r)
    daemons = list(dict.fromkeys(r["dut"] for r in rows))
    versions = {r["dut"]: r["version"] for r in rows}
    return table(rows, daemons, versions)


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return "%s, %d cores, %.0f GiB, %s, load average %.2f" % (model, os.cpu_count(), mem, platform.release(),
                                                             os.getloadavg()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--daemons", nargs="+", choices=["ours", "bird2", "gobgp"], default=["ours", "bird2", "gobgp"])
    ap.add_argument("--bird", default=os.path.join(REPO, "build", "bird"), help="our daemon binary")
    ap.add_argument("--routes", type=int, default=100000)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--rs", action="store_true", help="DUT as route server: AS path must arrive unchanged")
    ap.add_argument("--block", type=int, default=0, help="addresses 127.80.BLOCK..BLOCK+2.1 (0)")
    ap.add_argument("--timeout", type=int, default=300, help="per run, seconds")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--csv", help="append one raw row per run")
    ap.add_argument("--table", metavar="CSV", help="only print the table of the rows in CSV")
    args = ap.parse_args()
    if args.table:
        print(table_from_csv(args.table))
        return 0

    binaries = {"ours": args.bird, "bird2": "/usr/sbin/bird", "gobgp": shutil.which("gobgpd")}
    daemons = []
    for d in args.daemons:
        if binaries[d] and os.access(binaries[d], os.X_OK):
            daemons.append(d)
        else:
            print("# %s: not installed here (%s), skipped" % (d, binaries[d]), flush=True)
    versions = {d: version(d, binaries[d]) for d in daemons}
    print("# machine: %s" % machine(), flush=True)
    print("# %d routes, %d iterations, %s" % (args.routes, args.iterations,
                                              "route server" if args.rs else "eBGP, AS path prepended"), flush=True)

    rows, failures = [], []
    csv = None
    if args.csv:
        new = not os.path.exists(args.csv)
        csv = open(args.csv, "a")
        if new:
            csv.write(";".join(CSV_KEYS) + "\n")
    for i in range(args.iterations):
        order = daemons[i % len(daemons):] + daemons[:i % len(daemons)]
        for d in order:
            try:
                r = flatten(run_once(d, args.routes, binaries[d], args.rs, args.block, args.timeout, args.seed))
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print("%s iteration %d: FAILED: %s" % (d, i + 1, e), flush=True)
                failures.append((d, i + 1, str(e)))
                continue
            r.update(iteration=i + 1, version=versions[d], datetime=datetime.datetime.now().isoformat(timespec="seconds"))
            bad = r["result"] != "ok" or r["lost"] or r["withdraw_lost"] or r["attr_bad"] or not r["dut_alive"]
            print("%-5s it %d: %s converge %.3f s, %.0f routes/s, latency p50 %.1f ms p99 %.1f ms, withdraw %.3f s,"
                  " lost %d, bad attrs %d, DUT CPU %s s%s" % (
                      d, i + 1, r["result"], r["converge_s"] or 0, r["routes_per_s"] or 0, r["latency_p50_ms"] or 0,
                      r["latency_p99_ms"] or 0, r["withdraw_s"] or 0, r["lost"], r["attr_bad"], r["dut_cpu_s"],
                      "  <- see %s" % r["dir"] if bad else ""), flush=True)
            if bad:
                failures.append((d, i + 1, "result %s, kept %s" % (r["result"], r["dir"])))
            rows.append(r)
            if csv:
                csv.write(";".join(str(r.get(k, "")) for k in CSV_KEYS) + "\n")
                csv.flush()
    print()
    print(table(rows, daemons, versions))
    print("\nours/X: ratio of the medians; for times below 1 means ours is faster, for routes/s above 1.")
    if failures:
        print("\nfailed or incomplete runs: " + "; ".join("%s #%d: %s" % f for f in failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
