"""The four route-server layouts of the BIRD threads chapter, with real peers.

single: every member in master4; multi: a table per member, piped into
master4 (the member's import filter in the pipe); imex and mulimex: the same
with `import table on; export table on` on every member channel.  Three
Debian BIRD 2 members (own 127.84.0.x addresses) each announce two prefixes;
every member must get the other members' routes unchanged (route server:
original next hop and AS path), and a route the import policy rejects must
reach nobody.  The same tests pass against BIRD 2 as the route server.
"""

import re

import pytest

from conftest import poll, strip_codes
from test_bgp import peers, ports, established, count, route_all, peer_conf  # noqa: F401 (fixtures)

OURS = "127.84.0.1"
MEMBERS = [("m2", "127.84.0.2", 65002), ("m3", "127.84.0.3", 65003), ("m4", "127.84.0.4", 65004)]


def rs_conf(layout, port, member_ports):
    multi = layout in ("multi", "mulimex")
    imex = "import table on; export table on; " if layout in ("imex", "mulimex") else ""
    # bogus 10.99/16 from anyone is dropped by the member's import policy
    policy = "net != 10.99.0.0/16"
    out = ["router id 10.84.0.1;", "protocol device {}"]
    for (name, addr, asn), mport in zip(MEMBERS, member_ports):
        table = ""
        if multi:
            out.append("ipv4 table t_%s;" % name)
            out.append("protocol pipe p_%s { table master4; peer table t_%s; import where %s; export all; }"
                       % (name, name, policy))
            table = "table t_%s; " % name
        out.append("""protocol bgp %s {
  local %s port %d as 64500; neighbor %s port %d as %d;
  multihop; rs client; hold time 30; connect delay time 1; error wait time 1, 2;
  ipv4 { %s%simport %s; export all; };
}""" % (name, OURS, port, addr, mport, asn, table, imex, "all" if multi else "where " + policy))
    return "\n".join(out) + "\n"


def member_conf(i, addr, asn, mport, our_port):
    statics = "route 10.%d.1.0/24 blackhole; route 10.%d.2.0/24 blackhole { bgp_path.prepend(%d); };" % (
        i, i, asn + 100)
    if i == 2:
        statics += " route 10.99.0.0/16 blackhole;"
    return peer_conf(addr, mport, asn, our_port, statics).replace("as 65001;", "as 64500;").replace(
        "neighbor %s port" % "127.77.0.1", "neighbor %s port" % OURS)


@pytest.mark.parametrize("layout", ["single", "multi", "imex", "mulimex"])
def test_layout(start_daemon, peers, ports, layout):
    mports = ports[1:4]
    ms = {}
    for i, ((name, addr, asn), mport) in enumerate(zip(MEMBERS, mports), start=2):
        conf = member_conf(i, addr, asn, mport, ports[0])
        assert OURS in conf, conf
        ms[name] = peers(name, conf)
    d = start_daemon(rs_conf(layout, ports[0], mports))
    for name, _, _ in MEMBERS:
        assert poll(established(d, name), timeout=20), d.raw("show protocols all %s" % name)
    # 3 members x 2 routes in master4; the bogus prefix is not there
    assert poll(lambda: count(d) == 6, timeout=15), strip_codes(d.raw("show route"))
    for i, (name, addr, asn) in enumerate(MEMBERS, start=2):
        # its own 2 routes plus the other members' 4 (a member keeps its own
        # static routes, and the route server sends nothing back to it)
        assert poll(lambda: count(ms[name]) == 6 + (1 if i == 2 else 0), timeout=15), \
            strip_codes(ms[name].raw("show route"))
        assert "Network not found" in route_all(ms[name], "10.99.0.0/16") or i == 2
    # the plain count (answered from the table's counters) agrees with a
    # count that walks the table
    walk = d.raw("show route where true count").replace(b"where true ", b"")
    assert d.raw("show route count") == walk, (d.raw("show route count"), walk)
    v = route_all(ms["m4"], "10.3.2.0/24")
    assert "BGP.as_path: 65003 65103" in v and "BGP.next_hop: 127.84.0.3" in v, v
    if layout in ("imex", "mulimex"):
        # the import table holds what m2 sent, the bogus prefix too
        r = d.raw("show route import table m2.ipv4 count")
        assert re.search(rb"3 of 3 routes for 3 networks in table import", r), r
        r = d.raw("show route export table m3.ipv4 count")
        assert re.search(rb"4 of 4 routes for 4 networks in table export", r), r
