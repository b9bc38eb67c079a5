"""Import and export tables (Adj-RIB-In/Out) and `import keep filtered`.

The device under test has one BGP session to a Debian BIRD 2 peer (own
127.82.x.y address) with `import table on; export table on; import keep
filtered;`.  The same tests pass against BIRD 2 itself (BIRD_BIN=/usr/sbin/bird),
which is where the expected lines come from.
"""

import re
import time

import pytest

from conftest import poll, strip_codes
from test_bgp import peers, ports, established  # noqa: F401 (fixtures)
from test_bgp import ours_conf, peer_conf as bgp_peer_conf
from bgp_peers import proto_since

OURS = "127.82.0.1"
PEER = "127.82.0.2"


def dut_conf(port, pport, import_where, peer_extra=""):
    return """router id 10.82.0.1;
protocol device {}
protocol static s4 { ipv4; route 10.9.0.0/16 blackhole; }
protocol bgp a {
  local %s port %d as 65002;
  neighbor %s port %d as 65001;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;
  %s
  ipv4 { import table on; export table on; import keep filtered;
         import where %s; export all; };
}
""" % (OURS, port, PEER, pport, peer_extra, import_where)


def peer_conf(port, our_port, refresh=True):
    return """router id 10.82.0.2;
protocol device {}
protocol static st { ipv4; route 10.1.0.0/16 blackhole; route 10.2.0.0/16 blackhole; route 10.3.0.0/24 blackhole; }
protocol bgp dut {
  local %s port %d as 65001;
  neighbor %s port %d as 65002;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;
  %s
  ipv4 { import all; export all; };
}
""" % (PEER, port, OURS, our_port, "" if refresh else "enable route refresh off;")


def nets(reply):
    return sorted(re.findall(r"^(\d+\.\d+\.\d+\.\d+/\d+)\s", "\n".join(strip_codes(reply)), re.M))


@pytest.fixture
def setup(start_daemon, peers, ports):
    def make(refresh=True):
        peers("peer", peer_conf(ports[1], ports[0], refresh))
        d = start_daemon(dut_conf(ports[0], ports[1], "net != 10.2.0.0/16"))
        poll(established(d, "a"), timeout=20)
        poll(lambda: len(nets(d.raw("show route import table a.ipv4"))) == 3, timeout=10)
        poll(lambda: len(nets(d.raw("show route export table a.ipv4"))) == 1, timeout=10)
        # the import table is written before the filter runs and master4
        # has the result: wait for both (a sanitizer build is slow)
        poll(lambda: len(nets(d.raw("show route table master4"))) == 3, timeout=10)
        return d
    return make


def test_import_table_holds_everything_received(setup):
    d = setup()
    r = d.raw("show route import table a.ipv4")
    assert strip_codes(r)[0] == "Table import:", r
    assert nets(r) == ["10.1.0.0/16", "10.2.0.0/16", "10.3.0.0/24"]
    assert nets(d.raw("show route table master4")) == ["10.1.0.0/16", "10.3.0.0/24", "10.9.0.0/16"]
    assert b"1007-3 of 3 routes for 3 networks in table import\n" in d.raw("show route import table a.ipv4 count")
    one = strip_codes(d.raw("show route import table a.ipv4 10.2.0.0/16 all"))
    assert any("BGP.as_path: 65001" in x for x in one), one
    # the import table is not one of the tables `show route count` reports
    assert b"3 of 3 routes for 3 networks in table master4" in d.raw("show route count")


def test_keep_filtered(setup):
    d = setup()
    assert nets(d.raw("show route filtered")) == ["10.2.0.0/16"]
    assert b"1007-1 of 1 routes for 1 networks in table master4\n" in d.raw("show route filtered count")
    assert b"Network not found" in d.raw("show route 10.2.0.0/16")
    # the counters move after the routes are in (a sanitizer build is slow)
    assert poll(lambda: any("Routes:         2 imported, 1 filtered, 1 exported" in x
                            for x in strip_codes(d.raw("show protocols all a"))), timeout=10), \
        d.raw("show protocols all a")


def test_export_table_holds_what_was_sent(setup):
    d = setup()
    r = strip_codes(d.raw("show route export table a.ipv4 all"))
    assert r[0] == "Table export:", r
    assert r[1].startswith("10.9.0.0/16          blackhole [s4 "), r
    assert r[2] == "\tType: static univ", r
    assert b"1007-1 of 1 routes for 1 networks in table export\n" in d.raw("show route export table a.ipv4 count")


def test_errors(setup):
    d = setup()
    assert d.raw("show route import table a.ipv6") == b"9001 Channel a.ipv6 not found\n"
    assert d.raw("show route import table s4.ipv4") == b"9001 No import table in channel s4.ipv4\n"
    assert d.raw("show route export table s4.ipv4") == b"9001 No export table in channel s4.ipv4\n"
    assert d.raw("show route import table a").startswith(b"9001 syntax error")


def test_no_tables_while_the_channel_is_down(setup):
    """As in BIRD 2, a channel has its import and export tables from its
    start to its end: a script asking while the session is down is told so,
    not shown an empty table."""
    d = setup()
    assert d.raw("disable a") == b"0009-a: disabled\n0000 \n"
    for kind in ("import", "export"):
        assert poll(lambda: d.raw("show route %s table a.ipv4 count" % kind) ==
                    b"9001 No %s table in channel a.ipv4\n" % kind.encode(), timeout=10), \
            d.raw("show route %s table a.ipv4 count" % kind)
    assert d.raw("enable a") == b"0011-a: enabled\n0000 \n"
    assert poll(lambda: len(nets(d.raw("show route import table a.ipv4"))) == 3, timeout=20)


def test_filter_change_keeps_session(setup, ports):
    d = setup(refresh=False)
    before = proto_since(d, "a")
    time.sleep(1.1)         # a restarted session would show a later time
    d.reconfigure_file(dut_conf(ports[0], ports[1], "net != 10.3.0.0/24"))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    poll(lambda: nets(d.raw("show route filtered")) == ["10.3.0.0/24"], timeout=10)
    assert nets(d.raw("show route table master4")) == ["10.1.0.0/16", "10.2.0.0/16", "10.9.0.0/16"]
    assert proto_since(d, "a") == before


def import_received(d):
    m = re.search(r"Import updates:\s+(\d+)", "\n".join(strip_codes(d.raw("show protocols all a"))))
    return int(m.group(1))


def test_reload_in_from_import_table(setup):
    """`reload in` re-imports from the import table, with no route refresh
    (the neighbor has none): the routes go through the filter again, the
    session stays."""
    d = setup(refresh=False)
    # the import table holds the 3 routes a moment before the channel has
    # counted the last of them (slow under TSan)
    assert poll(lambda: import_received(d) == 3, timeout=10), import_received(d)
    before, received = proto_since(d, "a"), import_received(d)
    time.sleep(1.1)         # a restarted session would show a later time
    assert d.raw("reload in a") == b"0015-a: reloading\n0000 \n"
    assert poll(lambda: import_received(d) == received + 3, timeout=10), import_received(d)
    assert nets(d.raw("show route filtered")) == ["10.2.0.0/16"]
    assert proto_since(d, "a") == before


def test_reload_in_batches_up_to_a_limit(start_daemon, peers, ports):
    """`reload in` of 1,500 routes from the import table after the filter
    let 256 more in, under `import limit 1400 action block`: the routes
    already in go back in batches, those that could reach the limit one by
    one, and exactly the limit is let in (a batch past the headroom lets
    in up to 63 more); the ones over it stay out of master4."""
    statics = " ".join("route 10.%d.%d.0/24 blackhole;" % (30 + i // 256, i % 256) for i in range(1500))
    peers("b2", bgp_peer_conf("127.82.0.3", ports[1], 65003, ports[0], statics, ours=OURS))

    def conf(where):
        chan = "import table on; import where %s; export none; import limit 1400 action block;" % where
        return ours_conf(ports[0], [("b2", "127.82.0.3", ports[1], 65003)], ours=OURS).replace(
            "ipv4 { import all; export all; };", "ipv4 { %s };" % chan)

    d = start_daemon(conf("net !~ [ 10.30.0.0/16+ ]"))
    assert poll(established(d, "b2"), timeout=15), d.raw("show protocols all b2")

    def imported():
        m = re.search(r"Routes:\s+(\d+) imported", "\n".join(strip_codes(d.raw("show protocols all b2"))))
        return int(m.group(1)) if m else None

    assert poll(lambda: imported() == 1244, timeout=15), imported()
    assert poll(lambda: len(nets(d.raw("show route import table b2.ipv4 where net ~ [ 10.0.0.0/8+ ]"))) == 1500, timeout=10)
    before = proto_since(d, "b2")
    d.reconfigure_file(conf("net ~ [ 10.0.0.0/8+ ]"))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    assert poll(lambda: imported() == 1400, timeout=15), imported()
    time.sleep(1)           # nothing more comes in
    v = "\n".join(strip_codes(d.raw("show protocols all b2")))
    assert imported() == 1400 and re.search(r"Import limit:\s+1400 \[HIT\]", v), v
    theirs = [n for n in nets(d.raw("show route table master4 where net ~ [ 10.0.0.0/8+ ]")) if n.startswith("10.3")]
    assert len(theirs) == 1400, len(theirs)
    assert proto_since(d, "b2") == before
