"""RFC 7606 revised error handling, driven by a raw BGP speaker.

Each malformed UPDATE must get exactly the treatment the RFC gives its class:
treat-as-withdraw (the prefix goes, the session stays), attribute discard
(the route stays without the bad attribute), or session reset with the
right NOTIFICATION. The daemon must stay up and keep every other route.
"""

import re
import socket
import struct

import pytest

from bgp_raw import RawPeer, attr, as_path, nlri, std_attrs, update
from conftest import free_ports, poll, strip_codes

OURS = "127.78.0.1"


def text(d, cmd):
    return "\n".join(strip_codes(d.raw(cmd)))


def has_route(d, prefix):
    return prefix in text(d, "show route %s" % prefix)


@pytest.fixture
def dut(start_daemon):
    port = free_ports(1)[0]
    conf = """router id 10.78.0.1;
protocol device {}
protocol static keep4 { ipv4; route 10.99.0.0/16 blackhole; }
protocol bgp raw {
  local %s port %d as 65001;
  neighbor 127.78.0.2 as 65002;
  passive; multihop; hold time 90;
  ipv4 { import all; export none; };
}
""" % (OURS, port)
    d = start_daemon(conf)
    d.port = port
    return d


def connect(d):
    p = RawPeer("127.78.0.2", OURS, d.port, 65002, 65001)
    assert poll(lambda: "Established" in text(d, "show protocols raw"), timeout=5)
    return p


def announce_ok(p, prefix):
    p.send(update(attrs=std_attrs(65002), nlris=nlri(prefix)))


def test_treat_as_withdraw_classes(dut):
    d = dut
    p = connect(d)
    cases = {
        # RFC 7606 7.1: bad ORIGIN value
        "origin": attr(0x40, 1, b"\x05") + attr(0x40, 2, as_path(65002)) + attr(0x40, 3, socket.inet_aton("192.0.2.9")),
        # 7.2: AS_PATH segment overrun
        "as_path": attr(0x40, 1, b"\x00") + attr(0x40, 2, b"\x02\x05\x00\x00\xfd\xea") + attr(0x40, 3, socket.inet_aton("192.0.2.9")),
        # 7.3 / 3(d): NEXT_HOP missing with NLRI present
        "missing_nh": attr(0x40, 1, b"\x00") + attr(0x40, 2, as_path(65002)),
        # 7.4: MED with a wrong length
        "med": std_attrs(65002) + attr(0x80, 4, b"\x00\x01"),
        # 4: the last attribute overruns the attribute field, the NLRI can still be found
        "attr_len": b"\x40\x01\x09\x00",
    }
    for i, (name, attrs) in enumerate(cases.items()):
        prefix = "10.%d.0.0/16" % (50 + i)
        announce_ok(p, prefix)
        assert poll(lambda: has_route(d, prefix), timeout=5), name
        p.send(update(attrs=attrs, nlris=nlri(prefix)))
        # the prefix is withdrawn, the session stays
        assert poll(lambda: not has_route(d, prefix), timeout=5), (name, text(d, "show route"))
        assert p.wait_notification(timeout=0.3) is None, name
    assert "Established" in text(d, "show protocols raw")
    assert has_route(d, "10.99.0.0/16")


def test_attribute_discard(dut):
    d = dut
    p = connect(d)
    # 7.6: ATOMIC_AGGREGATE with a length -> discarded; 7.7: AGGREGATOR bad length -> discarded;
    # 7.5: LOCAL_PREF from an eBGP peer -> discarded; as BIRD 2, the route then
    # has none (best path counts the default), one that came without gets it
    attrs = (std_attrs(65002) + attr(0x40, 6, b"\x01") + attr(0xc0, 7, b"\x00\x01\x02")
             + attr(0x40, 5, struct.pack("!I", 777)))
    p.send(update(attrs=attrs, nlris=nlri("10.60.0.0/16")))
    assert poll(lambda: has_route(d, "10.60.0.0/16"), timeout=5)
    v = text(d, "show route 10.60.0.0/16 all")
    assert "atomic" not in v and "aggregator" not in v, v
    assert "BGP.local_pref" not in v, v
    announce_ok(p, "10.62.0.0/16")
    assert poll(lambda: has_route(d, "10.62.0.0/16"), timeout=5)
    assert "BGP.local_pref: 100" in text(d, "show route 10.62.0.0/16 all")
    assert p.wait_notification(timeout=0.3) is None


def test_unknown_optional_transitive_kept(dut):
    d = dut
    p = connect(d)
    p.send(update(attrs=std_attrs(65002) + attr(0xc0, 0xf0, b"\xde\xad"), nlris=nlri("10.61.0.0/16")))
    assert poll(lambda: has_route(d, "10.61.0.0/16"), timeout=5)
    assert "BGP.f0 [t]: de ad" in text(d, "show route 10.61.0.0/16 all")


@pytest.mark.parametrize("name,data,code", [
    # 5.3: NLRI prefix length beyond 32 -> session reset, Invalid Network Field
    ("nlri_len", update(attrs=std_attrs(65002), nlris=b"\x21\x0a\x00\x00\x00\x00"), (3, 10)),
    # header: bad length
    ("header", b"\xff" * 16 + b"\x00\x05\x02", (1, 2)),
    # duplicate MP_REACH (3 g): session reset
    ("dup_mp", update(attrs=std_attrs(65002) + attr(0x80, 14, b"\x00\x01\x01\x04\xc0\x00\x02\x09\x00\x10\x0a\x3e")
                       + attr(0x80, 14, b"\x00\x01\x01\x04\xc0\x00\x02\x09\x00\x10\x0a\x3f")), (3, 1)),
])
def test_session_reset_classes(dut, name, data, code):
    d = dut
    p = connect(d)
    announce_ok(p, "10.62.0.0/16")
    assert poll(lambda: has_route(d, "10.62.0.0/16"), timeout=5)
    p.send(data)
    assert p.wait_notification(timeout=5) == code, name
    # the session went down and took its routes; nothing else was lost
    assert poll(lambda: not has_route(d, "10.62.0.0/16"), timeout=5)
    assert has_route(d, "10.99.0.0/16")
    assert re.search(r"raw\s+BGP", text(d, "show protocols"))



def test_collision_loser_does_not_speak_for_the_session(start_daemon):
    """The session is up on the connection we opened; the peer's own
    connection (a collision's loser) gets our OPEN and answers with a
    NOTIFICATION. That closes it alone: the session stays, and its last
    error is not the loser's."""
    ports = free_ports(2)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.78.0.2", ports[1]))
    listener.listen(1)
    listener.settimeout(30)
    d = start_daemon("""router id 10.78.0.1;
protocol bgp raw {
  local %s port %d as 65001;
  neighbor 127.78.0.2 port %d as 65002;
  multihop; hold time 90;
  ipv4 { import all; export none; };
}
""" % (OURS, ports[0], ports[1]))
    conn, _ = listener.accept()
    listener.close()
    p = RawPeer("127.78.0.2", OURS, ports[0], 65002, 65001, sock=conn)
    announce_ok(p, "10.63.0.0/16")
    assert poll(lambda: has_route(d, "10.63.0.0/16"), timeout=5)

    s = socket.create_connection((OURS, ports[0]), timeout=10, source_address=("127.78.0.2", 0))
    assert s.recv(19)[18] == 1          # our OPEN's header
    s.sendall(b"\xff" * 16 + struct.pack("!HBBB", 21, 3, 6, 7))   # Cease, collision resolution
    try:
        while s.recv(4096):             # until the daemon has read it and closed
            pass
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    out = text(d, "show protocols all raw")
    assert "Established" in out and "Connection collision" not in out, out
    assert has_route(d, "10.63.0.0/16")
    p.close()
