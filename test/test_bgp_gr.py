"""Graceful restart, long-lived GR and enhanced route refresh against BIRD 2 peers.

Our daemon (127.79.0.1) is the device under test; every peer is a Debian BIRD 2
daemon on its own 127.79.0.x.  A peer "crashes" with SIGKILL, so it sends no
NOTIFICATION and the session ends with a TCP reset, as in a real restart; it
comes back with `bird -R` (graceful restart recovery: R flag, F bits).  Timers
are short, and every wait polls.  With BIRD_BIN=/usr/sbin/bird the same tests
check BIRD 2 against itself: the expected lines are what BIRD 2 prints.
"""

import re

import pytest

from conftest import poll, REFERENCE_BIRD
import test_bgp
from test_bgp import PeerBird, established, peers, ports, route_all, reply_text  # noqa: F401 (fixtures)
from bgp_peers import since

OURS = "127.79.0.1"


def ours_conf(port, peers, bgp_opts="", statics="route 10.79.100.0/24 blackhole;"):
    return test_bgp.ours_conf(port, peers, statics=statics, bgp_opts=bgp_opts, ours=OURS, router_id="10.79.0.1")


def peer_conf(addr, port, asn, our_port, statics, bgp_opts="", export="all"):
    return test_bgp.peer_conf(addr, port, asn, our_port, statics, bgp_opts, export, ours=OURS, log=True)


TWO = "route 10.79.1.0/24 blackhole; route 10.79.2.0/24 blackhole;"
ONE = "route 10.79.1.0/24 blackhole;"


def has(d, prefix):
    return prefix in reply_text(d.raw("show route %s" % prefix))


def details(d, proto):
    return reply_text(d.raw("show protocols all %s" % proto))


def crash(peer):
    peer.kill()            # SIGKILL: no NOTIFICATION, the kernel resets the session


def restart(peer, conf=None, recovery=True):
    if conf is not None:
        peer.reconfigure_file(conf)
    peer.extra_args = ["-R"] if recovery else []
    peer.start()


@pytest.fixture
def gr_pair(start_daemon, peers, ports):
    """Our daemon and one BIRD 2 peer with `graceful restart on`, established, routes in."""
    def make(peer_opts, our_opts="", statics=TWO):
        p = peers("b2", peer_conf("127.79.0.2", ports[1], 65002, ports[0], statics, peer_opts))
        d = start_daemon(ours_conf(ports[0], [("b2", "127.79.0.2", ports[1], 65002)], our_opts))
        assert poll(established(d, "b2"), timeout=15), details(d, "b2")
        assert poll(lambda: has(d, "10.79.2.0/24") and has(d, "10.79.1.0/24"), timeout=10)
        assert poll(lambda: has(p, "10.79.100.0/24"), timeout=10)
        return d, p
    return make


def test_gr_helper_keeps_and_refreshes(gr_pair, ports):
    d, p = gr_pair("graceful restart on; graceful restart time 30;")
    v = details(d, "b2")
    # the peer can restart: BIRD lists its restart time and families
    assert "      Graceful restart\n        Restart time: 30\n        AF supported: ipv4\n        AF preserved:\n" \
        in v + "\n", v
    t1 = since(d, "10.79.1.0/24")

    crash(p)
    assert poll(lambda: "Neighbor graceful restart active" in details(d, "b2"), timeout=35), details(d, "b2")
    v = details(d, "b2")
    assert re.search(r"^    Restart timer:    \d+\.\d{3}/-$", v, re.M), v
    assert "    Neighbor GR:    Regular" in v, v
    # the routes stay, as they were
    assert has(d, "10.79.1.0/24") and has(d, "10.79.2.0/24")
    assert since(d, "10.79.1.0/24") == t1

    # The peer comes back with its forwarding state kept and without 10.79.2.0/24:
    # re-announced routes are fresh, the other one goes at its End-of-RIB.
    restart(p, peer_conf("127.79.0.2", ports[1], 65002, ports[0], ONE,
                         "graceful restart on; graceful restart time 30;"))
    assert poll(established(d, "b2"), timeout=15), details(d, "b2")
    assert poll(lambda: not has(d, "10.79.2.0/24"), timeout=15), reply_text(d.raw("show route"))
    assert poll(lambda: "graceful restart active" not in details(d, "b2"), timeout=5), details(d, "b2")
    assert "Neighbor GR" not in details(d, "b2")
    assert has(d, "10.79.1.0/24")
    assert since(d, "10.79.1.0/24") == t1        # never withdrawn, never replaced
    v = details(d, "b2")
    assert "        Restart recovery\n" in v, v   # the peer's R flag
    assert "        AF preserved: ipv4\n" in v, v  # and its F bit
    assert poll(lambda: has(p, "10.79.100.0/24"), timeout=10)


def test_gr_helper_flushes_after_restart_time(gr_pair):
    d, p = gr_pair("graceful restart on; graceful restart time 3;")
    crash(p)
    assert poll(lambda: "Neighbor graceful restart active" in details(d, "b2"), timeout=35)
    assert has(d, "10.79.1.0/24")
    assert poll(lambda: not has(d, "10.79.1.0/24") and not has(d, "10.79.2.0/24"), timeout=10), \
        reply_text(d.raw("show route"))
    assert "graceful restart active" not in details(d, "b2")


def test_gr_helper_flushes_without_forwarding_state(gr_pair, ports):
    """A peer that comes back without the F bit (no -R) lost its forwarding state."""
    d, p = gr_pair("graceful restart on; graceful restart time 30;")
    t1 = since(d, "10.79.1.0/24")
    crash(p)
    assert poll(lambda: "Neighbor graceful restart active" in details(d, "b2"), timeout=35)
    restart(p, peer_conf("127.79.0.2", ports[1], 65002, ports[0], ONE,
                         "graceful restart on; graceful restart time 30;"), recovery=False)
    assert poll(established(d, "b2"), timeout=15)
    assert poll(lambda: not has(d, "10.79.2.0/24") and has(d, "10.79.1.0/24"), timeout=10)
    assert "graceful restart active" not in details(d, "b2")
    assert since(d, "10.79.1.0/24") != t1        # flushed and learned again


def test_administrative_shutdown_is_not_graceful(gr_pair):
    d, p = gr_pair("graceful restart on; graceful restart time 30;")
    assert p.raw("disable dut").startswith(b"0009-")    # Cease NOTIFICATION
    assert poll(lambda: not has(d, "10.79.1.0/24"), timeout=10)
    assert "graceful restart active" not in details(d, "b2")


# a list longer than the 256 communities bgp_llgr_modify() keeps on the stack
MANY_COMMS = "route 10.79.1.0/24 blackhole; route 10.79.2.0/24 blackhole { %s };" % " ".join(
    "bgp_community.add((65000,%d));" % k for k in range(300))


def test_llgr(start_daemon, peers, ports):
    """After the restart time, long-lived stale routes: LLGR_STALE, least preferred, only to LLGR peers."""
    b2 = peers("b2", peer_conf("127.79.0.2", ports[1], 65002, ports[0], MANY_COMMS,
                               "graceful restart on; graceful restart time 2; "
                               "long lived graceful restart on; long lived stale time 5;"))
    b3 = peers("b3", peer_conf("127.79.0.3", ports[2], 65003, ports[0], "",
                               "long lived graceful restart off;"))
    b4 = peers("b4", peer_conf("127.79.0.4", ports[3], 65004, ports[0], "",
                               "long lived graceful restart aware;"))
    d = start_daemon(ours_conf(ports[0], [("b2", "127.79.0.2", ports[1], 65002),
                                          ("b3", "127.79.0.3", ports[2], 65003),
                                          ("b4", "127.79.0.4", ports[3], 65004)]))
    for n in ("b2", "b3", "b4"):
        assert poll(established(d, n), timeout=15), details(d, n)
    assert poll(lambda: has(b3, "10.79.1.0/24") and has(b4, "10.79.1.0/24"), timeout=10)

    crash(b2)
    def long_lived():
        return "    Neighbor GR:    Long-lived" in details(d, "b2")
    assert poll(long_lived, timeout=40), details(d, "b2")
    assert re.search(r"^    LL stale timer: \d+\.\d{3}/-$", details(d, "b2"), re.M), details(d, "b2")
    v = route_all(d, "10.79.1.0/24")
    assert "BGP.community: (65535,6)" in v, v
    assert re.search(r"\* \(100s\) \[AS65002i\]", v), v
    # (its community line is past the CLI's 512 bytes)
    v = reply_text(d.raw("show route 10.79.2.0/24 where (65535,6) ~ bgp_community && bgp_community.len = 301"))
    assert "10.79.2.0/24" in v, v
    # not to the peer without LLGR; with the community to the one that knows it
    assert poll(lambda: not has(b3, "10.79.1.0/24"), timeout=5), reply_text(b3.raw("show route"))
    assert poll(lambda: "(65535,6)" in route_all(b4, "10.79.1.0/24"), timeout=5), route_all(b4, "10.79.1.0/24")

    # the long lived stale time runs out
    assert poll(lambda: not has(d, "10.79.1.0/24"), timeout=15), details(d, "b2")
    assert "graceful restart active" not in details(d, "b2")
    assert poll(lambda: not has(b4, "10.79.1.0/24"), timeout=5)


def test_enhanced_refresh_reload_in(gr_pair, ports):
    """`reload in`: ROUTE-REFRESH; the peer answers BoRR ... EoRR, and what it no longer sends goes."""
    d, p = gr_pair("")
    t1 = since(d, "10.79.1.0/24")
    # the peer's export filter changes without a re-export (configure soft)
    p.reconfigure_file(peer_conf("127.79.0.2", ports[1], 65002, ports[0], TWO, "",
                                 "where net != 10.79.2.0/24"))
    assert b"0003 Reconfigured" in p.raw("configure soft")
    assert has(d, "10.79.2.0/24")     # nothing re-sent yet

    assert d.raw("reload in b2") == b"0015-b2: reloading\n0000 \n"
    assert poll(lambda: not has(d, "10.79.2.0/24"), timeout=10), reply_text(d.raw("show route"))
    assert since(d, "10.79.1.0/24") == t1      # re-sent unchanged: kept as it was


def test_enhanced_refresh_asked_by_peer(gr_pair):
    """The peer's `reload in`: we send BoRR, the table, EoRR; nothing is lost on its side."""
    d, p = gr_pair("debug { packets };")
    assert p.raw("reload in dut") == b"0015-dut: reloading\n0000 \n"
    assert poll(lambda: "END-OF-RR" in p.log(), timeout=10), p.log()[-3000:]
    assert "BEGIN-OF-RR" in p.log()
    assert has(p, "10.79.100.0/24")


def test_reload_out_and_errors(gr_pair):
    d, p = gr_pair("")
    assert d.raw("reload out b2") == b"0015-b2: reloading\n0000 \n"
    assert d.raw("reload b2") == b"0015-b2: reloading\n0000 \n"
    assert d.raw('reload "b*"') == b"0015-b2: reloading\n0000 \n"
    assert d.raw("reload in all") == b"0015-device1: reloading\n local4: reloading\n b2: reloading\n0000 \n"
    assert d.raw("reload in nonexistent").startswith(b"9001 ")
    assert d.raw('reload "zz*"') == b"8003 No protocols match\n"
    assert has(p, "10.79.100.0/24") and has(d, "10.79.1.0/24")


def test_restarting_speaker(start_daemon, peers, ports, is_reference):
    """Our own graceful restart: `graceful restart`, then `bird -R`: the BIRD 2 helper keeps
    our routes; we send R and F, and hold our End-of-RIB until the recovery ends (here the
    wait timer, as a second neighbor never comes up). Ours exports alone during the
    recovery and joins an update group after it."""
    def conf(statics):
        return ("graceful restart wait 5;\n"
                + ours_conf(ports[0], [("b2", "127.79.0.2", ports[1], 65002),
                                       ("idle9", "127.79.0.9", ports[9], 65009)],
                            "graceful restart on; graceful restart time 30;", statics))
    p = peers("b2", peer_conf("127.79.0.2", ports[1], 65002, ports[0], ONE))
    d = start_daemon(conf("route 10.79.100.0/24 blackhole; route 10.79.101.0/24 blackhole;"))
    assert poll(established(d, "b2"), timeout=15), details(d, "b2")
    assert poll(lambda: has(p, "10.79.100.0/24") and has(p, "10.79.101.0/24"), timeout=10)
    t1 = since(p, "10.79.100.0/24")
    v = details(p, "dut")
    assert "      Graceful restart\n        Restart time: 30\n        AF supported: ipv4\n        AF preserved:\n" \
        in v + "\n", v

    assert d.raw("graceful restart") == b"0025 Graceful restart requested\n"
    assert d.proc.wait(10) == 0
    assert poll(lambda: "Neighbor graceful restart active" in details(p, "dut"), timeout=10), details(p, "dut")
    assert has(p, "10.79.100.0/24") and has(p, "10.79.101.0/24")

    # back, without 10.79.101.0/24
    d.reconfigure_file(conf("route 10.79.100.0/24 blackhole;"))
    d.extra_args = ["-R"]
    d.start()
    assert poll(established(d, "b2"), timeout=15), details(d, "b2")
    st = reply_text(d.raw("show status"))
    assert "Graceful restart recovery in progress" in st, st
    assert re.search(r"^  Wait timer is \d+\.\d{3}/5$", st, re.M), st
    assert re.search(r"^  Waiting for [12] channels to recover$", st, re.M), st
    v = details(p, "dut")
    assert "        Restart recovery\n        AF supported: ipv4\n        AF preserved: ipv4\n" in v, v
    # nothing sent yet: the helper still holds our old routes, stale
    assert "Neighbor graceful restart active" in v
    assert has(p, "10.79.101.0/24")

    # the wait timer ends the recovery: feed, End-of-RIB, the helper flushes the rest
    assert poll(lambda: not has(p, "10.79.101.0/24"), timeout=15), details(p, "dut")
    assert "graceful restart active" not in details(p, "dut")
    assert since(p, "10.79.100.0/24") == t1
    assert "recovery" not in reply_text(d.raw("show status"))
    assert has(d, "10.79.1.0/24")
    if not is_reference:
        assert poll(lambda: "b2: Exports through update group bgp_group1 (ipv4), joined where it was" in d.log(),
                    timeout=10), d.log()


def test_gr_helper_with_import_table(start_daemon, peers, ports, is_reference):
    """With `import table on` the stale routes are kept in the import table
    too, and what the restarted peer no longer sends goes from both."""
    opts = "graceful restart on; graceful restart time 30;"
    p = peers("b2", peer_conf("127.79.0.2", ports[1], 65002, ports[0], TWO, opts))
    d = start_daemon(ours_conf(ports[0], [("b2", "127.79.0.2", ports[1], 65002)]).replace(
        "ipv4 { import all; export all; };", "ipv4 { import all; export all; import table on; };"))
    assert poll(established(d, "b2"), timeout=15), details(d, "b2")
    in_table = lambda: re.findall(r"^(10\.79\.\d+\.0/24)", reply_text(d.raw("show route import table b2.ipv4")), re.M)
    assert poll(lambda: sorted(in_table()) == ["10.79.1.0/24", "10.79.2.0/24"], timeout=10), in_table()
    crash(p)
    assert poll(lambda: "Neighbor graceful restart active" in details(d, "b2"), timeout=35), details(d, "b2")
    if not is_reference:    # BIRD 2 shows no import table while its channel waits
        assert sorted(in_table()) == ["10.79.1.0/24", "10.79.2.0/24"]
    assert has(d, "10.79.2.0/24")
    restart(p, peer_conf("127.79.0.2", ports[1], 65002, ports[0], ONE, opts))
    assert poll(established(d, "b2"), timeout=15), details(d, "b2")
    assert poll(lambda: not has(d, "10.79.2.0/24"), timeout=15), reply_text(d.raw("show route"))
    assert poll(lambda: in_table() == ["10.79.1.0/24"], timeout=10), in_table()
    assert has(d, "10.79.1.0/24")


def test_channel_gr_options(start_daemon, peers, ports):
    """Per-channel `graceful restart`, `long lived graceful restart` and `long lived stale
    time` (BIRD 2): which families our capabilities list, and with what stale time, as
    we show them and as the BIRD 2 peer received them."""
    ours, peer = "127.86.3.1", "127.86.3.2"
    chans = "ipv4 { import all; export all; %s }; ipv6 { import all; export all; %s };"
    common = "multihop; hold time 30; connect delay time 1; error wait time 1, 2;"
    p = peers("b2", """router id %s;
protocol device {}
protocol bgp dut {
  local %s port %d as 65002; neighbor %s port %d as 65001; %s
  graceful restart on; long lived graceful restart on;
  %s
}
""" % (peer, peer, ports[1], ours, ports[0], common, chans % ("", "")))
    d = start_daemon("""router id 10.86.3.1;
protocol device {}
protocol bgp b2 {
  local %s port %d as 65001; neighbor %s port %d as 65002; %s
  graceful restart on; long lived graceful restart on; long lived stale time 50;
  %s
}
""" % (ours, ports[0], peer, ports[1], common,
       chans % ("graceful restart off; long lived graceful restart off;", "long lived stale time 100;")))
    assert poll(established(d, "b2"), timeout=15), details(d, "b2")
    want = ("      Graceful restart\n        Restart time: 120\n        AF supported: ipv6\n        AF preserved:\n"
            "      4-octet AS numbers\n      Enhanced refresh\n"
            "      Long-lived graceful restart\n        LL stale time: 100\n        AF supported: ipv6\n"
            "        AF preserved:\n")
    v = details(d, "b2")
    assert want in v[v.index("    Local capabilities\n"):v.index("    Neighbor capabilities\n")], v
    v = details(p, "dut")
    assert want in v[v.index("    Neighbor capabilities\n"):], v
