"""Static ROA routes (`route 10.0.0.0/16 max 24 as 65001;` in a roa4/roa6 channel):
the tables as `show route` prints them, `roa_check` against them, and the config
errors. Every test here also passes with Debian's BIRD 2 as the daemon under test
(BIRD_BIN=/usr/sbin/bird ...), whose outputs are the reference.
"""

import re

from conftest import run_bird_parse, strip_codes

ROA_CONF = """\
router id 10.0.0.1;
protocol device {}
roa4 table r4;
roa6 table r6;
protocol static roas {
  roa4 { table r4; };
  route 10.0.0.0/16 max 24 as 65001;
  route 10.0.0.0/16 max 20 as 65003;
  route 10.1.0.0/16 max 16 as 65002;
  route 192.0.2.0/24 max 32 as 0;
}
protocol static roas6 {
  roa6 { table r6; };
  route 2001:db8::/32 max 48 as 65001;
}
protocol static s4 {
  ipv4;
  route 10.0.1.0/24 blackhole;
  route 10.0.0.0/22 blackhole;
  route 10.1.0.0/16 blackhole;
  route 10.1.2.0/24 blackhole;
  route 10.9.0.0/16 blackhole;
}
"""

R4_LINES = [
    "10.0.0.0/16-24 AS65001  [roas T] * (200)",
    "10.0.0.0/16-20 AS65003  [roas T] * (200)",
    "10.1.0.0/16-16 AS65002  [roas T] * (200)",
    "192.0.2.0/24-32 AS0   [roas T] * (200)",
]


def _lines(reply):
    """Reply lines without codes, times as T; the route order is the table's hash order."""
    return [re.sub(r"\d\d:\d\d:\d\d\.\d{3}", "T", l) for l in strip_codes(reply) if l]


def _up(start_daemon):
    d = start_daemon(ROA_CONF)
    d.wait_up(["roas", "roas6", "s4"])
    d.poll_raw("show route table r4 count", b"1007-4 of 4 routes for 4 networks in table r4\n0000 \n")
    d.poll_raw("show route table r6 count", b"1007-1 of 1 routes for 1 networks in table r6\n0000 \n")
    d.poll_raw("show route count", lambda r: b"Total: 10 of 10 routes for 10 networks in 4 tables" in r)
    return d


def test_roa_tables_show_route(start_daemon):
    d = _up(start_daemon)
    reply = d.raw("show route table r4")
    assert reply.startswith(b"1007-Table r4:\n"), reply
    lines = _lines(reply)
    assert lines[0] == "Table r4:" and sorted(lines[1:]) == sorted(R4_LINES), reply
    assert _lines(d.raw("show route table r6 all")) == [
        "Table r6:", "2001:db8::/32-48 AS65001  [roas6 T] * (200)", "\tType: static univ"]
    full = _lines(d.raw("show route table r4 all"))
    assert len(full) == 9 and full.count("\tType: static univ") == 4, full
    assert _lines(d.raw("show route count"))[-3:] == [
        "4 of 4 routes for 4 networks in table r4",
        "1 of 1 routes for 1 networks in table r6",
        "Total: 10 of 10 routes for 10 networks in 4 tables"]
    assert _lines(d.raw("show route table r4 where net.asn = 65001")) == [
        "Table r4:", "10.0.0.0/16-24 AS65001  [roas T] * (200)"]
    assert _lines(d.raw("show route table r4 where net.maxlen = 16 && net.len = 16")) == [
        "Table r4:", "10.1.0.0/16-16 AS65002  [roas T] * (200)"]
    assert d.raw("show route for 10.0.1.0/24 table r4") == b"9001 Incompatible type of prefix/ip for table r4\n"


def test_roa_check_against_static_roas(start_daemon):
    d = _up(start_daemon)
    evals = {
        "roa_check(r4, 10.0.1.0/24, 65001)": "(enum 35)1",      # valid: within max 24
        "roa_check(r4, 10.0.1.0/25, 65001)": "(enum 35)2",      # invalid: longer than max
        "roa_check(r4, 10.0.16.0/20, 65003)": "(enum 35)1",     # the second ROA of the prefix
        "roa_check(r4, 10.0.1.0/24, 65003)": "(enum 35)2",      # too long for AS65003's ROA
        "roa_check(r4, 10.0.1.0/24, 65009)": "(enum 35)2",      # covered, no matching AS
        "roa_check(r4, 10.1.2.0/24, 65002)": "(enum 35)2",
        "roa_check(r4, 10.9.0.0/16, 65001)": "(enum 35)0",      # not covered: unknown
        "roa_check(r4, 192.0.2.0/24, 0)": "(enum 35)2",         # AS0 never validates
        "roa_check(r6, 2001:db8:1::/48, 65001)": "(enum 35)1",
        "roa_check(r6, 2001:db8:1::/49, 65001)": "(enum 35)2",
        "roa_check(r6, 2001:db9::/32, 65001)": "(enum 35)0",
    }
    for expr, want in evals.items():
        assert d.raw("eval " + expr) == ("0023 %s\n" % want).encode(), expr
    # in a filter, on the routes of master4
    where = _lines(d.raw("show route where roa_check(r4, net, 65001) = ROA_VALID"))
    assert where[0] == "Table master4:" and sorted(where[1:]) == [
        "10.0.0.0/22          blackhole [s4 T] * (200)",
        "10.0.1.0/24          blackhole [s4 T] * (200)"], where
    counts = {
        "ROA_VALID": b"1007-2 of 5 routes for 5 networks in table master4\n",
        "ROA_INVALID": b"1007-2 of 5 routes for 5 networks in table master4\n",
        "ROA_UNKNOWN": b"1007-1 of 5 routes for 5 networks in table master4\n",
    }
    for res, want in counts.items():
        reply = d.raw("show route table master4 where roa_check(r4, net, 65001) = %s count" % res)
        assert reply.startswith(want), (res, reply)


ROA_ERRORS = [
    ("route 10.0.0.0/16 max 8 as 1", "2:66", "Invalid max prefix length 8"),
    ("route 10.0.0.0/16 max 33 as 1", "2:67", "Invalid max prefix length 33"),
    ("route 10.0.0.0/16 max 24 as 65001 blackhole", "2:82", "Unexpected or missing nexthop/type"),
    ("route 10.0.0.0/16 max 24 as 1 via 10.1.1.1", "2:81", "Unexpected or missing nexthop/type"),
    ("route 10.0.0.0/16 blackhole", "2:68", "Route 10.0.0.0/16 incompatible with channel type"),
]


def test_static_roa_config_errors(tmp_path):
    for route, pos, msg in ROA_ERRORS:
        conf = tmp_path / "bad.conf"
        conf.write_text("roa4 table r4;\nprotocol static { roa4 { table r4; }; %s; }\n" % route)
        rc, out, err = run_bird_parse(str(conf))
        assert rc != 0, route
        assert err.strip() == "bird: %s:%s %s" % (conf, pos, msg), route
    conf = tmp_path / "v6.conf"
    conf.write_text("roa6 table r6;\nprotocol static { roa6 { table r6; }; route 2001:db8::/32 max 129 as 1; }\n")
    rc, out, err = run_bird_parse(str(conf))
    assert rc != 0 and err.strip() == "bird: %s:2:70 Invalid max prefix length 129" % conf
    conf = tmp_path / "ip.conf"
    conf.write_text("protocol static { ipv4; route 10.0.0.0/16; }\n")
    rc, out, err = run_bird_parse(str(conf))
    assert rc != 0 and err.strip() == "bird: %s:1:42 Unexpected or missing nexthop/type" % conf
