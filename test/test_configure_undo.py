"""`configure` requests as BIRD 2 answers them: undo, confirm, the undo timeout, status,
and a configure while another is still in progress (queued).

The replies were captured from BIRD 2.0.12. What BIRD 2 does, and we do too:
- the config running before the last configure can be undone once, after any configure
  (with or without a timeout); `configure confirm` only stops the undo timer;
- a `configure` that fails to read its file has already forgotten what it could undo
  (`configure check` keeps it);
- the timer undoes by itself and tells the session that set it with a `+` line;
- while a reconfiguration is in progress (protocols still going down) a new one is
  queued, a newer one replaces it, and an undo removes it.
"""


from conftest import poll, read_reply

BASE = """\
router id 10.0.0.1;
protocol device {}
protocol static s4 { ipv4; route %s blackhole; }
"""
NET1, NET2, NET3 = "10.1.0.0/16", "10.2.0.0/16", "10.3.0.0/16"
UNDO_NOTHING = b"0021-Undo requested\n0019 Nothing to do\n"
UNDO_DONE = b"0021-Undo requested\n0003 Reconfigured\n"
IDLE = b"0003-Daemon is up and running\n0000 \n"


def started(start_daemon):
    d = start_daemon(BASE % NET1)
    for i, net in ((2, NET2), (3, NET3)):
        d.write_file("d%d.conf" % i, BASE % net)
    d.write_file("bad.conf", "router id 10.0.0.1;\nfoo bar;\n")
    d.wait_up(["s4"])
    assert poll(lambda: routes(d) == [NET1])
    return d


def routes(d):
    reply = d.raw("show route").decode()
    return [line.split()[0] for line in reply.split("\n")[1:] if line.startswith(" 10.")]


def reading(path):
    return b"0002-Reading configuration from %s\n" % path.encode()


def configure(d, name, extra=""):
    return d.raw('configure "%s"%s' % (d.path(name), extra))


def test_nothing_to_undo_or_confirm_at_start(start_daemon):
    d = started(start_daemon)
    assert d.raw("configure undo") == UNDO_NOTHING
    assert d.raw("configure confirm") == b"0019 Nothing to do\n"
    assert d.raw("configure status") == IDLE
    assert routes(d) == [NET1]


def test_undo_after_plain_configure(start_daemon):
    d = started(start_daemon)
    assert configure(d, "d2.conf") == reading(d.path("d2.conf")) + b"0003 Reconfigured\n"
    assert poll(lambda: routes(d) == [NET2])
    # no timeout: nothing to confirm, but the undo is there
    assert d.raw("configure confirm") == b"0019 Nothing to do\n"
    assert d.raw("configure status") == IDLE
    assert d.raw("configure undo") == UNDO_DONE
    assert poll(lambda: routes(d) == [NET1])
    # once only
    assert d.raw("configure undo") == UNDO_NOTHING
    assert routes(d) == [NET1]


def test_confirm_stops_the_timer_and_keeps_the_undo(start_daemon):
    d = started(start_daemon)
    assert configure(d, "d3.conf", " timeout 100") == (
        reading(d.path("d3.conf")) + b"0022-Undo scheduled in 100 s\n0003 Reconfigured\n")
    status = d.raw("configure status")
    assert status.startswith(b"0003-Daemon is up and running\n0022-Configuration unconfirmed, undo in 99.")
    assert status.endswith(b" s\n0000 \n")
    assert d.raw("configure confirm") == b"0018 Reconfiguration confirmed\n"
    assert d.raw("configure status") == IDLE
    assert d.raw("configure confirm") == b"0019 Nothing to do\n"
    assert d.raw("configure undo") == UNDO_DONE
    assert poll(lambda: routes(d) == [NET1])
    assert d.raw("configure undo") == UNDO_NOTHING


def test_timeout_default_and_zero(start_daemon):
    d = started(start_daemon)
    assert d.raw("configure timeout") == (
        reading(d.conf) + b"0022-Undo scheduled in 300 s\n0003 Reconfigured\n")
    assert b"0022-Configuration unconfirmed, undo in 299." in d.raw("configure status")
    # undo before the timer: the timer stops
    assert d.raw("configure undo") == UNDO_DONE
    assert d.raw("configure status") == IDLE
    assert configure(d, "d3.conf", " timeout 100").endswith(b"0003 Reconfigured\n")
    # a configure without timeout stops a running timer; timeout 0 is none
    assert configure(d, "d2.conf", " timeout 0") == reading(d.path("d2.conf")) + b"0003 Reconfigured\n"
    assert d.raw("configure status") == IDLE
    assert poll(lambda: routes(d) == [NET2])
    # soft takes a timeout too
    assert d.raw('configure soft "%s" timeout 5' % d.path("d3.conf")) == (
        reading(d.path("d3.conf")) + b"0022-Undo scheduled in 5 s\n0003 Reconfigured\n")
    assert d.raw("configure confirm") == b"0018 Reconfiguration confirmed\n"


def test_timeout_expires(start_daemon):
    d = started(start_daemon)
    assert configure(d, "d2.conf").endswith(b"0003 Reconfigured\n")
    s = d.connect()
    try:
        _, rest = read_reply(s)
        s.sendall(('configure "%s" timeout 1\n' % d.path("d3.conf")).encode())
        reply, rest = read_reply(s, rest)
        assert reply == reading(d.path("d3.conf")) + b"0022-Undo scheduled in 1 s\n0003 Reconfigured\n"
        assert poll(lambda: routes(d) == [NET3])
        # the session that set the timer is told, with a spontaneous "+" line
        s.settimeout(5)
        want = b"+Config timeout expired, starting undo\n"
        while len(rest) < len(want):
            chunk = s.recv(4096)
            assert chunk, rest
            rest += chunk
        assert rest == want
    finally:
        s.close()
    assert poll(lambda: routes(d) == [NET2])
    # the undo's routes are in before the protocols have all said they
    # are done with it
    assert poll(lambda: d.raw("configure status") == IDLE, timeout=5), d.raw("configure status")
    # the timer's undo was the one undo
    assert d.raw("configure undo") == UNDO_NOTHING


def test_failed_configure_forgets_the_undo(start_daemon):
    d = started(start_daemon)
    bad_error = b"8002 %s:2:1 syntax error, unexpected CF_SYM_UNDEFINED\n" % d.path("bad.conf").encode()
    assert configure(d, "d2.conf").endswith(b"0003 Reconfigured\n")
    assert configure(d, "d3.conf", " timeout 30").endswith(b"0003 Reconfigured\n")
    # check leaves it alone, even with a broken file
    assert d.raw('configure check "%s"' % d.path("bad.conf")) == reading(d.path("bad.conf")) + bad_error
    assert d.raw("configure check") == reading(d.conf) + b"0020 Configuration OK\n"
    assert b"0022-Configuration unconfirmed" in d.raw("configure status")
    # a configure that cannot read its file has already dropped the undo and its timer
    assert configure(d, "bad.conf") == reading(d.path("bad.conf")) + bad_error
    assert d.raw("configure status") == IDLE
    assert d.raw("configure undo") == UNDO_NOTHING
    assert routes(d) == [NET3]
    missing = d.path("nonexist.conf")
    assert configure(d, "d2.conf").endswith(b"0003 Reconfigured\n")
    assert d.raw('configure "%s"' % missing) == (
        reading(missing) + b"8002 %s: No such file or directory\n" % missing.encode())
    assert d.raw("configure undo") == UNDO_NOTHING


def test_restricted(start_daemon):
    d = started(start_daemon)
    replies = d.raw_many(["restrict", "configure status", "configure check", "configure undo",
                          "configure confirm", "configure soft"])
    assert replies == [b"0016 Access restricted\n", IDLE] + [b"8007 Access denied\n"] * 4


# A protocol with many routes takes a while to go down: the reconfiguration that removes
# it stays in progress long enough for commands sent in the same write.
BIG_ROUTES = 200000


def big_started(start_daemon):
    routes6 = "".join("  route 2001:db8:%x:%x::/64 blackhole;\n" % (i >> 16, i & 0xffff)
                      for i in range(BIG_ROUTES))
    d = start_daemon(BASE % NET1 + "protocol static big {\n  ipv6;\n%s}\n" % routes6)
    for i, net in ((1, NET1), (2, NET2), (3, NET3)):
        d.write_file("d%d.conf" % i, BASE % net)
    d.wait_up(["s4", "big"], timeout=20)
    total = b"0014 Total: %d of %d routes" % (BIG_ROUTES + 1, BIG_ROUTES + 1)
    assert poll(lambda: total in d.raw("show route count"), timeout=20)
    return d


def pipelined(d, cmds):
    s = d.connect(timeout=30)
    try:
        _, rest = read_reply(s)
        s.sendall("".join(c + "\n" for c in cmds).encode())
        out = []
        for _ in cmds:
            reply, rest = read_reply(s, rest)
            out.append(reply)
        return out
    finally:
        s.close()


def test_configure_while_in_progress_is_queued(start_daemon):
    d = big_started(start_daemon)
    p1, p2, p3 = (d.path("d%d.conf" % i) for i in (1, 2, 3))
    replies = pipelined(d, ['configure "%s"' % p1, "configure status", "show status",
                            'configure "%s"' % p2, "configure status",
                            'configure "%s"' % p3, "configure undo", "configure status",
                            "configure undo", "configure confirm"])
    assert replies[0] == reading(p1) + b"0004 Reconfiguration in progress\n"
    assert replies[1] == b"0004-Reconfiguration in progress\n0000 \n"
    assert replies[2].endswith(b"\n0013 Reconfiguration in progress\n")
    assert replies[3] == reading(p2) + b"0005 Reconfiguration already in progress, queueing new config\n"
    assert replies[4] == b"0005-Reconfiguration in progress, next one enqueued\n0000 \n"
    # a newer config replaces the queued one; an undo then removes it
    assert replies[5] == reading(p3) + b"0005 Reconfiguration already in progress, queueing new config\n"
    assert replies[6] == b"0021-Undo requested\n0017 Reconfiguration already in progress, removing queued config\n"
    assert replies[7] == b"0004-Reconfiguration in progress\n0000 \n"
    assert replies[8] == UNDO_NOTHING
    assert replies[9] == b"0019 Nothing to do\n"
    assert poll(lambda: d.raw("configure status") == IDLE, timeout=20)
    assert d.raw("show status").endswith(b"\n0013 Daemon is up and running\n")
    assert routes(d) == [NET1]
    assert d.raw("show route count").endswith(b"0014 Total: 1 of 1 routes for 1 networks in 2 tables\n")


def test_queued_config_is_applied(start_daemon):
    d = big_started(start_daemon)
    p1, p2, p3 = (d.path("d%d.conf" % i) for i in (1, 2, 3))
    replies = pipelined(d, ['configure "%s"' % p1, 'configure "%s" timeout 100' % p2,
                            'configure "%s"' % p3, "configure status"])
    assert replies == [
        reading(p1) + b"0004 Reconfiguration in progress\n",
        reading(p2) + b"0022-Undo scheduled in 100 s\n"
        b"0005 Reconfiguration already in progress, queueing new config\n",
        reading(p3) + b"0005 Reconfiguration already in progress, queueing new config\n",
        b"0005-Reconfiguration in progress, next one enqueued\n0000 \n"]
    # the last one queued is applied once the first is over (its configure stopped
    # the timer); the undo goes back to what ran before it
    assert poll(lambda: routes(d) == [NET3], timeout=20)
    assert poll(lambda: d.raw("configure status") == IDLE, timeout=20)
    assert d.raw("configure undo") == UNDO_DONE
    assert poll(lambda: routes(d) == [NET1])


def test_undo_while_in_progress_is_queued(start_daemon):
    d = big_started(start_daemon)
    p1 = d.path("d1.conf")
    replies = pipelined(d, ['configure "%s"' % p1, "configure undo", "configure status",
                            "configure undo"])
    assert replies == [
        reading(p1) + b"0004 Reconfiguration in progress\n",
        b"0021-Undo requested\n0005 Reconfiguration already in progress, queueing new config\n",
        b"0005-Reconfiguration in progress, next one enqueued\n0000 \n",
        UNDO_NOTHING]
    # the undo brings the big protocol back
    total = b"0014 Total: %d of %d routes" % (BIG_ROUTES + 1, BIG_ROUTES + 1)
    assert poll(lambda: total in d.raw("show route count"), timeout=20)
    assert poll(lambda: d.raw("configure status") == IDLE, timeout=20)
