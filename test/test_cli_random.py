"""Random commands on the control socket: every one gets a framed reply
(a final `DDDD ` line), the daemon never dies, and the routes are all still
there afterwards. Under the ASan build this doubles as a memory check of the
CLI grammar, `eval`, `show route` filters and the protocol commands.

Commands start with a real command and go on with random words of the CLI
and the filter language, so most of them get past the first keyword. The
seed is printed; CLI_RANDOM_SEED repeats a run, CLI_RANDOM_SECONDS makes it
longer. Addresses 127.97.x.y. Passes against BIRD 2 too, without a bare
`help`: BIRD 2's server never answers that one (birdc handles it itself);
ours replies 9001.
"""

import os
import random
import time

from conftest import free_ports, random_seed, strip_codes

CONF = """router id 10.97.0.1;
ipv4 table t2;
roa4 table r4;
define X = 5;
filter f1 { if net ~ [10.0.0.0/8+] then accept; reject; }
function fn(int a) { return a + 1; }
protocol device {}
protocol static s4 { ipv4; route 10.1.0.0/16 blackhole; route 10.2.0.0/16 unreachable { bgp_med = 5; }; }
protocol static s6 { ipv6; route 2001:db8::/32 blackhole; }
protocol static sr { roa4 { table r4; }; route 10.0.0.0/8 max 24 as 65001; }
protocol pipe pp { table master4; peer table t2; import all; export filter f1; }
protocol bgp b1 { local 127.97.0.1 port %d as 65001; neighbor 127.97.0.2 as 65002; multihop;
  ipv4 { import all; export all; import table on; }; }
"""

HEADS = ["show route", "show route table master4", "show route all", "show route count", "show route for",
         "show route where", "show route filter", "show route export b1", "show route protocol",
         "show route table t2", "show route in", "show route table r4", "show route table all count",
         "show route stats", "show route where net ~", "show route filter {", "show route noexport b1",
         "show protocols all", "show protocols", "show symbols", "show memory", "show interfaces",
         "show status", "eval", "eval fn(", "eval [", "configure check", "configure check \"/nonexistent\"",
         "configure \"/nonexistent\"", "configure soft \"/nonexistent\"", "configure confirm",
         "configure undo", "reload", "reload in", "reload out", "restart", "enable", "disable", "debug",
         "echo", "mrtdump", "dump"]
# Protocol state commands alone, on the protocols or patterns of them: runs
# start and stop back to back, many within a millisecond.
STATE_HEADS = ["reload", "reload in", "reload out", "restart", "enable", "disable", "configure undo",
               "show route count"]
STATE_WORDS = ["s4", "s6", "sr", "pp", "b1", "all", "\"s*\""]
WORDS = ("route protocols protocol all count table stats for where filter export noexport exported preexport "
         "filtered primary in first net tables symbols memory status static bgp b1 s4 s6 sr pp master4 t2 r4 "
         "eval check soft confirm undo timeout reload out restart enable disable debug down graceful "
         "limit import next hop 10.1.0.0/16 10.0.0.0/8 2001:db8::/32 10.1.2.3 \"x\" \"*\" * 1 0 -1 "
         "99999999999 ( ) [ ] { } = == ~ + - , ; . .. net bgp_path bgp_med f1 fn X fn(1) roa_check "
         "(1,2) [1..5] states routes filters events packets off on none").split()
# What CONF's statics and the pipe put in the tables once all have started
# (f1 passes both ipv4 statics on to t2).
SETTLED = ["2 of 2 routes for 2 networks in table master4", "1 of 1 routes for 1 networks in table master6",
           "2 of 2 routes for 2 networks in table t2", "1 of 1 routes for 1 networks in table r4",
           "Total: 6 of 6 routes for 6 networks in 4 tables"]
# Stopping the daemon is a valid answer, not one this test can go on after.
STOPS = ("down", "graceful")


def command(rng, heads=HEADS, words=WORDS, most=6):
    words = [rng.choice(heads)] + [rng.choice(words) for _ in range(rng.randint(0, most))]
    if rng.random() < 0.1:
        junk = "".join(chr(rng.randint(33, 126)) for _ in range(rng.randint(1, 20)))
        words.insert(rng.randint(1, len(words)), junk)
    return " ".join(words)


def run_random(start_daemon, make_command):
    """Batches of make_command(rng) for CLI_RANDOM_SECONDS; then every
    protocol enabled again has its routes back, and (at teardown) the
    daemon stops on SIGTERM."""
    seed = random_seed("CLI_RANDOM_SEED")
    seconds = float(os.environ.get("CLI_RANDOM_SECONDS", 10))
    rng = random.Random(seed)
    d = start_daemon(CONF % free_ports(1)[0])
    # The statics announce one route at a time: a count taken at once may see
    # half of them (it did under ASan in CI).
    settled = lambda reply: strip_codes(reply) == SETTLED
    before = d.poll_raw("show route table all count", settled, timeout=10)
    sent = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        batch = [c for c in (make_command(rng) for _ in range(50)) if c.split()[0] not in STOPS]
        # raw_many fails on a connection closed or a reply without its final line
        replies = d.raw_many(batch)
        assert len(replies) == len(batch)
        sent += len(batch)
        assert d.proc.poll() is None, "daemon died in the batch ending %r" % batch[-3:]
    # Whatever was disabled or restarted comes back; nothing was lost.
    for name in ("s4", "s6", "sr", "pp"):
        d.raw("enable %s" % name)
    d.poll_raw("show route table all count", settled, timeout=10)
    assert strip_codes(d.raw("show route table all count")) == strip_codes(before)
    print("%d commands" % sent)


def test_random_commands_get_replies(start_daemon):
    run_random(start_daemon, command)


def test_random_state_commands(start_daemon):
    """Found a protocol left in `stop` for good (a stop sent to a loop on its
    way out stayed pending into the next run, so shutdown hung) and a second
    Down notice stopping a loop twice."""
    run_random(start_daemon, lambda rng: command(rng, STATE_HEADS, STATE_WORDS, 1))
