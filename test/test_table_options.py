"""BIRD 3's table options: `export settle time`, `route refresh export
settle time`, `cork threshold`, `digest settle time`, `thread group`.

BIRD 2.0.12 rejects all of them, so these run against our daemon only.
Export settle is seen through a pipe from master4 to t2: the pipe reads
master4's exports, so a route reaches t2 once master4's readers are woken;
and through a BGP session to a BIRD 2 peer; both see several changes of
a net found together as one.
"""

import os
import re
import time

import pytest

from conftest import poll, REFERENCE_BIRD, strip_codes
from bgp_peers import established, peers, ports  # noqa: F401 (fixtures)
from test_bgp import OURS, peer_conf
from test_pipe import export_updates

BASE = """router id 10.0.0.1;
thread group g1 { threads 1; };
ipv4 table master4 { %s };
ipv4 table t2;
protocol static s1 { ipv4; %s }
protocol pipe p1 { table master4; peer table t2; export all; import none; }
"""

ALL_OPTIONS = """ipv4 table t3 {
  sorted;
  export settle time 1 ms 100 ms;
  route refresh export settle time 100 ms 3 s;
  cork threshold 333300 1011010;
  digest settle time 1 s 20 s;
  thread group g1;
  gc threshold 1000;
  debug { states };
};
"""


def routes(n):
    return " ".join("route 10.%d.%d.0/24 blackhole;" % (i // 256, i % 256) for i in range(n))


def conf(settle, n, extra=""):
    return BASE % (settle, routes(n)) + extra


def count(d, table):
    m = re.search(r"(\d+) of \d+ routes for \d+ networks in table " + table,
                  "\n".join(strip_codes(d.raw("show route table %s count" % table))))
    return int(m.group(1)) if m else None


def configure(d, text):
    d.reconfigure_file(text)
    assert d.raw("configure").startswith(b"0002-")


def test_options_accepted(start_daemon, ours_only):
    d = start_daemon(conf("", 1, ALL_OPTIONS))
    assert poll(lambda: count(d, "t2") == 1, timeout=10)
    assert count(d, "t3") == 0
    # the table's `debug { states }` traces its start
    assert "t3: Started" in d.log()


def test_bad_cork_threshold_keeps_running_config(start_daemon, ours_only):
    d = start_daemon(conf("", 1))
    d.reconfigure_file(conf("cork threshold 2000 1000;", 2))
    r = strip_codes(d.raw("configure"))
    text = "\n".join(r)
    assert re.search(r"bird\.conf:3:\d+ Cork low threshold must be lower than the high threshold", text), text
    time.sleep(0.5)
    assert count(d, "master4") == 1


def test_export_settle(start_daemon, ours_only):
    """A change reaches master4's readers once no other came for the
    minimum, and no later than the maximum after the first one."""
    d = start_daemon(conf("export settle time 3 s 30 s;", 1))
    assert poll(lambda: count(d, "t2") == 1, timeout=10)
    configure(d, conf("export settle time 3 s 30 s;", 2))
    assert poll(lambda: count(d, "master4") == 2, timeout=5)
    # master4 has it; its readers are not woken before 3 s have passed
    assert count(d, "t2") == 1
    time.sleep(1)
    assert count(d, "t2") == 1
    assert poll(lambda: count(d, "t2") == 2, timeout=10)

    # changes every half second, each moving the wake-up 2 s on: the
    # maximum (4 s after the first) wakes the readers while they go on
    configure(d, conf("export settle time 2 s 4 s;", 2))
    start = time.monotonic()
    n = 2
    seen = None
    while time.monotonic() - start < 9:
        n += 1
        configure(d, conf("export settle time 2 s 4 s;", n))
        time.sleep(0.5)
        if seen is None and count(d, "t2") > 2:
            seen = time.monotonic() - start
    assert seen is not None and seen < 8.5, seen
    assert poll(lambda: count(d, "t2") == n, timeout=10), (count(d, "t2"), n)


def test_export_settle_off_by_configure(start_daemon, ours_only):
    """Taking the option out wakes the readers at once again, a wake-up
    pending under it too."""
    # the option comes by configure once t2 has the first route: started
    # with it, a static route landing after the pipe's first feed would
    # wait the whole 20 s. Tables take their options before protocols
    # their configs (rt_commit, then protos_commit), so the second route
    # comes under it.
    d = start_daemon(conf("", 1))
    assert poll(lambda: count(d, "t2") == 1, timeout=10)
    configure(d, conf("export settle time 20 s 60 s;", 2))
    assert poll(lambda: count(d, "master4") == 2, timeout=5)
    time.sleep(0.5)
    assert count(d, "t2") == 1
    configure(d, conf("", 2))
    assert poll(lambda: count(d, "t2") == 2, timeout=3)
    configure(d, conf("", 3))
    assert poll(lambda: count(d, "t2") == 3, timeout=3)


def test_thread_group_change_is_logged(start_daemon, ours_only):
    d = start_daemon(conf("thread group g1;", 1))
    assert poll(lambda: count(d, "t2") == 1, timeout=10)
    configure(d, conf("", 1))
    assert poll(lambda: "Table master4 stays on thread group g1 until it is made again" in d.log(), timeout=3)


def test_trie_change_is_logged(start_daemon, ours_only):
    """A table's trie holds its nets from its start: `trie` given or taken
    by a configure waits for the table to be made again, and says so. Until
    then `in PREFIX` lists as the config asks (sorted with `trie`)."""
    d = start_daemon(conf("", 300))
    assert poll(lambda: count(d, "master4") == 300, timeout=10)
    configure(d, conf("trie;", 300))
    assert poll(lambda: "Table master4 stays without a trie until it is made again" in d.log(), timeout=3)
    nets = [l.split()[0] for l in strip_codes(d.raw("show route in 10.0.0.0/8")) if l[:1].isdigit()]
    assert len(nets) == 300 and nets == ["10.%d.%d.0/24" % (i // 256, i % 256) for i in range(300)]
    configure(d, conf("", 300))
    assert not d.log().count("stays with a trie")


# 200 nets: 800 changes, past a journal block (387 items) and the 64
# items a window held before session 80
@pytest.mark.skipif(not os.path.exists(REFERENCE_BIRD), reason="needs Debian's bird2 as peer")
@pytest.mark.parametrize("nets", [10, 200])
def test_export_settle_coalesces_changes(start_daemon, ours_only, peers, ports, nets):
    """Changes of a net that master4's readers find together when they
    wake go out as one: a BGP session's export sees each net once, from
    the route it sent before to the last, and its peer ends with the
    last."""

    def ours(med):
        statics = " ".join("route 10.%d.0.0/16 blackhole { bgp_med = %d; };" % (k, med) for k in range(nets))
        return """router id 10.77.0.1;
ipv4 table master4 { export settle time 3 s 20 s; };
protocol device {}
protocol static local4 { ipv4; %s }
protocol bgp b2 {
  local %s port %d as 65001;
  neighbor 127.77.0.2 port %d as 65002;
  multihop; hold time 30; connect delay time 1; error wait time 1, 2;
  ipv4 { import all; export all; };
}
""" % (statics, OURS, ports[0], ports[1])

    p = peers("b2", peer_conf("127.77.0.2", ports[1], 65002, ports[0], "", export="none"))
    d = start_daemon(ours(1))
    assert poll(established(d, "b2"), timeout=15), d.raw("show protocols all b2")
    meds = lambda: re.findall(r"BGP.med: (\d+)", "\n".join(strip_codes(p.raw("show route all"))))
    assert poll(lambda: meds() == ["1"] * nets, timeout=15), meds()
    before = export_updates(d, "b2")[0]
    # four new MEDs for every net, each configure well within the 3 s
    for med in (2, 3, 4, 5):
        configure(d, ours(med))
    assert poll(lambda: meds() == ["5"] * nets, timeout=20), meds()
    time.sleep(0.5)
    assert export_updates(d, "b2")[0] - before == nets


@pytest.mark.parametrize("nets", [10, 200])
def test_export_settle_coalesces_changes_in_pipe(start_daemon, ours_only, nets):
    """The same through a pipe, which exports every route: t2 gets each
    route once, the last."""

    def routes_med(med):
        return " ".join("route 10.0.%d.0/24 blackhole { bgp_med = %d; };" % (k, med) for k in range(nets))

    settle = "export settle time 3 s 20 s;"
    d = start_daemon(BASE % (settle, routes_med(1)))
    assert poll(lambda: count(d, "t2") == nets, timeout=10)
    before = export_updates(d, "p1")[0]
    for med in (2, 3, 4, 5):
        configure(d, BASE % (settle, routes_med(med)))
    meds = lambda: re.findall(r"BGP.med: (\d+)", "\n".join(strip_codes(d.raw("show route table t2 all"))))
    assert poll(lambda: meds() == ["5"] * nets, timeout=20), meds()
    time.sleep(0.5)
    assert export_updates(d, "p1")[0] - before == nets
