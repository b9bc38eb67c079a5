"""A peer that stops reading must not make the daemon's memory grow.

Changes wait in the table's journal until every export channel has read
them. A raw peer takes the first table, then stops reading (its TCP window
closes) while another peer replaces all its routes again and again. The
stalled channel falls behind; the daemon must drop what it held for it
(ours: the journal gives it up, and it is fed the table again), so the
table memory stays bounded. When the peer reads again it must end up with
exactly the current routes: nothing withdrawn during the stall left over,
nothing missing.

Runs against BIRD 2 as well (it keeps per-peer buckets instead, also
bounded by the table). The multi-layout test reads our table traces and
is ours alone.
"""

import re
import socket
import struct
import time

from bgp_raw import RawPeer, msg, nlri, nlri_prefixes, std_attrs, update
from conftest import free_ports, parse_memory, poll, strip_codes

OURS = "127.89.0.1"
FEEDER, STALLED = "127.89.0.2", "127.89.0.3"
PER_ROUND = 50000
ROUNDS = 20


def prefixes(rnd):
    """PER_ROUND /24s, distinct per round: their nets die with the round."""
    out = []
    for i in range(PER_ROUND):
        k = rnd * PER_ROUND + i
        out.append("%d.%d.%d.0/24" % (11 + k // 65536, (k // 256) % 256, k % 256))
    return out


def updates(announce=(), withdraw=(), asn=65002):
    """Packed UPDATEs, under 4096 bytes each."""
    out, attrs = [], std_attrs(asn)
    for i in range(0, len(withdraw), 900):
        out.append(update(withdrawn=b"".join(nlri(p) for p in withdraw[i:i + 900])))
    for i in range(0, len(announce), 900):
        out.append(update(attrs=attrs, nlris=b"".join(nlri(p) for p in announce[i:i + 900])))
    return b"".join(out)


def apply_update(rib, body):
    wl = struct.unpack("!H", body[:2])[0]
    rib.difference_update(nlri_prefixes(body[2:2 + wl]))
    al = struct.unpack("!H", body[2 + wl:4 + wl])[0]
    rib.update(nlri_prefixes(body[4 + wl + al:]))


def read_until(peer, rib, want, timeout=60):
    """Apply the UPDATEs peer reads to rib until it is want, or nothing more
    comes, or timeout."""
    deadline = time.time() + timeout
    while rib != want and time.time() < deadline:
        try:
            t, body = peer.recv(timeout=max(0.1, deadline - time.time()))
        except socket.timeout:
            return
        if t == 2:
            apply_update(rib, body)


def memory(d, what="Routing tables"):
    """Bytes of `show memory`'s effective column for what."""
    return parse_memory(d.raw("show memory"), what)[0]


def test_stalled_peer_bounded_and_caught_up(start_daemon):
    port = free_ports(1)[0]
    d = start_daemon("""router id 10.89.0.1;
protocol device {}
protocol bgp feeder {
  local %s port %d as 65001; neighbor %s as 65002;
  passive; multihop; hold time 240; rs client;
  ipv4 { import all; export none; };
}
protocol bgp stalled {
  local %s port %d as 65001; neighbor %s as 65003;
  passive; multihop; hold time 240; rs client;
  ipv4 { import none; export all; };
}
""" % (OURS, port, FEEDER, OURS, port, STALLED))

    stalled = RawPeer(STALLED, OURS, port, 65003, 65001, rcvbuf=4096)
    feeder = RawPeer(FEEDER, OURS, port, 65002, 65001)
    assert poll(lambda: "Established" in "\n".join(strip_codes(d.raw("show protocols all stalled"))), timeout=10)

    # Round 0: the stalled peer still reads and takes the whole table.
    rib = set()
    feeder.send(updates(announce=prefixes(0)))
    deadline = time.time() + 60
    while len(rib) < PER_ROUND and time.time() < deadline:
        t, body = stalled.recv(timeout=max(0.1, deadline - time.time()))
        if t == 2:
            apply_update(rib, body)
    assert rib == set(prefixes(0))
    base = memory(d)

    # It stops reading; every round replaces all routes by new ones.
    peak = 0
    for rnd in range(1, ROUNDS + 1):
        feeder.send(updates(announce=prefixes(rnd), withdraw=prefixes(rnd - 1)))
        stalled.send(msg(4))
        feeder.send(msg(4))
        want = set(prefixes(rnd))
        probe = sorted(want)[::4999]
        assert poll(lambda: all(p in "\n".join(strip_codes(d.raw("show route %s" % p))) for p in probe), timeout=30)
        assert poll(lambda: d.count()[1] and d.count()[1][0] == PER_ROUND, timeout=30), d.count()
        peak = max(peak, memory(d))

    # The UPDATEs of all rounds (8 MB) overflow the socket buffers, so the
    # daemon holds the rest. Without giving up the journal that is 2M
    # changes, 1M retired routes and 1M dead nets: over 200 MB.
    print("table memory base %.1f MB peak %.1f MB" % (base / 2**20, peak / 2**20))
    assert peak - base < 48 << 20, (base, peak)

    # Reading again: the peer converges to exactly the last round.
    want = set(prefixes(ROUNDS))
    read_until(stalled, rib, want)
    state = "\n".join(strip_codes(d.raw("show protocols all stalled")))
    assert len(rib - want) == 0 and len(want - rib) == 0, (len(rib - want), len(want - rib), state)
    assert "Established" in state
    stalled.close()
    feeder.close()


def test_stalled_peer_does_not_hold_its_pipe(start_daemon, ours_only):
    """Multi layout: a pipe copying master4 into a peer's own table waits
    while that table's readers are behind (nest/rt_press.c), but not for a
    peer that stopped reading: its table keeps filling, and a peer that
    reads gets every round."""
    port = free_ports(1)[0]
    reader = "127.89.0.4"
    cfg = ["router id 10.89.0.1;", "protocol device {}"]
    # the stalled peer exports alone (an export limit keeps it out of
    # update groups): its channel stops reading as soon as its socket is
    # full, and holds the journal of its table from then on, idle
    for name, addr, asn, imp, exp in (("feeder", FEEDER, 65002, "all", "none"),
                                      ("stalled", STALLED, 65003, "none", "all; export limit 10000000 action warn"),
                                      ("reader", reader, 65004, "none", "all")):
        cfg.append("ipv4 table t_%s%s;" % (name, " { debug { events }; }" if name == "stalled" else ""))
        cfg.append("protocol pipe p_%s { table master4; peer table t_%s; import all; export all; }" % (name, name))
        cfg.append("protocol bgp %s { local %s port %d as 65001; neighbor %s as %d; passive; multihop;"
                   " hold time 240; rs client; ipv4 { table t_%s; import %s; export %s; }; }"
                   % (name, OURS, port, addr, asn, name, imp, exp))
    # one more peer's table: a pipe holds only toward a table fewer
    # channels read than the one it copies from (here 3: the pipe, the
    # session and its next hops' cache)
    for i in range(1):
        cfg.append("ipv4 table t_more%d;" % i)
        cfg.append("protocol pipe p_more%d { table master4; peer table t_more%d; import all; export all; }" % (i, i))
    d = start_daemon("\n".join(cfg) + "\n")
    stalled = RawPeer(STALLED, OURS, port, 65003, 65001, rcvbuf=4096)
    rd = RawPeer(reader, OURS, port, 65004, 65001)
    feeder = RawPeer(FEEDER, OURS, port, 65002, 65001)
    assert poll(lambda: "Established" in "\n".join(strip_codes(d.raw("show protocols all stalled"))), timeout=10)

    # Rounds until the daemon's buffers toward the stalled peer are full
    # (some 10-20) and its channel, idle, holds its table's journal (the
    # table's cleanup says so), and some more.
    rib, srib = set(), set()
    pinned, rnd = None, -1
    while rnd < 40 and (pinned is None or rnd < pinned + 2):
        rnd += 1
        feeder.send(updates(announce=prefixes(rnd), withdraw=prefixes(rnd - 1) if rnd else ()))
        want = set(prefixes(rnd))
        if rnd == 0:
            read_until(stalled, srib, want)       # then it stops reading
            assert srib == want
        read_until(rd, rib, want)
        assert rib == want, (rnd, len(rib - want), len(want - rib))
        # the stalled peer's table has the round all the same, as soon
        # (held, the pipe would pass a batch every RT_PRESS_HOLD_MAX)
        assert poll(lambda: d.count("t_stalled")[0].get("t_stalled", (0,))[0] == PER_ROUND and
                    all(p in "\n".join(strip_codes(d.raw("show route %s table t_stalled" % p)))
                        for p in sorted(want)[::4999]), timeout=5), d.count("t_stalled")
        stalled.send(msg(4))
        feeder.send(msg(4))
        rd.send(msg(4))
        # the cleanup logs what it kept only when it freed something: on a
        # fast machine the stalled reader may pin everything until it is
        # let go, and then its lag is the evidence
        log = d.log()
        kept = [int(k) for k in re.findall(r"t_stalled: Journal cleanup: \d+ changes freed, (\d+) kept", log)]
        kept += [int(k) for k in re.findall(r"t_stalled: \d+ readers up to (\d+) changes behind", log)]
        if pinned is None and kept and max(kept) > PER_ROUND:
            pinned = rnd
    assert pinned is not None, d.log()
    stalled.close()
    rd.close()
    feeder.close()
