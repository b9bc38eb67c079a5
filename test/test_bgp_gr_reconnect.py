"""A restarted neighbor connects while its old session still looks Established to us.

A router that reboots or crashes without the network noticing leaves its TCP session
open on our side: no FIN, no reset, only silence until our hold timer expires.  BIRD 2
(RFC 4724 4.2) takes the new connection of a neighbor with which graceful restart was
negotiated as the sign of its restart: the old session closes with the routes kept
stale and the new one proceeds.  Without graceful restart the usual rules apply and
the old session stands until its hold timer.

The peer is a BIRD 2 daemon killed with SIGKILL; the test holds a duplicate of the
peer's session socket (pidfd_getfd), so the kernel does not close the connection when
the process dies and our side sees only silence, as after a crash.
"""

import ctypes
import os
import socket
import time

import pytest

from conftest import poll
import test_bgp
from test_bgp import established, peers, ports, reply_text  # noqa: F401 (fixtures)
from test_bgp_gr import details, has, restart, since
from bgp_raw import RawPeer, msg

OURS, PEER = "127.90.1.1", "127.90.1.2"
SYS_PIDFD_GETFD = 438
HOLD = 60


def ours_conf(port, peer_port, opts=""):
    return test_bgp.ours_conf(port, [("b2", PEER, peer_port, 65002)], ours=OURS, router_id="10.90.1.1",
                              statics="route 10.90.100.0/24 blackhole;",
                              bgp_opts="hold time %d; %s" % (HOLD, opts))


def peer_conf(port, our_port, statics, opts=""):
    return test_bgp.peer_conf(PEER, port, 65002, our_port, statics, "hold time %d; %s" % (HOLD, opts),
                              ours=OURS, log=True)


TWO = "route 10.90.1.0/24 blackhole; route 10.90.2.0/24 blackhole;"
ONE = "route 10.90.1.0/24 blackhole;"
GR = "graceful restart on; graceful restart time 30;"


def hold_sessions(pid):
    """Duplicates of the TCP connections of process pid: they outlive the process."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    held = []
    try:
        for name in os.listdir("/proc/%d/fd" % pid):
            try:
                if not os.readlink("/proc/%d/fd/%s" % (pid, name)).startswith("socket:"):
                    continue
            except FileNotFoundError:
                continue
            fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, int(name), 0)
            if fd < 0:
                pytest.skip("pidfd_getfd: %s" % os.strerror(ctypes.get_errno()))
            s = socket.socket(fileno=fd)
            try:
                if s.family in (socket.AF_INET, socket.AF_INET6) and s.type == socket.SOCK_STREAM:
                    s.getpeername()         # listening sockets: ENOTCONN
                    held.append(s)
                    continue
            except OSError:
                pass
            s.close()
    finally:
        os.close(pidfd)
    assert held, "no TCP session found in process %d" % pid
    return held


def silent_crash(peer):
    """SIGKILL, but its sessions stay open: the process is gone, the network does not know."""
    held = hold_sessions(peer.proc.pid)
    peer.kill()
    return held


@pytest.mark.parametrize("opened_by", ["us", "peer"])
def test_gr_peer_reconnects_over_live_session(start_daemon, peers, ports, opened_by):
    """The old session on the connection we opened (the new one proceeds beside it and
    ends it at its KEEPALIVE) or on the one the peer opened (ended when the new comes)."""
    p = peers("b2", peer_conf(ports[1], ports[0], TWO, GR + (" passive;" if opened_by == "us" else "")))
    d = start_daemon(ours_conf(ports[0], ports[1], "passive;" if opened_by == "peer" else ""))
    assert poll(established(d, "b2"), timeout=15), details(d, "b2")
    assert poll(lambda: has(d, "10.90.1.0/24") and has(d, "10.90.2.0/24"), timeout=10)
    t1 = since(d, "10.90.1.0/24")

    held = silent_crash(p)
    if opened_by == "us":
        # a connection from the peer's address that never sends its OPEN holds nothing back
        held.append(socket.create_connection((OURS, ports[0]), timeout=10, source_address=(PEER, 0)))
    try:
        time.sleep(1)
        assert poll(established(d, "b2"))       # we do not know yet
        start = time.monotonic()
        restart(p, peer_conf(ports[1], ports[0], ONE, GR))
        assert poll(established(p, "dut"), timeout=15), details(d, "b2")
        assert time.monotonic() - start < HOLD / 4, details(d, "b2")
        assert poll(established(d, "b2"), timeout=5), details(d, "b2")
        # stale meanwhile, then what the peer no longer has goes at its End-of-RIB
        assert poll(lambda: not has(d, "10.90.2.0/24"), timeout=15), reply_text(d.raw("show route"))
        assert poll(lambda: "graceful restart active" not in details(d, "b2"), timeout=5), details(d, "b2")
        assert has(d, "10.90.1.0/24")
        assert since(d, "10.90.1.0/24") == t1       # kept through the restart, never withdrawn
        assert poll(lambda: has(p, "10.90.100.0/24"), timeout=10)
    finally:
        for s in held:
            s.close()


def test_peer_without_gr_loses_collision(start_daemon, peers, ports):
    """No graceful restart: the session we opened stands (until our hold timer), the new
    connection loses the collision (Cease, Connection collision resolution) at its OPEN."""
    p = peers("b2", peer_conf(ports[1], ports[0], TWO, "passive;"))
    d = start_daemon(ours_conf(ports[0], ports[1]))
    assert poll(established(d, "b2"), timeout=15), details(d, "b2")
    assert poll(lambda: has(d, "10.90.2.0/24"), timeout=10)
    up = d.protocols()["b2"][3]

    held = silent_crash(p)
    try:
        restart(p, peer_conf(ports[1], ports[0], ONE))
        assert poll(lambda: "Received: Connection collision resolution" in details(p, "dut"), timeout=15), \
            details(p, "dut")
        assert established(d, "b2")()
        assert d.protocols()["b2"][3] == up
        assert has(d, "10.90.2.0/24")
    finally:
        for s in held:
            s.close()


@pytest.mark.parametrize("closed_at", ["connect", "open"])
def test_gr_collision_is_not_a_restart(start_daemon, peers, ports, closed_at):
    """A simultaneous open that ends late: the neighbor's own connection reaches us after the
    session on ours is up, and the neighbor closes it (with a Cease, Connection collision
    resolution, once our OPEN came).  That is no restart: the session and its routes stand."""
    p = peers("b2", peer_conf(ports[1], ports[0], TWO, GR + " passive;"))
    d = start_daemon(ours_conf(ports[0], ports[1]))
    assert poll(established(d, "b2"), timeout=15), details(d, "b2")
    assert poll(lambda: has(d, "10.90.1.0/24") and has(d, "10.90.2.0/24"), timeout=10)
    up, t1 = d.protocols()["b2"][3], since(d, "10.90.1.0/24")

    if closed_at == "open":
        # OPEN with GR (30 s, ipv4 unicast, F), our OPEN back, then the Cease
        r = RawPeer(PEER, OURS, ports[0], 65002, 65001, caps=b"\x40\x06\x00\x1e\x00\x01\x01\x80",
                    keepalive=False)
        time.sleep(0.3)                            # our KEEPALIVE may follow: no matter
        r.send(msg(3, b"\x06\x07"))
        r.close()
    else:
        socket.create_connection((OURS, ports[0]), timeout=10, source_address=(PEER, 0)).close()
    time.sleep(1)
    assert established(d, "b2")(), details(d, "b2")
    assert d.protocols()["b2"][3] == up
    assert "graceful restart active" not in details(d, "b2")
    assert since(d, "10.90.1.0/24") == t1
    assert established(p, "dut")()
