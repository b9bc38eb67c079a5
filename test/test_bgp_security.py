"""TCP-MD5 (`password`, RFC 2385) and GTSM (`ttl security`, RFC 5082) with
BIRD 2 peers: with matching settings the session comes up, whichever side
connects; with a wrong password, or a peer that does not send TTL 255 to a
side that requires it, it never does (the kernel drops the segments).

Loopback does not decrement the TTL, so what arrives is what was sent.
Passes against BIRD 2 too. Addresses 127.99.x.y.
"""

import time

import pytest

from conftest import poll, strip_codes
from test_bgp import established, peers, ports  # noqa: F401 (fixtures)

DUT = "127.99.0.1"
TIMERS = "hold time 30; connect delay time 1; error wait time 1, 2;"


def ours(port, peer, pport, opts):
    return """router id 10.99.0.1;
protocol device {}
protocol static st { ipv4; route 10.99.1.0/24 blackhole; }
protocol bgp b {
  local %s port %d as 65001; neighbor %s port %d as 65002;
  multihop; %s %s
  ipv4 { import all; export all; };
}
""" % (DUT, port, peer, pport, TIMERS, opts)


def theirs(peer, pport, port, opts):
    return """router id %s;
protocol device {}
protocol static st { ipv4; route 10.99.2.0/24 blackhole; }
protocol bgp dut {
  local %s port %d as 65002; neighbor %s port %d as 65001;
  multihop; %s %s
  ipv4 { import all; export all; };
}
""" % (peer, peer, pport, DUT, port, TIMERS, opts)


def has(d, prefix):
    return prefix in "\n".join(strip_codes(d.raw("show route %s" % prefix)))


@pytest.mark.parametrize("we_connect", [True, False], ids=["we-connect", "they-connect"])
def test_password(start_daemon, peers, ports, we_connect):
    peer = "127.99.1.2" if we_connect else "127.99.1.3"
    mine = "password \"s3cret\";" + ("" if we_connect else " passive;")
    d = start_daemon(ours(ports[0], peer, ports[1], mine))
    p = peers("p", theirs(peer, ports[1], ports[0], "password \"s3cret\";" + (" passive;" if we_connect else "")))
    assert poll(established(d, "b"), timeout=20), strip_codes(d.raw("show protocols all b"))
    assert poll(lambda: has(d, "10.99.2.0/24"), timeout=10)
    assert poll(lambda: has(p, "10.99.1.0/24"), timeout=10)


def test_wrong_password(start_daemon, peers, ports):
    d = start_daemon(ours(ports[0], "127.99.2.2", ports[1], "password \"s3cret\";"))
    peers("p", theirs("127.99.2.2", ports[1], ports[0], "password \"other\";"))
    time.sleep(6)
    assert not established(d, "b")()


@pytest.mark.parametrize("we_connect", [True, False], ids=["we-connect", "they-connect"])
def test_ttl_security(start_daemon, peers, ports, we_connect):
    peer = "127.99.3.2" if we_connect else "127.99.3.3"
    d = start_daemon(ours(ports[0], peer, ports[1], "ttl security on;" + ("" if we_connect else " passive;")))
    peers("p", theirs(peer, ports[1], ports[0], "ttl security on;" + (" passive;" if we_connect else "")))
    assert poll(established(d, "b"), timeout=20), strip_codes(d.raw("show protocols all b"))
    assert poll(lambda: has(d, "10.99.2.0/24"), timeout=10)


def test_ttl_security_refuses_low_ttl(start_daemon, peers, ports):
    """The peer sends TTL 64 (multihop's default); we require 256 - 64."""
    d = start_daemon(ours(ports[0], "127.99.4.2", ports[1], "ttl security on;"))
    peers("p", theirs("127.99.4.2", ports[1], ports[0], ""))
    time.sleep(6)
    assert not established(d, "b")()


def test_password_neighbor_range(start_daemon, peers, ports):
    """A range waits for its peers: the listener holds the key for the whole prefix."""
    d = start_daemon("""router id 10.99.0.1;
protocol device {}
protocol bgp rng {
  local %s port %d as 65001; neighbor range 127.99.5.0/24 as 65002;
  multihop; %s password "r4nge";
  ipv4 { import all; export all; };
}
""" % (DUT, ports[0], TIMERS))
    peers("p", theirs("127.99.5.2", ports[1], ports[0], "password \"r4nge\";"))
    assert poll(lambda: has(d, "10.99.2.0/24"), timeout=20), strip_codes(d.raw("show protocols all"))
