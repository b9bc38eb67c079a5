"""`show static [name]`: the configured routes of static protocols, as BIRD 2 prints them.

Every reply is compared byte for byte; the expected bytes were captured from BIRD 2.0.12.
A gateway on the loopback network is never a neighbour (BIRD ignores loopback interfaces
for that), so `via 127.0.0.2` stays "(dormant)"; `via "lo"` (a device route) is active
while the protocol is up.
"""

from conftest import poll

CONF = """\
router id 10.0.0.1;
protocol device {}
protocol static s4 {
  ipv4;
  route 10.1.0.0/16 blackhole;
  route 10.2.0.0/16 unreachable;
  route 10.3.0.0/16 prohibit;
  route 10.4.0.0/24 via 127.0.0.2;
  route 10.5.0.0/24 via "lo";
  route 10.11.0.0/24 blackhole { bgp_med = 5; };
  route 10.12.0.0/24 via "nonexist";
  route 10.13.0.0/24 drop;
  route 10.14.0.0/24 reject;
  route 10.16.0.0/24 via 127.0.0.2 onlink;
}
protocol static s6 {
  ipv6;
  route 2001:db8:1::/48 blackhole;
  route 2001:db8:2::/48 via 2001:db8:ffff::1;
}
roa4 table r4;
protocol static roas { roa4 { table r4; }; route 10.0.0.0/16 max 24 as 65001; route 10.1.0.0/16 max 16 as 65002; }
protocol static s7 { disabled; ipv4; route 10.77.0.0/16 blackhole; route 10.79.0.0/16 via "lo"; }
protocol static s8 { ipv4; }
template static tpl { ipv4; }
filter f1 { accept; }
"""

S4_LINES = (
    b"10.1.0.0/16\tblackhole\n"
    b" 10.2.0.0/16\tunreachable\n"
    b" 10.3.0.0/16\tprohibited\n"
    b" 10.4.0.0/24\n"
    b" \tvia 127.0.0.2 (dormant)\n"
    b" 10.5.0.0/24\n"
    b" \tdev lo%s\n"
    b" 10.11.0.0/24\tblackhole\n"
    b" 10.12.0.0/24\n"
    b" \tdev nonexist (dormant)\n"
    b" 10.13.0.0/24\tblackhole\n"
    b" 10.14.0.0/24\tunreachable\n"
    b" 10.16.0.0/24\n"
    b" \tvia 127.0.0.2 onlink (dormant)\n"
)
S4_UP = b"1009-" + S4_LINES % b"" + b"0000 \n"
S4_DOWN = b"1009-" + S4_LINES % b" (dormant)" + b"0000 \n"
S6_LINES = (
    b"2001:db8:1::/48\tblackhole\n"
    b" 2001:db8:2::/48\n"
    b" \tvia 2001:db8:ffff::1 (dormant)\n"
)
# ROA records have no destination: the text after the tab is empty
ROAS_LINES = (
    b"10.0.0.0/16-24 AS65001\t\n"
    b" 10.1.0.0/16-16 AS65002\t\n"
)


def start(start_daemon, conf=CONF):
    d = start_daemon(conf)
    d.wait_up(["s4", "s6", "roas", "s8"])
    # the device route is active once the protocol has evaluated it
    assert d.poll_raw("show static s4", S4_UP) == S4_UP
    return d


def test_show_static_named(start_daemon):
    d = start(start_daemon)
    assert d.raw("show static s4") == S4_UP
    assert d.raw("show static s6") == b"1009-" + S6_LINES + b"0000 \n"
    assert d.raw("show static roas") == b"1009-" + ROAS_LINES + b"0000 \n"
    # a protocol without routes: just the end of the reply
    assert d.raw("show static s8") == b"0000 \n"


def test_show_static_all_running(start_daemon):
    # every static protocol not down, in config order, an empty line between them
    # (also after one that printed nothing: s8 comes last); s7 is disabled
    d = start(start_daemon)
    assert d.raw("show static") == (
        b"1009-" + S4_LINES % b"" + b" \n " + S6_LINES + b" \n " + ROAS_LINES + b" \n0000 \n")


def test_show_static_disabled(start_daemon):
    # named, a protocol that is down still shows its routes, all next hops dormant
    d = start(start_daemon)
    assert d.raw("show static s7") == (
        b"1009-10.77.0.0/16\tblackhole\n 10.79.0.0/16\n \tdev lo (dormant)\n0000 \n")
    assert d.raw("disable s4") == b"0009-s4: disabled\n0000 \n"
    assert d.raw("show static s4") == S4_DOWN
    # the walk skips protocols that are down, not those still stopping
    assert poll(lambda: d.protocols()["s4"][2] == "down")
    assert d.raw("show static") == (
        b"1009-" + S6_LINES + b" \n " + ROAS_LINES + b" \n0000 \n")
    assert d.raw("enable s4") == b"0011-s4: enabled\n0000 \n"
    assert d.poll_raw("show static s4", S4_UP) == S4_UP


def test_show_static_errors(start_daemon):
    d = start(start_daemon)
    assert d.raw("show static device1") == b"9001 device1: Not a Static protocol\n"
    for sym in ("tpl", "r4", "f1"):
        assert d.raw("show static " + sym) == b"9001 Protocol name required\n", sym
    assert d.raw("show static nonexist") == (
        b"9001 syntax error, unexpected CF_SYM_UNDEFINED, expecting END or CF_SYM_KNOWN\n")
    assert d.raw("show static s4 s6") == b"9001 syntax error, unexpected CF_SYM_KNOWN, expecting END\n"
    assert d.raw("show static all") == b"9001 syntax error, unexpected ALL, expecting END or CF_SYM_KNOWN\n"
    assert d.raw('show static "s4"') == (
        b"9001 syntax error, unexpected TEXT, expecting END or CF_SYM_KNOWN\n")


def test_show_static_none_running(start_daemon):
    d = start_daemon("router id 10.0.0.1;\nprotocol device {}\n"
                     "protocol static s7 { disabled; ipv4; route 10.77.0.0/16 blackhole; }\n")
    d.wait_up(["device1"])
    assert d.raw("show static") == b"9001 There is no Static protocol running\n"
    assert d.raw("show static s7") == b"1009-10.77.0.0/16\tblackhole\n0000 \n"


def test_show_static_follows_configure(start_daemon):
    d = start(start_daemon)
    d.reconfigure_file(CONF.replace("  route 10.2.0.0/16 unreachable;\n",
                                    "  route 10.2.0.0/16 unreachable;\n  route 10.99.0.0/16 prohibit;\n")
                           .replace(' route 10.77.0.0/16 blackhole;', ''))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    assert d.raw("show static s4").startswith(
        b"1009-10.1.0.0/16\tblackhole\n 10.2.0.0/16\tunreachable\n 10.99.0.0/16\tprohibited\n"
        b" 10.3.0.0/16\tprohibited\n 10.4.0.0/24\n")
    assert d.raw("show static s7") == b"1009-10.79.0.0/16\n \tdev lo (dormant)\n0000 \n"


def test_show_static_many_routes(start_daemon):
    # a long listing streams in steps; every route comes, in config order, and the
    # session stays usable for the next command
    n = 3000
    routes = "".join("  route 10.%d.%d.0/24 blackhole;\n" % (i // 256, i % 256) for i in range(n))
    d = start_daemon("router id 10.0.0.1;\nprotocol static big {\n  ipv4;\n%s}\n" % routes)
    d.wait_up(["big"])
    expected = b"1009-" + b"".join(
        (b"" if i == 0 else b" ") + b"10.%d.%d.0/24\tblackhole\n" % (i // 256, i % 256)
        for i in range(n)) + b"0000 \n"
    first, second = d.raw_many(["show static", "show static big"])
    assert first == expected
    assert second == expected


def test_show_static_birdcl(start_daemon):
    d = start(start_daemon)
    rc, out, err = d.cli("show", "static", "s7")
    assert rc == 0, err
    assert out.split("\n", 1)[1] == "10.77.0.0/16\tblackhole\n10.79.0.0/16\n\tdev lo (dormant)\n"
    assert poll(lambda: d.cli("show", "static", "device1")[0] == 1)
