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

import pytest

from conftest import poll, run_bird_parse
from bgp_peers import established, peers, ports, route_all, reply_text  # noqa: F401 (fixtures)

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
    return re.sub(r" \d\d:\d\d:\d\d\.\d\d\d", "", reply_text(d.raw("show route %s" % prefix)))


def configure(d, text):
    d.reconfigure_file(text)
    assert d.raw("configure").startswith(b"0002-")


def up(d, *names):
    for n in names:
        assert poll(established(d, n), timeout=20), reply_text(d.raw("show protocols all %s" % n))


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


# --- Recursive resolution ----------------------------------------------------------

def test_recursive_show(start_daemon, peers, ports):
    P = "127.92.1.2"
    peers("p", peer_conf(P, ports[1], ports[0]))
    d = start_daemon(dut_conf([dut_bgp("p", P, ports[0], ports[1], 65002)]))
    up(d, "p")
    assert poll(lambda: "10.92.7.0/24" in route(d, "10.92.7.0/24"), timeout=10), route(d, "all")
    frm = "[p from %s] * " % P
    expect = {
        "10.92.1.0/24": "10.92.1.0/24         unreachable %s(100) [AS65002i]\n" % frm,
        "10.92.2.0/24": "10.92.2.0/24         blackhole %s(100/?) [AS65002i]\n" % frm,
        "10.92.3.0/24": "10.92.3.0/24         unicast %s(100/?) [AS65002i]\n\tdev lo\n" % frm,
        "10.92.5.0/24": "10.92.5.0/24         unreachable %s(100/-) [AS65002i]\n" % frm,
        # one level only: a next hop behind a recursive route does not resolve
        "10.92.6.0/24": "10.92.6.0/24         unreachable %s(100) [AS65002i]\n" % frm,
    }
    for prefix, line in expect.items():
        assert poll(lambda: route(d, prefix) == "Table master4:\n" + line, timeout=5), (route(d, prefix), line)
    # `all`: the same attributes as received, and no igp_metric line (BIRD 2 keeps it
    # out of the attribute list)
    v = reply_text(d.raw("show route 10.92.2.0/24 all"))
    assert "\tType: BGP univ\n\tBGP.origin: IGP\n\tBGP.as_path: 65002\n\tBGP.next_hop: 198.51.100.1\n" \
           "\tBGP.local_pref: 100\n" in v, v
    assert "igp_metric" not in v, v
    v = reply_text(d.raw("show protocols all p"))
    assert "\n    IGP IPv4 table: master4\n" in v, v


def test_igp_table_and_reresolution(start_daemon, peers, ports):
    """Next hops resolve in `igp table`; when a covering route appears, changes or
    goes, the routes that use the next hop follow."""
    P = "127.92.2.2"
    nhs = {"10.92.21.0/24": "198.51.100.1", "10.92.22.0/24": "198.51.100.1", "10.92.23.0/24": None}
    peers("p", peer_conf(P, ports[1], ports[0], nhs=nhs))
    extra = "ipv4 table igp4;\n"
    igp_blackhole = "protocol static igp2 { ipv4 { table igp4; }; route 198.51.100.0/24 blackhole; }\n"
    conf = lambda igp2: dut_conf([dut_bgp("p", P, ports[0], ports[1], 65002, channel="igp table igp4;")],
                                 igp="route 10.92.99.0/24 blackhole;", extra=extra + igp2)
    d = start_daemon(conf(""))
    up(d, "p")
    head = "Table master4:\n10.92.21.0/24        "
    tail = " [p from %s] * (100%%s) [AS65002i]\n" % P
    assert poll(lambda: route(d, "10.92.21.0/24") == head + "unreachable" + tail % "", timeout=10), \
        route(d, "10.92.21.0/24")
    v = reply_text(d.raw("show protocols all p"))
    assert "\n    IGP IPv4 table: igp4\n" in v, v

    # a covering route appears in the IGP table: both routes with that next hop move
    configure(d, conf(igp_blackhole))
    assert poll(lambda: route(d, "10.92.21.0/24") == head + "blackhole" + tail % "/?", timeout=10), \
        route(d, "10.92.21.0/24")
    assert poll(lambda: route(d, "10.92.22.0/24").startswith("Table master4:\n10.92.22.0/24        blackhole"),
                timeout=5), route(d, "10.92.22.0/24")
    assert poll(lambda: route(d, "10.92.23.0/24").startswith("Table master4:\n10.92.23.0/24        unreachable"),
                timeout=5), route(d, "10.92.23.0/24")
    # it changes (a more specific one with a metric), and back
    more = igp_blackhole.replace("blackhole; }", "blackhole; route 198.51.100.0/28 unreachable { igp_metric = 7; }; }")
    configure(d, conf(more))
    assert poll(lambda: route(d, "10.92.21.0/24") == head + "unreachable" + tail % "/-", timeout=10), \
        route(d, "10.92.21.0/24")
    configure(d, conf(igp_blackhole))
    assert poll(lambda: route(d, "10.92.21.0/24") == head + "blackhole" + tail % "/?", timeout=10), \
        route(d, "10.92.21.0/24")
    # and goes
    configure(d, conf(""))
    assert poll(lambda: route(d, "10.92.21.0/24") == head + "unreachable" + tail % "", timeout=10), \
        route(d, "10.92.21.0/24")
    assert poll(lambda: route(d, "10.92.22.0/24").startswith("Table master4:\n10.92.22.0/24        unreachable"),
                timeout=5), route(d, "10.92.22.0/24")
    # BIRD 2 leaves a route that is unreachable already as it is when its next hop
    # stops resolving, IGP metric included
    configure(d, conf(more))
    assert poll(lambda: route(d, "10.92.21.0/24") == head + "unreachable" + tail % "/-", timeout=10), \
        route(d, "10.92.21.0/24")
    configure(d, conf(""))
    assert poll(lambda: "igp2" not in reply_text(d.raw("show protocols")), timeout=10)
    assert not poll(lambda: route(d, "10.92.21.0/24") != head + "unreachable" + tail % "/-", timeout=1), \
        route(d, "10.92.21.0/24")


def test_reresolution_survives_reload_from_import_table(start_daemon, peers, ports, is_reference):
    """With `import table on` a reload re-imports what the peer sent, kept before
    the filter: with the next hop's current resolution, not the one it came with."""
    if is_reference:
        pytest.skip("BIRD 2.0.12 brings back the resolution the route came with (here: "
                    "unreachable) and keeps it until the next hop's resolution changes again")
    P = "127.92.6.2"
    peers("p", peer_conf(P, ports[1], ports[0], nhs={"10.92.61.0/24": "198.51.100.1", "10.92.62.0/24": None}))
    conf = lambda igp: dut_conf([dut_bgp("p", P, ports[0], ports[1], 65002, channel="import table on;")],
                                igp="route 10.92.99.0/24 blackhole; " + igp)
    d = start_daemon(conf(""))
    up(d, "p")
    assert poll(lambda: " unreachable [p " in route(d, "10.92.61.0/24"), timeout=10), route(d, "10.92.61.0/24")
    configure(d, conf("route 198.51.100.0/24 blackhole;"))
    assert poll(lambda: " blackhole [p " in route(d, "10.92.61.0/24"), timeout=10), route(d, "10.92.61.0/24")
    assert d.raw("reload in p").startswith(b"0015")
    assert not poll(lambda: " blackhole [p " not in route(d, "10.92.61.0/24"), timeout=2), route(d, "10.92.61.0/24")
    v = reply_text(d.raw("show route import table p.ipv4 10.92.61.0/24"))
    assert " blackhole [p " in v, v


def test_direct_mode_drops_unreachable_next_hops(start_daemon, peers, ports, is_reference):
    """Direct mode (a single-hop session): a next hop that is no neighbor on a
    connected network makes the route a withdrawal, with BIRD's log line. On loopback
    nothing is a neighbor (BIRD ignores the interface), so every route goes; one
    whose next hop is our own address says so."""
    if is_reference:
        pytest.skip("BIRD 2 never starts a single-hop session to a neighbor on loopback")
    P = "127.92.5.2"
    peers("p", peer_conf(P, ports[1], ports[0], nhs={"10.92.51.0/24": None, "10.92.52.0/24": "203.0.113.77",
                                                               "10.92.53.0/24": "127.0.0.1"}))
    # the same session in recursive mode imports both (unreachable): the sentinel
    # that the routes did arrive
    conf = lambda gw: dut_conf([dut_bgp("p", P, ports[0], ports[1], 65002, channel=gw).replace("multihop;", "")])
    d = start_daemon(conf("gateway recursive;"))
    up(d, "p")
    assert poll(lambda: "10.92.52.0/24" in route(d, "10.92.52.0/24"), timeout=10), route(d, "all")
    assert route(d, "10.92.51.0/24").startswith("Table master4:\n10.92.51.0/24        unreachable")
    configure(d, conf(""))
    up(d, "p")
    # (rate-limited: the first of the two UPDATEs at least)
    assert poll(lambda: re.search(r"<RMT> p: Invalid NEXT_HOP attribute - address (203\.0\.113\.77|%s) not "
                                  r"directly reachable$" % re.escape(P), d.log(), re.M), timeout=10), d.log()
    assert poll(lambda: re.search(r"<RMT> p: Invalid NEXT_HOP attribute - address 127\.0\.0\.1 is local$",
                                  d.log(), re.M), timeout=10), d.log()
    assert route(d, "10.92.53.0/24") == "Network not found"
    assert route(d, "10.92.51.0/24") == "Network not found"
    assert route(d, "10.92.52.0/24") == "Network not found"
    v = reply_text(d.raw("show protocols all p"))
    assert "IGP IPv4 table" not in v, v
    assert re.search(r"Import updates: +3 +0 +0 +0 +0\n", v) or "Routes:         0 imported" in v, v


# --- Best path -----------------------------------------------------------------------

def best_from(d, prefix):
    m = re.search(r"\[(\S+) [^\]]*\] \*", reply_text(d.raw("show route %s" % prefix)))
    return m.group(1) if m else None


def test_best_path_resolvable_and_igp_metric(start_daemon, peers, ports):
    """RFC 4271 9.1.2.1: a route whose next hop does not resolve (BIRD 2: it is
    unreachable; a blackhole counts as resolved) loses to one that does, whatever
    its path; then the IGP metric (9.1.2.2 e) decides between routes equal up to it,
    unless `igp metric off`."""
    A, B = "127.92.3.2", "127.92.3.3"
    # 10.92.31.0/24: a's short path resolves to a blackhole, b's longer one to dev
    #                lo: both resolve, the path decides
    # 10.92.32.0/24: both resolve, a's next hop with IGP metric 20, b's with 10
    # 10.92.33.0/24, .34, .35: a's short path does not resolve (an unreachable
    #                route covers it, nothing does, again unreachable); b's longer
    #                one resolves to a blackhole, dev lo, dev lo
    a_nh = {"10.92.31.0/24": "198.51.100.1", "10.92.32.0/24": "198.51.100.20", "10.92.33.0/24": "100.65.0.1", "10.92.34.0/24": None, "10.92.35.0/24": "100.65.0.1"}
    b_nh = {"10.92.31.0/24": "203.0.113.1", "10.92.32.0/24": "198.51.100.10", "10.92.33.0/24": "198.51.100.1", "10.92.34.0/24": "203.0.113.1", "10.92.35.0/24": "203.0.113.1"}
    peers("a", peer_conf(A, ports[1], ports[0], 65003, a_nh))
    peers("b", peer_conf(B, ports[2], ports[0], 65004, b_nh, statics=
                         "route 10.92.31.0/24 blackhole { bgp_path.prepend(65099); }; route 10.92.32.0/24 blackhole; "
                         "route 10.92.33.0/24 blackhole { bgp_path.prepend(65099); };"
                         "route 10.92.34.0/24 blackhole { bgp_path.prepend(65099); };"
                         "route 10.92.35.0/24 blackhole { bgp_path.prepend(65099); };"))
    igp = ('route 100.65.0.0/16 unreachable; route 203.0.113.0/24 via "lo"; '
           
           "route 198.51.100.0/24 blackhole; "
           "route 198.51.100.20/32 blackhole { igp_metric = 20; }; "
           "route 198.51.100.10/32 blackhole { igp_metric = 10; };")
    conf = lambda opts: dut_conf([dut_bgp("a", A, ports[0], ports[1], 65003, opts=opts),
                                  dut_bgp("b", B, ports[0], ports[2], 65004, opts=opts)], igp=igp)
    d = start_daemon(conf(""))
    up(d, "a", "b")
    assert poll(lambda: reply_text(d.raw("show route 10.92.31.0/24")).count(" from ") == 2, timeout=10), \
        route(d, "10.92.31.0/24")
    assert poll(lambda: reply_text(d.raw("show route 10.92.32.0/24")).count(" from ") == 2, timeout=10), route(d, "all")
    assert poll(lambda: reply_text(d.raw("show route 10.92.33.0/24")).count(" from ") == 2, timeout=10)
    for prefix in ("10.92.34.0/24", "10.92.35.0/24"):
        assert poll(lambda: reply_text(d.raw("show route %s" % prefix)).count(" from ") == 2, timeout=10)
    assert best_from(d, "10.92.31.0/24") == "a", route(d, "10.92.31.0/24")
    assert best_from(d, "10.92.32.0/24") == "b", route(d, "10.92.32.0/24")
    for prefix in ("10.92.33.0/24", "10.92.34.0/24", "10.92.35.0/24"):
        assert best_from(d, prefix) == "b", route(d, prefix)
    assert "blackhole [b from %s] * (100/10) [AS65004i]" % B in route(d, "10.92.32.0/24")
    assert "blackhole [a from %s] (100/20) [AS65003i]" % A in route(d, "10.92.32.0/24")
    # the IGP route: its igp_metric after the preference, and in `all` (not so for a
    # recursive next hop's, above)
    v = re.sub(rb" \d\d:\d\d:\d\d\.\d\d\d", b"", d.raw("show route 198.51.100.20/32 all"))
    assert v == (b"1007-Table master4:\n 198.51.100.20/32     blackhole [igp1] * (200/20)\n"
                 b"1008-\tType: static univ\n1012-\tigp_metric: 20\n0000 \n"), v
    # without IGP metrics: the lower router id (a's) wins
    configure(d, conf("igp metric off;"))
    up(d, "a", "b")
    assert poll(lambda: reply_text(d.raw("show route 10.92.32.0/24")).count(" from ") == 2, timeout=10), route(d, "all")
    assert poll(lambda: best_from(d, "10.92.32.0/24") == "a", timeout=10), route(d, "10.92.32.0/24")
    for prefix in ("10.92.33.0/24", "10.92.34.0/24", "10.92.35.0/24"):
        assert poll(lambda: reply_text(d.raw("show route %s" % prefix)).count(" from ") == 2, timeout=10)
        assert best_from(d, prefix) == "b", route(d, prefix)


# --- Export --------------------------------------------------------------------------

def test_unreachable_routes_exported(start_daemon, peers, ports):
    """An unresolvable route still goes to other peers (route servers on loopback
    depend on it), with the BGP next hop, not a resolved gateway."""
    A, B = "127.92.4.2", "127.92.4.3"
    peers("a", peer_conf(A, ports[1], ports[0], 65003, {"10.92.41.0/24": None, "10.92.42.0/24": "198.51.100.1"}))
    b = peers("b", peer_conf(B, ports[2], ports[0], 65004, {"10.92.49.0/24": None}))
    d = start_daemon(dut_conf([dut_bgp("a", A, ports[0], ports[1], 65003, opts="rs client;"),
                               dut_bgp("b", B, ports[0], ports[2], 65004, opts="rs client;")]))
    up(d, "a", "b")
    assert poll(lambda: "10.92.41.0/24" in route_all(b, "10.92.41.0/24"), timeout=10), route(d, "10.92.41.0/24")
    assert route(d, "10.92.41.0/24").startswith("Table master4:\n10.92.41.0/24        unreachable")
    assert "BGP.next_hop: %s\n" % A in route_all(b, "10.92.41.0/24")
    assert poll(lambda: "BGP.next_hop: 198.51.100.1\n" in route_all(b, "10.92.42.0/24"), timeout=5), \
        route_all(b, "10.92.42.0/24")
