"""Fixtures for the functional tests: start a daemon on a private socket, talk to it.

The daemon and the clients under test are parameters, so the same tests run against
our build and against Debian's BIRD 2 (the reference):

    BIRD_BIN    daemon binary   (default: <repo>/bird)
    BIRDC_BIN   birdc client    (default: <repo>/birdc)
    BIRDCL_BIN  birdcl client   (default: <repo>/birdcl)

Every daemon runs in the foreground (-f) with its config, control socket, pid file and
log in a fresh temporary directory; nothing listens on TCP.  Waits poll with short
timeouts instead of sleeping.
"""

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE_BIRD = "/usr/sbin/bird"
DEBIAN_BIRDC = "/usr/sbin/birdc"

BIRD_BIN = os.environ.get("BIRD_BIN", os.path.join(REPO, "bird"))
BIRDC_BIN = os.environ.get("BIRDC_BIN", os.path.join(REPO, "birdc"))
BIRDCL_BIN = os.environ.get("BIRDCL_BIN", os.path.join(REPO, "birdcl"))

START_TIMEOUT = 10.0
# A daemon that stops later than this is taken to ignore SIGTERM. Under
# ThreadSanitizer, on two busy cores, taking a flooded table down lasts
# 3 s alone and more beside the other half: test/run-all.sh allows longer.
STOP_TIMEOUT = float(os.environ.get("BIRD_TEST_STOP_TIMEOUT", "5"))
IO_TIMEOUT = 5.0

def free_ports(n, align=10):
    """A block of n consecutive TCP ports no socket holds, below the kernel's
    ephemeral range: BIRD 2 peers listen on the wildcard address (no `strict
    bind`), so a port some outgoing connection happens to use would make their
    listen fail and the session never come up. BIRD_TEST_PORTS=LOW-HIGH keeps
    them in a range of their own: suites run side by side (test/run-all.sh)
    would otherwise pick the same block now and then, between one's check
    and its daemon's bind."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    bottom, top = 10000, max(low - n - align, 12000)
    if os.environ.get("BIRD_TEST_PORTS"):
        lo, hi = (int(x) for x in os.environ["BIRD_TEST_PORTS"].split("-"))
        bottom, top = lo, min(hi - n, top)
        if top <= bottom:
            raise RuntimeError("BIRD_TEST_PORTS=%s leaves no block of %d ports below the ephemeral range (%d)"
                               % (os.environ["BIRD_TEST_PORTS"], n, low))
    for _ in range(1000):
        base = random.randrange(bottom, top, align)
        if all(_port_free(base + i) for i in range(n)):
            return [base + i for i in range(n)]
    raise RuntimeError("no free block of %d ports" % n)


def _port_free(port):
    for family, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue  # no IPv6 here
        try:
            s.bind((addr, port))
        except OSError:
            return False
        finally:
            s.close()
    return True


# A line that ends a reply: four digits and a space ("0000 ", "0013 Daemon is up...").
_END_RE = re.compile(rb"^\d{4} ")
_COUNT_RE = re.compile(r"^(\d+) of (\d+) routes for (\d+) networks in table (\S+)$")
_TOTAL_RE = re.compile(r"^Total: (\d+) of (\d+) routes for (\d+) networks in (\d+) tables$")

# The configuration most tests use.  10.4.0.0/24 via 127.0.0.2 never reaches the table:
# BIRD marks the loopback interface "Ignored", so the gateway has no usable neighbour and
# the route stays dormant (`show static` prints "via 127.0.0.2 (dormant)").  We assert
# that behaviour, so master4 holds 3 routes, not 4.
BASIC_CONF = """\
router id 10.0.0.1;
protocol device {}
protocol static s4 {
  ipv4;
  route 10.1.0.0/16 blackhole;
  route 10.2.0.0/16 unreachable;
  route 10.3.0.0/16 prohibit;
  route 10.4.0.0/24 via 127.0.0.2;
}
protocol static s6 {
  ipv6;
  route 2001:db8:1::/48 blackhole;
  route 2001:db8:2::/48 unreachable;
}
"""

BASIC_COUNT = (
    b"1007-3 of 3 routes for 3 networks in table master4\n"
    b" 2 of 2 routes for 2 networks in table master6\n"
    b"0014 Total: 5 of 5 routes for 5 networks in 2 tables\n"
)


def same_binary(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


def poll(fn, timeout=5.0, interval=0.02):
    """Call fn() until it returns something truthy or timeout passes; return the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def read_reply(sock, buf=b""):
    """Read one complete reply from sock; return (reply, rest_of_buffer).

    A reply ends with a line whose first four characters are digits and fifth a space.
    Asynchronous `+` lines are part of whatever reply they arrive in.
    """
    pos = 0
    while True:
        nl = buf.find(b"\n", pos)
        while nl >= 0:
            line = buf[pos:nl]
            pos = nl + 1
            if _END_RE.match(line):
                return buf[:pos], buf[pos:]
            nl = buf.find(b"\n", pos)
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed after %r" % buf[-200:])
        buf += chunk


class Stamp:
    """A time a daemon shows, `[proto] HH:MM:SS.mmm`, compared as equal within
    1 ms: BIRD keeps times on its monotonic clock and converts each to wall
    time when it prints it, so one instant can read a millisecond apart from
    one `show` to the next. Tests leave more than that between the changes
    they look for."""

    def __init__(self, text):
        m = re.fullmatch(r"(?:(\S+) )?(\d\d):(\d\d):(\d\d)\.(\d{3})", text)
        assert m, text
        self.text, self.label = text, m.group(1)
        self.ms = ((int(m.group(2)) * 60 + int(m.group(3))) * 60 + int(m.group(4))) * 1000 + int(m.group(5))

    def __eq__(self, other):
        return isinstance(other, Stamp) and self.label == other.label and abs(self.ms - other.ms) <= 1

    def __hash__(self):
        return hash(self.label)

    def __repr__(self):
        return repr(self.text)


def strip_codes(reply):
    """Reply bytes -> list of text lines without the 'DDDD-'/'DDDD '/' ' prefixes."""
    out = []
    for line in reply.decode().split("\n")[:-1]:
        out.append(line[5:] if re.match(r"^\d{4}[- ]", line) else line[1:])
    return out


def parse_memory(reply, what):
    """A line of a `show memory` reply (what: "Routing tables", "Protocols", ...):
    (effective, overhead) in bytes."""
    text = "\n".join(strip_codes(reply))
    m = re.search(r"%s:\s+([\d.]+)\s+(\S*B)\s+([\d.]+)\s+(\S*B)" % re.escape(what), text)
    unit = {"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
    return float(m.group(1)) * unit[m.group(2)], float(m.group(3)) * unit[m.group(4)]


def parse_count(reply):
    """Parse a `show route count` reply into ({table: (shown, examined, nets)}, total).

    total is (shown, examined, nets, tables), or None when the reply ends with `0000 `.
    """
    tables, total = {}, None
    for text in strip_codes(reply):
        m = _COUNT_RE.match(text)
        if m:
            tables[m.group(4)] = tuple(int(x) for x in m.group(1, 2, 3))
            continue
        m = _TOTAL_RE.match(text)
        if m:
            total = tuple(int(x) for x in m.groups())
    return tables, total


class Daemon:
    def __init__(self, tmp_path, conf_text, name="bird.conf", binary=None):
        self.dir = str(tmp_path)
        self.binary = binary      # None: BIRD_BIN as it is at start()
        # AF_UNIX paths are limited to 107 bytes; pytest's tmp_path can be longer.
        self.sockdir = tempfile.mkdtemp(prefix="bt", dir="/tmp")
        self.sock = os.path.join(self.sockdir, "s")
        self.conf = os.path.join(self.dir, name)
        self.pidfile = os.path.join(self.dir, "bird.pid")
        self.logfile = os.path.join(self.dir, "bird.log")
        self.proc = None
        self._log = None
        self.extra_args = []    # more daemon options, e.g. ["-R"] (graceful restart recovery)
        self.write_file(name, conf_text)

    # --- files ---------------------------------------------------------------

    def path(self, name):
        return os.path.join(self.dir, name)

    def write_file(self, name, text):
        """Write a file in the daemon's directory atomically (a SIGHUP never sees half)."""
        path = self.path(name)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.rename(tmp, path)
        return path

    def reconfigure_file(self, text):
        return self.write_file(os.path.basename(self.conf), text)

    def log(self):
        with open(self.logfile, errors="replace") as f:
            return f.read()

    # --- lifecycle -----------------------------------------------------------

    def start(self):
        self._log = open(self.logfile, "wb")
        self.proc = subprocess.Popen(
            [self.binary or BIRD_BIN, *self.extra_args, "-f", "-c", self.conf, "-s", self.sock, "-P", self.pidfile],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            cwd=self.dir)
        greeting = poll(self._try_greeting, timeout=START_TIMEOUT)
        if not greeting or self.proc.poll() is not None:
            rc = self.proc.poll()
            self.kill()
            pytest.fail("daemon did not answer on %s within %.0f s (exit %r); log:\n%s"
                        % (self.sock, START_TIMEOUT, rc, self.log()))
        self.greeting = greeting
        return self

    def _try_greeting(self):
        if self.proc.poll() is not None:
            return b"exited"  # stop polling; start() reports it below
        try:
            s = self.connect(timeout=1.0)
        except OSError:
            return None
        try:
            return read_reply(s)[0]
        except (OSError, EOFError):
            return None
        finally:
            s.close()

    def connect(self, timeout=IO_TIMEOUT):
        """Connect to the control socket.

        With a timeout set, an AF_UNIX connect to a full listen backlog fails with
        EAGAIN instead of waiting, so retry until the daemon accepts or timeout passes.
        """
        deadline = time.monotonic() + timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(timeout)
            try:
                s.connect(self.sock)
                return s
            except BlockingIOError:
                s.close()
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.005)
            except OSError:
                s.close()
                raise

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        """SIGTERM, wait up to STOP_TIMEOUT, then SIGKILL.  Returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill()
                pytest.fail("daemon ignored SIGTERM for %.0f s" % STOP_TIMEOUT)
        return self.proc.returncode

    def close(self):
        try:
            if self.proc:
                self.stop()
        finally:
            if self._log:
                self._log.close()
            shutil.rmtree(self.sockdir, ignore_errors=True)

    def check_log_clean(self):
        bad = [l for l in self.log().splitlines()
               if "AddressSanitizer" in l or "runtime error" in l or "LeakSanitizer" in l
               or "ThreadSanitizer" in l or " <BUG> " in l]
        assert not bad, "sanitizer reports or BUG lines in %s:\n%s" % (self.logfile, self.log())

    # --- talking to it -------------------------------------------------------

    def raw(self, cmd):
        """Send one command over a fresh connection; return the raw reply bytes."""
        s = self.connect()
        try:
            greeting, rest = read_reply(s)
            assert re.match(rb"^0001 BIRD \S+ ready\.\n$", greeting), greeting
            s.sendall(cmd.encode() + b"\n")
            return read_reply(s, rest)[0]
        finally:
            s.close()

    def raw_many(self, cmds):
        """Send several commands on one connection, one at a time; return the replies."""
        s = self.connect()
        try:
            _, rest = read_reply(s)
            out = []
            for cmd in cmds:
                s.sendall(cmd.encode() + b"\n")
                reply, rest = read_reply(s, rest)
                out.append(reply)
            return out
        finally:
            s.close()

    def poll_raw(self, cmd, expected, timeout=5.0):
        """Repeat cmd until the reply equals expected (bytes or predicate); return the last reply.

        Protocols start and feed routes asynchronously, so state-dependent checks wait for
        the state first and then assert it exactly.
        """
        last = [None]

        def attempt():
            last[0] = self.raw(cmd)
            return expected(last[0]) if callable(expected) else last[0] == expected
        poll(attempt, timeout=timeout)
        return last[0]

    def cli(self, *words, client="birdcl", extra=(), stdin=None, timeout=IO_TIMEOUT):
        """Run a client binary with -s SOCK and the command words; return (rc, stdout, stderr)."""
        binary = {"birdcl": BIRDCL_BIN, "birdc": BIRDC_BIN}.get(client, client)
        # bytes, decoded by hand: text=True would turn birdc's "\r" redraws into "\n"
        p = subprocess.run([binary, "-s", self.sock, *extra, *words],
                           input=(stdin or "").encode(),
                           capture_output=True, timeout=timeout, cwd=self.dir)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def count(self, table=None):
        cmd = "show route count" if table is None else "show route table %s count" % table
        return parse_count(self.raw(cmd))

    def protocols(self):
        """`show protocols` as {name: (proto, table, state, since, info)}."""
        rows = {}
        for text in strip_codes(self.raw("show protocols"))[1:]:
            if not text:
                continue
            m = re.match(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d\d:\d\d:\d\d\.\d{3})  (.*)$", text)
            if m:
                rows[m.group(1)] = m.group(2, 3, 4) + (Stamp(m.group(5)), m.group(6))
        return rows

    def wait_up(self, names, timeout=5.0):
        def all_up():
            rows = self.protocols()
            return all(n in rows and rows[n][2] == "up" for n in names)
        assert poll(all_up, timeout=timeout), self.raw("show protocols")


def _require(binary):
    if not os.access(binary, os.X_OK):
        pytest.fail("%s is not an executable: build it (make) or set BIRD_BIN/BIRDC_BIN/"
                    "BIRDCL_BIN, see test/README.md" % binary, pytrace=False)


@pytest.fixture(scope="session")
def is_reference():
    """True when the daemon under test is Debian's BIRD 2, not ours."""
    return same_binary(BIRD_BIN, REFERENCE_BIRD)


@pytest.fixture
def ours_only(is_reference):
    if is_reference:
        pytest.skip("only meaningful for our daemon (BIRD 2.0.12 differs here)")


@pytest.fixture
def bird_bin():
    _require(BIRD_BIN)
    return BIRD_BIN


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the test (start_daemon reads it)."""
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


LOG_TAIL_ON_FAILURE = 120


@pytest.fixture
def start_daemon(tmp_path, request):
    """Factory: start_daemon(conf_text) -> running Daemon; all are stopped at teardown.
    binary: another daemon than BIRD_BIN (a test that runs BIRD 2 beside ours).
    When the test failed, the tail of each daemon's log is printed: CI
    removes the test's directory, and a flake leaves nothing else."""
    _require(BIRD_BIN)
    started = []

    def start(conf_text=BASIC_CONF, name="bird.conf", subdir=None, binary=None):
        d = tmp_path if subdir is None else tmp_path / subdir
        d.mkdir(exist_ok=True)
        daemon = Daemon(d, conf_text, name, binary)
        started.append(daemon)
        return daemon.start()

    yield start
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        for daemon in started:
            if daemon.proc is not None and os.path.exists(daemon.logfile):
                lines = daemon.log().splitlines()[-LOG_TAIL_ON_FAILURE:]
                print("--- last %d lines of %s" % (len(lines), daemon.logfile))
                print("\n".join(lines))
    # every daemon is stopped before the first complaint: one that hung
    # must not leave the others running
    failed = []
    for daemon in started:
        if daemon.proc is None:
            continue
        try:
            running = daemon.proc.poll() is None
            daemon.close()
            assert daemon.proc.returncode is not None
            daemon.check_log_clean()
            if running:
                # our SIGTERM: a clean shutdown exits 0 (a sanitizer abort would not)
                assert daemon.proc.returncode == 0, "exit status %r; log:\n%s" % (
                    daemon.proc.returncode, daemon.log())
        except BaseException as e:   # pytest.fail() raises an outcome, not an Exception
            daemon.kill()
            failed.append(e)
    if failed:
        raise failed[0]


def random_seed(name):
    """A randomized test's seed: the environment variable name when set (to
    repeat a run), else a new one; printed either way."""
    seed = int(os.environ.get(name, random.randrange(1 << 30)))
    print("%s=%d" % (name, seed))
    return seed


def start_beside_bird2(start_daemon, conf_text, ref_conf_text=None):
    """Ours and Debian's BIRD 2 on the same config (or BIRD 2 on one of its
    own, where they must not share a listening port): (ours, BIRD 2).
    Skips where BIRD 2 is not installed."""
    if not os.access(REFERENCE_BIRD, os.X_OK):
        pytest.skip("needs Debian's BIRD 2 (%s)" % REFERENCE_BIRD)
    return (start_daemon(conf_text, subdir="ours"),
            start_daemon(ref_conf_text or conf_text, subdir="bird2", binary=REFERENCE_BIRD))


@pytest.fixture
def daemon(start_daemon):
    """A daemon on BASIC_CONF with all its protocols up and routes loaded."""
    d = start_daemon(BASIC_CONF)
    d.wait_up(["device1", "s4", "s6"])
    got = d.poll_raw("show route count", BASIC_COUNT)
    assert got == BASIC_COUNT
    return d


def run_bird_parse(conf_path, timeout=IO_TIMEOUT):
    """`bird -p -c FILE`: returns (rc, stdout, stderr)."""
    _require(BIRD_BIN)
    p = subprocess.run([BIRD_BIN, "-p", "-c", conf_path], capture_output=True, text=True,
                       timeout=timeout, cwd=os.path.dirname(conf_path))
    return p.returncode, p.stdout, p.stderr
