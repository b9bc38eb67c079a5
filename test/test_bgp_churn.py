"""Session churn loses nothing: three BIRD 2 peers send routes, a fourth
receives what we export; for a while random operations hit both sides
(disable, enable, restart, reload in/out on our side, disable/enable at
the peers, `configure` with another import filter). Then everything is
enabled again and the original config restored, and the table, every
channel's counters and what the receiver got must be exactly as a quiet
start gives. The seed is printed; BGP_CHURN_SEED repeats the choice of
operations (their timing follows the clock). Passes against BIRD 2 too.
Addresses 127.105.x.y.
"""

import os
import random
import re
import time

from conftest import poll, strip_codes
from test_bgp import established, peers, ports  # noqa: F401 (fixtures)

DUT = "127.105.0.1"
# s2 and s3 share an AS: with `deterministic med` their routes form a group
SOURCES = [("s1", "127.105.1.1", 65011), ("s2", "127.105.1.2", 65012), ("s3", "127.105.1.3", 65012)]
RECV = ("r", "127.105.2.1", 65020)
PER_SOURCE = 60
SHARED = "10.99.0.0/16"
TIMERS = "hold time 30; connect delay time 1; error wait time 1, 2;"


def source_routes(k):
    return ["10.%d.%d.0/24" % (k + 1, i) for i in range(PER_SOURCE)]


def peer_conf(name, addr, asn, pport, our_port, k=None):
    if k is None:
        statics, chan = "", "import all; export none; add paths rx;"
    else:
        # the shared prefix: a MED per source, so best path selection has work
        statics = " ".join("route %s blackhole;" % p for p in source_routes(k))
        statics += " route %s blackhole { bgp_med = %d; };" % (SHARED, 10 * (3 - k))
        chan = "import none; export all;"
    return """router id %s;
protocol device {}
protocol static st { ipv4; %s }
protocol bgp dut { local %s port %d as %d; neighbor %s port %d as 65001; multihop; %s
  ipv4 { %s }; }
""" % (addr, statics, addr, pport, asn, DUT, our_port, TIMERS, chan)


def dut_conf(our_port, pports, strict):
    """strict: the alternative import filter, dropping the first ten
    prefixes of each source."""
    flt = "if net ~ [10.1.0.0/20{24,24}, 10.2.0.0/20{24,24}, 10.3.0.0/20{24,24}] then reject; accept;" \
        if strict else "accept;"
    out = ["router id 10.105.0.1;", "protocol device {}",
           "filter src_in { if net.len > 24 then reject; %s }" % flt]
    for (name, addr, asn), pport in zip(SOURCES, pports):
        table = "import table on;" if name == "s2" else ""
        out.append("protocol bgp %s { local %s port %d as 65001; neighbor %s port %d as %d; multihop; %s\n"
                   "  deterministic med; ipv4 { import filter src_in; export none; %s }; }"
                   % (name, DUT, our_port, addr, pport, asn, TIMERS, table))
    name, addr, asn = RECV
    out.append("protocol bgp %s { local %s port %d as 65001; neighbor %s port %d as %d; multihop; %s\n"
               "  ipv4 { import none; export all; add paths tx; }; }"
               % (name, DUT, our_port, addr, pports[-1], asn, TIMERS))
    return "\n".join(out) + "\n"


def origins(d):
    """{prefix: origin AS} of the best routes `show route` lists."""
    out = {}
    for line in strip_codes(d.raw("show route")):
        m = re.match(r"^(\d+\.\d+\.\d+\.\d+/\d+)\s+.*\] \* \(.*\[AS(\d+)[ie?]\]$", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def channel_routes(d, name):
    m = re.search(r"Routes:\s+(\d+) imported, (\d+) exported, (\d+) preferred",
                  "\n".join(strip_codes(d.raw("show protocols all %s" % name))))
    return tuple(int(x) for x in m.groups()) if m else None


def test_churn_loses_nothing(start_daemon, peers, ports):
    seed = int(os.environ.get("BGP_CHURN_SEED", random.randrange(1 << 30)))
    print("BGP_CHURN_SEED=%d" % seed)
    rng = random.Random(seed)
    our_port, pports = ports[0], ports[1:5]
    ps = {}
    for k, (name, addr, asn) in enumerate(SOURCES):
        ps[name] = peers(name, peer_conf(name, addr, asn, pports[k], our_port, k))
    ps["r"] = peers("r", peer_conf(*RECV, pports[3], our_port))
    d = start_daemon(dut_conf(our_port, pports, False))
    names = [s[0] for s in SOURCES] + ["r"]

    # the expected state, from a quiet start: each source's prefixes are its
    # own; of the shared prefix s3 is best in its AS (MED) and s1 beats it
    # (router id); the receiver gets all three paths of that one (ADD-PATH)
    r_want = {p: SOURCES[k][2] for k in range(3) for p in source_routes(k)}
    want = dict(r_want, **{SHARED: SOURCES[0][2]})
    count = PER_SOURCE * 3 + 3
    r_count = b"%d of %d routes for %d networks" % (count, count, count - 2)

    def converged():
        return all(established(d, n)() for n in names) and \
            {p: a for p, a in origins(ps["r"]).items() if p != SHARED} == r_want and \
            r_count in ps["r"].raw("show route count")


    assert poll(converged, timeout=30), strip_codes(d.raw("show protocols"))

    ops = [lambda n: d.raw("disable %s" % n), lambda n: d.raw("enable %s" % n),
           lambda n: d.raw("restart %s" % n), lambda n: d.raw("reload in %s" % n),
           lambda n: d.raw("reload out %s" % n),
           lambda n: ps[n].raw("disable dut"), lambda n: ps[n].raw("enable dut")]
    end = time.monotonic() + float(os.environ.get("BGP_CHURN_SECONDS", 12))
    strict, done = False, 0
    while time.monotonic() < end:
        if rng.random() < 0.1:
            strict = not strict
            d.reconfigure_file(dut_conf(our_port, pports, strict))
            d.raw("configure")
        else:
            rng.choice(ops)(rng.choice(names))
        done += 1
        time.sleep(rng.random() * 0.3)

    d.reconfigure_file(dut_conf(our_port, pports, False))
    d.raw("configure")
    for n in names:
        d.raw("enable %s" % n)
        ps[n].raw("enable dut")
    assert poll(converged, timeout=40), (done, strip_codes(d.raw("show protocols")))
    got = origins(d)
    assert got == want, sorted(set(got.items()) ^ set(want.items()))[:10]
    assert r_count in d.raw("show route count")
    # counters as a quiet start has them (import statistics aside)
    stats = {n: channel_routes(d, n) for n in names}
    assert stats["r"] == (0, count, 0), stats
    for k, (name, _, _) in enumerate(SOURCES):
        assert stats[name] == (PER_SOURCE + 1, 0, PER_SOURCE + (k == 0)), stats
    print("%d operations" % done)
