"""Random `show route` commands, ours and Debian's BIRD 2 side by side on
one config of tables, pipes, statics, a ROA table and a disabled BGP
session (nothing listens): the same replies, line for line
(the times left out, the lines of each table in any order: nets come in
hash order).

Commands are the words of `show route` (tables, export modes, protocol,
prefix, `for`, `in`, filters, `all`, `primary`, `count`, `stats`) picked
at random and shuffled, so options meet in every order, where BIRD 2's
grammar makes the order matter. Left out on purpose: `count` and `stats`
with a single net, where we print the counts as BIRD 3 does
(`../shared/reference/bird-compat.md`). SHOW_ROUTE_RANDOM_SEED repeats a
run, SHOW_ROUTE_RANDOM_COUNT makes it longer. No sockets but the control
sockets.
"""

import os
import random
import re

from conftest import poll, random_seed, start_beside_bird2

CONF = """router id 10.0.0.1;
ipv4 table t1;
ipv4 table t2 sorted;
ipv6 table t6;
protocol static s1 { ipv4 { preference 150; }; route 10.1.0.0/16 blackhole; route 10.1.1.0/24 unreachable;
  route 10.2.0.0/16 prohibit; route 10.0.0.0/8 blackhole; }
protocol static s2 { ipv4 { table t1; }; route 10.1.0.0/16 blackhole; route 10.3.0.0/24 blackhole { bgp_med = 5; };
  route 10.4.0.0/24 unreachable; }
protocol static s3 { ipv6 { table t6; }; route 2001:db8::/32 blackhole; route 2001:db8:1::/48 unreachable; }
protocol static s4 { disabled; ipv4 { table t2; }; route 10.5.0.0/16 blackhole; }
protocol pipe p1 { table master4; peer table t1; import all; export where net.len = 16; }
protocol pipe p2 { table t1; peer table t2; import none; export all; }
roa4 table r4;
protocol static sr { roa4 { table r4; }; route 10.0.0.0/8 max 24 as 65001; route 10.1.0.0/16 max 16 as 65002; }
protocol bgp b1 { disabled; local 127.93.0.1 as 65001; neighbor 127.93.0.2 as 65002;
  ipv4 { import table on; import all; export where net.len = 16; }; }
"""

WORDS = [["", "table t1", "table t2", "table all", "table t6", "table master4", "table master6", "table r4",
          "import table b1.ipv4", "export table b1.ipv4"],
         ["", "all", "count", "stats", "primary", "filtered"],
         ["", "protocol s1", "protocol p1", "protocol s3", "export p1", "noexport p1", "exported p2",
          "preexport p1", "export s4", "export b1", "protocol sr", "noexport b1"],
         ["", "for 10.1.1.1", "10.1.0.0/16", "in 10.0.0.0/8", "for 2001:db8:1::1", "10.9.0.0/16",
          "where net.len = 24", "filter { accept; }", "where bgp_med = 5"]]
TIME_RE = re.compile(r"(\[\S+) [0-9:.]+")


def normal(reply):
    """The lines without their codes and times, sorted within each table;
    the last line (the reply's end) as it is."""
    lines = reply.decode().split("\n")[:-1]
    body = [TIME_RE.sub(r"\1", x[5:] if re.match(r"^\d{4}-", x) else x[1:] if x.startswith(" ") else x)
            for x in lines[:-1]]
    out, cur = [], []
    for x in body:
        if x.startswith("Table "):
            out.append(sorted(cur))
            cur = [x]
        else:
            cur.append(x)
    out.append(sorted(cur))
    return out, lines[-1] if lines else ""


def test_random_show_route_matches_bird2(start_daemon, ours_only):
    seed = random_seed("SHOW_ROUTE_RANDOM_SEED")
    count = int(os.environ.get("SHOW_ROUTE_RANDOM_COUNT", "400"))
    rnd = random.Random(seed)
    ours, ref = start_beside_bird2(start_daemon, CONF)
    settled = "show route table all count"
    assert poll(lambda: normal(ours.raw(settled)) == normal(ref.raw(settled)), timeout=5), \
        (ours.raw(settled), ref.raw(settled))
    differ, compared = [], 0
    for _ in range(count):
        words = [rnd.choice(w) for w in WORDS]
        rnd.shuffle(words)
        cmd = " ".join(["show route"] + [w for w in words if w])
        if re.search(r"\b(count|stats)\b", cmd) and re.search(r"\bfor |\d/\d+(?!\S)", cmd) and " in " not in cmd:
            continue
        a, b = ours.raw(cmd), ref.raw(cmd)
        compared += 1
        if normal(a) != normal(b):
            differ.append("%s\n  ours:   %r\n  BIRD 2: %r" % (cmd, a[:300], b[:300]))
    assert not differ, "seed %d: %d differ:\n%s" % (seed, len(differ), "\n".join(differ[:10]))
    assert compared > count // 2, compared
