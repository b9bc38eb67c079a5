"""`configure` with changed BGP options: which restart the protocol, which apply in place.

As BIRD 2 (bgp_reconfigure; every case checked against BIRD 2.0.12 as the daemon under
test): a change in any of the protocol's own options, timers included, restarts the
protocol, so a new hold time never waits for the next session; so does a new router
ID.  Filters, next hop and AIGP options of a channel apply in place, the routes sent
again as needed; channel options that change capabilities or tables restart.  A
restart shows as a new `Since` of the protocol and a new session at the peer.
"""

import re
import time

import pytest

from conftest import poll
import test_bgp
from test_bgp import established, peers, ports, reply_text  # noqa: F401 (fixtures)
from bgp_peers import proto_since

OURS, PEER = "127.90.4.1", "127.90.4.2"


def conf(port, peer_port, proto_opts="", chan_opts="", router_id="10.90.4.1"):
    return """router id %s;
protocol device {}
protocol static local4 { ipv4; route 10.90.40.0/24 blackhole; route 10.90.41.0/24 blackhole; }
protocol bgp b2 {
  local %s port %d as 65001;
  neighbor %s port %d as 65002;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;
  %s
  ipv4 { import all; export all; %s };
}
""" % (router_id, OURS, port, PEER, peer_port, proto_opts, chan_opts)


@pytest.fixture
def pair(start_daemon, peers, ports):
    p = peers("b2", test_bgp.peer_conf(PEER, ports[1], 65002, ports[0], "route 10.90.42.0/24 blackhole;",
                                       ours=OURS))
    d = start_daemon(conf(ports[0], ports[1]))
    assert poll(established(d, "b2"), timeout=15), reply_text(d.raw("show protocols all b2"))
    assert poll(lambda: "10.90.41.0/24" in reply_text(p.raw("show route")), timeout=10)
    time.sleep(0.2)         # a restart within the same millisecond would not show
    return d, p


def reconfigure(d, text, restart):
    """configure; BIRD answers "in progress" while a protocol restarts."""
    d.reconfigure_file(text)
    last = "0004 Reconfiguration in progress" if restart else "0003 Reconfigured"
    assert d.raw("configure") == ("0002-Reading configuration from %s\n%s\n" % (d.conf, last)).encode()


def restarted(d, p, before):
    """Whether our protocol and the peer's session restarted since before = (ours, peer's)."""
    time.sleep(1)
    assert poll(established(d, "b2"), timeout=15), reply_text(d.raw("show protocols all b2"))
    assert poll(established(p, "dut"), timeout=5)
    ours, peer = proto_since(d, "b2"), proto_since(p, "dut")
    assert (ours != before[0]) == (peer != before[1]), (before, ours, peer)
    return ours != before[0]


def since(d, p):
    return proto_since(d, "b2"), proto_since(p, "dut")


@pytest.mark.parametrize("opts", [
    "hold time 20;", "keepalive time 5;", "connect delay time 2;", "connect retry time 60;",
    "error wait time 2, 4;", "error forget time 100;", "startup hold time 100;",
    "default bgp_local_pref 200;", "rs client;", "enable route refresh off;",
])
def test_protocol_option_restarts(pair, ports, opts):
    d, p = pair
    before = since(d, p)
    reconfigure(d, conf(ports[0], ports[1], proto_opts=opts), True)
    assert restarted(d, p, before)


def test_new_hold_time_in_effect_at_once(pair, ports):
    d, p = pair
    reconfigure(d, conf(ports[0], ports[1], proto_opts="hold time 20; keepalive time 4;"), True)
    assert poll(lambda: re.search(r"^    Hold timer:\s+\d+\.\d{3}/20$", reply_text(d.raw("show protocols all b2")),
                                  re.M), timeout=15), reply_text(d.raw("show protocols all b2"))
    assert re.search(r"^    Keepalive timer:\s+\d+\.\d{3}/4$", reply_text(d.raw("show protocols all b2")), re.M)
    assert re.search(r"^    Hold timer:\s+\d+\.\d{3}/20$", reply_text(p.raw("show protocols all dut")), re.M)


def test_same_values_and_router_id(pair, ports):
    d, p = pair
    before = since(d, p)
    # the defaults and values spelled out, `source address` as `local`: nothing changes
    reconfigure(d, conf(ports[0], ports[1], "hold time 30; source address %s; igp metric on; "
                        "allow as sets on; enable as4 on;" % OURS), False)
    assert not restarted(d, p, before)
    reconfigure(d, conf(ports[0], ports[1], router_id="10.90.4.9"), True)
    assert restarted(d, p, before)
    v = reply_text(p.raw("show protocols all dut"))
    assert "    Neighbor ID:      10.90.4.9" in v, v


def test_filters_apply_in_place(pair, ports):
    d, p = pair
    before = since(d, p)
    reconfigure(d, conf(ports[0], ports[1], chan_opts="export where net != 10.90.41.0/24; "
                        "import where net != 10.90.42.0/24;"), False)
    assert poll(lambda: "10.90.41.0/24" not in reply_text(p.raw("show route")), timeout=10)
    assert poll(lambda: "10.90.42.0/24" not in reply_text(d.raw("show route")), timeout=10)
    assert "10.90.40.0/24" in reply_text(p.raw("show route"))
    assert not restarted(d, p, before)


def test_preference_applies_in_place(pair, ports):
    """A new channel `preference` applies to the routes there, as in BIRD 2:
    the channel imports them again (a route refresh), the session stays."""
    d, p = pair
    assert poll(lambda: "(100)" in reply_text(d.raw("show route 10.90.42.0/24")), timeout=10), \
        d.raw("show route 10.90.42.0/24")
    before = since(d, p)
    reconfigure(d, conf(ports[0], ports[1], chan_opts="preference 120;"), False)
    assert poll(lambda: "(120)" in reply_text(d.raw("show route 10.90.42.0/24")), timeout=10), \
        d.raw("show route 10.90.42.0/24")
    assert not restarted(d, p, before)


def test_next_hop_applies_in_place(pair, ports, is_reference):
    d, p = pair
    before = since(d, p)
    reconfigure(d, conf(ports[0], ports[1], chan_opts="next hop address 127.90.4.9;"), False)
    # The routes already sent are sent again with the new next hop. BIRD 2 sends them
    # again too, but with the next hop address it chose when the channel started.
    if not is_reference:
        assert poll(lambda: "BGP.next_hop: 127.90.4.9" in reply_text(p.raw("show route 10.90.40.0/24 all")),
                    timeout=10), reply_text(p.raw("show route 10.90.40.0/24 all"))
    assert not restarted(d, p, before)


@pytest.mark.parametrize("opts", ["add paths rx;", "import table on;", "export table on;"])
def test_channel_table_or_capability_restarts(pair, ports, opts):
    d, p = pair
    before = since(d, p)
    reconfigure(d, conf(ports[0], ports[1], chan_opts=opts), True)
    assert restarted(d, p, before)
