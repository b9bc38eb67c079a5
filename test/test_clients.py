"""birdc and birdcl: output without reply codes, exit status, restricted mode, stdin mode."""

import os
import re
import subprocess

import pytest

from conftest import BIRDC_BIN, BIRDCL_BIN, DEBIAN_BIRDC, IO_TIMEOUT, _require

GREETING = r"BIRD \S+ ready\.\n"
COUNT_TEXT = ("3 of 3 routes for 3 networks in table master4\n"
              "2 of 2 routes for 2 networks in table master6\n"
              "Total: 5 of 5 routes for 5 networks in 2 tables\n")
DATETIME = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}"
STATUS_TEXT = (r"BIRD \S+\n"
               r"Router ID is 10\.0\.0\.1\n"
               r"Hostname is \S+\n"
               r"Current server time is " + DATETIME + r"\n"
               r"Last reboot on " + DATETIME + r"\n"
               r"Last reconfiguration on " + DATETIME + r"\n"
               r"Daemon is up and running\n")
# birdc (readline) redraws its prompt in stdin mode with "\r" + ESC[K; strip that
_REDRAW = re.compile(r"bird> \r\x1b\[K")

CLIENTS = ["birdcl", "birdc"]


@pytest.mark.parametrize("client", CLIENTS)
def test_show_route_count(daemon, client):
    rc, out, err = daemon.cli("show", "route", "count", client=client)
    # the greeting is printed too; code-0000 lines are not printed at all
    assert re.fullmatch(GREETING + re.escape(COUNT_TEXT), out), out
    assert (rc, err) == (0, "")


@pytest.mark.parametrize("client", CLIENTS)
def test_show_status(daemon, client):
    rc, out, err = daemon.cli("show", "status", client=client)
    assert re.fullmatch(GREETING + STATUS_TEXT, out), out
    assert (rc, err) == (0, "")


@pytest.mark.parametrize("client", CLIENTS)
def test_single_table_count_hides_0000(daemon, client):
    rc, out, err = daemon.cli("show", "route", "table", "master4", "count", client=client)
    assert re.fullmatch(GREETING + re.escape("3 of 3 routes for 3 networks in table master4\n"), out), out
    assert rc == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_abbreviations(daemon, client):
    # The client expands the words its command table knows ("sh ro" -> "show route");
    # arguments such as "count" are not in that table and are passed through as typed.
    rc, out, err = daemon.cli("sh", "ro", "count", client=client)
    assert re.fullmatch(GREETING + re.escape(COUNT_TEXT), out), out
    assert rc == 0
    rc, out, err = daemon.cli("sh", "pro", client=client)
    assert rc == 0
    lines = out.split("\n")
    assert lines[1] == "Name       Proto      Table      State  Since         Info", out
    assert len(lines) == 6 and lines[-1] == "", out
    # BIRD 2's clients send option words as typed, so "co" is an unknown symbol
    # there; ours also expands the options of `show route` ("co" -> "count").
    rc, out, err = daemon.cli("sh", "ro", "co", client=client)
    if is_reference_client():
        assert re.fullmatch(GREETING + "syntax error, unexpected CF_SYM_UNDEFINED\n", out), out
        assert rc == 1
    else:
        assert re.fullmatch(GREETING + re.escape(COUNT_TEXT), out), out
        assert rc == 0


def is_reference_client():
    from conftest import BIRDCL_BIN
    return BIRDCL_BIN.startswith("/usr/sbin/")


@pytest.mark.parametrize("client", CLIENTS)
def test_ambiguous_abbreviation(daemon, client):
    rc, out, err = daemon.cli("sh", "st", client=client)
    assert rc == 1
    assert re.match(GREETING + "Ambiguous command, possible expansions are:\n", out), out
    assert re.search(r"^show status +Show router status$", out, re.M), out


@pytest.mark.parametrize("client", CLIENTS)
def test_error_exit_code(daemon, client):
    rc, out, err = daemon.cli("show", "protocols", "nonexist", client=client)
    assert rc == 1
    assert re.fullmatch(GREETING + "syntax error, unexpected CF_SYM_UNDEFINED, "
                        "expecting END or CF_SYM_KNOWN or TEXT or ALL\n", out), out
    rc, out, err = daemon.cli("show", "route", "10.99.0.0/24", client=client)
    assert rc == 1
    assert re.fullmatch(GREETING + "Network not found\n", out), out


@pytest.mark.parametrize("client", CLIENTS)
def test_restricted(daemon, client):
    rc, out, err = daemon.cli("configure", client=client, extra=["-r"])
    assert re.fullmatch(GREETING + "Access restricted\nAccess denied\n", out), out
    assert rc == 1
    for cmd in (["disable", "s4"], ["down"], ["restart", "s4"], ["configure", "check"]):
        rc, out, err = daemon.cli(*cmd, client=client, extra=["-r"])
        assert out.endswith("Access denied\n") and rc == 1, (cmd, out)
    # read-only commands still work
    rc, out, err = daemon.cli("show", "route", "count", client=client, extra=["-r"])
    assert re.fullmatch(GREETING + "Access restricted\n" + re.escape(COUNT_TEXT), out), out
    assert rc == 0
    # and nothing was changed
    assert daemon.protocols()["s4"][2] == "up"
    assert daemon.proc.poll() is None


def test_birdcl_stdin(daemon):
    rc, out, err = daemon.cli(stdin="show status\nshow route count\n")
    # without a terminal birdcl echoes each command after its prompt
    assert re.fullmatch(GREETING + "bird> show status\n" + STATUS_TEXT
                        + "bird> show route count\n" + re.escape(COUNT_TEXT) + "bird> \n", out), out
    assert rc == 0


def test_birdc_stdin(daemon):
    rc, out, err = daemon.cli(client="birdc", stdin="show status\nshow route count\n")
    out = _REDRAW.sub("", out)
    assert re.fullmatch(GREETING + "bird> show status\n" + STATUS_TEXT
                        + "bird> show route count\n" + re.escape(COUNT_TEXT), out), repr(out)
    assert rc == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_stdin_error_does_not_stop_session(daemon, client):
    # in interactive/stdin mode errors are printed and the session goes on (exit 0)
    rc, out, err = daemon.cli(client=client, stdin="show protocols nonexist\nshow route count\n")
    out = _REDRAW.sub("", out)
    assert "syntax error, unexpected CF_SYM_UNDEFINED" in out
    # birdcl answers EOF with a newline after the last prompt; birdc's prompt was redrawn away
    assert out.endswith(COUNT_TEXT + ("bird> \n" if client == "birdcl" else "")), repr(out)
    assert rc == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_restricted_stdin(daemon, client):
    rc, out, err = daemon.cli(client=client, extra=["-r"], stdin="configure\nshow route count\n")
    out = _REDRAW.sub("", out)
    assert re.match(GREETING + "Access restricted\nbird> configure\nAccess denied\n", out), repr(out)
    assert rc == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_verbose_prints_codes(daemon, client):
    rc, out, err = daemon.cli("show", "route", "count", client=client, extra=["-v"])
    assert out.startswith("0001 BIRD "), out
    assert "\n1007-3 of 3 routes for 3 networks in table master4\n" in out, out
    assert out.endswith("\n0014 Total: 5 of 5 routes for 5 networks in 2 tables\n"), out
    assert rc == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_no_daemon(tmp_path, client):
    binary = BIRDCL_BIN if client == "birdcl" else BIRDC_BIN
    _require(binary)
    sock = str(tmp_path / "nosock")
    p = subprocess.run([binary, "-s", sock, "show", "status"], capture_output=True, text=True,
                       timeout=IO_TIMEOUT)
    assert p.returncode == 1
    assert p.stderr == ("Unable to connect to server control socket (%s): "
                        "No such file or directory\n" % sock), p.stderr


@pytest.mark.parametrize("client", CLIENTS)
def test_local_socket_flag(daemon, client):
    # -l: use bird.ctl in the current directory
    link = os.path.join(daemon.dir, "bird.ctl")
    os.symlink(daemon.sock, link)
    binary = BIRDCL_BIN if client == "birdcl" else BIRDC_BIN
    p = subprocess.run([binary, "-l", "show", "route", "count"], capture_output=True, text=True,
                       timeout=IO_TIMEOUT, cwd=daemon.dir)
    assert re.fullmatch(GREETING + re.escape(COUNT_TEXT), p.stdout), (p.stdout, p.stderr)
    assert p.returncode == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_issue_checks_through_client(daemon, client):
    """The checks issue 2 names, done through our clients instead of the raw socket."""
    # disable/enable removes/restores the routes
    rc, out, _ = daemon.cli("disable", "s4", client=client)
    assert (rc, out.split("\n", 1)[1]) == (0, "s4: disabled\n")
    assert daemon.poll_raw("show route table master4 count",
                           b"1007-0 of 0 routes for 0 networks in table master4\n0000 \n")
    rc, out, _ = daemon.cli("show", "route", "table", "master4", "count", client=client)
    assert out.split("\n", 1)[1] == "0 of 0 routes for 0 networks in table master4\n"
    rc, out, _ = daemon.cli("enable", "s4", client=client)
    assert (rc, out.split("\n", 1)[1]) == (0, "s4: enabled\n")
    daemon.poll_raw("show route table master4 count",
                    b"1007-3 of 3 routes for 3 networks in table master4\n0000 \n")
    rc, out, _ = daemon.cli("show", "route", "count", client=client)
    assert out.split("\n", 1)[1] == COUNT_TEXT

    # a syntax error prints file:line:col, exits 1, and the old config stays
    conf = open(daemon.conf).read()
    daemon.reconfigure_file(conf.replace("  route 10.3.0.0/16 prohibit;\n",
                                         "  route 10.3.0.0/16 prohibit;\n  route 10.9.0.0/16 oops;\n"))
    rc, out, _ = daemon.cli("configure", client=client)
    assert rc == 1
    assert out.split("\n", 1)[1] == ("Reading configuration from {0}\n"
                                     "{0}:8:21 syntax error, unexpected CF_SYM_UNDEFINED\n"
                                     .format(daemon.conf))
    rc, out, _ = daemon.cli("show", "route", "count", client=client)
    assert out.split("\n", 1)[1] == COUNT_TEXT

    # configure after editing changes the count
    daemon.reconfigure_file(conf.replace("  route 10.3.0.0/16 prohibit;\n",
                                         "  route 10.3.0.0/16 prohibit;\n  route 10.9.0.0/16 blackhole;\n"))
    rc, out, _ = daemon.cli("configure", client=client)
    assert (rc, out.split("\n", 1)[1]) == (
        0, "Reading configuration from %s\nReconfigured\n" % daemon.conf)
    daemon.poll_raw("show route table master4 count",
                    b"1007-4 of 4 routes for 4 networks in table master4\n0000 \n")
    rc, out, _ = daemon.cli("show", "route", "count", client=client)
    assert out.split("\n", 1)[1] == COUNT_TEXT.replace("3 of 3 routes for 3", "4 of 4 routes for 4") \
        .replace("5 of 5 routes for 5", "6 of 6 routes for 6")


# --- Debian's birdc against the daemon under test ------------------------------------

@pytest.fixture
def debian_birdc():
    if not os.access(DEBIAN_BIRDC, os.X_OK):
        pytest.skip("Debian's bird2 package is not installed")
    return DEBIAN_BIRDC


def test_debian_birdc_show_status(daemon, debian_birdc):
    rc, out, err = daemon.cli("show", "status", client=debian_birdc)
    assert re.fullmatch(GREETING + STATUS_TEXT, out), out
    assert (rc, err) == (0, "")


def test_debian_birdc_show_route_count(daemon, debian_birdc):
    rc, out, err = daemon.cli("show", "route", "count", client=debian_birdc)
    assert re.fullmatch(GREETING + re.escape(COUNT_TEXT), out), out
    assert (rc, err) == (0, "")


def test_debian_birdc_show_protocols(daemon, debian_birdc):
    rc, out, err = daemon.cli("show", "protocols", client=debian_birdc)
    assert rc == 0
    lines = out.split("\n")
    assert lines[1] == "Name       Proto      Table      State  Since         Info"
    assert sorted(l.split()[0] for l in lines[2:-1]) == ["device1", "s4", "s6"], out


def test_debian_birdc_error_exit(daemon, debian_birdc):
    rc, out, err = daemon.cli("show", "route", "10.99.0.0/24", client=debian_birdc)
    assert rc == 1
    assert out.endswith("Network not found\n"), out
