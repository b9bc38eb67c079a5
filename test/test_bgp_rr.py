"""BGP route processing against real BIRD 2 peers: route reflection (RFC 4456),
confederations (RFC 5065), BGP roles and OTC (RFC 9234), `allow local as`,
`enforce first as` and the generic `from` attribute.

The device under test is our daemon on 127.78.0.1; every BIRD 2 peer has its
own 127.78.x.y. Run against the reference (BIRD_BIN=/usr/sbin/bird) the same
tests check that the expectations are BIRD 2's behaviour.

Absence is checked with a sentinel: a route the peer announces (or we
announce) only after everything else is in place. It travels the same
session after the route that must not arrive, so once the sentinel is there,
the other one would have been too.
"""

import re

import pytest

from conftest import poll
from test_bgp import established, peers, ports, route_all, reply_text  # noqa: F401 (fixtures)

DUT = "127.78.0.1"
TIMERS = "hold time 30; connect delay time 1; error wait time 1, 2;"


def bgp(name, port, addr, pport, asn, opts="", channel="import all; export all;", local_as=None):
    """A `protocol bgp` block of the device under test."""
    return """protocol bgp %s {
  local %s port %d as %d;
  neighbor %s port %d as %d;
  multihop; %s
  %s
  ipv4 { %s };
}
""" % (name, DUT, port, local_as or 65001, addr, pport, asn, TIMERS, opts, channel)


def peer(addr, port, asn, our_port, our_as, statics="", opts="", channel="import all; export all;", extra=""):
    """A BIRD 2 peer with router id = its address, talking to the DUT."""
    return """router id %s;
log stderr all;
protocol device {}
protocol static st { ipv4; %s }
%s
protocol bgp dut {
  local %s port %d as %d;
  neighbor %s port %d as %d;
  multihop; %s
  %s
  ipv4 { %s };
}
""" % (addr, statics, extra, addr, port, asn, DUT, our_port, our_as, TIMERS, opts, channel)


def has(d, prefix):
    return lambda: prefix in route_all(d, prefix)


def up(d, *names):
    for n in names:
        assert poll(established(d, n), timeout=20), reply_text(d.raw("show protocols all %s" % n))


def attr(view, name):
    m = re.search(r"^\s*BGP\.%s: (.*)$" % name, view, re.M)
    return m.group(1).strip() if m else None


# --- Route reflection --------------------------------------------------------------

def test_route_reflection(start_daemon, peers, ports):
    """We reflect for clients c1, c2 and non-clients n1, n2, all BIRD 2 in AS 65001."""
    cl = "rr client; rr cluster id 10.78.255.1;"
    members = [("c1", "127.78.1.2", ports[1], cl), ("c2", "127.78.1.3", ports[2], cl),
               ("n1", "127.78.1.4", ports[3], ""), ("n2", "127.78.1.5", ports[4], "")]
    conf = "router id 10.78.0.1;\nprotocol device {}\n"
    conf += "protocol static st { ipv4; route 10.78.100.0/24 blackhole; }\n"
    conf += "".join(bgp(n, ports[0], a, p, 65001, o) for n, a, p, o in members)
    d = start_daemon(conf)
    ps = {}
    for n, a, p, _ in members:
        i = a.split(".")[-1]
        statics = "route 10.78.%s.0/24 blackhole;" % i
        extra = ""
        if n == "c1":
            # routes that loop back to us: our cluster id, our router id as originator
            statics += (" route 10.78.102.0/24 blackhole { bgp_cluster_list.add(10.78.255.1); };"
                        " route 10.78.103.0/24 blackhole { bgp_originator_id = 10.78.0.1; };")
            extra = "protocol static late { disabled; ipv4; route 10.78.112.0/24 blackhole; }"
        ps[n] = peers(n, peer(a, p, 65001, ports[0], 65001, statics, extra=extra))
    up(d, "c1", "c2", "n1", "n2")

    v = reply_text(d.raw("show protocols all c1"))
    assert re.search(r"Session:\s+internal multihop route-reflector AS4", v), v
    v = reply_text(d.raw("show protocols all n1"))
    assert re.search(r"Session:\s+internal multihop AS4$", v, re.M), v

    # client -> everyone: ORIGINATOR_ID of the client, our cluster id
    for n in ("c2", "n1", "n2"):
        assert poll(has(ps[n], "10.78.2.0/24"), timeout=10), route_all(ps[n], "")
        v = route_all(ps[n], "10.78.2.0/24")
        assert attr(v, "originator_id") == "127.78.1.2", v
        assert attr(v, "cluster_list") == "10.78.255.1", v
        assert attr(v, "as_path") == "", v
    # non-client -> clients only
    for n in ("c1", "c2"):
        assert poll(has(ps[n], "10.78.4.0/24"), timeout=10), route_all(ps[n], "")
        v = route_all(ps[n], "10.78.4.0/24")
        assert attr(v, "originator_id") == "127.78.1.4", v
        assert attr(v, "cluster_list") == "10.78.255.1", v
    # our own route goes to every iBGP peer without reflection attributes
    for n in ("c1", "n1"):
        assert poll(has(ps[n], "10.78.100.0/24"), timeout=10)
        v = route_all(ps[n], "10.78.100.0/24")
        assert attr(v, "originator_id") is None and attr(v, "cluster_list") is None, v

    # sentinel from c1, after the loops and n1's route were in our table
    assert poll(has(d, "10.78.4.0/24"), timeout=10)
    assert ps["c1"].raw("enable late").startswith(b"0011-")
    assert poll(has(d, "10.78.112.0/24"), timeout=10)
    assert poll(has(ps["n2"], "10.78.112.0/24"), timeout=10)
    assert "10.78.102.0/24" not in route_all(d, "10.78.102.0/24")    # CLUSTER_LIST loop
    assert "10.78.103.0/24" not in route_all(d, "10.78.103.0/24")    # ORIGINATOR_ID loop
    assert "10.78.4.0/24" not in route_all(ps["n2"], "10.78.4.0/24")  # non-client to non-client


# --- Confederation -------------------------------------------------------------------

def test_confederation(start_daemon, peers, ports):
    """We are sub-AS 65010 of confederation 100 with member sub-AS 65020 (BIRD 2);
    an external BIRD 2 in AS 65030 sees only AS 100."""
    conf = "router id 10.78.0.1;\nprotocol device {}\n"
    conf += "protocol static st { ipv4; route 10.78.10.0/24 blackhole; }\n"
    conf += bgp("mem", ports[0], "127.78.2.2", ports[1], 65020,
                "confederation 100; confederation member yes;", local_as=65010)
    conf += bgp("ext", ports[0], "127.78.2.3", ports[2], 65030, "confederation 100;",
                "import filter { bgp_local_pref = 150; accept; }; export all;", local_as=65010)
    d = start_daemon(conf)
    m = peers("mem", peer("127.78.2.2", ports[1], 65020, ports[0], 65010,
                          "route 10.78.20.0/24 blackhole { bgp_med = 7; bgp_local_pref = 250; };",
                          "confederation 100; confederation member yes;"))
    e = peers("ext", peer("127.78.2.3", ports[2], 65030, ports[0], 100,
                          "route 10.78.30.0/24 blackhole;"))
    up(d, "mem", "ext")
    up(e, "dut")     # it expects AS 100 in our OPEN

    # from the member: its confederation segment, MED and LOCAL_PREF kept
    assert poll(has(d, "10.78.20.0/24"), timeout=10)
    v = route_all(d, "10.78.20.0/24")
    assert attr(v, "as_path") == "(65020)", v
    assert attr(v, "med") == "7" and attr(v, "local_pref") == "250", v
    # to the true eBGP peer: confederation ASN only, no MED, no LOCAL_PREF
    for prefix, path in (("10.78.20.0/24", "100"), ("10.78.10.0/24", "100")):
        assert poll(has(e, prefix), timeout=10), route_all(e, "")
        v = route_all(e, prefix)
        assert attr(v, "as_path") == path, v
        assert attr(v, "med") is None, v
    # from the external peer to the member: our sub-AS as a confed segment, LOCAL_PREF kept
    assert poll(has(m, "10.78.30.0/24"), timeout=10), route_all(m, "")
    v = route_all(m, "10.78.30.0/24")
    assert attr(v, "as_path") == "(65010) 65030", v
    assert attr(v, "local_pref") == "150", v
    v = route_all(m, "10.78.10.0/24")
    assert attr(v, "as_path") == "(65010)", v


# --- Roles and OTC ---------------------------------------------------------------------

def test_roles_otc(start_daemon, peers, ports):
    """We are provider of cu (customer role), customer of pv (no role), peer of pe (peer
    role) and provider of lk (no role, leaks a route carrying OTC)."""
    conf = "router id 10.78.0.1;\nprotocol device {}\n"
    conf += ("protocol static st { ipv4; route 10.78.1.0/24 blackhole;"
             " route 10.78.9.0/24 blackhole { bgp_otc = 65077; }; }\n")
    conf += "protocol static late { disabled; ipv4; route 10.78.99.0/24 blackhole; }\n"
    conf += bgp("cust", ports[0], "127.78.3.2", ports[1], 65002, "local role provider;")
    conf += bgp("prov", ports[0], "127.78.3.3", ports[2], 65003, "local role customer;")
    conf += bgp("leak", ports[0], "127.78.3.4", ports[3], 65004, "local role provider;")
    conf += bgp("lat", ports[0], "127.78.3.5", ports[4], 65005, "local role peer;")
    d = start_daemon(conf)
    cu = peers("cu", peer("127.78.3.2", ports[1], 65002, ports[0], 65001, "route 10.78.20.0/24 blackhole;",
                          "local role customer;"))
    pv = peers("pv", peer("127.78.3.3", ports[2], 65003, ports[0], 65001, "route 10.78.30.0/24 blackhole;"))
    lk = peers("lk", peer("127.78.3.4", ports[3], 65004, ports[0], 65001,
                          "route 10.78.40.0/24 blackhole { bgp_otc = 65099; }; route 10.78.41.0/24 blackhole;",
                          extra="protocol static late { disabled; ipv4; route 10.78.49.0/24 blackhole; }"))
    peers("pe", peer("127.78.3.5", ports[4], 65005, ports[0], 65001, "route 10.78.50.0/24 blackhole;",
                     "local role peer;"))
    up(d, "cust", "prov", "leak", "lat")

    v = reply_text(d.raw("show protocols all cust"))
    assert re.search(r"Local capabilities\n(.*\n)*?\s+Role: provider\n(.*\n)*?\s+Neighbor capabilities\n"
                     r"(.*\n)*?\s+Role: customer\n", v), v

    # from a provider without OTC: marked with its ASN (ingress)
    assert poll(has(d, "10.78.30.0/24"), timeout=10)
    assert attr(route_all(d, "10.78.30.0/24"), "otc") == "65003"
    # from a customer: nothing added
    assert poll(has(d, "10.78.20.0/24"), timeout=10)
    assert attr(route_all(d, "10.78.20.0/24"), "otc") is None
    # from a peer: its own ASN (it marked the route on egress)
    assert poll(has(d, "10.78.50.0/24"), timeout=10)
    assert attr(route_all(d, "10.78.50.0/24"), "otc") == "65005"
    # to the customer: our route marked with our ASN (egress), others' OTC kept
    for prefix, otc in (("10.78.1.0/24", "65001"), ("10.78.30.0/24", "65003"), ("10.78.9.0/24", "65077"),
                        ("10.78.41.0/24", "65001"), ("10.78.50.0/24", "65005")):
        assert poll(has(cu, prefix), timeout=10), route_all(cu, "")
        assert attr(route_all(cu, prefix), "otc") == otc, route_all(cu, prefix)
    # to the provider: BGP routes only without OTC, none added; routes of
    # other protocols as the operator made them (BIRD 2 checks only BGP routes)
    for prefix, otc in (("10.78.1.0/24", None), ("10.78.20.0/24", None), ("10.78.41.0/24", None),
                        ("10.78.9.0/24", "65077")):
        assert poll(has(pv, prefix), timeout=10), route_all(pv, "")
        assert attr(route_all(pv, prefix), "otc") == otc, route_all(pv, prefix)

    # sentinels: from the leaker after its leak, from us after the peer's OTC route
    assert lk.raw("enable late").startswith(b"0011-")
    assert poll(has(d, "10.78.49.0/24"), timeout=10)
    assert "10.78.40.0/24" not in route_all(d, "10.78.40.0/24")      # leak from a customer
    assert d.raw("enable late").startswith(b"0011-")
    assert poll(has(pv, "10.78.99.0/24"), timeout=10)
    assert "10.78.50.0/24" not in route_all(pv, "10.78.50.0/24")     # OTC routes do not go up


@pytest.mark.parametrize("case", ["conflict", "required"])
def test_role_mismatch(start_daemon, peers, ports, case):
    """Provider against provider, or a required role the peer does not announce:
    the session is refused with OPEN Message Error / Role Mismatch."""
    ours, theirs = ("local role provider;", "local role provider;") if case == "conflict" \
        else ("local role peer; require roles;", "")
    conf = "router id 10.78.0.1;\nprotocol device {}\n" + bgp("p", ports[0], "127.78.4.2", ports[1], 65002, ours)
    d = start_daemon(conf)
    p = peers("p", peer("127.78.4.2", ports[1], 65002, ports[0], 65001, opts=theirs))

    def refused(daemon, proto, text):
        return lambda: re.search(r"^%s\s+BGP\s+.*%s" % (proto, text), reply_text(daemon.raw("show protocols %s" % proto)), re.M)
    # for a conflict both sides see it; each may also get the other's NOTIFICATION
    ours_text, peer_text = ("(BGP Error|Received): Role mismatch",) * 2 if case == "conflict" \
        else ("BGP Error: Role mismatch", "Received: Role mismatch")
    assert poll(refused(d, "p", ours_text), timeout=15), reply_text(d.raw("show protocols all p"))
    assert poll(refused(p, "dut", peer_text), timeout=15), reply_text(p.raw("show protocols all dut"))
    assert not established(d, "p")()


# --- allow local as, enforce first as, from ------------------------------------------

def test_allow_local_as_enforce_first_as_from(start_daemon, peers, ports):
    conf = """router id 10.78.0.1;
protocol device {}
filter mark_from {
  if from = 127.78.5.2 then bgp_community.add((65001, 2));
  if from = 127.78.5.3 then bgp_community.add((65001, 3));
  accept;
}
"""
    conf += bgp("p5", ports[0], "127.78.5.2", ports[1], 65005, "allow local as 1;",
                "import filter mark_from; export none;")
    conf += bgp("p6", ports[0], "127.78.5.3", ports[2], 65006, "enforce first as;",
                "import filter mark_from; export none;")
    d = start_daemon(conf)
    late = "protocol static late { disabled; ipv4; route 10.78.%d.0/24 blackhole { bgp_path.prepend(%d); }; }"
    p5 = peers("p5", peer("127.78.5.2", ports[1], 65005, ports[0], 65001,
                          "route 10.78.50.0/24 blackhole { bgp_path.prepend(65001); };"
                          " route 10.78.51.0/24 blackhole { bgp_path.prepend(65001); bgp_path.prepend(65001); };",
                          extra=late % (59, 65005)))
    # p6 acts as a route server toward us: it does not put its own AS first
    p6 = peers("p6", peer("127.78.5.3", ports[2], 65006, ports[0], 65001,
                          "route 10.78.60.0/24 blackhole { bgp_path.prepend(65006); };"
                          " route 10.78.61.0/24 blackhole { bgp_path.prepend(65099); };",
                          opts="rs client;", extra=late % (69, 65006)))
    up(d, "p5", "p6")

    assert poll(has(d, "10.78.50.0/24"), timeout=10)
    v = route_all(d, "10.78.50.0/24")
    assert attr(v, "as_path") == "65005 65001", v
    assert attr(v, "community") == "(65001,2)", v       # filters see `from`
    assert poll(has(d, "10.78.60.0/24"), timeout=10)
    v = route_all(d, "10.78.60.0/24")
    assert attr(v, "as_path") == "65006", v
    assert attr(v, "community") == "(65001,3)", v

    for p, sentinel in ((p5, "10.78.59.0/24"), (p6, "10.78.69.0/24")):
        assert p.raw("enable late").startswith(b"0011-")
        assert poll(has(d, sentinel), timeout=10)
    assert "10.78.51.0/24" not in route_all(d, "10.78.51.0/24")    # our AS twice: over the limit
    assert "10.78.61.0/24" not in route_all(d, "10.78.61.0/24")    # first AS is not p6's
