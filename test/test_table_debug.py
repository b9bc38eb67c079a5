"""Table `debug` (BIRD 3's option; BIRD 2 has none): `states` traces a
table starting, leaving the config and going down; `routes` every change
of a route, in the shape of BIRD 2's channel traces after the table's name;
a table without it traces nothing."""
import re

from conftest import poll

CONF = """log stderr all;
router id 10.0.0.1;
ipv4 table t1 { debug %s; };
protocol device {}
protocol static s1 { ipv4 { table t1; }; %s }
protocol static s2 { ipv4; route 10.9.0.0/16 blackhole; }
"""

ROUTES = "route 10.1.0.0/16 blackhole; route 10.2.0.0/16 unreachable;"


def traces(d, table):
    return [l.split("<TRACE> ", 1)[1] for l in d.log().splitlines() if "<TRACE> %s: " % table in l]


def wait_trace(d, table, pattern):
    found = poll(lambda: [l for l in traces(d, table) if re.search(pattern, l)], timeout=10)
    assert found, "no %r in %s" % (pattern, traces(d, table))
    return found


def test_table_debug_routes_and_states(start_daemon, ours_only):
    d = start_daemon(CONF % ("all", ROUTES))
    wait_trace(d, "t1", r"^t1: Started$")
    wait_trace(d, "t1", r"^t1: s1\.ipv4 > added \[best\] 10\.1\.0\.0/16 \d+L \d+G blackhole$")
    wait_trace(d, "t1", r"^t1: s1\.ipv4 > added \[best\] 10\.2\.0\.0/16 \d+L \d+G unreachable$")
    # master4 has no debug: its route is not traced
    assert d.poll_raw("show route table master4 count",
                      b"1007-1 of 1 routes for 1 networks in table master4\n0000 \n")
    assert traces(d, "master4") == []

    # one route goes, one changes
    d.reconfigure_file(CONF % ("{ routes }", "route 10.1.0.0/16 unreachable;"))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    wait_trace(d, "t1", r"^t1: s1\.ipv4 > removed \[best\] 10\.2\.0\.0/16 \d+L \d+G unreachable$")
    wait_trace(d, "t1", r"^t1: s1\.ipv4 > updated \[best\] 10\.1\.0\.0/16 \d+L \d+G unreachable$")

    # debug off: nothing more; then states only, and the table goes
    d.reconfigure_file(CONF % ("off", ""))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    assert d.poll_raw("show route table t1 count", b"1007-0 of 0 routes for 0 networks in table t1\n0000 \n")
    d.reconfigure_file(CONF % ("{ states }", ""))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    d.reconfigure_file("log stderr all;\nrouter id 10.0.0.1;\nprotocol device {}\n")
    r = d.raw("configure")   # s1 and s2 go down first
    assert r.endswith(b"0003 Reconfigured\n") or r.endswith(b"0004 Reconfiguration in progress\n"), r
    wait_trace(d, "t1", r"^t1: Removed from the config, shutting down$")
    # the config before, kept for `configure undo`, holds the table until
    # another configure lets it go
    assert poll(lambda: b"s1" not in d.raw("show protocols"), timeout=10)
    d.reconfigure_file("log stderr all;\nrouter id 10.0.0.2;\nprotocol device {}\n")
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    wait_trace(d, "t1", r"^t1: Down$")


def test_table_debug_events(start_daemon, ours_only):
    # 4,000 routes: the journal's old blocks go once every reader has read
    # them (this table has none; cleanup is asked for every 8 blocks of
    # 387 changes) and the cleanup says so
    routes = " ".join("route 10.%d.%d.0/24 blackhole;" % (i // 256, i % 256) for i in range(4000))
    d = start_daemon(CONF % ("{ events }", routes))
    found = wait_trace(d, "t1", r"^t1: Journal cleanup: \d+ changes freed, \d+ kept for the slowest reader$")
    assert int(found[0].split()[3]) % 387 == 0
    assert not [l for l in traces(d, "t1") if " > added" in l or "Started" in l]


PROTO_CONF = """log stderr all;
router id 10.0.0.1;
ipv4 table t2;
protocol device {}
protocol static s1 { debug %s; ipv4 { import where net != 10.2.0.0/16; }; %s }
protocol pipe p12 { debug %s; table master4; peer table t2; export where net != 10.3.0.0/16; import none; }
"""


def proto_traces(d, name):
    return [l.split("<TRACE> ", 1)[1] for l in d.log().splitlines() if "<TRACE> %s." % name in l]


def test_protocol_debug_routes_and_filters(start_daemon, ours_only):
    """A protocol's `debug { routes, filters }` (BIRD 2): what its channels
    import (`>`: added, updated, removed, filtered out) and export (`<`:
    added, removed, filtered out), in BIRD 2's lines; `debug P off` (the
    command) and a protocol without it trace nothing."""
    routes = "route 10.1.0.0/16 blackhole; route 10.2.0.0/16 blackhole; route 10.3.0.0/16 unreachable;"
    d = start_daemon(PROTO_CONF % ("{ routes, filters }", routes, "{ routes, filters }"))

    def wait(name, pattern):
        found = poll(lambda: [l for l in proto_traces(d, name) if re.search(pattern, l)], timeout=10)
        assert found, "no %r in %s" % (pattern, proto_traces(d, name))
    wait("s1", r"^s1\.ipv4 > added \[best\] 10\.1\.0\.0/16 \d+L \d+G blackhole$")
    wait("s1", r"^s1\.ipv4 > filtered out 10\.2\.0\.0/16 \d+L \d+G blackhole$")
    wait("s1", r"^s1\.ipv4 > added \[best\] 10\.3\.0\.0/16 \d+L \d+G unreachable$")
    wait("p12", r"^p12\.\S+ < added 10\.1\.0\.0/16 \d+L \d+G blackhole$")
    wait("p12", r"^p12\.\S+ < filtered out 10\.3\.0\.0/16 \d+L \d+G unreachable$")
    # the pipe's write into t2 is its import there
    wait("p12", r"^p12\.\S+ > added \[best\] 10\.1\.0\.0/16 \d+L \d+G blackhole$")
    # a route changes and one goes
    d.reconfigure_file(PROTO_CONF % ("{ routes, filters }", "route 10.1.0.0/16 unreachable;", "{ routes, filters }"))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    wait("s1", r"^s1\.ipv4 > updated \[best\] 10\.1\.0\.0/16 \d+L \d+G unreachable$")
    wait("s1", r"^s1\.ipv4 > removed \[best\] 10\.3\.0\.0/16 \d+L \d+G unreachable$")
    wait("p12", r"^p12\.\S+ < replaced 10\.1\.0\.0/16 \d+L \d+G unreachable$")
    # the command turns it off: nothing more from s1
    assert d.raw("debug s1 off") == b"0000 \n"
    before = len(proto_traces(d, "s1"))
    # configure brings the config's mask back: s1 traces again, p12 (off
    # now) not; first the masks, then a route (one configure would run the
    # route through p12 before p12 had its new mask)
    d.reconfigure_file(PROTO_CONF % ("{ routes, filters }", "route 10.1.0.0/16 unreachable;", "off"))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    d.reconfigure_file(PROTO_CONF % ("{ routes, filters }", "route 10.5.0.0/16 blackhole;", "off"))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    wait("s1", r"^s1\.ipv4 > added \[best\] 10\.5\.0\.0/16 ")
    assert poll(lambda: d.raw("show route 10.5.0.0/16 table t2").find(b"10.5.0.0/16") >= 0, timeout=5)
    assert not [l for l in proto_traces(d, "p12") if "10.5.0.0" in l]
    assert len(proto_traces(d, "s1")) > before



CHANNEL_CONF = """log stderr all;
router id 10.0.0.1;
%s
protocol device {}
protocol static s1 { ipv4 { %s import where net != 10.2.0.0/16; }; %s }
protocol static s2 { ipv4; route 10.7.0.0/16 blackhole; %s }
"""


def test_channel_debug(start_daemon, ours_only):
    """A channel block's `debug` (BIRD 2) traces that channel with the
    protocol's off; `debug s1.ipv4 off` (the command) turns the channel's
    own mask off, `debug s1 { routes }` (the protocol's) traces it again;
    `debug channels` sets every channel's default."""
    routes = "route 10.1.0.0/16 blackhole; route 10.2.0.0/16 blackhole;"
    d = start_daemon(CHANNEL_CONF % ("", "debug { routes, filters };", routes, ""))

    def wait(name, pattern):
        found = poll(lambda: [l for l in proto_traces(d, name) if re.search(pattern, l)], timeout=10)
        assert found, "no %r in %s" % (pattern, proto_traces(d, name))

    def cycle():
        """s1's routes go and come back (disable, enable: no configure,
        which would set the config's masks again)."""
        assert d.raw("disable s1").startswith(b"0009")
        assert poll(lambda: b"10.1.0.0/16" not in d.raw("show route 10.1.0.0/16"), timeout=5)
        assert d.raw("enable s1").startswith(b"0011")
        assert poll(lambda: b"10.1.0.0/16" in d.raw("show route 10.1.0.0/16"), timeout=5)
    wait("s1", r"^s1\.ipv4 > added \[best\] 10\.1\.0\.0/16 \d+L \d+G blackhole$")
    wait("s1", r"^s1\.ipv4 > filtered out 10\.2\.0\.0/16 ")
    assert poll(lambda: b"10.7.0.0/16" in d.raw("show route 10.7.0.0/16"), timeout=5)
    assert not proto_traces(d, "s2")

    # the channel's own mask off: nothing from s1
    assert d.raw("debug s1.ipv6 off").startswith(b"9001 ")
    assert d.raw("debug s1.ipv4 off") == b"0000 \n"
    before = len(proto_traces(d, "s1"))
    cycle()
    assert len(proto_traces(d, "s1")) == before, proto_traces(d, "s1")[before:]
    # the protocol's mask: its channels trace again
    assert d.raw("debug s1 { routes }") == b"0000 \n"
    cycle()
    wait("s1", r"^s1\.ipv4 > removed \[best\] 10\.1\.0\.0/16 ")
    assert len([l for l in proto_traces(d, "s1") if "added [best] 10.1.0.0/16" in l]) == 2

    # `debug channels`: every channel's default
    d.reconfigure_file(CHANNEL_CONF % ("debug channels { routes };", "", routes, "route 10.8.0.0/16 blackhole;"))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    wait("s2", r"^s2\.ipv4 > added \[best\] 10\.8\.0\.0/16 ")
