"""Extended next hop (RFC 8950): IPv4 routes with IPv6 next hops, over an
IPv4 session with a BIRD 2 peer, both ways; both sides show the capability.
Passes against BIRD 2 too. Addresses 127.101.x.y (the IPv6 next hops are
documentation addresses, attributes only).
"""

import re

from conftest import poll, strip_codes
from test_bgp import established, peers, ports  # noqa: F401 (fixtures)

DUT, PEER = "127.101.0.1", "127.101.0.2"
TIMERS = "hold time 30; connect delay time 1; error wait time 1, 2;"


def conf(me, port, them, pport, asn, peer_as, route, nh):
    return """router id %s;
protocol device {}
protocol static st { ipv4; route %s blackhole; }
protocol bgp b {
  local %s port %d as %d; neighbor %s port %d as %d;
  multihop; %s
  ipv4 { import all; export all; extended next hop on; next hop address %s; };
}
""" % (me, route, me, port, asn, them, pport, peer_as, TIMERS, nh)


def next_hop(d, prefix):
    text = "\n".join(strip_codes(d.raw("show route %s all" % prefix)))
    m = re.search(r"BGP\.next_hop: (\S+)", text)
    return m.group(1) if m else None


def test_ipv4_routes_with_ipv6_next_hops(start_daemon, peers, ports):
    d = start_daemon(conf(DUT, ports[0], PEER, ports[1], 65001, 65002, "10.101.1.0/24", "2001:db8::1"))
    p = peers("p", conf(PEER, ports[1], DUT, ports[0], 65002, 65001, "10.101.2.0/24", "2001:db8::2"))
    assert poll(established(d, "b"), timeout=20), strip_codes(d.raw("show protocols all b"))
    assert poll(lambda: next_hop(d, "10.101.2.0/24"), timeout=10)
    assert next_hop(d, "10.101.2.0/24") == "2001:db8::2"
    assert poll(lambda: next_hop(p, "10.101.1.0/24"), timeout=10)
    assert next_hop(p, "10.101.1.0/24") == "2001:db8::1"
    caps = "\n".join(strip_codes(d.raw("show protocols all b")))
    assert caps.count("IPv6 nexthop: ipv4") == 2, caps          # ours and the neighbor's
    assert "IGP IPv6 table: master6" in caps, caps              # IPv6 next hops resolve there
