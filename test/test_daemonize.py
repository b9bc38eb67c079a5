"""The daemon as it runs in production: without -f, so it forks into the background.

Every other test runs the daemon in the foreground.  A daemonized one once hung on
SIGTERM: liburcu's worker threads, started while the config was parsed, stayed behind
in the parent at the fork, and the child's first table tear-down waited for them
forever.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import BASIC_CONF, BIRDCL_BIN, poll

STOP_TIMEOUT = 5.0


def _gone(pid):
    """True once pid has exited (a zombie nobody reaped counts: it runs no more)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.fixture
def sockdir():
    # AF_UNIX paths are limited to 107 bytes; pytest's tmp_path can be longer.
    d = tempfile.mkdtemp(prefix="bt", dir="/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _birdcl(sock, *words):
    p = subprocess.run([BIRDCL_BIN, "-s", sock, *words],
                       capture_output=True, text=True, timeout=5)
    return p.returncode, p.stdout


def _start_daemonized(bird_bin, tmp_path, sockdir, conf_text):
    """Started without -f; (socket, pid file, the daemon's pid) once it answers."""
    conf = tmp_path / "bird.conf"
    conf.write_text(conf_text)
    sock, pidfile = os.path.join(sockdir, "s"), tmp_path / "bird.pid"
    p = subprocess.run([bird_bin, "-c", str(conf), "-s", sock, "-P", str(pidfile)],
                       capture_output=True, text=True, timeout=10, cwd=str(tmp_path))
    # the foreground process returns at once; the daemon goes on in the background
    assert p.returncode == 0, p.stderr
    assert poll(lambda: pidfile.exists() and pidfile.read_text().strip(), timeout=10)
    pid = int(pidfile.read_text())
    if not poll(lambda: "Daemon is up and running" in _birdcl(sock, "show", "status")[1]):
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the daemonized bird does not answer")
    return sock, pidfile, pid


def test_daemonized_sigterm_exits(tmp_path, sockdir, bird_bin):
    log = tmp_path / "bird.log"
    sock, pidfile, pid = _start_daemonized(bird_bin, tmp_path, sockdir, 'log "%s" all;\n' % log + BASIC_CONF)
    try:
        # the static routes may still be on their way when it first answers
        # (seen under ASan)
        want = "3 of 3 routes for 3 networks in table master4"
        assert poll(lambda: want in _birdcl(sock, "show", "route", "count")[1], timeout=10), \
            _birdcl(sock, "show", "route", "count")
        t0 = time.monotonic()
        os.kill(pid, signal.SIGTERM)
        assert poll(lambda: _gone(pid), timeout=STOP_TIMEOUT), \
            "daemonized bird ignored SIGTERM; log:\n" + log.read_text()
        assert time.monotonic() - t0 < STOP_TIMEOUT
    finally:
        if not _gone(pid):
            os.kill(pid, signal.SIGKILL)
    # a clean exit: the shutdown finished and the daemon cleaned up after itself
    assert "Shutdown completed" in log.read_text()
    assert not os.path.exists(sock)
    assert not pidfile.exists()


def test_daemonized_config_error_on_terminal(tmp_path, sockdir, bird_bin):
    # the config is read before the fork, so its errors still reach the terminal
    conf = tmp_path / "bad.conf"
    conf.write_text("router id 10.0.0.1;\nprotocol static { ipv4; route 10.1.0.0/16 bogus; }\n")
    p = subprocess.run([bird_bin, "-c", str(conf), "-s", os.path.join(sockdir, "s"),
                        "-P", str(tmp_path / "pid")],
                       capture_output=True, text=True, timeout=5)
    assert p.returncode == 1
    assert "%s:2:43 syntax error" % conf in p.stderr, p.stderr
    # BIRD 2 has written (and left) its pid file by then; we do not assert either way


def _cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])       # utime + stime


def test_daemonized_idles(tmp_path, sockdir, bird_bin):
    """Idle in the background as in the foreground. Forked after liburcu had
    started its hash table's worker, the daemon kept one core busy for good
    (the worker made again in the child spun)."""
    _, _, pid = _start_daemonized(bird_bin, tmp_path, sockdir, BASIC_CONF)
    try:
        time.sleep(0.5)
        before, t0 = _cpu_ticks(pid), time.monotonic()
        time.sleep(2)
        used = (_cpu_ticks(pid) - before) / os.sysconf("SC_CLK_TCK") / (time.monotonic() - t0)
        # a spinning thread: 1.0; idle: timers every quarter second
        assert used < 0.2, used
    finally:
        os.kill(pid, signal.SIGKILL)


def test_daemonized_socket_error_on_terminal(tmp_path, bird_bin):
    """What fails before the daemon is up (here its control socket) reaches
    the terminal and the exit code, not /dev/null."""
    conf = tmp_path / "bird.conf"
    conf.write_text(BASIC_CONF)
    p = subprocess.run([bird_bin, "-c", str(conf), "-s", "/nonexistent/dir/s", "-P", str(tmp_path / "pid")],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 1
    assert "Cannot create control socket /nonexistent/dir/s" in p.stderr, p.stderr
