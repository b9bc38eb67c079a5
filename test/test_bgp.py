"""BGP interoperability: our daemon against real BIRD 2 peers on loopback.

Every simulated peer is a Debian BIRD 2 daemon on its own 127.77.x.y address
and port; our daemon is the device under test.  Run against the reference
(BIRD_BIN=/usr/sbin/bird) the same tests check BIRD 2 against itself.
"""

import os
import random
import re
import subprocess

import pytest

from conftest import Daemon, poll, REFERENCE_BIRD, strip_codes as _strip_codes


def strip_codes(reply):
    return "\n".join(_strip_codes(reply))

pytestmark = pytest.mark.skipif(not os.path.exists(REFERENCE_BIRD), reason="needs Debian's bird2 as peer")


class PeerBird(Daemon):
    """A BIRD 2 daemon playing a BGP peer."""

    def start(self):
        import conftest
        saved = conftest.BIRD_BIN
        conftest.BIRD_BIN = REFERENCE_BIRD
        try:
            return super().start()
        finally:
            conftest.BIRD_BIN = saved


@pytest.fixture
def ports():
    base = random.randrange(20000, 60000, 10)
    return [base + i for i in range(10)]


@pytest.fixture
def peers(tmp_path):
    started = []

    def start(name, conf):
        d = tmp_path / name
        d.mkdir()
        p = PeerBird(d, conf)
        started.append(p)
        return p.start()

    yield start
    for p in started:
        p.close()


def established(d, proto):
    return lambda: re.search(r"^%s\s+BGP\s+\S+\s+up\s+\S+\s+Established" % proto,
                             strip_codes(d.raw("show protocols %s" % proto)), re.M)


def route_all(d, prefix):
    return strip_codes(d.raw("show route %s all" % prefix))


def count(d):
    m = re.search(r"(\d+) of \d+ routes for \d+ networks in table master4", strip_codes(d.raw("show route table master4 count")))
    return int(m.group(1)) if m else -1


OURS = "127.77.0.1"


def ours_conf(port, peers, rs=False, statics=""):
    s = ["router id 10.77.0.1;", "protocol device {}",
         "protocol static local4 { ipv4; %s }" % (statics or "route 10.10.0.0/16 blackhole; route 10.11.0.0/16 blackhole;")]
    for name, addr, pport, asn in peers:
        s.append("""protocol bgp %s {
  local %s port %d as 65001;
  neighbor %s port %d as %d;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;
  %s
  ipv4 { import all; export all; };
}""" % (name, OURS, port, addr, pport, asn, "rs client;" if rs else ""))
    return "\n".join(s) + "\n"


def peer_conf(addr, port, asn, our_port, statics):
    return """router id %s;
protocol device {}
protocol static st { ipv4; %s }
protocol bgp dut {
  local %s port %d as %d;
  neighbor %s port %d as 65001;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;
  ipv4 { import all; export all; gateway recursive; };
}
""" % (addr, statics, addr, port, asn, OURS, our_port)


def test_session_routes_both_ways(start_daemon, peers, ports):
    p = peers("b2", peer_conf("127.77.0.2", ports[1], 65002, ports[0],
                              "route 10.20.0.0/16 blackhole; route 10.21.0.0/24 blackhole;"))
    d = start_daemon(ours_conf(ports[0], [("b2", "127.77.0.2", ports[1], 65002)]))
    assert poll(established(d, "b2"), timeout=15), d.raw("show protocols all b2")
    assert poll(established(p, "dut"), timeout=5)
    assert poll(lambda: count(d) == 4, timeout=5), strip_codes(d.raw("show route"))
    assert poll(lambda: count(p) == 4, timeout=5), strip_codes(p.raw("show route"))

    ours_view = route_all(d, "10.20.0.0/16")
    assert "BGP.as_path: 65002" in ours_view
    assert "BGP.next_hop: 127.77.0.2" in ours_view
    assert "BGP.origin: IGP" in ours_view
    peer_view = route_all(p, "10.10.0.0/16")
    assert "BGP.as_path: 65001" in peer_view      # our AS prepended toward eBGP
    assert "BGP.next_hop: %s" % OURS in peer_view   # next hop self toward eBGP

    # Withdrawals arrive.
    assert p.raw("disable st").startswith(b"0009-")
    assert poll(lambda: count(d) == 2, timeout=5), strip_codes(d.raw("show route"))
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
    assert poll(lambda: count(d) == 4, timeout=10), strip_codes(d.raw("show route"))
    # Each member sees the other two members' routes (and ours), unchanged.
    for name, addr, port, asn, _ in members:
        assert poll(lambda: count(ps[name]) == 4, timeout=10), strip_codes(ps[name].raw("show route"))
    v = route_all(ps["m3"], "10.2.0.0/16")
    assert "BGP.as_path: 65002 65102" in v, v        # m2 prepended itself; no route-server AS
    assert "BGP.next_hop: 127.77.0.2" in v, v        # original next hop
    assert "BGP.community: (65002,7)" in v, v
    assert "BGP.large_community: (65002, 1, 2)" in v, v
    v = route_all(ps["m4"], "10.3.0.0/16")
    assert "BGP.as_path: 65003" in v and "BGP.med: 33" in v, v   # MED passed unchanged
    assert "BGP.next_hop: 127.77.0.3" in v, v
