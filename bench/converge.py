#!/usr/bin/env python3
"""Route-server convergence bench: our daemon or Debian's BIRD 2 as the
device under test, bgpblast as N peers plus a monitor, all on loopback.

For each run: generate the route-server config of a layout, start the
daemon, start bgpblast, and measure the time from daemon start until
(a) `birdc show route table master4 count` shows every route, polled the
way operators script it, and (b) the monitor holds every prefix. Then read
RSS/SZ/VSZ of the daemon and print one row per run (appended to --csv
FILE too) in BIRD's format:

  VERSION;TYPE;PEERS;ROUTES;;TOTAL_ROUTES;TOTAL_PREFICES;RSS;SZ;VSZ;i;TIMEDIF;DATETIME

(ROUTES per peer, RSS and VSZ in KiB, SZ in pages, i = number of count
polls, TIMEDIF in seconds.) With --delivered (bench/run-matrix.sh) the
row tells of everyone: TIMEDIF runs until the last peer too had all it was
due (in the multi layouts the peers' own tables fill after master4, which
(a) and (b) do not see), RSS is the kernel's high-water mark of the
daemon's resident memory (VmHWM) once it idled, SZ/VSZ those at the
highest RSS sampled until then. (Samples every 0.1 s miss a shorter
peak: at small loads they read ours 5-7 MB below its mark, while BIRD 2,
whose memory does not shrink after a load, was read at its peak.)
Layouts: single (all peers in master4), multi
(a table per peer piped into master4), imex and mulimex (single and multi
with `import table on; export table on` on every BGP channel).
--rs-filter gives every peer an IXP-style import filter instead of
`import all` (bogon prefixes, prefix length, path length, first AS = the
peer, bogon ASNs, community scrubbing and tagging): every generated route
passes it, so the counts stay the same, but each one is filtered.
--rs-export-filter gives every session (peers and monitors) an export
filter of its own, as an IXP route server's per-client policy: RFC 1997
announcement control for its AS (0:AS: not to it; 0:RS: only to those
named RS:AS) and scrubbing of the route server's large communities. No
generated route carries those communities, so everything is exported.
--import-limit N puts a max-prefix limit on every peer's channel.

  bench/converge.py --daemon ours --layout single --peers 10 --routes 10000 --runs 3
  bench/converge.py --daemon bird2 ...   # Debian's /usr/sbin/bird, same config
"""

import argparse
import datetime
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BGPBLAST = os.path.join(REPO, "bench", "bgpblast", "bgpblast")
DUT = "127.0.0.1"
PROBE = "127.3.0.1"         # the listener probe: no session is configured for it


def peer_addr(base, i):
    return "127.%d.%d.%d" % (base, i // 250, i % 250 + 1)


RS_FILTER_DEFS = """# Bogon prefixes but 198.18.0.0/15, which bgpblast's tables use.
define BOGONS_V4 = [ 0.0.0.0/8+, 10.0.0.0/8+, 100.64.0.0/10+, 127.0.0.0/8+, 169.254.0.0/16+,
  172.16.0.0/12+, 192.0.2.0/24+, 192.168.0.0/16+, 198.51.100.0/24+,
  203.0.113.0/24+, 224.0.0.0/4+, 240.0.0.0/4+ ];
# The peers have private ASNs (65001, ...): only the other bogon ranges.
define BOGON_ASNS = [ 0, 23456, 64496..64511, 65535, 65536..65551, 4200000000..4294967295 ];
"""

RS_FILTER = """filter rs_in_%s {
  if net.type != NET_IP4 then reject;
  if net ~ BOGONS_V4 then reject;
  if net.len < 8 || net.len > 24 then reject;
  if bgp_path.len > 32 then reject;
  if bgp_path.first != %d then reject;
  if bgp_path ~ BOGON_ASNS then reject;
  if (64500, 0) ~ bgp_community then reject;
  bgp_community.delete([(64500, *)]);
  bgp_large_community.delete([(64500, *, *)]);
  bgp_large_community.add((64500, 1000, 1));
  accept;
}"""


RS_EXPORT_FILTER = """filter rs_out_%s {
  if (0, %d) ~ bgp_community then reject;
  if (0, 64500) ~ bgp_community && !((64500, %d) ~ bgp_community) then reject;
  bgp_large_community.delete([(64500, *, *)]);
  accept;
}"""


def export_of(name, asn, export, rs_export_filter):
    """The export clause of a session, with its filter's definition (or "").
    With a filter per session, export "where COND" adds COND to each."""
    if not rs_export_filter:
        return "", "export %s;" % export
    fdef = RS_EXPORT_FILTER % (name, asn, asn)
    if export.startswith("where "):
        fdef = fdef.replace("  accept;", "  if !(%s) then reject;\n  accept;" % export[len("where "):])
    return fdef, "export filter rs_out_%s;" % name


def gen_config(layout, peers, port, threads, rs_filter=False, monitors=1, export="all", rs_export_filter=False,
               import_limit=0, import_cond=None):
    """import_cond: a condition every peer's import also asks for (in its
    own filter with rs_filter, else `import where`)."""
    out = ["router id %s;" % DUT, "protocol device {}"]
    if threads:
        out.append("threads %d;" % threads)
    if rs_filter:
        out.append(RS_FILTER_DEFS)
    multi = layout in ("multi", "mulimex")
    imex = "import table on; export table on; " if layout in ("imex", "mulimex") else ""
    for i in range(peers):
        name = "p%d" % (i + 1)
        imp = "import all;" if not import_cond else "import where %s;" % import_cond
        if rs_filter:
            fdef = RS_FILTER % (name, 65000 + i + 1)
            if import_cond:
                fdef = fdef.replace("  accept;", "  if !(%s) then reject;\n  accept;" % import_cond)
            out.append(fdef)
            imp = "import filter rs_in_%s;" % name
        if import_limit:
            imp += " import limit %d action block;" % import_limit
        table = ""
        if multi:
            out.append("ipv4 table t_%s;" % name)
            out.append("protocol pipe pipe_%s { table master4; peer table t_%s; import all; export all; }" % (name, name))
            table = "table t_%s; " % name
        fdef, exp = export_of(name, 65000 + i + 1, export, rs_export_filter)
        if fdef:
            out.append(fdef)
        out.append("protocol bgp %s { local %s port %d as 64500; neighbor %s as %d; passive; rs client; multihop;"
                   " hold time 240; ipv4 { %s%s%s %s }; }"
                   % (name, DUT, port, peer_addr(1, i), 65000 + i + 1, table, imex, imp, exp))
    for j in range(monitors):
        name = "mon%d" % (j + 1)
        fdef, exp = export_of(name, 64901 + j, export, rs_export_filter)
        if fdef:
            out.append(fdef)
        out.append("protocol bgp %s { local %s port %d as 64500; neighbor %s as %d; passive; rs client; multihop;"
                   " hold time 240; ipv4 { %simport none; %s }; }"
                   % (name, DUT, port, peer_addr(2, j), 64901 + j, imex, exp))
    return "\n".join(out) + "\n"


def ctl(sock, cmd, timeout=30):
    """One command over the control socket (what birdc does, without its start-up cost)."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(sock)
    buf = b""
    while not re.search(rb"^\d{4} ", buf, re.M):
        buf += s.recv(65536)
    s.sendall(cmd.encode() + b"\n")
    buf = b""
    while not re.search(rb"(^|\n)\d{4} [^\n]*\n$", buf):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    return buf.decode(errors="replace")


def master4_count(sock):
    try:
        m = re.search(r"(\d+) of \d+ routes for (\d+) networks in table master4", ctl(sock, "show route table master4 count"))
    except OSError:
        return None
    return (int(m.group(1)), int(m.group(2))) if m else None


def proc_mem(pid):
    with open("/proc/%d/status" % pid) as f:
        st = f.read()
    rss = int(re.search(r"VmRSS:\s+(\d+)", st).group(1))
    vsz = int(re.search(r"VmSize:\s+(\d+)", st).group(1))
    return rss, vsz // 4, vsz       # SZ in 4 KiB pages, as ps -o sz


def proc_hwm(pid):
    """The most resident memory the process ever had, KiB (VmHWM)."""
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


def proc_hwm_reset(pid):
    """Start the high-water mark afresh (Linux 4.0+: clear_refs 5); False
    where that is refused."""
    try:
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def proc_cpu(pid):
    """User and system CPU seconds the process has used (all threads)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick     # utime, stime


def cpu_once_idle(pid):
    """The process's CPU seconds once a second passes with under 0.05 s of
    it (at most a minute), when that second began, and proc_mem() when its
    RSS was highest meanwhile, sampled every 0.1 s."""
    u, sy = proc_cpu(pid)
    last, at, peak = u + sy, time.time(), proc_mem(pid)
    while time.time() - at < 60:
        for _ in range(10):
            time.sleep(0.1)
            peak = max(peak, proc_mem(pid))
        u, sy = proc_cpu(pid)
        if u + sy - last < 0.05:
            break
        last, at = u + sy, time.time()
    return u + sy, at, peak


def busy_until(pid, quiet=1.0):
    """The process's CPU seconds and the end of its last busy 50 ms (over
    10 ms of CPU in it) once it was quiet for `quiet` seconds (at most a
    minute): finer than cpu_once_idle()'s second."""
    u, sy = proc_cpu(pid)
    last, t0 = u + sy, time.time()
    busy_end = t0
    while time.time() - busy_end < quiet and time.time() - t0 < 60:
        time.sleep(0.05)
        u, sy = proc_cpu(pid)
        if u + sy - last > 0.01:
            busy_end = time.time()
        last = u + sy
    return last, busy_end


def blast_summary(path):
    """bgpblast's start time (Unix) and its JSON summary, once it exited."""
    start, summary = None, None
    with open(path) as f:
        for line in f:
            m = re.search(r"event=start unix=([\d.]+)", line)
            if m:
                start = float(m.group(1))
            elif line.startswith("{"):
                summary = json.loads(line)
    return start, summary


def listen_port():
    """A port for the daemon's BGP listener below the kernel's ephemeral
    range: one inside it may be held by an outgoing connection (the
    injector's, a previous run's in TIME_WAIT), and BIRD 2 then runs with
    "No listening socket" until the timeout."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return random.randrange(10000, max(low, 10001))


def one_run(args, binary, version, threads):
    port = listen_port()
    d = tempfile.mkdtemp(prefix="conv.", dir="/tmp")
    conf, sock = os.path.join(d, "bird.conf"), os.path.join(d, "bird.ctl")
    with open(conf, "w") as f:
        f.write(gen_config(args.layout, args.peers, port, threads, args.rs_filter, args.monitors,
                           rs_export_filter=args.rs_export_filter, import_limit=args.import_limit))
        if args.dump_resources and args.daemon == "ours":
            f.write("log stderr all;\n")   # the dump is debug output
    total = args.peers * args.routes
    log = open(os.path.join(d, "daemon.log"), "wb")
    t0 = time.time()
    dut = subprocess.Popen([binary, "-f", "-c", conf, "-s", sock, "-P", os.path.join(d, "pid")],
                           stdout=log, stderr=subprocess.STDOUT)
    # The injector starts once the daemon answers and its BGP listener
    # takes connections (the daemon answers its socket before its
    # protocols' loops have bound it: a session refused then is retried a
    # second later, which at 10k routes was most of a run). The probe
    # comes from an address no session is configured for; both daemons
    # close it at once. Same for both; the clock runs from the daemon's
    # start.
    while dut.poll() is None and time.time() - t0 < 30:
        try:
            ctl(sock, "show status")
            break
        except OSError:
            time.sleep(0.005)
    while dut.poll() is None and time.time() - t0 < 30:
        try:
            socket.create_connection((DUT, port), timeout=1, source_address=(PROBE, 0)).close()
            break
        except OSError:
            time.sleep(0.005)
    polls, table_done, monitor_done, nets = 0, None, None, 0
    blast = None
    try:
        blast_out = open(os.path.join(d, "bgpblast.out"), "w")
        # line-buffered: its events are read while it runs
        blast = subprocess.Popen(["stdbuf", "-oL", args.bgpblast, "--threads", str(args.blast_threads), "--dut", "%s:%d" % (DUT, port), "--peers", str(args.peers),
                                  "--routes", str(args.routes), "--monitors", str(args.monitors), "--quiet", "--linger", "-1",
                                  "--timeout", str(args.timeout), "--seed", str(args.seed)]
                                 + (["--enhanced-refresh"] if args.enhanced_refresh else []),
                                 stdout=blast_out, stderr=subprocess.STDOUT)
        while time.time() - t0 < args.timeout:
            if table_done is None:
                c = master4_count(sock)
                polls += 1
                if c and c[0] >= total:
                    table_done, nets = time.time() - t0, c[1]
            if monitor_done is None:
                with open(blast_out.name) as f:
                    full = re.findall(r"^t=([\d.]+) event=monitor_full", f.read(), re.M)
                if len(full) >= args.monitors:
                    monitor_done = time.time() - t0    # bgpblast's clock starts later; use ours
            if table_done is not None and monitor_done is not None:
                break
            if dut.poll() is not None:
                raise RuntimeError("daemon died, see %s" % d)
            if blast.poll() is not None and monitor_done is None:
                raise RuntimeError("the injector exited (status %s), see %s" % (blast.returncode, d))
            time.sleep(args.poll)
        if table_done is None or monitor_done is None:
            raise RuntimeError("no convergence within --timeout %d s (master4 %s, monitor %s), see %s"
                               % (args.timeout, "full" if table_done else "short", "full" if monitor_done else "short", d))
        rss, sz, vsz = proc_mem(dut.pid)
        if args.cpu:
            u, sy = proc_cpu(dut.pid)
            sys.stderr.write("%s: DUT CPU at convergence: %.2f s (user %.2f, system %.2f)\n" % (version, u + sy, u, sy))
            # The other sessions may still be receiving: the work of
            # delivering everything to everyone is the CPU once it idles.
            cpu, _, _ = cpu_once_idle(dut.pid)
            sys.stderr.write("%s: DUT CPU once idle: %.2f s (%.1f s after convergence)\n"
                             % (version, cpu, time.time() - t0 - max(table_done or 0, monitor_done or 0)))
        if args.delivered:
            # Everyone, not only the monitor: the daemon idles once every
            # session has what it is due; the peers' last UPDATE is then
            # when the last of it arrived.
            _, _, peak = cpu_once_idle(dut.pid)
            hwm = proc_hwm(dut.pid)
            blast.send_signal(signal.SIGTERM)
            blast.wait(timeout=30)
            start, summary = blast_summary(blast_out.name)
            last = summary and summary.get("t_peers_last_update")
            if not (start and last):
                raise RuntimeError("no UPDATE reached the peers, see %s" % d)
            delivered = start + last - t0
            sys.stderr.write("%s: delivered to every peer %.3f s after the daemon's start (%s UPDATEs to the peers); "
                             "peak RSS until idle %d KiB (sampled every 0.1 s: %d KiB)\n"
                             % (version, delivered, summary.get("peer_updates_in", "?"), hwm, max(peak[0], rss)))
            # the row tells of everyone: the time the last of them had
            # everything, the memory at its highest until then
            everyone = max(delivered, table_done, monitor_done)
            _, sz, vsz = max(peak, (rss, sz, vsz))
            rss = hwm
        if args.reconfigure:
            # Every session's export filter changes to one that accepts
            # the same routes: what does moving everyone to it cost?
            before, _, _ = cpu_once_idle(dut.pid)
            with open(conf, "w") as f:
                f.write(gen_config(args.layout, args.peers, port, threads, args.rs_filter, args.monitors,
                                   export="where bgp_path.len < 64", rs_export_filter=args.rs_export_filter,
                                   import_limit=args.import_limit))
            t1 = time.time()
            reply = ctl(sock, "configure")
            if "Reconfigured" not in reply:
                raise RuntimeError("configure failed: %s" % reply)
            after, busy_end = busy_until(dut.pid)
            sys.stderr.write("%s: configure with a new export filter for all: %.2f s of DUT CPU, busy %.2f s\n"
                             % (version, after - before, busy_end - t1))
        if args.reconfigure_import:
            # Every peer's import filter changes to one that accepts the
            # same routes (an IXP's nightly run with new prefix lists):
            # each peer is asked for its routes again (route refresh), or
            # they come from the import tables (imex, mulimex)
            before, _, _ = cpu_once_idle(dut.pid)
            with open(conf, "w") as f:
                f.write(gen_config(args.layout, args.peers, port, threads, args.rs_filter, args.monitors,
                                   export="where bgp_path.len < 64" if args.reconfigure else "all",
                                   rs_export_filter=args.rs_export_filter, import_limit=args.import_limit,
                                   import_cond="bgp_path.len < 64"))
            t1 = time.time()
            reply = ctl(sock, "configure")
            if "Reconfigured" not in reply:
                raise RuntimeError("configure failed: %s" % reply)
            after, busy_end = busy_until(dut.pid)
            now = master4_count(sock)
            if not now or now[0] != total:
                raise RuntimeError("master4 holds %s routes after the import filters changed, not %d" % (now, total))
            sys.stderr.write("%s: configure with a new import filter for all: %.2f s of DUT CPU, busy %.2f s\n"
                             % (version, after - before, busy_end - t1))
        # reload out: every session asks for everything again at once (an
        # update group feeds its members in one walk, through every
        # class); reload in: every channel's routes through its import
        # filter again, from its import table where it has one (imex,
        # mulimex), else asked of the peer
        for what, wanted in (("out", args.reload_out), ("in", args.reload_in)):
            if not wanted:
                continue
            before, _, _ = cpu_once_idle(dut.pid)
            t1 = time.time()
            ctl(sock, "reload %s all" % what)
            after, busy_end = busy_until(dut.pid)
            sys.stderr.write("%s: reload %s all: %.2f s of DUT CPU, busy %.2f s\n"
                             % (version, what, after - before, busy_end - t1))
        if args.show_memory:
            sys.stderr.write("RSS at convergence: %d KiB\n%s" % (rss, ctl(sock, "show memory")))
            if args.dump_resources and args.daemon == "ours":
                ctl(sock, "dump resources")
                sys.stderr.write("resource pools dumped to %s\n" % os.path.join(d, "daemon.log"))
            if args.settle:
                time.sleep(args.settle)
                sys.stderr.write("RSS %g s later: %d KiB\n%s" % (args.settle, proc_mem(dut.pid)[0], ctl(sock, "show memory")))
        if args.stop_peak and args.stop_peak_peers:
            # the peers alone go: their routes are flushed while the
            # daemon runs on
            marked = proc_hwm_reset(dut.pid)
            blast.send_signal(signal.SIGTERM)
            peak, t1 = 0, time.time()
            while time.time() - t1 < args.timeout:
                peak = max(peak, proc_mem(dut.pid)[0])
                if args.stop_trace:
                    mem = dict(re.findall(r"^(?:\d{4}[- ])?\s*([A-Z][a-z ]+):\s+([\d.]+ [kMG]?B)",
                                          ctl(sock, "show memory", args.timeout), re.M))
                    sys.stderr.write("%5.2f s RSS %d KiB tables %s attrs %s protocols %s\n"
                                     % (time.time() - t1, proc_mem(dut.pid)[0], mem.get("Routing tables"),
                                        mem.get("Route attributes"), mem.get("Protocols")))
                # every table: in the multi layouts the peers' own tables
                # empty after master4 does; BIRD 2 answers once its
                # flush is over (a minute at 100 x 10k in multi)
                counts = re.findall(r"\b(\d+) of \d+ routes for \d+ networks in table",
                                    ctl(sock, "show route table all count", args.timeout))
                if counts and not any(int(c) for c in counts):
                    break
                time.sleep(0.02)
            gone = time.time() - t1
            if marked:
                peak = max(peak, proc_hwm(dut.pid))
            time.sleep(args.settle or 2.0)
            sys.stderr.write("%s: RSS at convergence %d KiB, peak while the peers' routes went %d KiB (%.1f s), "
                             "%d KiB %g s after\n"
                             % (version, rss, peak, gone, proc_mem(dut.pid)[0], args.settle or 2.0))
            if args.show_memory:
                sys.stderr.write(ctl(sock, "show memory"))
    finally:
        stop_marked = (args.stop_peak and not args.stop_peak_peers and dut and table_done is not None
                       and dut.poll() is None and proc_hwm_reset(dut.pid))
        stop_sent = time.monotonic()
        for p in ((dut,) if args.stop_peak_daemon else (blast, dut)):
            if p:
                p.send_signal(signal.SIGTERM)
        if args.stop_peak and not args.stop_peak_peers and dut and table_done is not None:
            # peers and the daemon stop together, as the bench does: the
            # peers' sessions may close (and their routes be flushed)
            # before the daemon's own shutdown begins
            peak = 0
            while dut.poll() is None:
                try:
                    peak = max(peak, proc_mem(dut.pid)[0], proc_hwm(dut.pid) if stop_marked else 0)
                except (OSError, ValueError, AttributeError):
                    break           # gone, or a zombie without VmRSS
                time.sleep(0.01)
            sys.stderr.write("%s: RSS at convergence %d KiB, peak while stopping %d KiB; stopped in %.2f s\n"
                             % (version, rss, peak, time.monotonic() - stop_sent))
        if blast and args.stop_peak_daemon:
            blast.send_signal(signal.SIGTERM)
        stopping = time.monotonic()
        for p in (blast, dut):
            if not p:
                continue
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        if dut:
            sys.stderr.write("%s: exited %.2f s after SIGTERM\n" % (version, time.monotonic() - stopping))
    timedif = everyone if args.delivered else max(table_done, monitor_done)
    when = datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")
    return "%s;%s;%d;%d;;%d;%d;%d;%d;%d;%d;%.9f;%s" % (
        version, args.layout, args.peers, args.routes, total, nets, rss, sz, vsz, polls, timedif, when)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--daemon", choices=["ours", "bird2"], default="ours")
    ap.add_argument("--bird", default=os.path.join(REPO, "build", "bird"), help="our daemon binary")
    ap.add_argument("--bird2", default="/usr/sbin/bird", help="BIRD 2 binary (--daemon bird2)")
    ap.add_argument("--bgpblast", default=BGPBLAST, help="the injector binary")
    ap.add_argument("--blast-threads", type=int, default=2,
                    help="the injector's I/O threads (more on a big machine, so that it is not the bottleneck)")
    ap.add_argument("--layout", choices=["single", "multi", "imex", "mulimex"], default="single")
    ap.add_argument("--peers", type=int, default=10)
    ap.add_argument("--routes", type=int, default=10000, help="routes per peer")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="*", default=[0], help="thread counts to sweep (ours; 0 = default)")
    ap.add_argument("--csv", help="append the rows to this file too (bench/run-matrix.sh: doc/threads/stats.csv)")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--poll", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rs-filter", action="store_true", help="an IXP-style import filter per peer (not `import all`)")
    ap.add_argument("--import-limit", type=int, default=0, metavar="N",
                    help="`import limit N action block` on every peer's channel (a route server's max-prefix; "
                         "above --routes it is never hit, only checked)")
    ap.add_argument("--rs-export-filter", action="store_true",
                    help="an export filter per session (announcement control for its AS), not `export all`")
    ap.add_argument("--monitors", type=int, default=1,
                    help="receive-only sessions; convergence waits for all of them to hold every prefix (1)")
    ap.add_argument("--show-memory", action="store_true", help="print `show memory` at convergence to stderr")
    ap.add_argument("--dump-resources", action="store_true",
                    help="with --show-memory, ours: `dump resources` at convergence, every pool's memory, "
                    "into the daemon's log in the run's directory (its path goes to stderr)")
    ap.add_argument("--delivered", action="store_true",
                    help="after convergence, wait until the daemon idles; print to stderr when the last "
                         "UPDATE reached any peer (every session had what it was due: in the multi layouts "
                         "the peers' own tables fill after master4) and the highest RSS until then; the "
                         "row's TIMEDIF is then when everyone (table, monitors, peers) had everything, its "
                         "RSS/SZ/VSZ those at the highest RSS until the daemon idled")
    ap.add_argument("--cpu", action="store_true",
                    help="print the daemon's CPU time (user + system) at convergence to stderr: on a loaded "
                         "host the injector's share of the cores hides the daemon's cost from the wall clock")
    ap.add_argument("--reconfigure", action="store_true",
                    help="after convergence, give every session a new export filter (accepting the same routes) "
                         "by `configure` and print the DUT's CPU time until it idles again to stderr; with "
                         "--rs-export-filter each session's own filter gets a new condition")
    ap.add_argument("--reconfigure-import", action="store_true",
                    help="after convergence (and --reconfigure), give every peer a new import filter "
                         "(accepting the same routes) by `configure`, print the DUT's CPU time and how long it "
                         "stayed busy to stderr, and check master4 still holds every route")
    ap.add_argument("--reload-out", action="store_true",
                    help="after convergence, `reload out all` and print the DUT's CPU time and how long it "
                         "stayed busy (to 50 ms) to stderr; the sessions must be up: not with --delivered, "
                         "which stops the injector first")
    ap.add_argument("--reload-in", action="store_true",
                    help="after convergence, `reload in all` and print the DUT's CPU time and how long it "
                         "stayed busy (to 50 ms) to stderr; from the import tables in the imex layouts")
    ap.add_argument("--enhanced-refresh", action="store_true",
                    help="the injector's sessions offer enhanced route refresh (RFC 7313)")
    ap.add_argument("--stop-peak", action="store_true",
                    help="report the daemon's highest RSS from the stop of peers and daemon to its exit "
                    "(the kernel's high-water mark, started afresh when the stop begins, beside samples every 10 ms)")
    ap.add_argument("--stop-peak-peers", action="store_true",
                    help="with --stop-peak: stop the peers first and watch until their routes are gone from every table "
                    "(the peak: the high-water mark started afresh when they stop), "
                    "then RSS again --settle seconds later (default 2)")
    ap.add_argument("--stop-trace", action="store_true",
                    help="with --stop-peak-peers: print RSS and `show memory`'s classes at every poll while the routes go")
    ap.add_argument("--stop-peak-daemon", action="store_true",
                    help="with --stop-peak: stop the daemon first, its peers still connected")
    ap.add_argument("--settle", type=float, default=0,
                    help="with --show-memory: wait this long after convergence and show memory again; "
                    "with --stop-peak-peers: this long after the routes went (default 2)")
    ap.add_argument("--version", help="VERSION column (default: bird-mt-<v>[/tN] or bird-<v>)")
    args = ap.parse_args()
    # --delivered stops the peers to read their summary: what follows would
    # have no session to measure
    if args.delivered and (args.reconfigure or args.reconfigure_import or args.reload_out or args.reload_in):
        ap.error("--delivered stops the peers before --reconfigure(-import), --reload-out or --reload-in could be "
                 "measured: run those without it")

    if args.daemon == "bird2":
        binary = args.bird2
        ver = subprocess.run([binary, "--version"], capture_output=True, text=True)
        version = args.version or "bird-" + (ver.stdout + ver.stderr).split()[-1]
        threads_list = [0]
    else:
        binary = args.bird
        ver = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split()[-1]
        version = args.version or "bird-mt-" + ver
        threads_list = args.threads

    # rows go to stdout; to a CSV only when asked (a trial run must not
    # add to the published rows)
    out = None
    if args.csv:
        new = not os.path.exists(args.csv)
        out = open(args.csv, "a")
        if new:
            out.write("VERSION;TYPE;PEERS;ROUTES;;TOTAL_ROUTES;TOTAL_PREFICES;RSS;SZ;VSZ;i;TIMEDIF;DATETIME\n")
    for t in threads_list:
        label = version + ("/t%d" % t if t else "")
        for _ in range(args.runs):
            row = one_run(args, binary, label, t)
            print(row, flush=True)
            if out:
                out.write(row + "\n")
                out.flush()
    if out:
        out.close()


if __name__ == "__main__":
    main()
