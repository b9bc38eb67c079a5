"""Control-socket commands, byte-exact against what BIRD 2.0.12 sends.

Route and symbol order is hash order in BIRD, so listings are compared as sets of lines;
the framing (codes, continuation lines, final line) is compared exactly.
"""

import ipaddress
import random
import re
import time

from conftest import BASIC_COUNT, parse_memory, poll, start_beside_bird2, strip_codes

TIME = r"\d\d:\d\d:\d\d\.\d{3}"          # timeformat route/protocol default: iso short ms
DATETIME = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}"   # timeformat base default: iso long ms


def route_line_re(net, dest, proto):
    # "%-20s %s [%s %s] * (200)" with the time masked
    return re.escape("%-20s %s [%s " % (net, dest, proto)) + TIME + re.escape("] * (200)")


def fullmatch_all(patterns, lines):
    """Every pattern matches exactly one line, every line is matched: a set comparison."""
    left = list(lines)
    for pat in patterns:
        hits = [l for l in left if re.fullmatch(pat, l)]
        assert len(hits) == 1, "%r matched %r in %r" % (pat, hits, lines)
        left.remove(hits[0])
    assert not left, "unexpected lines %r" % left


S4_ROUTES = [("10.1.0.0/16", "blackhole"), ("10.2.0.0/16", "unreachable"),
             ("10.3.0.0/16", "prohibited")]
S6_ROUTES = [("2001:db8:1::/48", "blackhole"), ("2001:db8:2::/48", "unreachable")]


# --- show status ---------------------------------------------------------------------

def test_show_status_framing(daemon):
    reply = daemon.raw("show status").decode()
    lines = reply.split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    assert len(lines) == 7, reply
    assert re.fullmatch(r"1000-BIRD \S+", lines[0]), reply
    assert lines[1] == "1011-Router ID is 10.0.0.1"
    assert re.fullmatch(r" Hostname is \S+", lines[2]), reply
    assert re.fullmatch(" Current server time is " + DATETIME, lines[3]), reply
    assert re.fullmatch(" Last reboot on " + DATETIME, lines[4]), reply
    assert re.fullmatch(" Last reconfiguration on " + DATETIME, lines[5]), reply
    assert lines[6] == "0013 Daemon is up and running"


def test_show_status_version_matches_greeting(daemon):
    version = re.match(rb"^0001 BIRD (\S+) ready\.\n$", daemon.greeting).group(1)
    assert daemon.raw("show status").startswith(b"1000-BIRD " + version + b"\n")


# --- show route ----------------------------------------------------------------------

def test_show_route_count_exact(daemon):
    assert daemon.raw("show route count") == BASIC_COUNT


def test_show_route_table_count_ends_with_0000(daemon):
    assert daemon.raw("show route table master4 count") == \
        b"1007-3 of 3 routes for 3 networks in table master4\n0000 \n"
    assert daemon.raw("show route table master6 count") == \
        b"1007-2 of 2 routes for 2 networks in table master6\n0000 \n"


def test_show_route_protocol_count(daemon):
    assert daemon.raw("show route protocol s6 count") == \
        b"1007-2 of 2 routes for 2 networks in table master6\n0000 \n"
    assert daemon.raw("show route protocol s4 count") == \
        b"1007-3 of 3 routes for 3 networks in table master4\n0000 \n"


def test_show_route_in_prefix_count(daemon):
    assert daemon.raw("show route in 10.0.0.0/8 count") == \
        b"1007-3 of 3 routes for 3 networks in table master4\n0000 \n"


def test_show_route_in_lists_like_a_table(start_daemon):
    """`in PREFIX` is a listing of the nets within the prefix, as BIRD 2's:
    tables named have their header even when empty, `stats` its lines, and
    nothing found is an empty reply, not "Network not found". It streams in
    steps like a whole table's listing (this one takes several)."""
    inside = ["10.%d.%d.0/24" % (i // 256, i % 256) for i in range(700)]
    outside = ["11.%d.0.0/16" % i for i in range(50)]
    conf = ("router id 10.0.0.1;\nipv4 table t1;\nipv4 table t2;\n"
            "protocol static s1 { ipv4 { table t1; };\n%s}\n"
            "protocol static s2 { ipv4 { table t2; }; route 11.200.0.0/16 blackhole; }\n"
            % "".join("  route %s blackhole;\n" % n for n in inside + outside))
    d = start_daemon(conf)
    assert poll(lambda: b"750 of 750" in d.raw("show route table t1 count"))
    lines = strip_codes(d.raw("show route in 10.0.0.0/8 table t1"))
    assert lines[0] == "Table t1:" and lines[-1] == "", lines[:3]
    assert sorted(l.split()[0] for l in lines[1:-1]) == sorted(inside)
    assert d.raw("show route in 10.0.0.0/8 table t1 table t2 count") == (
        b"1007-700 of 700 routes for 700 networks in table t1\n"
        b" 0 of 0 routes for 0 networks in table t2\n"
        b"0014 Total: 700 of 700 routes for 700 networks in 2 tables\n")
    assert strip_codes(d.raw("show route in 10.0.0.0/8 table t1 table t2 stats"))[-6:] == [
        "700 of 700 routes for 700 networks in table t1", "", "Table t2:",
        "0 of 0 routes for 0 networks in table t2", "", "Total: 700 of 700 routes for 700 networks in 2 tables"]
    assert d.raw("show route in 10.0.0.0/8 table t2") == b"1007-Table t2:\n0000 \n"
    assert d.raw("show route in 192.168.0.0/16") == b"0000 \n"


def test_show_route_in_trie_table_lists_in_address_order(start_daemon):
    """BIRD 2 lists `in PREFIX` of a `trie` table by walking its trie: the
    nets in address order, a prefix before those inside it. Ours walks its
    own trie (in steps: 400 nets take two) and lists them in the same order,
    also after a configure took half of them away; a table without `trie`
    lists them in its index's order."""
    rnd = random.Random(5)
    nets = {"10.0.0.0/8", "10.1.0.0/16", "10.1.0.0/17", "10.1.0.0/24", "10.1.128.0/17",
            "10.255.255.0/24", "9.0.0.0/8", "11.0.0.0/8"}
    while len(nets) < 400:
        ln = rnd.choice([12, 16, 19, 20, 22, 23, 24, 32])
        a = (10 << 24) | (rnd.getrandbits(24) >> (32 - ln) << (32 - ln))
        nets.add("%s/%d" % (ipaddress.IPv4Address(a), ln))
    order = list(nets)
    rnd.shuffle(order)

    def conf(nets):
        routes = "".join("  route %s blackhole;\n" % n for n in nets)
        return ("router id 10.0.0.1;\nipv4 table plain;\nipv4 table tr { trie; };\n"
                "protocol static s1 { ipv4 { table plain; };\n%s}\n"
                "protocol static s2 { ipv4 { table tr; };\n%s}\n" % (routes, routes))

    def listed(d, table):
        lines = strip_codes(d.raw("show route in 10.0.0.0/8 table " + table))
        return [l.split()[0] for l in lines[1:] if l and not l[0].isspace()]

    def inside(nets):
        return sorted((n for n in nets if n not in ("9.0.0.0/8", "11.0.0.0/8")),
                      key=lambda n: (ipaddress.IPv4Network(n).network_address,
                                     ipaddress.IPv4Network(n).prefixlen))

    ours, ref = start_beside_bird2(start_daemon, conf(order))
    for kept in (order, order[::2]):
        want = inside(kept)
        count = b"1007-%d of %d routes for %d networks in table tr\n0000 \n" % ((len(want),) * 3)
        for d in (ours, ref):
            if kept is not order:
                d.reconfigure_file(conf(kept))
                assert d.raw("configure").startswith(b"0002-")
            assert poll(lambda: d.raw("show route in 10.0.0.0/8 table tr count") == count)
        assert listed(ref, "tr") == want
        assert listed(ours, "tr") == want
        assert sorted(listed(ours, "plain")) == sorted(want)


def test_show_route_listing(daemon):
    reply = daemon.raw("show route").decode()
    assert reply.startswith("1007-Table master4:\n"), reply
    assert reply.endswith("\n0000 \n"), reply
    body = reply.split("\n")[1:-2]
    # between tables: a " " blank continuation line, then " Table master6:"
    sep = body.index(" ")
    assert body[sep + 1] == " Table master6:", reply
    v4, v6 = body[:sep], body[sep + 2:]
    assert all(l.startswith(" ") for l in v4 + v6), reply
    fullmatch_all([route_line_re(n, d, "s4") for n, d in S4_ROUTES], [l[1:] for l in v4])
    fullmatch_all([route_line_re(n, d, "s6") for n, d in S6_ROUTES], [l[1:] for l in v6])


def test_show_route_stats_tables(daemon):
    """`stats` over several tables, as BIRD 2: every table's header (an empty one's
    too), its routes, its counts, a blank line; then the total."""
    reply = daemon.raw("show route table all stats").decode()
    lines = [re.sub(TIME, "T", l) for l in reply.split("\n")]
    heads = [i for i, l in enumerate(lines) if l.endswith(":") and "Table " in l]
    counts = [i for i, l in enumerate(lines) if " routes for " in l and "Total" not in l]
    assert len(heads) == len(counts) >= 2, reply
    for h, c in zip(heads, counts):
        assert h < c and lines[c + 1] == " ", reply
    assert lines[0].startswith("1007-Table ") and lines[-2].startswith("0014 Total: "), reply
    # one table: no blank line, no total
    one = daemon.raw("show route table master6 stats").decode().split("\n")
    assert one[-3].startswith(" 2 of 2 routes for 2 networks in table master6") and one[-2] == "0000 ", one


def test_show_route_table_all_many_tables(start_daemon):
    """`table all` lists every table, however many (an IXP's multi layout has one
    per peer), in the order of the config; the default tables by net type."""
    names = ["t%02d" % i for i in range(60, 0, -1)]
    conf = "router id 10.0.0.1;\nroa4 table r4;\n" + "".join("ipv4 table %s;\n" % n for n in names)
    conf += "protocol static s1 { ipv4 { table t07; }; route 10.1.0.0/16 blackhole; }\n"
    d = start_daemon(conf)
    want = ["master4", "master6", "r4"] + names
    poll(lambda: b"1 of 1 routes" in d.raw("show route table t07 count"))
    lines = strip_codes(d.raw("show route table all count"))
    assert [l.split()[-1] for l in lines[:-1]] == want, lines
    assert lines[-1] == "Total: 1 of 1 routes for 1 networks in 63 tables", lines
    assert "1 of 1 routes for 1 networks in table t07" in lines
    heads = [l for l in strip_codes(d.raw("show route table all")) if l.startswith("Table ")]
    assert heads == ["Table %s:" % n for n in want], heads
    assert [l.split()[-1] for l in strip_codes(d.raw("show route count"))[:-1]] == ["master4", "master6", "r4"]


def test_show_route_sorted_table(start_daemon, ours_only):
    """A `sorted` table lists its nets in order (ours: BIRD 2 sorts only the
    routes of a net); the steps of a long listing keep it. Its nets are
    sorted in runs of 4096 a step and merged as they are listed
    (nest/cmd_route_sort.c): 9000 make three."""
    import random
    nets = ["10.%d.%d.0/24" % (i // 256, i % 256) for i in range(9000)] + ["10.0.0.0/8", "10.0.0.0/16"]
    shuffled = nets[:]
    random.Random(5).shuffle(shuffled)
    conf = "router id 10.0.0.1;\nipv4 table t sorted;\nprotocol static st { ipv4 { table t; };\n%s}\n" % \
        "".join("  route %s blackhole;\n" % n for n in shuffled)
    d = start_daemon(conf)
    poll(lambda: b"9002 of 9002" in d.raw("show route table t count"))
    listed = [l.split()[0] for l in strip_codes(d.raw("show route table t"))[1:] if l]
    key = lambda n: (tuple(int(x) for x in n.split("/")[0].split(".")), int(n.split("/")[1]))
    assert listed == sorted(nets, key=key), listed[:5]
    listed = [l.split()[0] for l in strip_codes(d.raw("show route table t in 10.20.0.0/14"))[1:] if l]
    assert listed == ["10.%d.%d.0/24" % (i // 256, i % 256) for i in range(20 * 256, 24 * 256)], listed[:5]
    assert strip_codes(d.raw("show route table t where net.len = 24 count")) == \
        ["9000 of 9002 routes for 9002 networks in table t", ""]


def test_one_connection_keeps_no_state_of_commands_done(daemon):
    """A client polling over one connection for days (a monitoring script) must
    not grow the daemon: each command's state goes when its reply is out."""
    cmds = ["show route", "show route table all count", "show route where net ~ [10.0.0.0/8+]",
            "show route 10.1.0.0/16 all", "show route protocol nosuch", "show route table all stats"]
    replies = daemon.raw_many(["show memory"] + cmds * 400 + ["show memory"])
    before, after = parse_memory(replies[0], "Protocols")[0], parse_memory(replies[-1], "Protocols")[0]
    # ~900 bytes a command were kept until the client left: 2 MB here
    assert after - before < 64 << 10, (before, after)


def test_show_route_for_address(daemon):
    reply = daemon.raw("show route for 10.1.2.3").decode()
    assert re.fullmatch("1007-Table master4:\n " + route_line_re("10.1.0.0/16", "blackhole", "s4")
                        + "\n0000 \n", reply), reply
    reply = daemon.raw("show route for 2001:db8:2::1").decode()
    assert re.fullmatch("1007-Table master6:\n "
                        + route_line_re("2001:db8:2::/48", "unreachable", "s6")
                        + "\n0000 \n", reply), reply


def test_show_route_prefix(daemon):
    reply = daemon.raw("show route 10.3.0.0/16").decode()
    assert re.fullmatch("1007-Table master4:\n " + route_line_re("10.3.0.0/16", "prohibited", "s4")
                        + "\n0000 \n", reply), reply


def test_show_route_not_found(daemon):
    assert daemon.raw("show route 10.99.0.0/24") == b"8001 Network not found\n"
    assert daemon.raw("show route for 10.99.0.1") == b"8001 Network not found\n"


def test_dormant_via_loopback_route_not_in_table(daemon):
    # BIRD ignores the loopback interface, so "via 127.0.0.2" has no neighbour and the
    # route is never imported (BIRD 2 `show static` prints it "(dormant)").
    assert daemon.raw("show route 10.4.0.0/24") == b"8001 Network not found\n"


def test_show_route_wrong_table_type(daemon):
    assert daemon.raw("show route table master6 10.1.0.0/16") == \
        b"9001 Incompatible type of prefix/ip for table master6\n"


def test_show_route_unknown_table(daemon):
    assert daemon.raw("show route table nonexist").startswith(
        b"9001 syntax error, unexpected CF_SYM_UNDEFINED")


def test_show_route_incompatible_options(daemon):
    for cmd in ("show route filtered primary", "show route export s4 filtered count",
                "show route 10.1.0.0/16 filtered primary", "show route exported s4 filtered"):
        assert daemon.raw(cmd) == b"9001 Incompatible show route options\n", cmd


def test_show_route_all(daemon, is_reference):
    reply = daemon.raw("show route all").decode()
    assert reply.startswith("1007-Table master4:\n"), reply
    assert reply.endswith("\n0000 \n"), reply
    texts = strip_codes(reply.encode())
    # The route lines themselves are the same in BIRD 2 and 3; only the attribute lines
    # under them differ (B2 "Type: static univ", B3 "preference: 200" / "source: static").
    for n, d in S4_ROUTES:
        assert sum(bool(re.fullmatch(route_line_re(n, d, "s4"), t)) for t in texts) == 1, reply
    for n, d in S6_ROUTES:
        assert sum(bool(re.fullmatch(route_line_re(n, d, "s6"), t)) for t in texts) == 1, reply
    assert "Table master6:" in texts, reply
    if is_reference:
        # BIRD 2 only; ours follows BIRD 3's attribute listing here
        assert reply.count("\n1008-\tType: static univ\n") == 5, reply


# --- show protocols ------------------------------------------------------------------

PROTO_HEADER = "2002-Name       Proto      Table      State  Since         Info"


def proto_row(name, proto, table, state):
    # "%-10s %-10s %-10s %-6s %-12s  %s" with an empty Info column
    return re.escape("%-10s %-10s %-10s %-6s " % (name, proto, table, state)) + TIME + "  "


def test_show_protocols(daemon):
    lines = daemon.raw("show protocols").decode().split("\n")
    assert lines[0] == PROTO_HEADER
    assert lines[-2:] == ["0000 ", ""]
    rows = lines[1:-2]
    assert rows[0].startswith("1002-") and all(r.startswith(" ") for r in rows[1:]), lines
    fullmatch_all([proto_row("device1", "Device", "---", "up"),
                   proto_row("s4", "Static", "master4", "up"),
                   proto_row("s6", "Static", "master6", "up")],
                  [r[5:] if r.startswith("1002-") else r[1:] for r in rows])


def test_show_protocols_one(daemon):
    reply = daemon.raw("show protocols s4").decode()
    assert re.fullmatch(re.escape(PROTO_HEADER) + "\n1002-" + proto_row("s4", "Static", "master4", "up")
                        + "\n0000 \n", reply), reply


def test_show_protocols_pattern(daemon):
    lines = daemon.raw('show protocols "s*"').decode().split("\n")
    assert lines[0] == PROTO_HEADER and lines[-2:] == ["0000 ", ""], lines
    assert len(lines) == 5, lines
    assert lines[1].startswith("1002-") and lines[2].startswith(" "), lines
    fullmatch_all([proto_row("s4", "Static", "master4", "up"),
                   proto_row("s6", "Static", "master6", "up")],
                  [lines[1][5:], lines[2][1:]])


def test_show_protocols_all_static(daemon, is_reference):
    reply = daemon.raw("show protocols all s4").decode()
    lines = reply.split("\n")
    assert lines[0] == PROTO_HEADER
    assert re.fullmatch("1002-" + proto_row("s4", "Static", "master4", "up"), lines[1]), reply
    assert lines[2].startswith("1006-"), reply
    assert all(l.startswith(" ") for l in lines[3:-2]), reply
    # the block ends with a " " blank continuation line, then "0000 "
    assert lines[-3:] == [" ", "0000 ", ""], reply
    texts = [l[5:] if l.startswith("1006-") else l[1:] for l in lines[2:-3]]
    # B3 inserts "Created:", "Import state:" and "Export state:" lines; these are
    # the lines both print, in this order.
    want = ["  Channel ipv4",
            "    State:          UP",
            "    Table:          master4",
            "    Preference:     200",
            "    Input filter:   ACCEPT",
            "    Output filter:  REJECT",
            "    Routes:         3 imported, 0 exported, 3 preferred"]
    it = iter(texts)
    for w in want:
        assert any(t == w for t in it), "missing %r (in order) in %r" % (w, texts)
    stats = [t for t in texts if "Route change stats:" in t]
    assert len(stats) == 1 and stats[0].startswith(
        "    Route change stats:     received   rejected   filtered    ignored   "), texts
    imports = [t for t in texts if t.startswith("      Import updates:")]
    assert imports and imports[0].startswith(
        "      Import updates:              3          0          0          0 "), texts
    if is_reference:
        assert texts[-5:] == [
            "    Route change stats:     received   rejected   filtered    ignored   accepted",
            "      Import updates:              3          0          0          0          3",
            "      Import withdraws:            0          0        ---          0          0",
            "      Export updates:              0          0          0        ---          0",
            "      Export withdraws:            0        ---        ---        ---          0",
        ], texts


def test_show_protocols_unknown_name(daemon):
    assert daemon.raw("show protocols nonexist") == (
        b"9001 syntax error, unexpected CF_SYM_UNDEFINED, "
        b"expecting END or CF_SYM_KNOWN or TEXT or ALL\n")


def test_show_protocols_no_match(daemon):
    assert daemon.raw('show protocols "zz*"') == b"8003 No protocols match\n"


# --- show memory / show symbols ------------------------------------------------------

def test_show_memory(daemon, is_reference):
    lines = daemon.raw("show memory").decode().split("\n")
    assert lines[0] == "1018-BIRD memory usage"
    assert lines[1] == "                   Effective    Overhead"
    size = r"\s*\d+\.\d [ kMG]B"
    names = ["Routing tables", "Route attributes", "Protocols", "Current config",
             "Standby memory", "Total"]
    for line, name in zip(lines[2:8], names):
        assert re.fullmatch(" " + re.escape(name + ":") + size + size, line), lines
        assert len(line) == 40, line      # fixed columns: " %-17s" + 2 x 11-wide sizes
    assert lines[-2:] == ["0000 ", ""], lines
    if is_reference:
        assert len(lines) == 10, lines     # B3 adds page statistics before 0000


def test_show_symbols(daemon):
    reply = daemon.raw("show symbols").decode()
    lines = reply.split("\n")
    assert lines[0].startswith("1010-") and lines[-2:] == ["0000 ", ""], reply
    assert all(l.startswith(" ") for l in lines[1:-2]), reply
    texts = [lines[0][5:]] + [l[1:] for l in lines[1:-2]]
    for want in ["s4      \tprotocol", "s6      \tprotocol", "device1 \tprotocol",
                 "master4 \trouting table", "master6 \trouting table"]:
        assert want in texts, "%r not in %r" % (want, texts)


def test_show_symbols_table(daemon):
    reply = daemon.raw("show symbols table").decode()
    assert reply in ("1010-master4 \trouting table\n master6 \trouting table\n0000 \n",
                     "1010-master6 \trouting table\n master4 \trouting table\n0000 \n"), reply


def test_show_symbols_one(daemon):
    assert daemon.raw("show symbols s4") == b"1010 s4      \tprotocol\n"
    assert daemon.raw("show symbols master4") == b"1010 master4 \trouting table\n"


def test_show_symbols_template_none(daemon):
    assert daemon.raw("show symbols template") == b"0000 \n"


# --- parse errors --------------------------------------------------------------------

def test_empty_line(daemon):
    assert daemon.raw("") == b"9001 syntax error, unexpected END\n"


def test_keywords_are_case_sensitive(daemon):
    assert daemon.raw("SHOW STATUS") == b"9001 syntax error, unexpected CF_SYM_UNDEFINED\n"


def test_unknown_command(daemon):
    assert daemon.raw("frobnicate now") == b"9001 syntax error, unexpected CF_SYM_UNDEFINED\n"


def test_server_does_not_expand_abbreviations(daemon):
    assert daemon.raw("sh st") == b"9001 syntax error, unexpected CF_SYM_UNDEFINED\n"


def test_trailing_garbage(daemon):
    assert daemon.raw("show status foo") == \
        b"9001 syntax error, unexpected CF_SYM_UNDEFINED, expecting END\n"


def test_whitespace_comment_and_cr(daemon):
    assert daemon.raw("  show   route   count  # comment") == BASIC_COUNT
    assert daemon.raw("show route count\r") == BASIC_COUNT


def test_long_symbol(daemon):
    # 1000 chars fit the 1024-byte command buffer, so this is an ordinary parse error
    assert daemon.raw("x" * 1000) == b"9001 Symbol too long\n"


# --- disable / enable / restart ------------------------------------------------------

MASTER4_EMPTY = (b"1007-0 of 0 routes for 0 networks in table master4\n"
                 b" 2 of 2 routes for 2 networks in table master6\n"
                 b"0014 Total: 2 of 2 routes for 2 networks in 2 tables\n")


def test_disable_enable(daemon):
    assert daemon.raw("disable s4") == b"0009-s4: disabled\n0000 \n"
    assert daemon.poll_raw("show route count", MASTER4_EMPTY) == MASTER4_EMPTY
    assert daemon.protocols()["s4"][2] == "down"
    assert daemon.raw("disable s4") == b"0008-s4: already disabled\n0000 \n"
    assert daemon.raw("enable s4") == b"0011-s4: enabled\n0000 \n"
    assert daemon.poll_raw("show route count", BASIC_COUNT) == BASIC_COUNT
    assert daemon.raw("enable s4") == b"0010-s4: already enabled\n0000 \n"
    daemon.wait_up(["s4"])


def test_restart(daemon):
    before = daemon.protocols()["s4"][3]
    time.sleep(0.01)    # the since column has millisecond resolution
    assert daemon.raw("restart s4") == b"0012-s4: restarted\n0000 \n"
    daemon.wait_up(["s4"])
    assert daemon.poll_raw("show route count", BASIC_COUNT) == BASIC_COUNT
    assert daemon.protocols()["s4"][3] != before


def test_disable_pattern(daemon):
    reply = daemon.raw('disable "s*"')
    assert reply in (b"0009-s4: disabled\n s6: disabled\n0000 \n",
                     b"0009-s6: disabled\n s4: disabled\n0000 \n"), reply
    empty = (b"1007-0 of 0 routes for 0 networks in table master4\n"
             b" 0 of 0 routes for 0 networks in table master6\n"
             b"0014 Total: 0 of 0 routes for 0 networks in 2 tables\n")
    assert daemon.poll_raw("show route count", empty) == empty
    # the routes go while the protocols stop: their state follows a moment later
    def states():
        rows = daemon.protocols()
        return (rows["s4"][2], rows["s6"][2], rows["device1"][2])
    assert poll(lambda: states() == ("down", "down", "up"), timeout=5), states()
    reply = daemon.raw('enable "s*"')
    assert reply in (b"0011-s4: enabled\n s6: enabled\n0000 \n",
                     b"0011-s6: enabled\n s4: enabled\n0000 \n"), reply
    assert daemon.poll_raw("show route count", BASIC_COUNT) == BASIC_COUNT


def test_enable_errors(daemon):
    assert daemon.raw('enable "zz*"') == b"8003 No protocols match\n"
    assert daemon.raw("enable nonexist").startswith(b"9001 syntax error, unexpected CF_SYM_UNDEFINED")
