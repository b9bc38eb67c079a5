"""Configuration language: `bird -p` checks, error positions, and what the daemon builds."""

import re

from conftest import BASIC_CONF, run_bird_parse

# Error positions are "file:line:column" where column is the 1-based column of the
# first character of the token the parser had just read (usually the offending one).


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_parse_good(tmp_path):
    rc, out, err = run_bird_parse(write(tmp_path, "good.conf", BASIC_CONF))
    assert (rc, out, err) == (0, "", "")


def test_parse_unknown_word(tmp_path):
    conf = write(tmp_path, "bad.conf",
                 "router id 10.0.0.1;\n"
                 "protocol static s4 {\n"
                 "  ipv4;\n"
                 "  route 10.1.0.0/16 blakhole;\n"
                 "}\n")
    rc, out, err = run_bird_parse(conf)
    assert rc != 0
    assert err == "bird: %s:4:21 syntax error, unexpected CF_SYM_UNDEFINED\n" % conf


def test_parse_missing_semicolon(tmp_path):
    conf = write(tmp_path, "bad.conf",
                 "router id 10.0.0.1;\n"
                 "protocol static {\n"
                 "  ipv4;\n"
                 "  route 10.1.0.0/16 blackhole\n"
                 "}\n")
    rc, out, err = run_bird_parse(conf)
    assert rc != 0
    # BIRD 2 adds "expecting ';' or '{'"; the full expectation list is a property of the
    # grammar's token set, so only the part that matters is asserted.
    assert err.startswith("bird: %s:5:1 syntax error, unexpected '}', expecting " % conf), err
    assert re.fullmatch(r"[^\n]*, expecting [^\n]*';'[^\n]*\n", err), err


def test_parse_semantic_errors(tmp_path):
    cases = [
        # (config, line:col message)
        ("router id 10.0.0.1;\nprotocol static {\n  ipv4;\n  route 10.1.0.0/33 blackhole;\n}\n",
         "4:18 Invalid prefix length 33"),
        ("router id 10.0.0.1;\nprotocol static s4 { ipv4; }\nprotocol static s4 { ipv4; }\n",
         "3:20 Symbol 's4' already defined"),
        ("router id 10.0.0.1;\nprotocol static { ipv4; route 2001:db8::/32 blackhole; }\n",
         "2:56 Route 2001:db8::/32 incompatible with channel type"),
        # a set constant is evaluated at parse time, inside the body it calls
        ("router id 10.0.0.1;\nfunction f() -> int\n{\n  bgp_community.delete([(64500, f())]);\n  return 1;\n}\n",
         "4:36 Function f called before its definition is complete"),
    ]
    for i, (text, where) in enumerate(cases):
        conf = write(tmp_path, "bad%d.conf" % i, text)
        rc, out, err = run_bird_parse(conf)
        assert rc != 0, text
        assert err == "bird: %s:%s\n" % (conf, where), text


def test_parse_variable_in_set_constant(tmp_path, is_reference):
    """A set item is a constant: a variable of the function around has no
    value then (the filter fuzzer read freed memory through one). BIRD 2
    says "Runtime error" at the same place (after a line on the filter's
    error)."""
    text = "function t()\nint r;\n{\n  r = 3;\n  if 5 ~ [1, (r + 1)..10] then return 1;\n  return 0;\n}\n"
    conf = write(tmp_path, "var.conf", text)
    rc, out, err = run_bird_parse(conf)
    assert rc != 0
    want = "Runtime error" if is_reference else "Constant expression expected, not a variable"
    assert err.splitlines()[-1] == "bird: %s:5:20 %s" % (conf, want), err


def test_parse_include_error_names_included_file(tmp_path):
    inc = write(tmp_path, "inc.conf",
                "# included\n"
                "protocol static {\n"
                "  ipv4;\n"
                "  route 10.1.0.0/16 blackhole;\n"
                "  route 10.2.0.0/16 nonsense;\n"
                "}\n")
    main = write(tmp_path, "main.conf", 'router id 10.0.0.1;\ninclude "%s";\n' % inc)
    rc, out, err = run_bird_parse(main)
    assert rc != 0
    assert err == "bird: %s:5:21 syntax error, unexpected CF_SYM_UNDEFINED\n" % inc


def test_parse_include_relative(tmp_path):
    write(tmp_path, "routes.conf", "protocol static s4 { ipv4; route 10.1.0.0/16 blackhole; }\n")
    main = write(tmp_path, "main.conf", 'router id 10.0.0.1;\ninclude "routes.conf";\n')
    assert run_bird_parse(main) == (0, "", "")


def test_parse_missing_file(tmp_path):
    rc, out, err = run_bird_parse(str(tmp_path / "nope.conf"))
    assert rc != 0
    assert "nope.conf" in err and "No such file or directory" in err, err


def test_parse_global_options(tmp_path):
    conf = write(tmp_path, "opts.conf",
                 "# comment\n"
                 "router id 10.0.0.1; /* block\n comment */\n"
                 'log "%s" { info, warning, error };\n'
                 "log stderr all;\n"
                 "log syslog all;\n"
                 "debug protocols all;\n"
                 "timeformat base iso long;\n"
                 "timeformat log iso long ms;\n"
                 "timeformat protocol iso short;\n"
                 "timeformat route iso short ms;\n"
                 "ipv4 table t4;\n"
                 "ipv6 table t6;\n"
                 "define ONE = 1;\n"
                 "define NET = 10.9.0.0/16;\n"
                 "protocol device { scan time 10; }\n"
                 "protocol static { ipv4 { import all; export none; }; route NET blackhole; }\n"
                 % (tmp_path / "x.log"))
    assert run_bird_parse(conf) == (0, "", "")


def test_parse_table_options(tmp_path):
    conf = write(tmp_path, "t.conf",
                 "router id 10.0.0.1;\n"
                 "ipv4 table t4 { sorted; trie; gc threshold 2000; gc period 10 s; "
                 "min settle time 1 s; max settle time 20 s; };\n"
                 "ipv4 table t5 sorted;\nprotocol device {}\n")
    assert run_bird_parse(conf) == (0, "", "")


def test_parse_table_debug_bird3(tmp_path, ours_only):
    # BIRD 3's table debug syntax; BIRD 2.0.12 has none ("unexpected DEBUG")
    for mask in ("all", "off", "{ states, routes, events }", "{ routes }"):
        conf = write(tmp_path, "d.conf", "router id 10.0.0.1;\nipv4 table t4 { debug %s; };\nprotocol device {}\n" % mask)
        assert run_bird_parse(conf) == (0, "", ""), mask


def test_parse_threads_ours(tmp_path, ours_only):
    # BIRD 2.0.12 rejects both ("syntax error, unexpected CF_SYM_UNDEFINED")
    conf = write(tmp_path, "t.conf",
                 "router id 10.0.0.1;\nthreads 2;\n"
                 "protocol static { ipv4; route 10.1.0.0/16 blackhole; }\n")
    assert run_bird_parse(conf) == (0, "", "")
    # "};" parses whether or not the grammar wants the ';' after the block
    conf = write(tmp_path, "g.conf",
                 "router id 10.0.0.1;\nthread group worker { threads 2; default yes; };\n"
                 "protocol static { ipv4; route 10.1.0.0/16 blackhole; }\n")
    assert run_bird_parse(conf) == (0, "", "")


def test_threads_daemon_serves(start_daemon, ours_only):
    d = start_daemon("router id 10.0.0.1;\nthreads 2;\n"
                     "protocol device {}\n"
                     "protocol static s4 { ipv4; route 10.1.0.0/16 blackhole; route 10.2.0.0/16 blackhole; }\n")
    want = b"1007-2 of 2 routes for 2 networks in table master4\n0000 \n"
    assert d.poll_raw("show route table master4 count", want) == want
    d.wait_up(["device1", "s4"])


def test_parse_no_protocol(tmp_path):
    rc, out, err = run_bird_parse(write(tmp_path, "e.conf", "router id 10.0.0.1;\n"))
    assert rc != 0
    assert err.endswith(" No protocol is specified in the config file\n"), err


# --- what the running daemon makes of it --------------------------------------------

def test_define_constant_prefix(start_daemon):
    d = start_daemon("define NET = 10.9.0.0/16;\n"
                     "router id 10.0.0.1;\n"
                     "protocol static s4 { ipv4; route NET blackhole; }\n")
    want = b"1007-1 of 1 routes for 1 networks in table master4\n0000 \n"
    assert d.poll_raw("show route table master4 count", want) == want
    assert d.raw("show route 10.9.0.0/16").startswith(b"1007-Table master4:\n 10.9.0.0/16 ")
    assert d.raw("show symbols NET") == b"1010 NET     \tconstant\n"


def test_template_and_from(start_daemon):
    d = start_daemon("router id 10.0.0.1;\n"
                     "template static tpl { ipv4; }\n"
                     "protocol static sx from tpl { route 10.7.0.0/16 blackhole; }\n"
                     "protocol static sy from tpl { route 10.8.0.0/16 unreachable; }\n")
    want = b"1007-2 of 2 routes for 2 networks in table master4\n0000 \n"
    assert d.poll_raw("show route table master4 count", want) == want
    # "shown of examined": the protocol restricts what is shown, not what is examined
    assert d.raw("show route protocol sy count") == \
        b"1007-1 of 2 routes for 2 networks in table master4\n0000 \n"
    # a symbol class lists (ends with 0000); a single name is one final line.
    # The type string is "protocol template" (bird-compat.md says "template").
    assert d.raw("show symbols template") == b"1010-tpl     \tprotocol template\n0000 \n"
    assert d.raw("show symbols tpl") == b"1010 tpl     \tprotocol template\n"


def test_named_table(start_daemon):
    d = start_daemon("router id 10.0.0.1;\n"
                     "ipv4 table t2;\n"
                     "protocol static st { ipv4 { table t2; }; route 10.8.0.0/16 blackhole;"
                     " route 10.9.0.0/16 blackhole; }\n"
                     "protocol static s4 { ipv4; route 10.1.0.0/16 blackhole; }\n")
    want = b"1007-2 of 2 routes for 2 networks in table t2\n0000 \n"
    assert d.poll_raw("show route table t2 count", want) == want
    # without "table", only the default tables (master4, master6) are shown
    assert d.raw("show route count") == (
        b"1007-1 of 1 routes for 1 networks in table master4\n"
        b" 0 of 0 routes for 0 networks in table master6\n"
        b"0014 Total: 1 of 1 routes for 1 networks in 2 tables\n")
    assert d.raw("show route table all count") == (
        b"1007-1 of 1 routes for 1 networks in table master4\n"
        b" 0 of 0 routes for 0 networks in table master6\n"
        b" 2 of 2 routes for 2 networks in table t2\n"
        b"0014 Total: 3 of 3 routes for 3 networks in 3 tables\n")
    # "show route protocol" picks that protocol's table
    assert d.raw("show route protocol st count") == want
    d.wait_up(["st", "s4"])
    assert re.fullmatch(
        r"%s\n1002-st         Static     t2         up     \d\d:\d\d:\d\d\.\d{3}  \n0000 \n"
        % re.escape("2002-Name       Proto      Table      State  Since         Info"),
        d.raw("show protocols st").decode())
    syms = d.raw("show symbols table").decode().split("\n")
    assert syms[0].startswith("1010-") and syms[-2:] == ["0000 ", ""], syms
    assert all(l.startswith(" ") for l in syms[1:-2]), syms
    assert sorted([syms[0][5:]] + [l[1:] for l in syms[1:-2]]) == \
        ["master4 \trouting table", "master6 \trouting table", "t2      \trouting table"]


def test_timeformat(start_daemon):
    d = start_daemon("router id 10.0.0.1;\n"
                     "timeformat base iso short;\n"
                     "timeformat route iso long;\n"
                     "timeformat protocol iso long;\n"
                     "protocol static s4 { ipv4; route 10.1.0.0/16 blackhole; }\n")
    want = b"1007-1 of 1 routes for 1 networks in table master4\n0000 \n"
    d.poll_raw("show route table master4 count", want)
    assert re.fullmatch(r"1007-Table master4:\n 10\.1\.0\.0/16          blackhole "
                        r"\[s4 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] \* \(200\)\n0000 \n",
                        d.raw("show route").decode())
    status = d.raw("show status").decode()
    assert re.search(r"\n Current server time is \d\d:\d\d:\d\d\n", status), status
    # the header keeps its width even when the Since column grows
    assert re.fullmatch(
        r"2002-Name       Proto      Table      State  Since         Info\n"
        r"1002-s4         Static     master4    up     \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  \n0000 \n",
        d.raw("show protocols").decode())


def test_router_id_shown(start_daemon):
    d = start_daemon("router id 192.0.2.77;\nprotocol static { ipv4; }\n")
    assert b"\n1011-Router ID is 192.0.2.77\n" in d.raw("show status")


def test_missing_lladdr_deprecated(tmp_path):
    """BGP `missing lladdr`: BIRD 1's option, accepted in a channel and ignored with a
    warning as BIRD 2 does; not a protocol option (a syntax error there, as in BIRD 2)."""
    bgp = ("router id 10.0.0.1;\nprotocol bgp p1 {\n  local 127.86.2.1 as 65001;\n"
           "  neighbor 127.86.2.2 as 65001;\n%s  ipv6 { import all; export all; %s };\n}\n")
    for mode in ("self", "drop", "ignore"):
        rc, out, err = run_bird_parse(write(tmp_path, "ll.conf", bgp % ("", "missing lladdr %s;" % mode)))
        assert rc == 0, err
        assert "p1.ipv6: Missing lladdr option is deprecated and ignored, remove it\n" in err, err
    rc, out, err = run_bird_parse(write(tmp_path, "ll.conf", bgp % ("  missing lladdr self;\n", "")))
    assert rc != 0 and "ll.conf:5:3 syntax error" in err, err


def test_llgr_requires_gr(tmp_path):
    """BIRD 2: long-lived GR of the protocol needs GR; a channel's is not checked."""
    bgp = ("router id 10.0.0.1;\nprotocol bgp p1 {\n  local 127.86.2.1 as 65001;\n"
           "  neighbor 127.86.2.2 as 65001;\n  graceful restart off;%s\n"
           "  ipv4 { import all; export all; %s };\n}\n")
    conf = write(tmp_path, "llgr.conf", bgp % (" long lived graceful restart on;", ""))
    rc, out, err = run_bird_parse(conf)
    assert rc != 0
    assert err == "bird: %s:7:1 Long-lived graceful restart requires basic graceful restart\n" % conf
    conf = write(tmp_path, "llgr.conf", bgp % ("", "long lived graceful restart on; long lived stale time 20;"))
    assert run_bird_parse(conf) == (0, "", "")
