"""`mandatory` channels: a family the neighbor does not carry means no
session (OPEN error 2/7, "Required capability missing"), as BIRD 2 does;
without `mandatory` the session comes up with the common families. A BIRD 2
peer with IPv4 only. Passes against BIRD 2 too. Addresses 127.104.x.y.
"""

import re
import time

from conftest import poll, strip_codes
from test_bgp import established, peers, ports  # noqa: F401 (fixtures)

DUT, PEER = "127.104.0.1", "127.104.0.2"
TIMERS = "hold time 30; connect delay time 1; error wait time 1, 2;"


def ours(port, pport, mandatory):
    return """router id 10.104.0.1;
protocol device {}
protocol bgp b { local %s port %d as 65001; neighbor %s port %d as 65002; multihop; %s
  ipv4 { import all; export all; };
  ipv6 { import all; export all; %s };
}
""" % (DUT, port, PEER, pport, TIMERS, "mandatory on;" if mandatory else "")


def theirs(port, pport):
    return """router id %s;
protocol device {}
protocol bgp dut { local %s port %d as 65002; neighbor %s port %d as 65001; multihop; %s
  ipv4 { import all; export all; }; }
""" % (PEER, PEER, pport, DUT, port, TIMERS)


def test_optional_family_missing(start_daemon, peers, ports):
    d = start_daemon(ours(ports[0], ports[1], False))
    peers("p", theirs(ports[0], ports[1]))
    assert poll(established(d, "b"), timeout=20), strip_codes(d.raw("show protocols all b"))


def test_mandatory_family_missing(start_daemon, peers, ports):
    d = start_daemon(ours(ports[0], ports[1], True))
    peers("p", theirs(ports[0], ports[1]))
    def error():
        m = re.search(r"Last error:\s+(.*)$", "\n".join(strip_codes(d.raw("show protocols all b"))), re.M)
        return m and m.group(1)
    # a socket error may come first (a connection the peer, still starting
    # or waiting out the error, closes); the refusal follows
    want = "BGP Error: Required capability missing"
    assert poll(lambda: error() == want, timeout=20), strip_codes(d.raw("show protocols all b"))
    time.sleep(1)
    assert not established(d, "b")()
