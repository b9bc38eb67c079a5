"""Commands of BIRD 2's `birdc` help list that change little or nothing here, answered as
BIRD 2.0.12 answers them: `debug`, `mrtdump`, the `dump` family, and the `show` commands
of protocols this daemon does not have (OSPF, RIP, Babel, BFD) when none runs."""

import pytest

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
