"""MULTI_EXIT_DISC toward eBGP neighbors, as BIRD 2 does it: a MED learned
from a neighbor is not passed on to another AS, but one the export filter
sets is sent (BIRD's "fresh" attribute); route servers (`rs client`) pass
the MED through unchanged (RFC 7947). Passes against BIRD 2 too.
Addresses 127.100.x.y.
"""

import re

from conftest import poll, strip_codes
from test_bgp import established, peers, ports  # noqa: F401 (fixtures)

DUT = "127.100.0.1"
TIMERS = "hold time 30; connect delay time 1; error wait time 1, 2;"


def session(name, port, addr, pport, asn, channel, opts=""):
    return """protocol bgp %s {
  local %s port %d as 65001; neighbor %s port %d as %d;
  multihop; %s %s
  ipv4 { %s };
}
""" % (name, DUT, port, addr, pport, asn, TIMERS, opts, channel)


def peer_conf(addr, pport, asn, port, statics=""):
    return """router id %s;
protocol device {}
protocol static st { ipv4; %s }
protocol bgp dut {
  local %s port %d as %d; neighbor %s port %d as 65001;
  multihop; %s
  ipv4 { import all; export all; };
}
""" % (addr, statics, addr, pport, asn, DUT, port, TIMERS)


def med(d, prefix):
    text = "\n".join(strip_codes(d.raw("show route %s all" % prefix)))
    if prefix not in text:
        return "absent"
    m = re.search(r"BGP\.med: (\d+)", text)
    return int(m.group(1)) if m else None


def test_med_to_ebgp(start_daemon, peers, ports):
    conf = "router id 10.100.0.1;\nprotocol device {}\n"
    conf += session("a1", ports[0], "127.100.1.2", ports[1], 65002, "import all; export none;")
    conf += session("a2", ports[0], "127.100.1.3", ports[2], 65003,
                    "import filter { bgp_med = 60; accept; }; export none;")
    conf += session("b1", ports[0], "127.100.2.2", ports[3], 65004, "import none; export all;")
    conf += session("b2", ports[0], "127.100.2.3", ports[4], 65005,
                    "import none; export filter { if net = 10.100.1.0/24 then bgp_med = 77; accept; };")
    conf += session("server", ports[0], "127.100.2.4", ports[5], 65006, "import none; export all;", "rs client;")
    d = start_daemon(conf)
    peers("a1", peer_conf("127.100.1.2", ports[1], 65002, ports[0],
                          "route 10.100.1.0/24 blackhole { bgp_med = 50; };"))
    peers("a2", peer_conf("127.100.1.3", ports[2], 65003, ports[0],
                          "route 10.100.2.0/24 blackhole { bgp_med = 40; };"))
    b1 = peers("b1", peer_conf("127.100.2.2", ports[3], 65004, ports[0]))
    b2 = peers("b2", peer_conf("127.100.2.3", ports[4], 65005, ports[0]))
    rs = peers("rs", peer_conf("127.100.2.4", ports[5], 65006, ports[0]))
    for n in ("a1", "a2", "b1", "b2", "server"):
        assert poll(established(d, n), timeout=20), strip_codes(d.raw("show protocols all %s" % n))
    for b in (b1, b2, rs):
        for p in ("10.100.1.0/24", "10.100.2.0/24"):
            assert poll(lambda: med(b, p) != "absent", timeout=10), (p, strip_codes(b.raw("show route")))
    got = {(name, p): med(b, p) for name, b in (("b1", b1), ("b2", b2), ("rs", rs))
           for p in ("10.100.1.0/24", "10.100.2.0/24")}
    assert got[("b1", "10.100.1.0/24")] is None          # learned from AS 65002: not passed on
    assert got[("b2", "10.100.1.0/24")] == 77            # set by the export filter: sent
    assert got[("b2", "10.100.2.0/24")] is None
    assert got[("rs", "10.100.1.0/24")] == 50            # a route server passes it through
    assert got[("rs", "10.100.2.0/24")] == 60
    assert got[("b1", "10.100.2.0/24")] is None          # set by an import filter: not "fresh" either
