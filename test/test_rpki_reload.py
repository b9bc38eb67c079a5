"""`rpki reload`: a channel whose filters call roa_check() is reloaded when
the ROA table changes, after the table's settle times.

The ROA table is filled by a static protocol; `configure` changes its ROAs.
A BIRD 2 peer (AS 65002) announces 10.98.1.0/24 to us; we announce
10.98.50.0/24. Our import filter rejects ROA-invalid routes, so does our
export filter. When the ROA for AS 65002 goes, the peer's route must leave
our table, and ours must leave the peer; when it comes back, both return.
A static protocol's import filter is re-run the same way (it resends), and
so are a pipe's filters, both ways.
BGP reloads this way only with `import table on` / `export table on`; a
session without them gets BIRD 2's warning. Passes against BIRD 2 too.
Addresses 127.98.x.y.
"""

from conftest import poll, strip_codes
from test_bgp import established, peers, ports  # noqa: F401 (fixtures)

DUT, PEER = "127.98.0.1", "127.98.0.2"
TIMERS = "hold time 30; connect delay time 1; error wait time 1, 2;"

VALID = "route 10.98.0.0/16 max 24 as 65002; route 10.98.50.0/24 max 24 as 65001;"
INVALID = "route 10.98.0.0/16 max 24 as 65003;"

OURS = """router id 10.98.0.1;
log stderr all;
roa4 table r4 { min settle time 200 ms; max settle time 2 s; };
protocol device {}
protocol static roas { roa4 { table r4; }; %(roas)s }
protocol static mine { ipv4; route 10.98.50.0/24 blackhole; }
filter rpki_static { if roa_check(r4, net, 65002) = ROA_INVALID then reject; accept; }
protocol static checked { ipv4 { import filter rpki_static; }; route 10.98.60.0/24 blackhole; }
filter rpki_in { if roa_check(r4, net, bgp_path.last) = ROA_INVALID then reject; accept; }
filter rpki_out { if roa_check(r4, net, 65001) = ROA_INVALID then reject; accept; }
protocol bgp full {
  local %(dut)s port %(port)d as 65001; neighbor %(peer)s port %(pport)d as 65002;
  multihop; %(timers)s
  ipv4 { import table on; export table on; import filter rpki_in; export filter rpki_out; };
}
protocol bgp plain {
  local %(dut)s port %(port)d as 65001; neighbor 127.98.0.3 port %(pport2)d as 65002;
  multihop; %(timers)s
  ipv4 { import filter rpki_in; export filter rpki_out; };
}
protocol bgp quiet {
  local %(dut)s port %(port)d as 65001; neighbor 127.98.0.4 port %(pport3)d as 65002;
  multihop; %(timers)s
  ipv4 { import table on; import filter rpki_in; export filter rpki_out; rpki reload off; };
}
"""

THEIRS = """router id %(peer)s;
protocol device {}
protocol static st { ipv4; route 10.98.1.0/24 blackhole; }
protocol bgp dut {
  local %(peer)s port %(pport)d as 65002; neighbor %(dut)s port %(port)d as 65001;
  multihop; %(timers)s
  ipv4 { import all; export all; };
}
"""


def has(d, prefix, proto=None):
    cmd = "show route %s" % prefix + (" protocol %s" % proto if proto else "")
    return prefix in "\n".join(strip_codes(d.raw(cmd)))


def test_roa_change_reloads_imports_and_exports(start_daemon, peers, ports):
    args = {"dut": DUT, "peer": PEER, "port": ports[0], "pport": ports[1], "pport2": ports[2], "pport3": ports[3],
            "timers": TIMERS}
    d = start_daemon(OURS % dict(args, roas=VALID))
    p = peers("p", THEIRS % args)
    p2 = peers("p2", THEIRS % dict(args, peer="127.98.0.3", pport=ports[2]))
    peers("p3", THEIRS % dict(args, peer="127.98.0.4", pport=ports[3]))
    for name in ("full", "plain", "quiet"):
        assert poll(established(d, name), timeout=20), strip_codes(d.raw("show protocols all %s" % name))
    for name in ("full", "plain", "quiet"):
        assert poll(lambda: has(d, "10.98.1.0/24", name), timeout=10), name
    assert poll(lambda: has(p, "10.98.50.0/24"), timeout=10)
    assert poll(lambda: has(p2, "10.98.50.0/24"), timeout=10)
    assert has(d, "10.98.60.0/24")

    # The ROAs of both routes go: after the settle time both routes go too.
    d.reconfigure_file(OURS % dict(args, roas=INVALID))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    assert poll(lambda: not has(d, "10.98.1.0/24", "full"), timeout=5)
    assert poll(lambda: not has(p, "10.98.50.0/24"), timeout=5)
    assert poll(lambda: not has(d, "10.98.60.0/24"), timeout=5), "a static protocol resends"
    assert established(d, "full")(), "the session stays up"
    # Without import or export table, or with `rpki reload off`, nothing ran
    # the filters again.
    assert has(d, "10.98.1.0/24", "plain") and has(d, "10.98.1.0/24", "quiet")
    assert has(p2, "10.98.50.0/24")

    # They come back: from our import table, and through our export table.
    d.reconfigure_file(OURS % dict(args, roas=VALID))
    assert d.raw("configure").endswith(b"0003 Reconfigured\n")
    assert poll(lambda: has(d, "10.98.1.0/24", "full"), timeout=5)
    assert poll(lambda: has(p, "10.98.50.0/24"), timeout=5)
    assert poll(lambda: has(d, "10.98.60.0/24"), timeout=5)

    # Without the channel's tables BGP would have to ask the neighbor: BIRD 2
    # warns instead, per direction, when the channel goes up; not where the
    # tables are, nor with `rpki reload off`.
    log = d.log()
    assert "plain.ipv4: Automatic RPKI reload not active for import" in log, log
    assert "plain.ipv4: Automatic RPKI reload not active for export" in log, log
    assert "full.ipv4: Automatic RPKI reload" not in log, log
    assert "quiet.ipv4: Automatic RPKI reload" not in log, log


ONLY = """router id 10.98.0.1;
log "%(log)s" all;
roa4 table r4 { min settle time 200 ms; max settle time 2 s; };
protocol device {}
protocol static roas { roa4 { table r4; }; %(roas)s route 10.97.0.0/16 max 24 as 65009; }
filter rpki_in { print "checked ", net; if roa_check(r4, net, bgp_path.last) = ROA_INVALID then reject; accept; }
protocol bgp full {
  local %(dut)s port %(port)d as 65001; neighbor %(peer)s port %(pport)d as 65002;
  multihop; %(timers)s
  ipv4 { import table on; import filter rpki_in; export none; };
}
"""


def flip_roas_checks_only(d, conf, args, log, seen, changed, untouched, is_reference):
    """Make `changed` ROA-invalid by `configure`, then valid again: seen()
    follows (gone, back) within 10 s (BIRD 2 takes about 3 s for exports),
    the filter (printing "checked NET") ran again for `changed` and, except
    on BIRD 2, which runs it for every route, never for `untouched`."""
    def checked(prefix):
        return log.read_text().count("checked %s\n" % prefix)

    before = checked(changed), checked(untouched)
    for roas, present in ((INVALID, False), (VALID, True)):
        d.reconfigure_file(conf % dict(args, roas=roas))
        assert d.raw("configure").endswith(b"0003 Reconfigured\n")
        assert poll(lambda: seen(changed) == present, timeout=10)
        assert checked(changed) > before[0]
        assert seen(untouched)
        if not is_reference:
            assert checked(untouched) == before[1], log.read_text()


def test_roa_change_reloads_only_what_it_covers(start_daemon, peers, ports, is_reference, tmp_path):
    """A few ROAs changed: the import filter runs again for the routes within
    their prefixes only, not for the whole import table (BIRD 2 runs it for
    every route: there only the routes concerned are checked)."""
    log = tmp_path / "only.log"
    args = {"dut": DUT, "peer": PEER, "port": ports[0], "pport": ports[1], "timers": TIMERS, "log": log}
    d = start_daemon(ONLY % dict(args, roas=VALID))
    p = peers("p", THEIRS.replace("route 10.98.1.0/24 blackhole;",
                                  "route 10.98.1.0/24 blackhole; route 10.99.1.0/24 blackhole;") % args)
    assert poll(established(d, "full"), timeout=20), strip_codes(d.raw("show protocols all full"))
    assert poll(lambda: has(d, "10.98.1.0/24") and has(d, "10.99.1.0/24"), timeout=10)
    flip_roas_checks_only(d, ONLY, args, log, lambda px: has(d, px), "10.98.1.0/24", "10.99.1.0/24", is_reference)
    assert p.proc.poll() is None

ONLY_OUT = """router id 10.98.0.1;
log "%(log)s" all;
roa4 table r4 { min settle time 200 ms; max settle time 2 s; };
protocol device {}
protocol static roas { roa4 { table r4; }; %(roas)s route 10.97.0.0/16 max 24 as 65009; }
protocol static mine { ipv4; route 10.98.50.0/24 blackhole; route 10.99.50.0/24 blackhole; }
filter rpki_out { print "checked ", net; if roa_check(r4, net, 65001) = ROA_INVALID then reject; accept; }
protocol bgp full {
  local %(dut)s port %(port)d as 65001; neighbor %(peer)s port %(pport)d as 65002;
  multihop; %(timers)s
  ipv4 { import all; export table on; export filter rpki_out; };
}
"""


def test_roa_change_refeeds_only_what_it_covers(start_daemon, peers, ports, is_reference, tmp_path):
    """The same for exports: the export filter runs again for the nets
    within the changed ROAs' prefixes only, and the peer sees the change of
    those (BIRD 2 refeeds every net)."""
    log = tmp_path / "only_out.log"
    args = {"dut": DUT, "peer": PEER, "port": ports[0], "pport": ports[1], "timers": TIMERS, "log": log}
    d = start_daemon(ONLY_OUT % dict(args, roas=VALID))
    p = peers("p", THEIRS % args)
    assert poll(established(d, "full"), timeout=20), strip_codes(d.raw("show protocols all full"))
    assert poll(lambda: has(p, "10.98.50.0/24") and has(p, "10.99.50.0/24"), timeout=10)
    flip_roas_checks_only(d, ONLY_OUT, args, log, lambda px: has(p, px), "10.98.50.0/24", "10.99.50.0/24",
                          is_reference)


def test_roa_change_refeeds_pipes(start_daemon):
    """A pipe's filters that call roa_check() run again when the ROA table
    changes, both ways, as any channel's (a pipe's channels had `rpki
    reload` off). Passes against BIRD 2 too."""
    def conf(roas):
        return ("router id 10.98.0.1;\nipv4 table t1;\n"
                "roa4 table r4 { min settle time 100 ms; max settle time 1 s; };\n"
                "protocol static roas { roa4 { table r4; }; %s }\n"
                "protocol static s0 { ipv4; route 10.98.1.0/24 blackhole; }\n"
                "protocol static s1 { ipv4 { table t1; }; route 10.98.2.0/24 blackhole; }\n"
                "protocol pipe p { table master4; peer table t1;\n"
                "  export where roa_check(r4, net, 65001) = ROA_VALID;\n"
                "  import where roa_check(r4, net, 65001) != ROA_INVALID; }\n" % roas)

    def routes(t):
        return sorted(x.split()[0] for x in strip_codes(d.raw("show route table %s" % t))
                      if x[:1].isdigit())
    d = start_daemon(conf("route 10.98.0.0/16 max 24 as 65001;"))
    assert poll(lambda: routes("t1") == ["10.98.1.0/24", "10.98.2.0/24"], timeout=5), routes("t1")
    assert poll(lambda: routes("master4") == ["10.98.1.0/24", "10.98.2.0/24"], timeout=5), routes("master4")
    # another AS's ROA: invalid both ways, both copies go
    d.reconfigure_file(conf("route 10.98.0.0/16 max 24 as 65009;"))
    d.raw("configure")
    assert poll(lambda: routes("t1") == ["10.98.2.0/24"], timeout=5), routes("t1")
    assert poll(lambda: routes("master4") == ["10.98.1.0/24"], timeout=5), routes("master4")
    # no ROA: unknown, which the import side takes and the export side not
    d.reconfigure_file(conf(""))
    d.raw("configure")
    assert poll(lambda: routes("master4") == ["10.98.1.0/24", "10.98.2.0/24"], timeout=5), routes("master4")
    assert routes("t1") == ["10.98.2.0/24"]
