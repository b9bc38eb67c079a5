"""A table that empties gives its memory back, and emptying it costs
little on the way.

A route server that loses its peers (a power cut at the exchange, a
maintenance) drops their full tables at once. Routes and nets come from
shared slabs that keep free objects for the next routes; the pages whose
objects all went are given back to the system by the daemon's memory
timer (lib/slab_shared.h). A raw peer sends 300,000 routes and goes; once
they are gone, the daemon's resident memory must fall by most of what they
took, and `show memory` must not keep them as overhead.

Under AddressSanitizer or ThreadSanitizer the slabs are plain malloc and
give nothing back on their own: that test skips there. The second loses
eight peers piped into master4 at once (the multi layout).
"""

import re

import pytest

from bgp_raw import RawPeer, nlri, std_attrs, update
from conftest import free_ports, parse_memory, poll, strip_codes

OURS = "127.91.0.1"
FEEDER = "127.91.0.2"
ROUTES = 300000


def prefixes():
    return ["%d.%d.%d.0/24" % (11 + k // 65536, (k // 256) % 256, k % 256) for k in range(ROUTES)]


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) << 10


def sanitized(pid):
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read()
    return "libasan" in maps or "libtsan" in maps


def memory(d, what):
    """(effective, overhead) bytes of a `show memory` line."""
    return parse_memory(d.raw("show memory"), what)


def tables(d):
    return memory(d, "Routing tables")


def test_emptied_table_gives_memory_back(start_daemon, ours_only):
    port = free_ports(1)[0]
    d = start_daemon("""router id 10.91.0.1;
protocol device {}
protocol bgp feeder {
  local %s port %d as 65001; neighbor %s as 65002;
  passive; multihop; hold time 240;
  ipv4 { import all; export none; };
}
""" % (OURS, port, FEEDER))
    pid = d.proc.pid
    if sanitized(pid):
        pytest.skip("sanitizer builds allocate routes from malloc")

    feeder = RawPeer(FEEDER, OURS, port, 65002, 65001)
    assert poll(lambda: "Established" in "\n".join(strip_codes(d.raw("show protocols all feeder"))), timeout=10)
    before = rss(pid)
    attrs, p = std_attrs(65002), prefixes()
    feeder.send(b"".join(update(attrs=attrs, nlris=b"".join(nlri(x) for x in p[i:i + 900]))
                         for i in range(0, len(p), 900)))
    assert poll(lambda: d.count()[0]["master4"][0] == ROUTES, timeout=60), d.count()
    loaded, (used, _) = rss(pid), tables(d)
    assert used > ROUTES * 60, used          # a route and its net, at least

    # The session goes down: its routes are flushed while the daemon runs on.
    feeder.close()
    assert poll(lambda: d.count()[0]["master4"][0] == 0, timeout=60), d.count()

    # Within a few ticks of the memory timer (a quarter second each) the
    # emptied pages go. What stays: the chunks' headers (a bit per slot),
    # the pages the objects in threads' caches pin, the index's smallest
    # array. Measured: 1.4 MB of 27 MB, RSS from 40 MB to 5 MB.
    def returned():
        eff, over = tables(d)
        return eff + over < used * 0.15 and loaded - rss(pid) > used * 0.8
    ok = poll(returned, timeout=10)
    print("RSS before %d MB, loaded %d MB, after %d MB; tables %.1f MB in use when loaded, now %s"
          % (before >> 20, loaded >> 20, rss(pid) >> 20, used / 2**20, tables(d)))
    assert ok


PEERS = 8
PER_PEER = 100000


def test_peers_gone_at_once_through_pipes(start_daemon):
    """The multi layout (a table per peer, piped into master4) loses its
    peers at once: master4 takes every peer's withdrawals before the pipes
    out of it have read them, and those fall far enough behind to give up
    the journal and feed the table again (nest/channel_catchup.c). While
    skipping it they withdraw the routes whose nets went; they used to keep
    a copy of each until the feed was over: "Protocols" memory rose by
    some 70 bytes a route of every table (290-330 MB here, measured).
    Every table must end empty (a withdrawal lost on the way would leave a
    copy in a peer's table), and no pipe may count a route exported. No
    BGP session reads the tables: a BGP channel that falls behind keeps
    its copies (it may be unable to take the withdrawals at once), and its
    own catch-up would count in the same memory."""
    port = free_ports(1)[0]
    cfg = ["router id 10.91.0.1;", "protocol device {}"]
    for i in range(PEERS):
        cfg.append("""ipv4 table t%d;
protocol pipe p%d { table master4; peer table t%d; import all; export all; }
protocol bgp peer%d {
  local %s port %d as 65001; neighbor 127.91.1.%d as %d;
  passive; multihop; hold time 240; rs client;
  ipv4 { table t%d; import all; export none; };
}""" % (i, i, i, i, OURS, port, i + 1, 65010 + i, i))
    d = start_daemon("\n".join(cfg))
    peers = [RawPeer("127.91.1.%d" % (i + 1), OURS, port, 65010 + i, 65001) for i in range(PEERS)]
    assert poll(lambda: all("Established" in "\n".join(strip_codes(d.raw("show protocols all peer%d" % i)))
                            for i in range(PEERS)), timeout=10)
    for i, peer in enumerate(peers):
        attrs = std_attrs(65010 + i)
        p = ["%d.%d.%d.0/24" % (11 + i * 2 + k // 65536, (k // 256) % 256, k % 256) for k in range(PER_PEER)]
        peer.send(b"".join(update(attrs=attrs, nlris=b"".join(nlri(x) for x in p[j:j + 900]))
                           for j in range(0, len(p), 900)))
    total, names = PEERS * PER_PEER, ["master4"] + ["t%d" % i for i in range(PEERS)]
    assert poll(lambda: [d.count("all")[0][t][0] for t in names] == [total] * len(names), timeout=120), d.count("all")

    for peer in peers:
        peer.close()
    peak = 0

    def empty():
        nonlocal peak
        peak = max(peak, memory(d, "Protocols")[0])
        return all(d.count("all")[0][t][0] == 0 for t in names)
    assert poll(empty, timeout=120, interval=0.05), d.count("all")
    catchups = d.log().count("feeding it again")
    print("Protocols peak %.1f MB; %d catch-ups" % (peak / 2**20, catchups))
    for i in range(PEERS):
        text = "\n".join(strip_codes(d.raw("show protocols all p%d" % i)))
        assert re.search(r"Routes:\s+0 imported, 0 exported", text), text
    if not catchups:
        pytest.skip("the pipes kept up with master4 here: no catch-up to look at")
    assert peak < 32 << 20, peak / 2**20
