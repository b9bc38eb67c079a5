"""AS_SETs in received AS paths, as BIRD 2 takes them: shown in `show
route` with no origin AS (`[i]`, the path's last segment is a set), and
with `allow as sets off` the route is treated as withdrawn (RFC 7606 style,
the session stays). A raw peer sends the UPDATE. Passes against BIRD 2 too.
Addresses 127.103.x.y.
"""

import socket
import struct

import pytest

from bgp_raw import RawPeer, attr, msg, nlri, update
from conftest import free_ports, poll, strip_codes

OURS, PEER = "127.103.0.1", "127.103.0.2"


def path_with_set():
    return (b"\x02\x01" + struct.pack("!I", 65002)                 # AS_SEQUENCE 65002
            + b"\x01\x02" + struct.pack("!II", 65010, 65011))      # AS_SET {65010 65011}


@pytest.mark.parametrize("opt", ["", "allow as sets on;", "allow as sets off;"])
def test_as_set_in_path(start_daemon, opt):
    port = free_ports(1)[0]
    d = start_daemon("""router id 10.103.0.1;
log stderr all;
protocol device {}
protocol static local4 { ipv4; route 10.103.99.0/24 blackhole; }
protocol bgp raw { local %s port %d as 65001; neighbor %s as 65002; passive; multihop; %s
  ipv4 { import all; export none; }; }
""" % (OURS, port, PEER, opt))
    r = RawPeer(PEER, OURS, port, 65002, 65001)
    attrs = attr(0x40, 1, b"\x00") + attr(0x40, 2, path_with_set()) + attr(0x40, 3, socket.inet_aton("192.0.2.9"))
    r.send(update(attrs=attrs, nlris=nlri("10.103.1.0/24")))
    # a sentinel without sets, after it on the same session
    plain = attr(0x40, 1, b"\x00") + attr(0x40, 2, b"\x02\x01" + struct.pack("!I", 65002)) + \
        attr(0x40, 3, socket.inet_aton("192.0.2.9"))
    r.send(update(attrs=plain, nlris=nlri("10.103.2.0/24")))
    r.send(msg(4))
    assert poll(lambda: "10.103.2.0/24" in "\n".join(strip_codes(d.raw("show route"))), timeout=10)
    text = "\n".join(strip_codes(d.raw("show route 10.103.1.0/24 all")))
    if opt == "allow as sets off;":
        assert "10.103.1.0/24" not in text, text
        assert "raw: Malformed AS_PATH attribute - AS_SET segment (1) at 6" in d.log()
    else:
        assert "BGP.as_path: 65002 {65010 65011}" in text, text
        assert "* (100) [i]" in text, text          # no single origin AS
    assert r.wait_notification(0.5) is None        # the session stays
    assert "10.103.99.0/24" in "\n".join(strip_codes(d.raw("show route")))
    r.close()
