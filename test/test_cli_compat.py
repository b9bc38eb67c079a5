"""Commands of BIRD 2's `birdc` help list, answered as BIRD 2.0.12 answers them: `debug`,
`mrtdump`, the `dump` family, `echo`, and the `show` commands of protocols this daemon
does not have (OSPF, RIP, Babel, BFD) when none runs."""

import pytest

from conftest import read_reply

# (command, reply) on BASIC_CONF (device1, s4 ipv4, s6 ipv6)
REPLIES = [
    ("debug s4 all", b"0000 \n"),
    ("debug s4 off", b"0000 \n"),
    ("debug s4 { states, routes }", b"0000 \n"),
    ("debug all { states }", b"0000 \n"),
    ('debug "s*" all', b"0000 \n"),
    ("debug s4.ipv4 all", b"0000 \n"),
    ("debug s4.ipv6 all", b"9001 Channel s4.ipv6 not found\n"),
    ('debug "zz*" all', b"8003 No protocols match\n"),
    ("debug master4 all", b"9001 Protocol name required\n"),
    ("debug nope all", b"9001 syntax error, unexpected CF_SYM_UNDEFINED, expecting CF_SYM_KNOWN or TEXT or ALL\n"),
    ("mrtdump s4 all", b"0000 \n"),
    ("mrtdump all off", b"0000 \n"),
    ('mrtdump "s*" { states, messages }', b"0000 \n"),
    ('mrtdump "zz*" all', b"8003 No protocols match\n"),
    ("dump sockets", b"0000 \n"),
    ("dump events", b"0000 \n"),
    ("dump interfaces", b"0000 \n"),
    ("dump neighbors", b"0000 \n"),
    ("dump attributes", b"0000 \n"),
    ("dump filter all", b"0000 \n"),
    ("dump filter", b"9001 syntax error, unexpected END, expecting ALL\n"),
    ("show ospf", b"9001 There is no OSPF protocol running\n"),
    ("show ospf s4", b"9001 s4: Not a OSPF protocol\n"),
    ("show ospf master4", b"9001 Protocol name required\n"),
    ('show ospf neighbors "eth0"', b"9001 There is no OSPF protocol running\n"),
    ('show ospf interface s4 "eth0"', b"9001 s4: Not a OSPF protocol\n"),
    ("show ospf topology all", b"9001 There is no OSPF protocol running\n"),
    ("show ospf state s4", b"9001 s4: Not a OSPF protocol\n"),
    ("show ospf lsadb", b"9001 There is no OSPF protocol running\n"),
    ('show rip interfaces "eth0"', b"9001 There is no RIP protocol running\n"),
    ("show rip neighbors s4", b"9001 s4: Not a RIP protocol\n"),
    ("show rip", b"9001 syntax error, unexpected END, expecting INTERFACES or NEIGHBORS\n"),
    ("show babel interfaces", b"9001 There is no Babel protocol running\n"),
    ("show babel entries s4", b"9001 s4: Not a Babel protocol\n"),
    ("show babel routes", b"9001 There is no Babel protocol running\n"),
    ("show bfd sessions", b"9001 There is no BFD protocol running\n"),
    ("show bfd sessions s6", b"9001 s6: Not a BFD protocol\n"),
    ("show bfd", b"9001 syntax error, unexpected END, expecting SESSIONS\n"),
    ("show bfd sessions nope", b"9001 syntax error, unexpected CF_SYM_UNDEFINED, expecting END or CF_SYM_KNOWN\n"),
    ("show ospf nope", b"9001 syntax error, unexpected CF_SYM_UNDEFINED\n"),
]


@pytest.mark.parametrize("cmd,reply", REPLIES, ids=[c for c, _ in REPLIES])
def test_reply(daemon, cmd, reply):
    assert daemon.raw(cmd) == reply


def test_restricted(daemon):
    # dump is not restricted in BIRD 2
    replies = daemon.raw_many(["restrict", "debug s4 all", "mrtdump all off", "dump interfaces",
                               "show ospf"])
    assert replies == [b"0016 Access restricted\n", b"8007 Access denied\n", b"8007 Access denied\n",
                       b"0000 \n", b"9001 There is no OSPF protocol running\n"]


def test_debug_then_restart(daemon):
    # the state trace on (a TRACE log line per change), then a restart goes through
    assert daemon.raw("debug s4 { states }") == b"0000 \n"
    assert daemon.raw("restart s4") == b"0012-s4: restarted\n0000 \n"
    daemon.wait_up(["s4"])


ECHO_REPLIES = [
    ("echo all", b"0000 \n"),
    ("echo off", b"0000 \n"),
    ("echo { info, warning }", b"0000 \n"),
    ("echo all 256", b"0000 \n"),
    ("echo all 65536", b"0000 \n"),
    ("echo all 255", b"9001 Invalid log buffer size\n"),
    ("echo all 65537", b"9001 Invalid log buffer size\n"),
]


@pytest.mark.parametrize("cmd,reply", ECHO_REPLIES, ids=[c for c, _ in ECHO_REPLIES])
def test_echo_reply(daemon, cmd, reply):
    assert daemon.raw(cmd) == reply


def read_until(s, buf, want):
    s.settimeout(5)
    while want not in buf:
        chunk = s.recv(4096)
        assert chunk, buf
        buf += chunk
    return buf


def test_echo_log_lines(daemon):
    # log lines of the chosen classes come as "+text" lines after the reply; a restricted
    # session may ask for them too
    s = daemon.connect()
    try:
        _, rest = read_reply(s)
        s.sendall(b"restrict\necho { info }\nconfigure status\n")
        for want in (b"0016 Access restricted\n", b"0000 \n", b"0003-Daemon is up and running\n0000 \n"):
            reply, rest = read_reply(s, rest)
            assert reply == want
        # another session reconfigures; this one sees what is logged
        assert daemon.raw("configure").endswith(b"0003 Reconfigured\n")
        rest = read_until(s, rest, b"+Reconfigured\n")
        assert rest == b"+Reconfiguring\n+Reconfigured\n"
        s.sendall(b"echo off\n")
        reply, rest = read_reply(s, b"")
        assert reply == b"0000 \n"
        assert daemon.raw("configure").endswith(b"0003 Reconfigured\n")
        s.sendall(b"configure status\n")
        reply, rest = read_reply(s, b"")
        assert reply == b"0003-Daemon is up and running\n0000 \n" and rest == b""
    finally:
        s.close()


def test_echo_protocol_commands(daemon):
    # BIRD 2 logs each of them (seen here through echo); the lines come after the reply
    s = daemon.connect()
    try:
        _, rest = read_reply(s)
        s.sendall(b"echo { info }\n")
        reply, rest = read_reply(s, rest)
        assert reply == b"0000 \n"
        for cmd, answer, logged in (("disable s6", b"0009-s6: disabled\n0000 \n", b"+Disabling protocol s6\n"),
                                    ("enable s6", b"0011-s6: enabled\n0000 \n", b"+Enabling protocol s6\n"),
                                    ("restart s6", b"0012-s6: restarted\n0000 \n", b"+Restarting protocol s6\n")):
            s.sendall(cmd.encode() + b"\n")
            reply, rest = read_reply(s, rest)
            assert reply == answer
            rest = read_until(s, rest, logged)
            rest = rest[rest.index(logged) + len(logged):]
    finally:
        s.close()
