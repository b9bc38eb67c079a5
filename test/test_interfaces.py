"""`show interfaces [summary]` as BIRD 2 prints them, for what every machine has: the
loopback interface, and the index of each interface (the kernel's)."""

import re
import socket

from conftest import strip_codes

# a static `dev` route names the loopback interface: its index must stay the kernel's
CONF = """\
router id 10.0.0.1;
protocol device {}
protocol static s4 { ipv4; route 10.5.0.0/24 via "lo"; }
"""


def interfaces(d):
    """{name: (state, index, flags line, [address lines])}"""
    out, cur = {}, None
    for text in strip_codes(d.raw("show interfaces")):
        m = re.match(r"^(\S+) (up|down) \(index=(\d+)\)$", text)
        if m:
            cur = m.group(1)
            out[cur] = [m.group(2), int(m.group(3)), None, []]
        elif text.startswith("\t") and out[cur][2] is None:
            out[cur][2] = text[1:]
        elif text.startswith("\t"):
            out[cur][3].append(text[1:])
    return out


def test_loopback(start_daemon):
    d = start_daemon(CONF)
    d.wait_up(["device1", "s4"])
    ifs = interfaces(d)
    state, index, flags, addrs = ifs["lo"]
    assert state == "up"
    assert index == socket.if_nametoindex("lo")
    # BIRD 2: loopback is multi-access, and ignored (no neighbors on it)
    assert re.fullmatch(r"MultiAccess AdminUp LinkUp Loopback Ignored MTU=\d+", flags), flags
    assert "127.0.0.1/8 (Preferred, scope host)" in addrs, addrs
    for a in addrs:
        if a.startswith("::1/128"):
            assert a == "::1/128 (Preferred, scope host)"


def test_indexes_are_the_kernels(start_daemon):
    d = start_daemon(CONF)
    d.wait_up(["device1", "s4"])
    ifs = interfaces(d)
    assert ifs
    for name, (_, index, flags, _) in ifs.items():
        assert index == socket.if_nametoindex(name), name
        # BIRD 2: a broadcast interface is always listed as multicast too
        if " Broadcast" in flags:
            assert flags.startswith("MultiAccess Broadcast Multicast "), (name, flags)
