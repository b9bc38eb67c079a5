"""A minimal BGP speaker for sending hand-made (also malformed) messages.

Only what the tests need: OPEN with 4-byte ASN and IPv4 unicast, KEEPALIVE,
raw UPDATE bodies, and reading NOTIFICATIONs.  Binds to its own 127.x
address; never talks to anything but loopback.
"""

import socket
import struct
import time

MARKER = b"\xff" * 16


def msg(mtype, body=b""):
    return MARKER + struct.pack("!HB", 19 + len(body), mtype) + body


def attr(flags, code, value):
    if len(value) > 255 or flags & 0x10:
        return struct.pack("!BBH", flags | 0x10, code, len(value)) + value
    return struct.pack("!BBB", flags, code, len(value)) + value


def nlri(prefix):
    net, plen = prefix.split("/")
    plen = int(plen)
    b = socket.inet_aton(net)[: (plen + 7) // 8]
    return bytes([plen]) + b


def nlri_prefixes(field):
    """The IPv4 prefixes of an NLRI or withdrawn-routes field, in order."""
    out, i = [], 0
    while i < len(field):
        plen = field[i]
        n = (plen + 7) // 8
        out.append("%s/%d" % (socket.inet_ntoa(field[i + 1:i + 1 + n] + b"\0" * (4 - n)), plen))
        i += 1 + n
    return out


def nlri_paths(field):
    """The (path id, IPv4 prefix) pairs of an ADD-PATH NLRI or withdrawn-routes
    field (RFC 7911 3), in order."""
    out, i = [], 0
    while i < len(field):
        pid = struct.unpack("!I", field[i:i + 4])[0]
        end = i + 5 + (field[i + 4] + 7) // 8
        (prefix,) = nlri_prefixes(field[i + 4:end])
        out.append((pid, prefix))
        i = end
    return out


def as_path(*asns):
    return b"\x02" + bytes([len(asns)]) + b"".join(struct.pack("!I", a) for a in asns)


def update(withdrawn=b"", attrs=b"", nlris=b""):
    return msg(2, struct.pack("!H", len(withdrawn)) + withdrawn + struct.pack("!H", len(attrs)) + attrs + nlris)


def std_attrs(asn, nh="192.0.2.9", origin=0):
    return (attr(0x40, 1, bytes([origin])) + attr(0x40, 2, as_path(asn)) + attr(0x40, 3, socket.inet_aton(nh)))


class RawPeer:
    def __init__(self, local, remote, port, asn, peer_as, router_id=None, rcvbuf=None, caps=b"", sock=None,
                 keepalive=True):
        """Connects from local to remote:port, or speaks on sock, a
        connection the daemon opened to us; keepalive=False stops after
        the daemon's OPEN (OpenConfirm on its side)."""
        self.asn = asn
        self.s = sock
        # The daemon answers its control socket before its BGP listener is
        # up (the protocol starts in its own loop): retry a refused connect,
        # for long enough that a loaded machine (CI, sanitizers) starts it.
        deadline = time.time() + 30
        while not sock:
            self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if rcvbuf:      # before connect: a small window makes a slow reader
                self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            self.s.bind((local, 0))
            self.s.settimeout(10)
            try:
                self.s.connect((remote, port))
                break
            except ConnectionRefusedError:
                self.s.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        caps = (b"\x01\x04\x00\x01\x00\x01"                      # MP ipv4 unicast
                + b"\x41\x04" + struct.pack("!I", asn)           # 4-byte ASN
                + caps)                                           # the caller's, coded
        opt = b"\x02" + bytes([len(caps)]) + caps
        rid = socket.inet_aton(router_id or local)
        self.s.sendall(msg(1, struct.pack("!BHH4sB", 4, asn if asn < 65536 else 23456, 90, rid, len(opt)) + opt))
        self.buf = b""
        t, _ = self.recv()
        assert t == 1, "expected OPEN, got %r" % t
        if not keepalive:
            return
        self.s.sendall(msg(4))
        while True:
            t, _ = self.recv()
            if t == 4:
                break

    def recv(self, timeout=10):
        self.s.settimeout(timeout)
        while True:
            if len(self.buf) >= 19:
                ln = struct.unpack("!H", self.buf[16:18])[0]
                if len(self.buf) >= ln:
                    m, self.buf = self.buf[:ln], self.buf[ln:]
                    return m[18], m[19:]
            chunk = self.s.recv(65536)
            if not chunk:
                return None, b""
            self.buf += chunk

    def send(self, data, timeout=60):
        """timeout: for the whole of data (a flood of megabytes waits for
        the daemon to take in what is ahead of it in the socket; under CI's
        sanitizer builds run side by side that took more than 10 s)."""
        before = self.s.gettimeout()
        self.s.settimeout(timeout)
        try:
            self.s.sendall(data)
        finally:
            self.s.settimeout(before)

    def wait_notification(self, timeout=5):
        """The (code, subcode) of a NOTIFICATION, or None if the session stays up."""
        end = time.time() + timeout
        while time.time() < end:
            try:
                t, body = self.recv(timeout=max(0.1, end - time.time()))
            except socket.timeout:
                return None
            if t is None:
                return ("closed",)
            if t == 3:
                return (body[0], body[1])
        return None

    def close(self):
        self.s.close()
