"""AIGP (RFC 7311) over iBGP against BIRD 2 peers.

Our daemon (127.86.1.1, AS 65001) has three iBGP BIRD 2 peers (and an eBGP
one, e, to see that AIGP is off there by default): a and b both
announce 10.86.3.0/24 with `aigp originate` (the AIGP is their static
route's IGP metric), a with the lower AIGP but the longer AS path; c is a
route reflector client that gets what we choose, with our next hop, and an
AIGP of our own for our static route.  With BIRD_BIN=/usr/sbin/bird the
same test checks BIRD 2 itself; the `igp table` holds what BIRD needs to
resolve the peers' next hops (192.0.2.x, distance 1), ours ignores it.
"""

import re

from conftest import poll
from test_bgp import PeerBird, established, peers, ports, route_all, reply_text  # noqa: F401 (fixtures)

OURS = "127.86.1.1"
A, B, C, E = "127.86.1.2", "127.86.1.3", "127.86.1.4", "127.86.1.5"
SAME = "10.86.3.0/24"


def ours_conf(ports, ab_opts=""):
    common = "multihop; hold time 30; connect delay time 1; error wait time 1, 2;"
    s = ["router id 10.86.1.1;", "ipv4 table igp4;", "protocol device {}",
         "protocol static local4 { ipv4; route 10.86.9.0/24 blackhole { igp_metric = 5; }; }",
         "protocol static igp_routes { ipv4 { table igp4; }; route 192.0.2.0/24 blackhole { igp_metric = 1; }; }"]
    for name, addr, port, asn, opts, chan in (("a", A, ports[1], 65001, "", ab_opts), ("b", B, ports[2], 65001, "", ab_opts),
                                              ("c", C, ports[3], 65001, "rr client;", "next hop self; aigp originate;"),
                                              ("e", E, ports[4], 65005, "", "")):
        s.append("""protocol bgp %s {
  local %s port %d as 65001;
  neighbor %s port %d as %d;
  %s %s
  ipv4 { import all; export all; igp table igp4; %s };
}""" % (name, OURS, ports[0], addr, port, asn, common, opts, chan))
    return "\n".join(s) + "\n"


def peer_conf(addr, port, our_port, statics, asn=65001):
    """A BIRD 2 iBGP peer; the next hop it announces is 192.0.2.x (BIRD refuses
    loopback routes, so BIRD as the daemon under test resolves that one)."""
    return """router id %s;
protocol device {}
protocol static st { ipv4; %s }
protocol bgp dut {
  local %s port %d as %d;
  neighbor %s port %d as 65001;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;
  ipv4 { import all; export all; next hop address 192.0.2.%s; aigp originate; };
}
""" % (addr, statics or "", addr, port, asn, OURS, our_port, addr.split(".")[-1])


def best_from(d, prefix):
    """The protocol whose route for prefix is the primary one."""
    m = re.search(r"\[(\w+) [\d:.]+(?: from \S+)?\] \*", reply_text(d.raw("show route %s" % prefix)))
    return m and m.group(1)


def aigp(d, prefix):
    m = re.search(r"^\s+BGP\.aigp: (\S+)$", route_all(d, prefix), re.M)
    return m and m.group(1)


def test_aigp_ibgp(start_daemon, peers, ports):
    a = peers("a", peer_conf(A, ports[1], ports[0],
                             "route 10.86.2.0/24 blackhole { igp_metric = 17; }; "
                             "route %s blackhole { igp_metric = 10; bgp_path.prepend(65099); };" % SAME))
    b = peers("b", peer_conf(B, ports[2], ports[0], "route %s blackhole { igp_metric = 100; };" % SAME))
    c = peers("c", peer_conf(C, ports[3], ports[0], ""))
    e = peers("e", peer_conf(E, ports[4], ports[0], "route 10.86.5.0/24 blackhole { igp_metric = 7; };", asn=65005))
    d = start_daemon(ours_conf(ports))
    for name in ("a", "b", "c", "e"):
        assert poll(established(d, name), timeout=15), reply_text(d.raw("show protocols all %s" % name))
    assert poll(lambda: aigp(d, "10.86.2.0/24") == "17", timeout=10), route_all(d, "10.86.2.0/24")

    # eBGP: off unless configured, the neighbor's AIGP is dropped, none sent
    assert poll(lambda: "BGP.next_hop" in route_all(d, "10.86.5.0/24"), timeout=10)
    assert aigp(d, "10.86.5.0/24") is None, route_all(d, "10.86.5.0/24")
    assert poll(lambda: "BGP.next_hop" in route_all(e, "10.86.9.0/24"), timeout=10)
    assert aigp(e, "10.86.9.0/24") is None, route_all(e, "10.86.9.0/24")

    # AIGP goes before the AS path length: a wins with the longer path
    assert poll(lambda: best_from(d, SAME) == "a" and "[b " in reply_text(d.raw("show route %s" % SAME)),
                timeout=10), reply_text(d.raw("show route %s all" % SAME))
    assert aigp(d, SAME) == "10"

    # Reflected to c with our next hop: the metric grew by the distance to
    # a (1); our own route got one from its IGP metric (`aigp originate`).
    assert poll(lambda: aigp(c, SAME) == "11", timeout=10), route_all(c, SAME)
    assert "BGP.next_hop: %s" % OURS in route_all(c, SAME)
    assert poll(lambda: aigp(c, "10.86.9.0/24") == "5", timeout=10), route_all(c, "10.86.9.0/24")
    # a's session has no `aigp originate`: our route reaches a without one
    assert poll(lambda: "BGP.next_hop" in route_all(a, "10.86.9.0/24"), timeout=10)
    assert aigp(a, "10.86.9.0/24") is None, route_all(a, "10.86.9.0/24")

    # `aigp off` toward a and b: their AIGP is dropped on receipt, the
    # shorter path wins, and c gets no AIGP for it.
    d.reconfigure_file(ours_conf(ports, "aigp off;"))
    assert d.raw("configure").startswith(b"0002-")
    assert poll(lambda: best_from(d, SAME) == "b" and aigp(d, SAME) is None, timeout=20), \
        reply_text(d.raw("show route %s all" % SAME))
    assert aigp(d, "10.86.2.0/24") is None, route_all(d, "10.86.2.0/24")
    assert poll(lambda: "BGP.next_hop" in route_all(c, SAME) and aigp(c, SAME) is None, timeout=10), route_all(c, SAME)
