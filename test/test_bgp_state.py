"""BGP protocol and channel states as BIRD 2 shows them.

A BGP protocol is `up` only while its session is established; otherwise it
is in `start`, its Info column telling the session state (Idle, Connect,
Active, OpenSent, ...) and the last error.  The Since column changes when
the session comes and goes.  The channels follow: UP with the session, DOWN
(no statistics) without it, START (routes and statistics kept) while the
neighbor restarts gracefully.  After an error of ours or the neighbor's
(a NOTIFICATION other than Cease) the next attempt waits: Idle, `Error
wait`; BIRD 2 restarts the protocol then, which moves Since even when the
session never came up.

Our daemon (127.86.0.1) is the device under test, the peers are Debian
BIRD 2 daemons on 127.86.0.x.  With BIRD_BIN=/usr/sbin/bird the same tests
check BIRD 2 itself: the expected lines are what BIRD 2.0.12 prints.
"""

import os
import re
import signal
import socket
import struct
import time

import bgp_raw
from conftest import poll
import test_bgp
from test_bgp import established, peers, ports, reply_text  # noqa: F401 (fixtures)

OURS = "127.86.0.1"
PEER = "127.86.0.2"
ROUTE = "10.86.1.0/24"


def ours_conf(port, peer_port, bgp_opts=""):
    return test_bgp.ours_conf(port, [("b2", PEER, peer_port, 65002)], statics="route 10.86.100.0/24 blackhole;",
                              bgp_opts=bgp_opts, ours=OURS, router_id="10.86.0.1")


def peer_conf(port, our_port, bgp_opts=""):
    return test_bgp.peer_conf(PEER, port, 65002, our_port, "route %s blackhole;" % ROUTE, bgp_opts, ours=OURS)


def passive_conf(ours, port, peer, options):
    """b2 waiting, passive, for a hand-driven neighbor on peer."""
    return """router id 10.90.0.1;
protocol device {}
protocol bgp b2 {
  local %s port %d as 65001;
  neighbor %s as 65002;
  passive; multihop; %s
  ipv4 { import all; export none; };
}
""" % (ours, port, peer, options)


def row(d):
    """(state, since, info) of b2 in `show protocols`."""
    r = d.protocols()["b2"]
    return r[2], r[3], r[4].rstrip()


def details(d):
    return reply_text(d.raw("show protocols all b2"))


def channel(d):
    v = details(d)
    return v[v.index("  Channel ipv4\n"):]


def connect_delay(d):
    m = re.search(r"^    Connect delay:    (\d+\.\d{3})/", details(d), re.M)
    return float(m.group(1)) if m else None


def has(d, prefix):
    return prefix in reply_text(d.raw("show route %s" % prefix))


def wait_start(d, info_re, timeout=10):
    """Poll until b2 is in start with Info matching info_re; return the row."""
    got = poll(lambda: (lambda r: r if r[0] == "start" and re.match(info_re, r[2]) else None)(row(d)),
               timeout=timeout)
    assert got, details(d)
    return got


def test_neighbor_not_listening(start_daemon, ports):
    """Nobody listens: start, Active, each refusal the last error, and no restart (Since stays)."""
    d = start_daemon(ours_conf(ports[0], ports[1]))
    wait_start(d, r"^Active +Socket: Connection refused$")
    assert poll(lambda: re.search(r"^    Connect delay:    \d+\.\d{3}/1$", details(d), re.M), timeout=5), details(d)
    v = details(d)
    assert "  BGP state:          Active\n" in v, v
    assert "\n    Last error:       Socket: Connection refused\n" in v, v
    assert "Neighbor ID" not in v and "Hold timer" not in v, v
    assert channel(d).startswith("  Channel ipv4\n    State:          DOWN\n    Table:          master4\n"), v
    assert "Routes:" not in v and "Route change stats" not in v, v
    # another attempt (the delay starts over), refused as well
    before = row(d)
    samples = [connect_delay(d)]

    def restarted():
        samples.append(connect_delay(d))
        return None not in samples[-2:] and samples[-1] > samples[-2]
    assert poll(restarted, timeout=5), details(d)
    assert row(d) == before


def test_session_goes_and_comes_back(start_daemon, peers, ports):
    """Up, then the neighbor disables its side, comes back, and at last dies (SIGKILL)."""
    p = peers("b2", peer_conf(ports[1], ports[0]))
    d = start_daemon(ours_conf(ports[0], ports[1]))
    assert poll(established(d, "b2"), timeout=15), details(d)
    assert poll(lambda: has(d, ROUTE), timeout=10)
    state, up_since, info = row(d)
    assert (state, info) == ("up", "Established")
    time.sleep(0.01)        # Since must move visibly (conftest.Stamp)
    c = channel(d)
    assert c.startswith("  Channel ipv4\n    State:          UP\n"), c
    assert "\n    Routes:         1 imported, 1 exported, 1 preferred\n" in c, c

    # The neighbor's Cease: back to start at once, no error wait; the
    # channel goes down with the neighbor's routes and its statistics.
    assert p.raw("disable dut").startswith(b"0009-")
    state, since, info = wait_start(d, r"^\S+ +Received: Administrative shutdown$")
    assert since != up_since
    assert info.startswith(("Active ", "Connect ")), info
    assert poll(lambda: not has(d, ROUTE), timeout=5)
    assert poll(lambda: "    State:          DOWN\n" in channel(d), timeout=5), channel(d)
    assert "Routes:" not in channel(d)
    assert "\n    Last error:       Received: Administrative shutdown\n" in details(d)

    assert p.raw("enable dut").startswith(b"0011-")
    assert poll(established(d, "b2"), timeout=15), details(d)
    assert poll(lambda: has(d, ROUTE), timeout=10)
    state, again, info = row(d)
    assert state == "up" and again not in (since, up_since)
    c = channel(d)
    assert "    State:          UP\n" in c, c
    # counted anew, as BIRD clears a channel's statistics when it goes down
    assert re.search(r"^      Import updates: +1 +0 +0 +0 +1$", c, re.M), c
    assert "Last error" not in details(d)

    # The neighbor dies: no NOTIFICATION, the socket tells.
    p.kill()
    wait_start(d, r"^\S+ +Socket: Connection (closed|reset by peer)$")
    assert poll(lambda: not has(d, ROUTE), timeout=5)
    assert poll(lambda: "    State:          DOWN\n" in channel(d), timeout=5), channel(d)


def test_graceful_restart_keeps_channel_in_start(start_daemon, peers, ports):
    """The neighbor restarts gracefully: start, the channel START with its routes and statistics."""
    gr = "graceful restart on; graceful restart time 30;"
    p = peers("b2", peer_conf(ports[1], ports[0], gr))
    d = start_daemon(ours_conf(ports[0], ports[1], gr))
    assert poll(established(d, "b2"), timeout=15), details(d)
    assert poll(lambda: has(d, ROUTE), timeout=10)
    up_since = row(d)[1]
    time.sleep(0.01)
    p.kill()
    state, since, info = wait_start(d, r"^\S+ +Socket: ")
    assert since != up_since
    v = details(d)
    assert "\n    Neighbor graceful restart active\n" in v, v
    assert re.search(r"^    Restart timer:    \d+\.\d{3}/-$", v, re.M), v
    c = channel(d)
    assert c.startswith("  Channel ipv4\n    State:          START\n"), c
    assert "\n    Routes:         1 imported, 0 exported, 1 preferred\n" in c, c
    assert "\n    Neighbor GR:    Regular\n" in c, c
    assert has(d, ROUTE)

    p.extra_args = ["-R"]
    p.start()
    assert poll(established(d, "b2"), timeout=15), details(d)
    assert poll(lambda: "    State:          UP\n" in channel(d), timeout=5), channel(d)
    assert poll(lambda: "graceful restart active" not in details(d), timeout=10), details(d)


def test_error_waits(start_daemon, peers, ports):
    """Our hold timer expires: BGP Error, Idle for the error wait time, incoming refused meanwhile."""
    p = peers("b2", peer_conf(ports[1], ports[0]))
    d = start_daemon(ours_conf(ports[0], ports[1], "hold time 3; error wait time 30, 60;"))
    assert poll(established(d, "b2"), timeout=15), details(d)
    os.kill(p.proc.pid, signal.SIGSTOP)
    try:
        wait_start(d, r"^Idle +BGP Error: Hold timer expired$", timeout=10)
        v = details(d)
        assert "  BGP state:          Idle\n" in v, v
        assert re.search(r"^    Error wait:       \d+\.\d{3}/30$", v, re.M), v
        assert "Connect delay" not in v, v
        assert "\n    Last error:       BGP Error: Hold timer expired\n" in v, v
        assert "    State:          DOWN\n" in channel(d), v
    finally:
        os.kill(p.proc.pid, signal.SIGCONT)
    # the neighbor, awake again, connects and is refused until the wait is over
    assert poll(lambda: re.match(r"^\S+ +Socket: ", p.protocols()["dut"][4]), timeout=10), p.raw("show protocols all dut")
    assert row(d)[2] == "Idle          BGP Error: Hold timer expired", details(d)


def test_hold_timer_with_llgr_neighbor(start_daemon, peers, ports):
    """A neighbor that can restart long-lived gets the chance when it falls silent:
    no NOTIFICATION, no last error, its routes kept, the channel in START."""
    p = peers("b2", peer_conf(ports[1], ports[0], "graceful restart on; long lived graceful restart on;"))
    d = start_daemon(ours_conf(ports[0], ports[1], "hold time 3; graceful restart on;"))
    assert poll(established(d, "b2"), timeout=15), details(d)
    assert poll(lambda: has(d, ROUTE), timeout=10)
    os.kill(p.proc.pid, signal.SIGSTOP)
    try:
        wait_start(d, r"^(Active|Connect|OpenSent)$", timeout=10)
        v = details(d)
        assert "\n    Neighbor graceful restart active\n" in v, v
        assert "Last error" not in v, v
        assert "    State:          START\n" in channel(d), v
        assert has(d, ROUTE)
    finally:
        os.kill(p.proc.pid, signal.SIGCONT)


def test_error_before_session_restarts(start_daemon, ports):
    """An error before the session is up (here a wrong AS in the neighbor's OPEN) ends
    the run: BIRD 2 restarts the protocol, so Since moves to the error, the state stays
    start, and after the error wait the protocol waits for the neighbor again."""
    ours, peer = "127.90.5.1", "127.90.5.2"
    d = start_daemon(passive_conf(ours, ports[0], peer, "hold time 90; error wait time 2, 4;"))
    first = wait_start(d, r"^Passive$")
    time.sleep(0.1)     # a restart within the same millisecond would not show
    s = socket.socket()
    try:
        s.bind((peer, 0))
        s.connect((ours, ports[0]))
        caps = b"\x01\x04\x00\x01\x00\x01" + b"\x41\x04" + struct.pack("!I", 65009)
        opt = b"\x02" + bytes([len(caps)]) + caps
        s.sendall(bgp_raw.msg(1, struct.pack("!BHH4sB", 4, 65009, 90, socket.inet_aton(peer), len(opt)) + opt))
        wait_start(d, r"^Idle +BGP Error: Bad peer AS$")
        # Info comes from the session's loop, Since from the main loop's
        # restart a moment later
        assert poll(lambda: row(d)[1] != first[1], timeout=5), (first, row(d))
        after = row(d)
    finally:
        s.close()
    # the error wait ends without a new run
    assert wait_start(d, r"^Passive +BGP Error: Bad peer AS$")[1] == after[1]


def test_hold_timer_spares_unread_input(start_daemon, ports):
    """A daemon that could not read for longer than the hold time (here
    stopped for 5 s of a 3 s hold time) finds its timer expired and the
    neighbor's keepalives waiting in the socket: as BIRD 2, it gives the
    session ten seconds more and reads them, rather than drop a neighbor
    that kept talking (a loop's run takes its timers before its sockets)."""
    ours, peer = "127.90.6.1", "127.90.6.2"
    d = start_daemon(passive_conf(ours, ports[0], peer, "hold time 3;"))
    wait_start(d, r"^Passive$")
    p = bgp_raw.RawPeer(peer, ours, ports[0], 65002, 65001)
    try:
        assert poll(lambda: row(d)[0] == "up", timeout=10), details(d)

        def talk(seconds):
            end = time.time() + seconds
            while time.time() < end:
                p.send(bgp_raw.msg(4))
                time.sleep(0.5)

        os.kill(d.proc.pid, signal.SIGSTOP)
        try:
            talk(5)
        finally:
            os.kill(d.proc.pid, signal.SIGCONT)
        talk(4)
        assert row(d)[0] == "up", details(d)
        assert "Hold timer expired" not in d.log(), d.log()
    finally:
        p.s.close()
