"""BGP interoperability: our daemon against real BIRD 2 peers on loopback.

Every simulated peer is a Debian BIRD 2 daemon on its own 127.77.x.y address
and port; our daemon is the device under test.  Run against the reference
(BIRD_BIN=/usr/sbin/bird) the same tests check BIRD 2 against itself.
"""

import os
import re
import time

import pytest

from conftest import poll, REFERENCE_BIRD, strip_codes
# the peers live in bgp_peers.py; test_bgp_*.py import some of them from here
from bgp_peers import (EXABGP, proto_since, GOBGPD, ExaBGP, GoBGP, PeerBird, count, established,  # noqa: F401 (fixtures)
                       peers, ports, route_all, reply_text, tools)

pytestmark = pytest.mark.skipif(not os.path.exists(REFERENCE_BIRD), reason="needs Debian's bird2 as peer")


OURS = "127.77.0.1"


def ours_conf(port, peers, rs=False, statics="", bgp_opts="", ours=OURS, router_id="10.77.0.1"):
    """Our daemon with a BGP session to each (name, addr, port, asn) of peers."""
    s = ["router id %s;" % router_id, "protocol device {}",
         "protocol static local4 { ipv4; %s }" % (statics or "route 10.10.0.0/16 blackhole; route 10.11.0.0/16 blackhole;")]
    opts = " ".join(o for o in ("rs client;" if rs else "", bgp_opts) if o)
    for name, addr, pport, asn in peers:
        s.append("""protocol bgp %s {
  local %s port %d as 65001;
  neighbor %s port %d as %d;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;
  %s
  ipv4 { import all; export all; };
}""" % (name, ours, port, addr, pport, asn, opts))
    return "\n".join(s) + "\n"


def peer_conf(addr, port, asn, our_port, statics, bgp_opts="", export="all", ours=OURS, log=False):
    """A BIRD 2 peer (router id = its address) of our daemon (AS 65001)."""
    return """router id %s;
%sprotocol device {}
protocol static st { ipv4; %s }
protocol bgp dut {
  local %s port %d as %d;
  neighbor %s port %d as 65001;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;%s
  ipv4 { import all; export %s; gateway recursive; };
}
""" % (addr, "log stderr all;\n" if log else "", statics, addr, port, asn, ours, our_port,
       "\n  " + bgp_opts if bgp_opts else "", export)


def test_session_routes_both_ways(start_daemon, peers, ports):
    p = peers("b2", peer_conf("127.77.0.2", ports[1], 65002, ports[0],
                              "route 10.20.0.0/16 blackhole; route 10.21.0.0/24 blackhole;"))
    d = start_daemon(ours_conf(ports[0], [("b2", "127.77.0.2", ports[1], 65002)]))
    assert poll(established(d, "b2"), timeout=15), d.raw("show protocols all b2")
    assert poll(established(p, "dut"), timeout=5)
    assert poll(lambda: count(d) == 4, timeout=5), reply_text(d.raw("show route"))
    assert poll(lambda: count(p) == 4, timeout=5), reply_text(p.raw("show route"))

    ours_view = route_all(d, "10.20.0.0/16")
    assert "BGP.as_path: 65002" in ours_view
    assert "BGP.next_hop: 127.77.0.2" in ours_view
    assert "BGP.origin: IGP" in ours_view
    peer_view = route_all(p, "10.10.0.0/16")
    assert "BGP.as_path: 65001" in peer_view      # our AS prepended toward eBGP
    assert "BGP.next_hop: %s" % OURS in peer_view   # next hop self toward eBGP
    # the channel block of `show protocols all` ends with the next hop we
    # announce and the IGP table, as BIRD 2 prints them
    v = reply_text(d.raw("show protocols all b2"))
    assert "\n    BGP Next hop:   %s\n    IGP IPv4 table: master4\n" % OURS in v, v

    # Withdrawals arrive.
    assert p.raw("disable st").startswith(b"0009-")
    assert poll(lambda: count(d) == 2, timeout=5), reply_text(d.raw("show route"))
    assert p.raw("enable st").startswith(b"0011-")
    assert poll(lambda: count(d) == 4, timeout=5)

    # Restarting our side re-sends everything to the peer.
    assert d.raw("restart b2").startswith(b"0012-")
    assert poll(established(d, "b2"), timeout=15)
    assert poll(lambda: count(p) == 4 and count(d) == 4, timeout=10)


def test_route_server_transparent(start_daemon, peers, ports):
    members = [("m2", "127.77.0.2", ports[1], 65002, "route 10.2.0.0/16 blackhole { bgp_community.add((65002,7)); bgp_large_community.add((65002,1,2)); bgp_path.prepend(65102); };"),
               ("m3", "127.77.0.3", ports[2], 65003, "route 10.3.0.0/16 blackhole { bgp_med = 33; };"),
               ("m4", "127.77.0.4", ports[3], 65004, "route 10.4.0.0/16 blackhole;")]
    ps = {name: peers(name, peer_conf(addr, port, asn, ports[0], st)) for name, addr, port, asn, st in members}
    d = start_daemon(ours_conf(ports[0], [(n, a, pt, asn) for n, a, pt, asn, _ in members], rs=True,
                               statics="route 192.0.2.0/24 blackhole;"))
    for n, *_ in members:
        assert poll(established(d, n), timeout=15), d.raw("show protocols all %s" % n)
    assert poll(lambda: count(d) == 4, timeout=10), reply_text(d.raw("show route"))
    # Each member sees the other two members' routes (and ours), unchanged.
    for name, addr, port, asn, _ in members:
        assert poll(lambda: count(ps[name]) == 4, timeout=10), reply_text(ps[name].raw("show route"))
    v = route_all(ps["m3"], "10.2.0.0/16")
    assert "BGP.as_path: 65002 65102" in v, v        # m2 prepended itself; no route-server AS
    assert "BGP.next_hop: 127.77.0.2" in v, v        # original next hop
    assert "BGP.community: (65002,7)" in v, v
    assert "BGP.large_community: (65002, 1, 2)" in v, v
    v = route_all(ps["m4"], "10.3.0.0/16")
    assert "BGP.as_path: 65003" in v and "BGP.med: 33" in v, v   # MED passed unchanged
    assert "BGP.next_hop: 127.77.0.3" in v, v


def ours_peer_block(name, addr, pport, asn, rs=True, nh=None):
    return """protocol bgp %s {
  local %s port %%(port)d as 65001;
  neighbor %s port %d as %d;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;
  %s
  ipv4 { import all; export all; %s };
}""" % (name, OURS, addr, pport, asn, "rs client;" if rs else "", "next hop address %s;" % nh if nh else "")


@pytest.mark.skipif(not GOBGPD, reason="needs gobgpd")
def test_gobgp_peer(start_daemon, tools, ports):
    g = tools(GoBGP, "gobgp", "127.77.0.3", ports[2], 65003, ports[0], ports[9])
    conf = "router id 10.77.0.1;\nprotocol device {}\nprotocol static local4 { ipv4; route 10.10.0.0/16 blackhole; }\n"
    conf += ours_peer_block("gb", "127.77.0.3", ports[2], 65003, rs=False, nh="192.0.2.1") % {"port": ports[0]}
    d = start_daemon(conf)
    assert poll(established(d, "gb"), timeout=15), d.raw("show protocols all gb")
    r = g.cli("global", "rib", "add", "10.30.0.0/16", "nexthop", "192.0.2.3", "community", "65003:7",
              "large-community", "65003:1:2", "med", "5", "-a", "ipv4")
    assert r.returncode == 0, r.stderr
    assert poll(lambda: "10.30.0.0/16" in route_all(d, "10.30.0.0/16"), timeout=10)
    v = route_all(d, "10.30.0.0/16")
    for want in ("BGP.as_path: 65003", "BGP.next_hop: 192.0.2.3", "BGP.med: 5",
                 "BGP.community: (65003,7)", "BGP.large_community: (65003, 1, 2)"):
        assert want in v, v
    # and our route reached GoBGP with our AS and the configured next hop
    def ours_at_gobgp():
        e = g.rib().get("10.10.0.0/16")
        return e and e[0]
    path = poll(ours_at_gobgp, timeout=10)
    assert path, g.cli("global", "rib", "-a", "ipv4").stdout
    attrs = {a["type"]: a for a in path["attrs"]}
    assert attrs[2]["as_paths"][0]["asns"] == [65001]       # AS_PATH
    assert attrs[3]["nexthop"] == "192.0.2.1"               # NEXT_HOP
    # withdrawal from GoBGP
    assert g.cli("global", "rib", "del", "10.30.0.0/16", "-a", "ipv4").returncode == 0
    assert poll(lambda: count(d) == 1, timeout=10), route_all(d, "")


@pytest.mark.skipif(not EXABGP, reason="needs exabgp")
def test_exabgp_peer(start_daemon, tools, ports):
    x = tools(ExaBGP, "exabgp", "127.77.0.4", ports[3], 65004, ports[0],
              ["10.40.0.0/16 next-hop 192.0.2.4 community [65004:1] large-community [65004:1:1] as-path [65004 65104] med 9"])
    conf = "router id 10.77.0.1;\nprotocol device {}\nprotocol static local4 { ipv4; route 10.10.0.0/16 blackhole; }\n"
    conf += ours_peer_block("ex", "127.77.0.4", ports[3], 65004, rs=False, nh="192.0.2.1") % {"port": ports[0]}
    d = start_daemon(conf)
    assert poll(established(d, "ex"), timeout=15), d.raw("show protocols all ex")
    assert poll(lambda: count(d) == 2, timeout=10)
    v = route_all(d, "10.40.0.0/16")
    for want in ("BGP.as_path: 65004 65104", "BGP.next_hop: 192.0.2.4", "BGP.med: 9",
                 "BGP.community: (65004,1)", "BGP.large_community: (65004, 1, 1)"):
        assert want in v, v
    held = poll(lambda: x.announced().get("10.10.0.0/16"), timeout=10)
    assert held and held[0] == "192.0.2.1" and held[1]["as-path"] == [65001], held
    # withdrawal toward ExaBGP
    assert d.raw("disable local4").startswith(b"0009-")
    assert poll(lambda: "10.10.0.0/16" not in x.announced(), timeout=10)


@pytest.mark.skipif(not (GOBGPD and EXABGP), reason="needs gobgpd and exabgp")
@pytest.mark.parametrize("kind", ["gobgp", "exabgp"])
def test_route_refresh_other_kinds(start_daemon, tools, ports, kind, is_reference):
    """A changed import filter: we ask GoBGP / ExaBGP for a route refresh and
    the routes the old filter dropped arrive (GoBGP: in the same session)."""
    addr, asn, prefix = ("127.77.0.3", 65003, "10.30.0.0/16") if kind == "gobgp" else ("127.77.0.4", 65004, "10.40.0.0/16")
    if kind == "gobgp":
        g = tools(GoBGP, "gobgp", addr, ports[2], asn, ports[0], ports[9])
        pport = ports[2]
    else:
        tools(ExaBGP, "exabgp", addr, ports[3], asn, ports[0], ["%s next-hop 192.0.2.4" % prefix])
        pport = ports[3]
    base = "router id 10.77.0.1;\nprotocol device {}\n"
    block = ours_peer_block("pr", addr, pport, asn, rs=False, nh="192.0.2.1") % {"port": ports[0]}
    d = start_daemon(base + block.replace("import all;", "import where net != %s;" % prefix))
    assert poll(established(d, "pr"), timeout=15), d.raw("show protocols all pr")
    if kind == "gobgp":
        assert g.cli("global", "rib", "add", prefix, "nexthop", "192.0.2.3", "-a", "ipv4").returncode == 0

    def filtered_once():
        for line in reply_text(d.raw("show protocols all pr")).split("\n"):
            w = line.split()
            if w[:2] == ["Import", "updates:"]:
                return w[2] == "1" and w[4] == "1"
        return False
    assert poll(filtered_once, timeout=10), d.raw("show protocols all pr")
    before = proto_since(d, "pr")
    time.sleep(1.1)          # a restarted session would show a later time
    d.reconfigure_file(base + block)
    r = d.raw("configure")        # BIRD 2 may answer before the refresh is done
    assert r.endswith(b"0003 Reconfigured\n") or r.endswith(b"0004 Reconfiguration in progress\n"), r
    assert poll(lambda: prefix in route_all(d, prefix), timeout=10), d.raw("show protocols all pr")
    if kind == "exabgp":
        return      # ExaBGP 4.2 resets the session on a refresh request (BIRD 2 sees the same)
    if is_reference:
        assert proto_since(d, "pr") == before
    else:
        # our BGP protocol stays up while sessions come and go: count them
        assert d.log().count("pr: BGP session established") == 1, d.log()


@pytest.mark.skipif(not GOBGPD, reason="needs gobgpd")
def test_graceful_restart_gobgp(start_daemon, tools, ports):
    """GoBGP restarts (killed, then `gobgpd -r`): we keep its routes stale
    meanwhile and drop what it did not announce again at its End-of-RIB."""
    g = tools(GoBGP, "gobgp", "127.77.0.3", ports[2], 65003, ports[0], ports[9], gr=True)
    conf = "router id 10.77.0.1;\nprotocol device {}\n"
    conf += ours_peer_block("gb", "127.77.0.3", ports[2], 65003, rs=False, nh="192.0.2.1") % {"port": ports[0]}
    d = start_daemon(conf.replace("multihop;", "multihop; graceful restart on; graceful restart time 30;"))
    assert poll(established(d, "gb"), timeout=15), d.raw("show protocols all gb")
    assert g.cli("global", "rib", "add", "10.30.0.0/16", "nexthop", "192.0.2.3", "-a", "ipv4").returncode == 0
    assert poll(lambda: "10.30.0.0/16" in route_all(d, "10.30.0.0/16"), timeout=10)
    g.kill()
    assert poll(lambda: "Neighbor graceful restart active" in reply_text(d.raw("show protocols all gb")),
                timeout=35), d.raw("show protocols all gb")
    assert "10.30.0.0/16" in route_all(d, "10.30.0.0/16")       # kept, stale
    g.start(restarting=True)
    assert poll(established(d, "gb"), timeout=20), d.raw("show protocols all gb")
    # nothing announced again: gone at GoBGP's End-of-RIB (or the stale timer)
    assert poll(lambda: "Network not found" in route_all(d, "10.30.0.0/16"), timeout=35), route_all(d, "10.30.0.0/16")


@pytest.mark.skipif(not (GOBGPD and EXABGP), reason="needs gobgpd and exabgp")
def test_route_server_three_kinds(start_daemon, peers, tools, ports):
    """One member of each kind; each sees the others' routes with the original next hop and AS path."""
    m2 = peers("m2", peer_conf("127.77.0.2", ports[1], 65002, ports[0], "route 10.20.0.0/16 blackhole;")
               .replace("gateway recursive;", "gateway recursive; next hop address 192.0.2.2;"))
    g = tools(GoBGP, "gobgp", "127.77.0.3", ports[2], 65003, ports[0], ports[9])
    x = tools(ExaBGP, "exabgp", "127.77.0.4", ports[3], 65004, ports[0],
              ["10.40.0.0/16 next-hop 192.0.2.4 as-path [65004 65104]"])
    conf = "router id 10.77.0.1;\nprotocol device {}\nprotocol static local4 { ipv4; route 10.10.0.0/16 blackhole; }\n"
    for blk in (ours_peer_block("m2", "127.77.0.2", ports[1], 65002),
                ours_peer_block("m3", "127.77.0.3", ports[2], 65003),
                ours_peer_block("m4", "127.77.0.4", ports[3], 65004, nh="192.0.2.1")):
        conf += blk % {"port": ports[0]} + "\n"
    # our own route goes to the members with 192.0.2.1 only where configured; keep it off m2/m3
    conf = conf.replace("protocol static local4 { ipv4; route 10.10.0.0/16 blackhole; }", "")
    d = start_daemon(conf)
    for n in ("m2", "m3", "m4"):
        assert poll(established(d, n), timeout=20), d.raw("show protocols all %s" % n)
    assert g.cli("global", "rib", "add", "10.30.0.0/16", "nexthop", "192.0.2.3", "-a", "ipv4").returncode == 0
    assert poll(lambda: count(d) == 3, timeout=15), route_all(d, "")

    # BIRD 2 member sees GoBGP's and ExaBGP's routes unchanged
    assert poll(lambda: "10.30.0.0/16" in route_all(m2, "10.30.0.0/16") and "10.40.0.0/16" in route_all(m2, "10.40.0.0/16"), timeout=10)
    v = route_all(m2, "10.30.0.0/16")
    assert "BGP.as_path: 65003" in v and "BGP.next_hop: 192.0.2.3" in v, v
    v = route_all(m2, "10.40.0.0/16")
    assert "BGP.as_path: 65004 65104" in v and "BGP.next_hop: 192.0.2.4" in v, v
    # GoBGP member
    def gobgp_has(prefix):
        e = g.rib().get(prefix)
        return e and {a["type"]: a for a in e[0]["attrs"]}
    a = poll(lambda: gobgp_has("10.20.0.0/16"), timeout=10)
    assert a and a[2]["as_paths"][0]["asns"] == [65002] and a[3]["nexthop"] == "192.0.2.2", a
    a = poll(lambda: gobgp_has("10.40.0.0/16"), timeout=10)
    assert a and a[2]["as_paths"][0]["asns"] == [65004, 65104] and a[3]["nexthop"] == "192.0.2.4", a
    # ExaBGP member
    held = poll(lambda: len(x.announced()) >= 2 and x.announced(), timeout=10)
    assert held["10.20.0.0/16"][0] == "192.0.2.2" and held["10.20.0.0/16"][1]["as-path"] == [65002], held
    assert held["10.30.0.0/16"][0] == "192.0.2.3" and held["10.30.0.0/16"][1]["as-path"] == [65003], held


def test_add_path_receive(start_daemon, peers, ports):
    """BIRD 2 sends two paths of one prefix with ADD-PATH; we keep both."""
    conf = """router id 127.77.0.2;
protocol device {}
protocol static st1 { ipv4; route 10.5.0.0/16 blackhole { bgp_path.prepend(65111); }; }
protocol static st2 { ipv4; route 10.5.0.0/16 blackhole { bgp_path.prepend(65222); bgp_path.prepend(65223); }; }
protocol bgp dut {
  local 127.77.0.2 port %d as 65002;
  neighbor %s port %d as 65001;
  multihop; hold time 30; connect delay time 1;
  ipv4 { import none; export all; add paths tx; };
}
""" % (ports[1], OURS, ports[0])
    peers("b2", conf)
    ours = ours_conf(ports[0], [("b2", "127.77.0.2", ports[1], 65002)]).replace(
        "ipv4 { import all; export all; };", "ipv4 { import all; export none; add paths rx; };")
    d = start_daemon(ours)
    assert poll(established(d, "b2"), timeout=15), d.raw("show protocols all b2")
    def two_paths():
        v = route_all(d, "10.5.0.0/16")
        return "BGP.as_path: 65002 65111" in v and "BGP.as_path: 65002 65223 65222" in v
    assert poll(two_paths, timeout=10), route_all(d, "10.5.0.0/16")
    m = re.search(r"(\d+) of \d+ routes for (\d+) networks", reply_text(d.raw("show route protocol b2 count")))
    assert m and m.group(1) == "2", m      # both paths shown for the protocol
    # the shorter path is the best one
    v = reply_text(d.raw("show route 10.5.0.0/16"))
    best = [l for l in v.split("\n") if " * " in l]
    assert len(best) == 1 and "[AS65111i]" in best[0], v


def test_add_path_transmit(start_daemon, peers, ports):
    """We send both paths of one prefix to a BIRD 2 peer with ADD-PATH; a
    withdrawn path goes, the other stays."""
    ours = """router id 10.77.0.1;
protocol device {}
protocol static st1 { ipv4; route 10.5.0.0/16 blackhole { bgp_path.prepend(65111); }; }
protocol static st2 { ipv4; route 10.5.0.0/16 blackhole { bgp_path.prepend(65222); bgp_path.prepend(65223); }; }
protocol bgp b2 {
  local %s port %d as 65001;
  neighbor 127.77.0.2 port %d as 65002;
  multihop; hold time 30; connect delay time 1;
  ipv4 { import none; export all; add paths tx; };
}
""" % (OURS, ports[0], ports[1])
    p = peers("b2", peer_conf("127.77.0.2", ports[1], 65002, ports[0], "").replace(
        "ipv4 { import all; export all; gateway recursive; };",
        "ipv4 { import all; export none; gateway recursive; add paths rx; };"))
    d = start_daemon(ours)
    assert poll(established(d, "b2"), timeout=15), d.raw("show protocols all b2")
    def paths():
        return sorted(re.findall(r"BGP.as_path: ([\d ]+)", route_all(p, "10.5.0.0/16")))
    assert poll(lambda: paths() == ["65001 65111", "65001 65223 65222"], timeout=10), route_all(p, "10.5.0.0/16")
    d.raw("disable st1")
    assert poll(lambda: paths() == ["65001 65223 65222"], timeout=10), route_all(p, "10.5.0.0/16")
    d.raw("enable st1")
    assert poll(lambda: paths() == ["65001 65111", "65001 65223 65222"], timeout=10), route_all(p, "10.5.0.0/16")


@pytest.mark.parametrize("secondary", [True, False])
def test_secondary(start_daemon, peers, ports, secondary, is_reference):
    """The export filter rejects the best route: with `secondary` the next
    best one goes out instead, without it nothing does."""
    if is_reference:
        pytest.skip("BIRD 2 wants a sorted table for `secondary` and refuses one in recursive "
                    "gateway mode (multihop); a single-hop session on loopback never starts there")
    ours = """router id 10.77.0.1;
ipv4 table master4 sorted;
protocol device {}
protocol static st1 { ipv4; route 10.6.0.0/16 blackhole { bgp_path.prepend(65111); }; }
protocol static st2 { ipv4 { preference 150; }; route 10.6.0.0/16 blackhole { bgp_path.prepend(65222); }; }
protocol static st3 { ipv4; route 10.7.0.0/16 blackhole; }
protocol bgp b2 {
  local %s port %d as 65001;
  neighbor 127.77.0.2 port %d as 65002;
  hold time 30; connect delay time 1;
  ipv4 { import none; export where bgp_path.first != 65111; %s };
}
""" % (OURS, ports[0], ports[1], "secondary;" if secondary else "")
    p = peers("b2", peer_conf("127.77.0.2", ports[1], 65002, ports[0], ""))
    d = start_daemon(ours)
    assert poll(established(d, "b2"), timeout=15), d.raw("show protocols all b2")
    assert poll(lambda: "10.7.0.0/16" in route_all(p, "10.7.0.0/16"), timeout=10)
    def path():
        m = re.findall(r"BGP.as_path: ([\d ]+)", route_all(p, "10.6.0.0/16"))
        return m[0] if len(m) == 1 else ("none" if not m else m)
    if not secondary:
        assert path() == "none", route_all(p, "10.6.0.0/16")
        return
    assert poll(lambda: path() == "65001 65222", timeout=10), route_all(p, "10.6.0.0/16")
    d.raw("disable st2")
    assert poll(lambda: path() == "none", timeout=10), route_all(p, "10.6.0.0/16")
    d.raw("enable st2")
    assert poll(lambda: path() == "65001 65222", timeout=10), route_all(p, "10.6.0.0/16")
    d.raw("disable st1")
    assert poll(lambda: path() == "65001 65222", timeout=10), route_all(p, "10.6.0.0/16")
    assert poll(lambda: any("0 imported, 2 exported" in l for l in strip_codes(d.raw("show protocols all b2"))),
                timeout=5), d.raw("show protocols all b2")


@pytest.mark.parametrize("action", ["block", "disable"])
def test_import_limit(start_daemon, peers, ports, action):
    statics = " ".join("route 10.6.%d.0/24 blackhole;" % i for i in range(5))
    peers("b2", peer_conf("127.77.0.2", ports[1], 65002, ports[0], statics))
    ours = ours_conf(ports[0], [("b2", "127.77.0.2", ports[1], 65002)]).replace(
        "ipv4 { import all; export all; };", "ipv4 { import all; export none; import limit 3 action %s; };" % action)
    d = start_daemon(ours)
    if action == "block":
        assert poll(established(d, "b2"), timeout=15), d.raw("show protocols all b2")
        assert poll(lambda: count(d) == 5, timeout=10), reply_text(d.raw("show route"))   # 2 local + 3
        v = reply_text(d.raw("show protocols all b2"))
        assert "Import limit:   3 [HIT]" in v and "Action:       block" in v, v
    else:
        # the limit disables the protocol: its routes go, it stays down
        assert poll(lambda: re.search(r"^b2\s+BGP\s+\S+\s+down", reply_text(d.raw("show protocols b2")), re.M),
                    timeout=15), reply_text(d.raw("show protocols all b2"))
        assert poll(lambda: count(d) == 2, timeout=5)


@pytest.mark.parametrize("kind", ["import", "receive"])
def test_limit_in_full_updates(start_daemon, peers, ports, kind):
    """A limit met inside UPDATEs of hundreds of routes each: the routes
    before it go to the table in batches (chan_limits_headroom), those
    near it one by one, and exactly the limit is let in. `receive limit`
    counts the filtered routes it keeps too, `import limit` only the
    accepted ones."""
    statics = " ".join("route 10.%d.%d.0/24 blackhole;" % (30 + i // 256, i % 256) for i in range(1500))
    peers("b2", peer_conf("127.77.0.2", ports[1], 65002, ports[0], statics))
    # 256 of the routes (10.30.x.0/24) filtered, kept
    chan = ("import keep filtered; import where net !~ [ 10.30.0.0/16+ ]; export none; %s limit 1000 action block;"
            % kind)
    ours = ours_conf(ports[0], [("b2", "127.77.0.2", ports[1], 65002)]).replace(
        "ipv4 { import all; export all; };", "ipv4 { %s };" % chan)
    d = start_daemon(ours)
    assert poll(established(d, "b2"), timeout=15), d.raw("show protocols all b2")
    def routes():
        m = re.search(r"Routes:\s+(\d+) imported, (\d+) filtered", reply_text(d.raw("show protocols all b2")))
        return (int(m.group(1)), int(m.group(2))) if m else None
    if kind == "import":
        # 1,244 accepted are sent, 1,000 let in; the filtered ones do not count
        assert poll(lambda: routes() is not None and routes()[0] == 1000, timeout=15), routes()
    else:
        assert poll(lambda: routes() is not None and sum(routes()) == 1000, timeout=15), routes()
    time.sleep(1)       # nothing more comes in
    v = reply_text(d.raw("show protocols all b2"))
    got = routes()
    assert (got[0] if kind == "import" else sum(got)) == 1000, v
    assert re.search(r"%s limit:\s+1000 \[HIT\]" % kind.capitalize(), v), v
    assert count(d) == 2 + got[0], reply_text(d.raw("show route count"))


def test_import_filter_change_uses_route_refresh(start_daemon, peers, ports):
    """A changed import filter re-imports through ROUTE-REFRESH; the session stays up."""
    peers("b2", peer_conf("127.77.0.2", ports[1], 65002, ports[0],
                          "route 10.20.0.0/16 blackhole; route 10.21.0.0/24 blackhole;"))
    conf = ours_conf(ports[0], [("b2", "127.77.0.2", ports[1], 65002)])
    d = start_daemon(conf.replace("ipv4 { import all; export all; };",
                                  "ipv4 { import where net ~ [ 10.20.0.0/16 ]; export none; };"))
    assert poll(established(d, "b2"), timeout=15)
    assert poll(lambda: count(d) == 3, timeout=10), reply_text(d.raw("show route"))
    since = re.search(r"^b2\s+BGP\s+\S+\s+up\s+(\S+)", reply_text(d.raw("show protocols b2")), re.M).group(1)
    d.reconfigure_file(conf.replace("ipv4 { import all; export all; };", "ipv4 { import all; export none; };"))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    assert poll(lambda: count(d) == 4, timeout=10), reply_text(d.raw("show route"))
    assert established(d, "b2")()
    now = re.search(r"^b2\s+BGP\s+\S+\s+up\s+(\S+)", reply_text(d.raw("show protocols b2")), re.M).group(1)
    assert now == since, (since, now)


def test_extended_messages(start_daemon, peers, ports):
    """RFC 8654: with extended messages negotiated, routes whose UPDATEs
    exceed 4,096 bytes (1,500 communities each) pass both ways intact."""
    def comms(asn):
        return " ".join("bgp_community.add((%d, %d));" % (asn, i) for i in range(1500))
    b2 = peers("b2", peer_conf("127.77.0.30", ports[1], 65002, ports[0],
                               "route 10.61.0.0/16 blackhole { %s };" % comms(65002),
                               bgp_opts="\n  enable extended messages on;"))
    d = start_daemon(ours_conf(ports[0], [("b2", "127.77.0.30", ports[1], 65002)],
                               bgp_opts="enable extended messages on;",
                               statics="route 10.62.0.0/16 blackhole { %s };" % comms(65001)))
    assert poll(established(d, "b2"), timeout=15), d.raw("show protocols all b2")
    caps = reply_text(d.raw("show protocols all b2"))
    assert "Extended message" in caps, caps
    # (`show route all` cuts such a line: "<line overflow>", as BIRD does)
    def has(x, prefix, asn):
        return prefix in reply_text(x.raw("show route where net = %s && bgp_community.len = 1500 && "
                                           "(%d, 1499) ~ bgp_community" % (prefix, asn)))
    assert poll(lambda: has(d, "10.61.0.0/16", 65002), timeout=10), route_all(d, "10.61.0.0/16")[:300]
    assert poll(lambda: has(b2, "10.62.0.0/16", 65001), timeout=10), route_all(b2, "10.62.0.0/16")[:300]
