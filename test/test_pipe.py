"""Pipes between tables (the same test checks BIRD 2 as the reference)."""

import re

from conftest import poll, strip_codes

CONF = """router id 10.0.0.1;
ipv4 table t2;
ipv4 table t3;
protocol static s1 { ipv4; route 10.1.0.0/16 blackhole; route 10.2.0.0/16 blackhole; }
protocol static s2 { ipv4 { table t2; }; route 10.3.0.0/16 blackhole; route 10.1.0.0/16 unreachable; }
protocol pipe p12 { table master4; peer table t2; import all; export all; }
protocol pipe p23 { table t2; peer table t3; export all; import none; }
"""


def counts(d):
    out = {}
    for line in strip_codes(d.raw("show route table all count")):
        m = re.match(r"(\d+) of \d+ routes for (\d+) networks in table (\S+)", line)
        if m:
            out[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return out


def test_pipes(start_daemon):
    d = start_daemon(CONF)
    # pipes carry every route, not only the best: both routes of 10.1/16 reach t3
    want = {"master4": (4, 3), "master6": (0, 0), "t2": (4, 3), "t3": (4, 3)}
    assert poll(lambda: counts(d) == want, timeout=5), counts(d)
    # piped routes keep their origin protocol
    t = "\n".join(strip_codes(d.raw("show route 10.1.0.0/16 table t3")))
    assert "[s1 " in t and "[s2 " in t, t
    # withdrawals follow through both pipes
    assert d.raw("disable s1").startswith(b"0009-")
    want = {"master4": (2, 2), "master6": (0, 0), "t2": (2, 2), "t3": (2, 2)}
    assert poll(lambda: counts(d) == want, timeout=5), counts(d)
    assert d.raw("enable s1").startswith(b"0011-")
    want = {"master4": (4, 3), "master6": (0, 0), "t2": (4, 3), "t3": (4, 3)}
    assert poll(lambda: counts(d) == want, timeout=5), counts(d)
