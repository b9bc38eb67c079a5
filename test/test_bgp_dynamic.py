"""Dynamic BGP (`neighbor range`) against real BIRD 2 peers.

The device under test listens on 127.87.0.1 with one protocol for the range
127.87.0.0/24; every BIRD 2 peer connects from its own 127.87.0.x and gets a
protocol of its own, spawned from the range protocol. Run against the
reference (BIRD_BIN=/usr/sbin/bird) the same tests check that the
expectations are BIRD 2.0.12's behaviour, notably: a spawned protocol stays
after its session went down (it connects again, as any BGP protocol); it is
removed by `configure` once disabled, or when its range protocol is gone or
changed so that it has to restart.
"""

import re

from conftest import poll
from test_bgp import established, peers, ports, route_all, reply_text  # noqa: F401 (fixtures)

DUT = "127.87.0.1"
TIMERS = "hold time 30; connect delay time 1; error wait time 1, 2;"


def dut_conf(port, range_opts="", channel="import filter dyn_in; export all;", with_range=True):
    """The device under test: a neighbor range (AS 65010) and a static route."""
    rng = """protocol bgp rng {
  local %s port %d as 65001;
  neighbor range 127.87.0.0/24 as 65010;
  multihop; %s
  rs client;
  %s
  ipv4 { %s };
}
""" % (DUT, port, TIMERS, range_opts, channel)
    return """router id 10.87.0.1;
log stderr all;
protocol device {}
protocol static local4 { ipv4; route 10.87.100.0/24 blackhole; }
filter dyn_in {
  if net = 10.87.99.0/24 then reject;
  bgp_community.add((65001, 87));
  accept;
}
%s""" % (rng if with_range else "")


def peer_conf(addr, port, our_port, statics):
    """A BIRD 2 peer in AS 65010, as all of the range: `allow local as` takes
    the other peers' routes (their path holds 65010, ours does not: rs client)."""
    return """router id %s;
protocol device {}
protocol static st { ipv4; %s }
protocol bgp dut {
  local %s port %d as 65010;
  neighbor %s port %d as 65001;
  multihop; %s
  allow local as;
  ipv4 { import all; export all; };
}
""" % (addr, statics, addr, port, DUT, our_port, TIMERS)


def count(d):
    m = re.search(r"(\d+) of \d+ routes", reply_text(d.raw("show route table master4 count")))
    return int(m.group(1)) if m else -1


def dynamic(d):
    """{neighbor address: name} of the BGP protocols other than the range."""
    out = {}
    for name, row in d.protocols().items():
        if row[0] != "BGP" or name == "rng":
            continue
        m = re.search(r"Neighbor address: (\S+)", reply_text(d.raw("show protocols all %s" % name)))
        if m:
            out[m.group(1)] = name
    return out


def start_peers(peers, ports, addrs):
    return {a: peers("p" + a.split(".")[-1],
                     peer_conf(a, ports[i + 1], ports[0], "route 10.87.%s.0/24 blackhole;" % a.split(".")[-1]
                               + (" route 10.87.99.0/24 blackhole;" if i == 0 else "")))
            for i, a in enumerate(addrs)}


def all_established(d, n):
    def check():
        dyn = dynamic(d)
        return len(dyn) == n and all(established(d, name)() for name in dyn.values()) and dyn
    return check


def test_neighbor_range_spawns_per_peer(start_daemon, peers, ports):
    addrs = ["127.87.0.2", "127.87.0.3", "127.87.0.4"]
    d = start_daemon(dut_conf(ports[0]))
    ps = start_peers(peers, ports, addrs)
    # a BIRD 2 peer outside the range is refused
    outsider = peers("out", peer_conf("127.87.1.9", ports[5], ports[0], "route 10.87.109.0/24 blackhole;"))

    dyn = poll(all_established(d, 3), timeout=20)
    assert dyn, reply_text(d.raw("show protocols"))
    assert sorted(dyn.values()) == ["dynbgp1", "dynbgp2", "dynbgp3"], dyn
    for a in addrs:
        assert poll(established(ps[a], "dut"), timeout=5), a

    # the range protocol: waiting in Start, its channel down, as BIRD 2 shows it
    row = d.protocols()["rng"]
    assert row[:3] == ("BGP", "---", "start") and row[4].rstrip() == "Passive", row
    v = reply_text(d.raw("show protocols all rng"))
    assert "  BGP state:          Passive\n    Neighbor range:   127.87.0.0/24\n" \
           "    Neighbor AS:      65010\n    Local AS:         65001\n" in v, v
    assert "    State:          DOWN\n" in v, v

    # every peer's route lands in master4 through the range's import filter
    assert poll(lambda: count(d) == 4, timeout=10), reply_text(d.raw("show route"))
    v = route_all(d, "10.87.2.0/24")
    assert "[%s " % dyn["127.87.0.2"] in v and "BGP.community: (65001,87)" in v, v
    assert "10.87.99.0/24" not in reply_text(d.raw("show route"))
    # ... and goes out to the others, untouched (rs client)
    assert poll(lambda: count(ps["127.87.0.2"]) == 5, timeout=10), reply_text(ps["127.87.0.2"].raw("show route"))
    for a in addrs[1:]:
        assert poll(lambda: count(ps[a]) == 4, timeout=10), reply_text(ps[a].raw("show route"))
    v = route_all(ps["127.87.0.3"], "10.87.4.0/24")
    assert "BGP.as_path: 65010\n" in v and "BGP.next_hop: 127.87.0.4\n" in v, v

    assert not established(outsider, "dut")()
    assert poll(lambda: "BGP: Unexpected connect from unknown address 127.87.1.9" in d.log(), timeout=5), d.log()
    assert len(dynamic(d)) == 3

    # a peer that stops takes its routes along; its protocol stays and waits
    gone = dyn["127.87.0.4"]
    ps["127.87.0.4"].stop()
    assert poll(lambda: count(d) == 3, timeout=10), reply_text(d.raw("show route"))
    assert poll(lambda: count(ps["127.87.0.3"]) == 3, timeout=10)
    assert not established(d, gone)()
    assert gone in d.protocols()
    # disabled, it is gone at the next configure; the others keep their sessions
    since = {n: d.protocols()[n][3] for n in dyn.values() if n != gone}
    assert d.raw("disable %s" % gone).startswith(b"0009-")
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    assert poll(lambda: gone not in d.protocols(), timeout=5), reply_text(d.raw("show protocols"))
    rows = d.protocols()
    assert {n: rows[n][3] for n in since} == since, rows
    assert all(established(d, n)() for n in since)


def test_neighbor_range_follows_configure(start_daemon, peers, ports):
    addrs = ["127.87.0.5", "127.87.0.6"]
    names = 'dynamic name "peer"; dynamic name digits 3;'
    d = start_daemon(dut_conf(ports[0], range_opts=names))
    ps = start_peers(peers, ports, addrs)
    dyn = poll(all_established(d, 2), timeout=20)
    assert dyn and sorted(dyn.values()) == ["peer001", "peer002"], reply_text(d.raw("show protocols"))
    assert poll(lambda: count(d) == 3, timeout=10), reply_text(d.raw("show route"))
    since = {n: d.protocols()[n][3] for n in dyn.values()}

    # unchanged: the sessions stay
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    assert {n: d.protocols()[n][3] for n in since} == since

    # a new import filter of the range reaches its instances without a restart
    d.reconfigure_file(dut_conf(ports[0], range_opts=names,
                                channel="import where net != 10.87.5.0/24; export all;"))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    assert poll(lambda: count(d) == 3 and "10.87.5.0/24" not in reply_text(d.raw("show route"))
                and "10.87.99.0/24" in reply_text(d.raw("show route")), timeout=10), \
        reply_text(d.raw("show route"))
    assert {n: d.protocols()[n][3] for n in since} == since

    # the range protocol removed: so are its instances, and their routes
    d.reconfigure_file(dut_conf(ports[0], with_range=False))
    d.raw("configure")
    assert poll(lambda: list(d.protocols()) == ["device1", "local4"], timeout=10), reply_text(d.raw("show protocols"))
    assert poll(lambda: count(d) == 1, timeout=10)

    # back again: the peers connect again and get the names again
    d.reconfigure_file(dut_conf(ports[0], range_opts=names))
    d.raw("configure")
    dyn = poll(all_established(d, 2), timeout=20)
    assert dyn and sorted(dyn.values()) == ["peer001", "peer002"], reply_text(d.raw("show protocols"))
    assert poll(lambda: count(d) == 3, timeout=10)


def test_neighbor_range_configure_undo(start_daemon, peers, ports):
    """A range narrowed past its peer under `configure timeout`, then undone:
    the instance goes and comes back; the undone config is dropped while the
    protocols it restarted still stop with it (a use after free once)."""
    d = start_daemon(dut_conf(ports[0]))
    start_peers(peers, ports, ["127.87.0.7"])
    assert poll(all_established(d, 1), timeout=20), reply_text(d.raw("show protocols"))
    d.write_file("narrow.conf", dut_conf(ports[0]).replace("127.87.0.0/24", "127.87.0.128/25"))
    assert b"Undo scheduled" in d.raw('configure "%s" timeout 60' % d.path("narrow.conf"))
    assert poll(lambda: list(d.protocols()) == ["device1", "local4", "rng"], timeout=10), \
        reply_text(d.raw("show protocols"))
    assert b"Undo requested" in d.raw("configure undo")
    assert poll(all_established(d, 1), timeout=20), reply_text(d.raw("show protocols"))
    assert poll(lambda: count(d) == 2, timeout=10), reply_text(d.raw("show route"))
