"""BGP next hops: `gateway direct|recursive`, `igp table`, recursive resolution,
re-resolution when the IGP table changes, and `igp metric` in best-path selection.

The device under test is our daemon on 127.92.0.1; every BIRD 2 peer has its own
127.92.x.y.  The sessions are multihop (loopback), so the channels resolve next hops
recursively, as BIRD 2 does by default there.  The peers set the next hop in their
export filter (BIRD keeps a next hop the filter set), so one peer can announce routes
with next hops that the IGP routes of our daemon cover in each way: not at all, by a
blackhole, an unreachable or a device route, or by a route that is itself recursive.
Run against the reference (BIRD_BIN=/usr/sbin/bird) the same tests check that the
expectations are BIRD 2's behaviour.
"""

import re

from conftest import poll, run_bird_parse
from bgp_peers import established, peers, ports, route_all, strip_codes  # noqa: F401 (fixtures)

DUT = "127.92.0.1"
TIMERS = "hold time 30; connect delay time 1; error wait time 1, 2;"

# prefix -> the next hop the peer sets on it
NEXT_HOPS = {
    "10.92.1.0/24": None,               # the peer's own address: nothing covers it
    "10.92.2.0/24": "198.51.100.1",     # blackhole static
    "10.92.3.0/24": "203.0.113.1",      # device route (dev lo)
    "10.92.5.0/24": "100.65.0.1",       # unreachable static
    "10.92.6.0/24": "10.92.7.1",        # covered by 10.92.7.0/24, a BGP (recursive) route
    "10.92.7.0/24": None,
}

IGP = ('route 198.51.100.0/24 blackhole; route 203.0.113.0/24 via "lo"; '
       'route 100.65.0.0/16 unreachable;')


def peer_conf(addr, port, our_port, asn=65002, nhs=NEXT_HOPS, statics=None, opts=""):
    """A BIRD 2 peer announcing each prefix of nhs with its next hop."""
    sets = "".join("    if net = %s then bgp_next_hop = %s;\n" % (p, nh) for p, nh in nhs.items() if nh)
    st = statics or " ".join("route %s blackhole;" % p for p in nhs)
    return """router id %s;
protocol device {}
protocol static st { ipv4; %s }
protocol bgp dut {
  local %s port %d as %d;
  neighbor %s port %d as 65001;
  multihop; %s
  ipv4 { import all; export filter {
%s    accept; }; };%s
}
""" % (addr, st, addr, port, asn, DUT, our_port, TIMERS, sets, opts)


def dut_bgp(name, addr, port, pport, asn, channel="", opts=""):
    return """protocol bgp %s {
  local %s port %d as 65001;
  neighbor %s port %d as %d;
  multihop; %s %s
  ipv4 { import all; export all; %s };
}
""" % (name, DUT, port, addr, pport, asn, TIMERS, opts, channel)


def dut_conf(sessions, igp=IGP, extra=""):
    return ("router id 10.92.0.1;\nprotocol device {}\n%s"
            "protocol static igp1 { ipv4; %s }\n" % (extra, igp)) + "".join(sessions)


def route(d, prefix):
    """`show route PREFIX` without reply codes and the route's time."""
    return re.sub(r" \d\d:\d\d:\d\d\.\d\d\d", "", strip_codes(d.raw("show route %s" % prefix)))


def configure(d, text):
    d.reconfigure_file(text)
    assert d.raw("configure").startswith(b"0002-")


def up(d, *names):
    for n in names:
        assert poll(established(d, n), timeout=20), strip_codes(d.raw("show protocols all %s" % n))


# --- Configuration ---------------------------------------------------------------

def parse_error(tmp_path, text):
    p = tmp_path / "t.conf"
    p.write_text("router id 10.92.0.1;\n" + text)
    rc, out, err = run_bird_parse(str(p))
    return err.replace(str(p), "F").strip()


def test_config_errors(tmp_path):
    """BIRD 2's words and positions (the end of the protocol, where it checks)."""
    nb = "protocol bgp b { local as 1; neighbor 10.0.0.2 as 2;"
    ch = "import all; export all;"
    assert parse_error(tmp_path, "%s multihop;\n  ipv4 { %s gateway direct; }; }\n" % (nb, ch)) == \
        "bird: F:3:53 Multihop BGP cannot use direct gateway mode"
    # iBGP is multihop unless `direct`
    assert parse_error(tmp_path, "protocol bgp b { local as 1; neighbor 10.0.0.2 as 1;\n"
                                 "  ipv4 { %s gateway direct; }; }\n" % ch) == \
        "bird: F:3:53 Multihop BGP cannot use direct gateway mode"
    assert parse_error(tmp_path, "ipv4 table t sorted;\n%s\n  ipv4 { %s table t; gateway recursive; }; }\n"
                       % (nb, ch)) == "bird: F:4:65 BGP in recursive mode prohibits sorted table"
    # multihop: recursive by default
    assert parse_error(tmp_path, "ipv4 table t sorted;\n%s multihop;\n  ipv4 { %s table t; }; }\n" % (nb, ch)) == \
        "bird: F:4:46 BGP in recursive mode prohibits sorted table"
    assert parse_error(tmp_path, "%s\n  ipv4 { %s secondary; }; }\n" % (nb, ch)) == \
        "bird: F:3:48 BGP with secondary option requires sorted table"
    assert parse_error(tmp_path, "ipv6 table t6;\n%s multihop;\n  ipv4 { %s igp table t6; }; }\n" % (nb, ch)) == \
        "bird: F:4:51 Mismatched IGP table type"
    # fine: a sorted IGP table; secondary with a sorted table on a single-hop session;
    # a mismatched IGP table in direct mode (not used there)
    assert parse_error(tmp_path, "ipv4 table t sorted;\n%s multihop;\n  ipv4 { %s igp table t; }; }\n" % (nb, ch)) == ""
    assert parse_error(tmp_path, "ipv4 table t sorted;\n%s\n  ipv4 { %s table t; secondary; }; }\n" % (nb, ch)) == ""
    assert parse_error(tmp_path, "ipv6 table t6;\n%s\n  ipv4 { %s igp table t6; }; }\n" % (nb, ch)) == ""
