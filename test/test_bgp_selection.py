"""Best-path options as BIRD 2 has them, with two eBGP BIRD 2 peers
announcing the same prefix: `med metric` (compare MEDs across neighbor
ASes), `default bgp_med` (a missing MED's value), `prefer older` (RFC 5004:
the route we had first stays), `path metric off` (AS path lengths ignored). Peer a has the lower router id, so without
the options the RFC 4271 tiebreak picks it. Passes against BIRD 2 too.
Addresses 127.102.x.y.
"""

import re
import time

import pytest

from conftest import poll, strip_codes
from test_bgp import established, peers, ports  # noqa: F401 (fixtures)

DUT = "127.102.0.1"
A, B = "127.102.1.2", "127.102.1.3"
TIMERS = "hold time 30; connect delay time 1; error wait time 1, 2;"
NET = "10.102.1.0/24"


def dut_conf(port, pa, pb, opts, opts_a=""):
    return """router id 10.102.0.1;
protocol device {}
protocol bgp a { local %s port %d as 65001; neighbor %s port %d as 65002; multihop; %s %s %s
  ipv4 { import all; export none; }; }
protocol bgp b { local %s port %d as 65001; neighbor %s port %d as 65003; multihop; %s %s
  ipv4 { import all; export none; }; }
""" % (DUT, port, A, pa, TIMERS, opts, opts_a, DUT, port, B, pb, TIMERS, opts)


def peer_conf(addr, pport, asn, port, med, prepend=False):
    attrs = "{ %s%s }" % ("bgp_med = %d; " % med if med is not None else "",
                          "bgp_path.prepend(%d); " % asn if prepend else "")
    return """router id %s;
protocol device {}
protocol static st { ipv4; route %s blackhole %s; }
protocol bgp dut { local %s port %d as %d; neighbor %s port %d as 65001; multihop; %s
  ipv4 { import none; export all; }; }
""" % (addr, NET, attrs, addr, pport, asn, DUT, port, TIMERS)


def best(d):
    """The protocol of the route marked best, once both routes are there."""
    lines = strip_codes(d.raw("show route %s" % NET))
    routes = [l for l in lines if re.search(r"\[(a|b) ", l)]
    if len(routes) < 2:
        return None
    for l in routes:
        if re.search(r"\] \* \(", l):
            return re.search(r"\[(a|b) ", l).group(1)
    return None


@pytest.mark.parametrize("opts,opts_a,med_a,med_b,want", [
    ("", "", 10, 5, "a"),                               # MEDs of different ASes: ignored
    ("med metric;", "", 10, 5, "b"),                    # compared
    ("med metric;", "", None, 5, "a"),                  # a missing MED is 0
    ("med metric;", "default bgp_med 100;", None, 5, "b"),  # ... or a's default
], ids=["plain", "med-metric", "missing-med", "default-med"])
def test_med_options(start_daemon, peers, ports, opts, opts_a, med_a, med_b, want):
    d = start_daemon(dut_conf(ports[0], ports[1], ports[2], opts, opts_a))
    peers("a", peer_conf(A, ports[1], 65002, ports[0], med_a))
    peers("b", peer_conf(B, ports[2], 65003, ports[0], med_b))
    assert poll(lambda: best(d), timeout=20), strip_codes(d.raw("show route %s all" % NET))
    assert best(d) == want, strip_codes(d.raw("show route %s all" % NET))


@pytest.mark.parametrize("opts,want", [("", "b"), ("path metric off;", "a")], ids=["plain", "path-metric-off"])
def test_path_metric(start_daemon, peers, ports, opts, want):
    """a's path is one AS longer; without `path metric` the router id decides."""
    d = start_daemon(dut_conf(ports[0], ports[1], ports[2], opts))
    peers("a", peer_conf(A, ports[1], 65002, ports[0], None, prepend=True))
    peers("b", peer_conf(B, ports[2], 65003, ports[0], None))
    assert poll(lambda: best(d), timeout=20), strip_codes(d.raw("show route %s all" % NET))
    assert best(d) == want, strip_codes(d.raw("show route %s all" % NET))


@pytest.mark.parametrize("older,want", [(False, "a"), (True, "b")], ids=["plain", "prefer-older"])
def test_prefer_older(start_daemon, peers, ports, older, want):
    """b's route comes first; a's later one wins only on router id."""
    d = start_daemon(dut_conf(ports[0], ports[1], ports[2], "prefer older;" if older else ""))
    peers("b", peer_conf(B, ports[2], 65003, ports[0], None))
    assert poll(established(d, "b"), timeout=20)
    assert poll(lambda: NET in "\n".join(strip_codes(d.raw("show route %s" % NET))), timeout=10)
    time.sleep(0.1)
    peers("a", peer_conf(A, ports[1], 65002, ports[0], None))
    assert poll(lambda: best(d), timeout=20), strip_codes(d.raw("show route %s all" % NET))
    assert best(d) == want, strip_codes(d.raw("show route %s all" % NET))


C = "127.102.1.4"


@pytest.mark.parametrize("det,want", [(False, "c"), (True, "b")], ids=["plain", "deterministic-med"])
def test_deterministic_med(start_daemon, peers, ports, det, want):
    """a and c are both of AS 65002, c with the lower MED; b, of AS 65003,
    beats c on router id and loses to a. Coming in the order a, b, c, pair
    by pair c beats a (MED) and so wins; RFC 4271 first picks c in its AS,
    then b against c. Without c the group's best is a, which beats b."""
    opts = "deterministic med;" if det else ""
    conf = dut_conf(ports[0], ports[1], ports[2], opts)
    conf += """protocol bgp c { local %s port %d as 65001; neighbor %s port %d as 65002; multihop; %s %s
  ipv4 { import all; export none; }; }
""" % (DUT, ports[0], C, ports[3], TIMERS, opts)
    d = start_daemon(conf)

    def routes():
        return set(re.findall(r"\[(a|b|c) ", "\n".join(strip_codes(d.raw("show route %s" % NET)))))

    def marked():
        for l in strip_codes(d.raw("show route %s" % NET)):
            if re.search(r"\] \* \(", l):
                return re.search(r"\[(a|b|c) ", l).group(1)

    cs = {}
    for name, addr, pport, asn, med in (("a", A, ports[1], 65002, 200), ("b", B, ports[2], 65003, None),
                                        ("c", C, ports[3], 65002, 50)):
        cs[name] = peers(name, peer_conf(addr, pport, asn, ports[0], med))
        assert poll(lambda: name in routes(), timeout=20), strip_codes(d.raw("show route %s all" % NET))
        time.sleep(0.1)
    assert marked() == want, strip_codes(d.raw("show route %s all" % NET))
    if not det:
        return
    # a is not its group's best: suppressed, marked "-" after the preference
    assert [l for l in strip_codes(d.raw("show route %s" % NET)) if "[a " in l and "(100-" in l], \
        strip_codes(d.raw("show route %s all" % NET))
    assert cs["c"].raw("disable dut").startswith(b"0009-")
    assert poll(lambda: routes() == {"a", "b"}, timeout=10), strip_codes(d.raw("show route %s all" % NET))
    assert marked() == "a", strip_codes(d.raw("show route %s all" % NET))
    assert cs["c"].raw("enable dut").startswith(b"0011-")
    assert poll(lambda: routes() == {"a", "b", "c"}, timeout=20), strip_codes(d.raw("show route %s all" % NET))
    assert marked() == "b", strip_codes(d.raw("show route %s all" % NET))
    assert d.raw("show route count").startswith(b"1007-3 of 3 routes for 1 networks in table master4\n")


def table_routes(d, table):
    m = re.search(r"(\d+) of \d+ routes for \d+ networks in table %s\b" % table,
                  "\n".join(strip_codes(d.raw("show route table %s count" % table))))
    return int(m.group(1)) if m else -1


def test_deleted_session_copies(start_daemon, peers, ports):
    """`configure` deletes session a while pipe p's copies of a's routes are
    still in t2 beside b's routes of the same nets: taking them out compares
    them there, which must not read a's released config (ASan; a second
    `configure` drops the config kept for `configure undo`)."""
    nets = " ".join("route 10.103.%d.%d/32 blackhole;" % (i // 256, i % 256) for i in range(3000))
    base = """router id 10.102.0.1;
protocol device {}
ipv4 table t2;
protocol pipe p { table master4; peer table t2; import none; export all; }
protocol bgp b { local %s port %d as 65001; neighbor %s port %d as 65003; multihop; %s
  ipv4 { table t2; import all; export none; }; }
""" % (DUT, ports[0], B, ports[2], TIMERS)
    with_a = base + """protocol bgp a { local %s port %d as 65001; neighbor %s port %d as 65002; multihop; %s
  deterministic med; ipv4 { import all; export none; }; }
""" % (DUT, ports[0], A, ports[1], TIMERS)
    d = start_daemon(with_a)
    for name, addr, pport, asn in (("a", A, ports[1], 65002), ("b", B, ports[2], 65003)):
        peers(name, """router id %s;
protocol device {}
protocol static st { ipv4; %s }
protocol bgp dut { local %s port %d as %d; neighbor %s port %d as 65001; multihop; %s
  ipv4 { import none; export all; }; }
""" % (addr, nets, addr, pport, asn, DUT, ports[0], TIMERS))
    assert poll(lambda: table_routes(d, "t2") == 6000, timeout=30), strip_codes(d.raw("show protocols"))
    for _ in range(2):
        d.reconfigure_file(base)
        for _ in range(2):   # the second drops the config with a (kept for undo)
            r = d.raw("configure")
            assert re.search(rb"\n000[345] ", r), r   # done, in progress, queued
        assert poll(lambda: table_routes(d, "t2") == 3000, timeout=20), table_routes(d, "t2")
        assert table_routes(d, "master4") == 0
        d.reconfigure_file(with_a)
        r = d.raw("configure")
        # queued when the one that dropped the kept config still runs:
        # it is applied after, and a's routes come back all the same
        assert r.endswith((b"0003 Reconfigured\n", b"0004 Reconfiguration in progress\n",
                           b"0005 Reconfiguration already in progress, queueing new config\n")), r
        assert poll(lambda: table_routes(d, "t2") == 6000, timeout=30), table_routes(d, "t2")
