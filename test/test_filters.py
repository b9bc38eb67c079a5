"""The filter language: self-tests in the language itself, config-time errors, `eval`,
and channel filters checked against Debian's BIRD 2 running the same config.

test/filters/*.conf are filter test suites (bt_test_suite/bt_assert) run with
`bird -T -c FILE`; files named *_b3.conf use syntax BIRD 2 does not know, the others
must also pass `bird -p` of BIRD 2.
"""

import glob
import os
import re
import subprocess

import pytest

from conftest import BIRD_BIN, REFERENCE_BIRD, Daemon, free_ports, same_binary, strip_codes

HERE = os.path.dirname(os.path.abspath(__file__))
SUITES = sorted(glob.glob(os.path.join(HERE, "filters", "*.conf")))


def run(args, timeout=60):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture
def ours(is_reference):
    if is_reference:
        pytest.skip("bird -T and our error texts are ours (BIRD 2 has no -T)")
    return BIRD_BIN


@pytest.mark.parametrize("conf", SUITES, ids=[os.path.basename(s) for s in SUITES])
def test_filter_suite(ours, conf):
    rc, out, err = run([ours, "-T", "-c", conf])
    lines = out.strip().split("\n")
    assert rc == 0, out + err
    assert re.match(r"^\d+ passed, 0 failed$", lines[-1]), out
    assert not [l for l in lines if l.startswith("[FAIL]")], out
    assert int(lines[-1].split()[0]) > 0


@pytest.mark.parametrize("conf", [s for s in SUITES if not s.endswith("_b3.conf")],
                         ids=[os.path.basename(s) for s in SUITES if not s.endswith("_b3.conf")])
def test_filter_suite_parses_in_bird2(conf):
    if not os.path.exists(REFERENCE_BIRD):
        pytest.skip("no reference BIRD")
    rc, out, err = run([REFERENCE_BIRD, "-p", "-c", conf])
    assert rc == 0, err


def test_self_test_failures_reported(ours, tmp_path):
    conf = tmp_path / "t.conf"
    conf.write_text(
        "protocol device {}\n"
        "function t_bad() { bt_assert(1 = 2); }\n"
        "bt_test_suite(t_bad, \"fails\");\n"
        "function t_good() { bt_assert(1 = 1); }\n"
        "bt_test_suite(t_good, \"passes\");\n"
        "function loop(int n) { return loop(n + 1); }\n"
        "function t_loop() { bt_assert(loop(0) = 0); }\n"
        "bt_test_suite(t_loop, \"recursion is bounded\");\n"
        "function f1(int a) { return a + 1; }\n"
        "function f2(int a) { return a + 1; }\n"
        "function f3(int a) { return a * 2; }\n"
        "bt_test_same(f1, f2, 1);\n"
        "bt_test_same(f1, f3, 0);\n")
    rc, out, err = run([ours, "-T", "-c", str(conf)])
    assert rc == 1
    lines = out.strip().split("\n")
    assert "[FAIL] t_bad: fails" in lines
    assert "[ OK ] t_good: passes" in lines
    assert "[FAIL] t_loop: recursion is bounded" in lines
    assert "[ OK ] bt_test_same(f1, f2, 1)" in lines
    assert "[ OK ] bt_test_same(f1, f3, 0)" in lines
    assert lines[-1] == "3 passed, 2 failed"


# --- config-time errors: file:line:col message, non-zero bird -p --------------------

ERRORS = [
    ("function f() int x; { x = \"a\"; }", "1:30", "Argument 1 of VAR_SET must be of type int, got type string"),
    ("function f() { if 1 < \"a\" then print \"x\"; }", "1:27", "Arguments 1 and 2 of LT must be of the same type"),
    ("filter f { bgp_med = \"x\"; accept; }", "1:25", "Argument 1 of EA_SET must be of type int, got type string"),
    ("function f(int a) { return a + 1; } function g() { return f(\"x\"); }", "1:64",
     "Argument 1 of 'f' must be int, got string"),
    ("function f() { print foo; }", "1:22", "Undefined symbol foo"),
    ("filter f { bgp_nonsense = 1; accept; }", "1:28", "Undefined symbol bgp_nonsense"),
    ("filter f { net = 10.0.0.0/8; accept; }", "1:28", "This static attribute is read-only."),
    ("function f() { return (1,2) + 1; }", "1:32", "Argument 1 of ADD must be of type int, got type pair"),
    ("filter f { if net ~ [10.1.1.0/16] then accept; reject; }", "1:31",
     "Invalid IPv4 prefix 10.1.1.0/16, maybe you wanted 10.1.0.0/16"),
]


@pytest.mark.parametrize("text,pos,msg", ERRORS, ids=[e[2][:30] for e in ERRORS])
def test_config_errors(ours, tmp_path, text, pos, msg):
    conf = tmp_path / "bad.conf"
    conf.write_text(text + "\nprotocol device {}\n")
    rc, out, err = run([ours, "-p", "-c", str(conf)])
    assert rc != 0
    assert err.strip() == "bird: %s:%s %s" % (conf, pos, msg)


# --- eval and channel filters, against BIRD 2 ---------------------------------------

EVAL_CONF = """\
router id 10.0.0.1;
protocol device {}
define C1 = (1,2);
define S1 = [1, 5..10];
"""

EVALS = [
    "(1,2)", "1.2.3.4", "10.0.0.0/8", "\"abc\"", "true", "(1,2,3)", "(rt,1,2)", "(ro, 10.0.0.1, 5)",
    "(rt, 100000, 5)", "(generic, 0x12345, 0x678)", "(unknown 0x4302, 1, 2)",
    "[1,2,5..7]", "[(1,*)]", "[(1,2..10)]", "[(rt,1,*)]", "[(1,2,3), (4,5,*)]", "[1.2.3.4, 1.2.3.5]",
    "RTS_STATIC", "SCOPE_HOST", "RTD_BLACKHOLE", "NET_IP4", "ROA_VALID",
    "1 + 2 * 3", "5 - 7", "7 / 2", "4294967295 + 1", "1/0",
    "+empty+", "[= * 1 ? 2+ =]", "[= 1 [1,2] 3..4 =]", "prepend(+empty+, 5)", "prepend(prepend(+empty+, 5), 7)",
    "add(-empty-, (1,2))", "add(add(-empty-, (1,2)), (3,4))", "delete(add(-empty-, (1,2)), (1,2))",
    "add(--empty--, (rt, 1, 2))", "add(---empty---, (1,2,3))", "10.1.2.3.mask(8)", "format(1.2.3.4)",
    "C1", "S1", "(1,2).asn", "1.2.3.4 ~ 1.0.0.0/8", "10.0.0.0/8.len", "(1,2,3).data1", "10.0.0.0/8 ~ [10.0.0.0/8+]",
    "\"a\" ~ \"a*\"", "(1,2) < (1,3)", "(10,20) ~ [(10, 20..30)]", "1 = \"a\"", "10.0.0.0/8.type",
    "bgp_path", "(1,2) + 1", "5 ~ S1", "prepend(+empty+, 5).len", "2001:db8::1", "2001:db8::/32",
    "10.0.0.0/8 ~ 10.0.0.0/7", "0x10", "!true", "5 > 3 && 2 < 1", "format((1,2))",
    # prefix sets print as BIRD 2's trie dump
    "[1.0.0.0/8+, 2.0.0.0/16{18,20}]", "[10.0.0.0/8-]", "[0.0.0.0/0+]", "[10.0.0.0/10{2,12}]",
    "[10.0.0.0/8{5,8}, 11.0.0.0/8, 10.128.0.0/9{9,13}]", "[2001:db8::/32+, 2001:db8:1::/48{56,64}]",
    "[::/0{0,3}, 2001:db8::/46{40,50}]", "format([192.168.0.0/16{24,32}, 172.16.0.0/12{16,24}])",
]


def _eval_all(daemon):
    return daemon.raw_many(["eval " + e for e in EVALS])


@pytest.fixture
def both(tmp_path, is_reference):
    """Our daemon and Debian's BIRD 2 on the same config (a factory)."""
    if is_reference or not os.path.exists(REFERENCE_BIRD):
        pytest.skip("needs our daemon and the reference BIRD 2")
    started = []

    def start(conf_text):
        pair = []
        for binary, sub in ((BIRD_BIN, "ours"), (REFERENCE_BIRD, "ref")):
            d = tmp_path / sub
            d.mkdir(exist_ok=True)
            daemon = Daemon(d, conf_text)
            started.append(daemon)
            import conftest
            saved = conftest.BIRD_BIN
            conftest.BIRD_BIN = binary
            try:
                daemon.start()
            finally:
                conftest.BIRD_BIN = saved
            pair.append(daemon)
        return pair

    yield start
    for d in started:
        d.close()


def test_eval_matches_bird2(both):
    ours, ref = both(EVAL_CONF)
    got, want = _eval_all(ours), _eval_all(ref)
    for e, g, w in zip(EVALS, got, want):
        assert g == w, "eval %s" % e


# Static routes through import/export filters: what lands in the tables must match.
CHANNEL_CONF = """\
router id 10.0.0.1;
protocol device {}
ipv4 table t2;
define bogons = [10.0.0.0/8+, 192.168.0.0/16+];
attribute int foo;
attribute lclist lcs;
attribute ip myip;
filter f_in {
  if net ~ [10.2.0.0/16+] then reject;
  if net.len > 24 then reject;
  if net ~ [10.3.0.0/16] then preference = 150;
  accept;
}
filter f_out {
  if dest = RTD_BLACKHOLE then accept;
  reject;
}
function is_long(prefix p) { return p.len >= 20; }
protocol static s4 {
  ipv4 { import filter f_in; };
  route 10.1.0.0/16 blackhole;
  route 10.2.0.0/16 unreachable;
  route 10.3.0.0/16 prohibit;
  route 10.4.0.0/25 blackhole;
  route 10.5.0.0/20 blackhole;
  route 172.16.0.0/12 unreachable;
  route 10.8.0.0/16 blackhole { bgp_med = 5; bgp_community.add((1, 2)); bgp_path.prepend(65000); preference = 77;
                                foo = 5; lcs = add(lcs, (1, 2, 3)); myip = 192.0.2.1; };
}
protocol static s6 {
  ipv6 { import where net.len = 48 && source = RTS_STATIC; };
  route 2001:db8:1::/48 blackhole;
  route 2001:db9::/32 unreachable;
}
protocol static s5 {
  ipv4 { table t2; import filter { if is_long(net) then accept; reject; }; };
  route 10.6.0.0/24 blackhole;
  route 10.7.0.0/16 blackhole;
}
ipv4 table t3;
protocol pipe p3 { table master4; peer table t3; export filter f_out; import none; }
"""

SHOW_CMDS = [
    "show route count", "show route table t2 count",
    "show route where net ~ bogons", "show route where net.len = 16 count",
    "show route filter f_out", "show route where dest = RTD_PROHIBIT",
    "show route where preference = 150", "show route where is_long(net)",
    "show route all", "show route where bgp_med = 5 all", "show route where (1, 2) ~ bgp_community",
    "show route export p3", "show route noexport p3", "show route preexport p3", "show route exported p3",
    "show route exported p3 count", "show route preexport p3 count", "show route export p3 count",
    "show route table t3",
]


def _normalize(reply):
    """Lines without codes, route lines without their timestamps, sorted within tables."""
    out = []
    for line in strip_codes(reply):
        line = re.sub(r"\[(\S+) [0-9:.\- ]+\]", r"[\1]", line)
        line = line.replace("2.0.12", "X").replace("0.1.0", "X")
        out.append(line)
    return sorted(out)


def test_channel_filters_match_bird2(both):
    ours, ref = both(CHANNEL_CONF)
    for d in (ours, ref):
        d.wait_up(["s4", "s5", "s6", "p3"])
    want_count = ref.poll_raw("show route count", lambda r: b"Total:" in r)
    ours.poll_raw("show route count", want_count)
    # the pipe fills t3 after it came up
    want_t3 = ref.poll_raw("show route table t3 count", b"1007-3 of 3 routes for 3 networks in table t3\n0000 \n")
    ours.poll_raw("show route table t3 count", want_t3)
    for cmd in SHOW_CMDS:
        assert _normalize(ours.raw(cmd)) == _normalize(ref.raw(cmd)), cmd
    stats = [l for l in strip_codes(ours.raw("show protocols all s4")) if "filter" in l or "Import" in l]
    stats_ref = [l for l in strip_codes(ref.raw("show protocols all s4")) if "filter" in l or "Import" in l]
    assert stats == stats_ref


def test_reconfigure_filter_change(both):
    """Unchanged filter text: channel kept; changed import filter: routes re-imported
    through it without restarting the protocol."""
    ours, ref = both(CHANNEL_CONF)
    for d in (ours, ref):
        d.wait_up(["s4", "s5", "s6", "p3"])
    before = ours.protocols()
    edited = CHANNEL_CONF.replace("if net.len > 24 then reject;", "if net.len > 16 then reject;")
    for d in (ours, ref):
        d.reconfigure_file(edited)
        assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    want = ref.poll_raw("show route count", lambda r: b"Total:" in r)
    assert ours.poll_raw("show route count", want) == want
    for cmd in SHOW_CMDS:
        assert _normalize(ours.raw(cmd)) == _normalize(ref.raw(cmd)), cmd
    after = ours.protocols()
    for name in ("s4", "s5", "s6"):
        assert after[name][3] == before[name][3], (name, before, after)


# --- arouteserver-generated route-server configs (BIRD 2 and 3 targets) -------------

ARS = sorted(glob.glob(os.path.join(HERE, "filters", "arouteserver", "*.conf")))


@pytest.mark.parametrize("conf", ARS, ids=[os.path.basename(s) for s in ARS])
def test_arouteserver_config_loads(ours, conf):
    """As generated, every line: nothing is stripped."""
    rc, out, err = run([ours, "-p", "-c", conf])
    assert rc == 0, err


@pytest.mark.parametrize("conf", [c for c in ARS if "_2.0." in c], ids=[os.path.basename(c) for c in ARS if "_2.0." in c])
def test_arouteserver_config_loads_in_bird2(conf):
    if not os.path.exists(REFERENCE_BIRD):
        pytest.skip("no reference BIRD")
    rc, out, err = run([REFERENCE_BIRD, "-p", "-c", conf])
    assert rc == 0, err


# --- arouteserver config running as a route server, BIRD 2 members -----------------
#
# The same generated route-server config runs once in BIRD 2 and once in our daemon
# (each world on its own 127.77.N.0/24 addresses and ports), with the same BIRD 2
# members announcing routes that the IXP policy must accept, reject, or rewrite
# (bogons, too long, invalid ASN in the path, "do not announce to", prepend
# requests, custom communities).  Every member must end up with the same routes.

MEMBERS = [
    ("m2", 2, 1002, """
  route 1.2.0.0/16 blackhole;
  route 1.2.3.0/25 blackhole;
  route 10.0.0.0/8 blackhole;
  route 1.3.0.0/16 blackhole { bgp_community.add((0, 1003)); };
  route 1.4.0.0/16 blackhole { bgp_community.add((65501, 1004)); };
  route 1.5.0.0/16 blackhole { bgp_path.prepend(64512); };
  route 1.6.0.0/16 blackhole { bgp_large_community.add((64500, 0, 1004)); };
  route 1.7.0.0/16 blackhole { bgp_community.add((0, 64500)); };
  route 1.8.0.0/16 blackhole { bgp_community.add((64500, 1003)); };
  route 1.9.0.0/16 blackhole { bgp_path.prepend(1002); bgp_path.prepend(174); };"""),
    ("m3", 3, 1003, """
  route 3.3.0.0/16 blackhole { bgp_community.add((1002, 100)); bgp_med = 50; };
  route 3.4.0.0/16 blackhole { bgp_path.prepend(1003); bgp_path.prepend(1003); };"""),
    ("m4", 4, 1004, """
  route 4.4.0.0/16 blackhole;
  route 4.4.4.0/24 blackhole { bgp_community.add((65502, 1002)); };"""),
]


def member_conf(net, idx, asn, rs_port, port, statics):
    addr = "127.77.%d.%d" % (net, idx)
    return """router id %s;
protocol device {}
protocol static st { ipv4; %s
}
protocol bgp rserver {
  local %s port %d as %d;
  neighbor 127.77.%d.1 port %d as 64500;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;
  ipv4 { import all; export all; gateway recursive; };
}
""" % (addr, statics, addr, port, asn, net, rs_port)


def rs_conf(path, net, rs_port, member_ports):
    """The generated config, moved to 127.77.net.0/24 and our ports."""
    out = []
    with open(path) as f:
        for line in f:
            # Our members meet the route server multihop (one loopback), which makes its
            # sessions `gateway recursive`; BIRD 2 refuses that over a sorted IGP table
            # ("BGP in recursive mode prohibits sorted table"), and `secondary` needs
            # the sorted table ("BGP with secondary option requires sorted table").
            if re.match(r"^(ipv[46] table master[46] sorted|\s*secondary);$", line.rstrip("\n")):
                continue
            line = line.replace("127.77.1.", "127.77.%d." % net)
            m = re.match(r"^(\s*)neighbor (127\.77\.\d+\.(\d+)) as (\d+);", line)
            if m:
                line = "%sneighbor %s port %d as %s;\n%smultihop;\n" % (
                    m.group(1), m.group(2), member_ports[int(m.group(3))], m.group(4), m.group(1))
            line = re.sub(r"^(\s*)local as 64500;", r"\1local 127.77.%d.1 port %d as 64500;" % (net, rs_port), line)
            out.append(line)
    return "".join(out)


def _member_view(d, net):
    """`show route all` as a sorted list of route blocks, without times and world addresses."""
    blocks = []
    for l in strip_codes(d.raw("show route all")):
        l = re.sub(r"\[(\S+) [0-9:.\- ]+ from [0-9.]+\]", r"[\1]", l)
        l = re.sub(r"\[(\S+) [0-9:.\- ]+\]", r"[\1]", l)
        l = l.replace("127.77.%d." % net, "127.77.X.")
        if not l.startswith("\t") and not l.startswith(" ") or not blocks:
            blocks.append([l])
        else:
            blocks[-1].append(l)
    return sorted("\n".join(b) for b in blocks)


def _bgp_established(d):
    """Every BGP session of the daemon is Established."""
    rows = [l for l in strip_codes(d.raw("show protocols")) if re.search(r"\sBGP\s", l)]
    return bool(rows) and all("Established" in l for l in rows)


def _routes(d):
    m = re.search(r"(\d+) of \d+ routes", "\n".join(strip_codes(d.raw("show route count"))))
    return int(m.group(1)) if m else -1


def _run_world(tmp_path, binary, conf_path, net, base_port):
    import conftest
    from conftest import poll
    member_ports = {idx: base_port + idx for _, idx, _, _ in MEMBERS}
    rs_dir = tmp_path / ("rs%d" % net)
    rs_dir.mkdir()
    rs = Daemon(rs_dir, rs_conf(conf_path, net, base_port, member_ports))
    saved = conftest.BIRD_BIN
    members = {}
    try:
        conftest.BIRD_BIN = binary
        rs.start()
        conftest.BIRD_BIN = REFERENCE_BIRD
        for name, idx, asn, statics in MEMBERS:
            d = tmp_path / ("%s_%d" % (name, net))
            d.mkdir()
            members[name] = Daemon(d, member_conf(net, idx, asn, base_port, member_ports[idx], statics)).start()
    finally:
        conftest.BIRD_BIN = saved
    return rs, members


@pytest.mark.parametrize("conf", ["live4_2.0.11.conf", "live4_3.3.2.conf"])
def test_arouteserver_behaves_like_bird2(ours, tmp_path, conf):
    from conftest import poll
    if not os.path.exists(REFERENCE_BIRD):
        pytest.skip("needs Debian's BIRD 2")
    base = free_ports(100, align=100)[0]
    path = os.path.join(HERE, "filters", "arouteserver", conf)
    ref_path = os.path.join(HERE, "filters", "arouteserver", "live4_2.0.11.conf")
    worlds = []
    try:
        ref = _run_world(tmp_path, REFERENCE_BIRD, ref_path, 51, base)
        worlds.append(ref)
        dut = _run_world(tmp_path, BIRD_BIN, path, 52, base + 50)
        worlds.append(dut)
        # BIRD 2's world settles first: what each member ends up with there is the target.
        want = {}
        own = {name: statics.count("route ") for name, _, _, statics in MEMBERS}
        # every member session of the reference up, else a late one looks stable
        poll(lambda: _bgp_established(ref[0]) and all(_bgp_established(m) for m in ref[1].values()),
             timeout=30)
        for name in ref[1]:
            poll(lambda: _routes(ref[1][name]) > own[name], timeout=20)
        for name in ref[1]:
            last = [None]

            def stable(m=ref[1][name]):
                v = _routes(m)
                ok = v == last[0]
                last[0] = v
                return ok
            poll(stable, timeout=10, interval=1.0)
            want[name] = _member_view(ref[1][name], 51)
            assert _routes(ref[1][name]) > own[name], name    # the route server did send routes
        for name, m in dut[1].items():
            poll(lambda: _member_view(m, 52) == want[name], timeout=20, interval=0.5)
            assert _member_view(m, 52) == want[name], (name, dut[0].raw("show route all").decode())
        # the route server itself: same accepted and filtered counts
        assert _routes(dut[0]) == _routes(ref[0])
    finally:
        for rs, members in worlds:
            for m in members.values():
                m.close()
            rs.close()


@pytest.mark.parametrize("conf", [os.path.basename(c) for c in ARS])
def test_arouteserver_config_loads_unmodified(ours, conf):
    """Every line arouteserver generates is accepted as it is (BIRD 2 itself
    rejects `sorted` master tables with recursive BGP gateways)."""
    p = subprocess.run([BIRD_BIN, "-p", "-c", os.path.join(HERE, "filters", "arouteserver", conf)],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stderr


# --- ASPA tables (BIRD 3) -------------------------------------------------------------

ASPA_CONF = """\
router id 10.0.0.1;
protocol device {}
aspa table at;
protocol static aspas {
  aspa { table at; };
  route aspa 65002 providers 65003;
  route aspa 65001 providers 65004, 65003;
  route aspa 65005 transit;
}
"""


def _route_blocks(reply):
    """`show route ... all` reply -> {net: [lines]} with the time replaced by T."""
    blocks, cur = {}, None
    for text in strip_codes(reply)[1:]:
        text = re.sub(r"\d\d:\d\d:\d\d\.\d{3}", "T", text)
        if not text:
            continue
        if not text.startswith("\t"):
            cur = text.split()[0]
            blocks[cur] = []
        blocks[cur].append(text)
    return blocks


def test_aspa_table_show_route(ours, start_daemon):
    """`show route table at all` prints ASPA records as BIRD 3 does: the customer ASN as
    the net, no destination word, and the providers as `aspa_providers: A B`."""
    d = start_daemon(ASPA_CONF)
    d.wait_up(["aspas"])
    d.poll_raw("show route table at count",
               b"1007-3 of 3 routes for 3 networks in table at\n0000 \n")
    reply = d.raw("show route table at all")
    assert reply.startswith(b"1007-Table at:\n"), reply
    # the route line keeps BIRD's "%-20s %s [...]" layout with an empty dest word
    # (a continuation line, or 1007- after another route's attribute lines: hash order)
    assert re.search(rb"\n(?: |1007-)65002                 \[aspas \d\d:\d\d:\d\d\.\d{3}\] \* \(200\)\n", reply), reply
    assert _route_blocks(reply) == {
        "65001": ["65001                 [aspas T] * (200)", "\tType: static univ",
                  "\taspa_providers: 65003 65004"],
        "65002": ["65002                 [aspas T] * (200)", "\tType: static univ",
                  "\taspa_providers: 65003"],
        "65005": ["65005                 [aspas T] * (200)", "\tType: static univ",
                  "\taspa_providers: "],
    }
    assert b"1012-\taspa_providers: 65003\n" in reply
