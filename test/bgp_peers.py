"""Real BGP peers for the interop tests: Debian's BIRD 2, GoBGP and ExaBGP.

Each peer runs on its own 127.x.y.z address and port, in its own temporary
directory, and is stopped at teardown by the fixture that made it.  Shared by
test_bgp.py (and the files importing from it) and test_interop.py.

    peers(name, conf)              a BIRD 2 daemon (fixture `peers`)
    tools(GoBGP, name, ...)        a gobgpd, driven through the gobgp CLI
    tools(ExaBGP, name, ...)       an exabgp: what it receives is dumped as
                                   JSON lines, commands go in through a file

GoBGP refuses loopback next hops (its attribute validation treats 127/8 as
invalid), so routes toward it carry next hops from the documentation ranges
(192.0.2.0/24, 2001:db8::/32); no traffic is ever sent anywhere.
"""

import json
import os
import re
import shutil
import subprocess

import pytest

import conftest
from conftest import Daemon, poll, REFERENCE_BIRD, Stamp, strip_codes

GOBGPD = shutil.which("gobgpd")
EXABGP = shutil.which("exabgp")

# Our daemon's address in test_bgp.py, where the peers below default to meet it.
OURS_DEFAULT = "127.77.0.1"


def reply_text(reply):
    """A reply as one text (conftest.strip_codes gives its lines)."""
    return "\n".join(strip_codes(reply))


def established(d, proto):
    return lambda: re.search(r"^%s\s+BGP\s+\S+\s+up\s+\S+\s+Established" % proto,
                             reply_text(d.raw("show protocols %s" % proto)), re.M)


def route_all(d, prefix):
    return reply_text(d.raw("show route %s all" % prefix))


def since(d, prefix):
    """The `[proto time from ...]` part of a route line: changes when the route is re-imported."""
    text = reply_text(d.raw("show route %s" % prefix))
    m = re.search(r"\[(\S+ \d\d:\d\d:\d\d\.\d{3})[ \]]", text)
    assert m, text
    return Stamp(m.group(1))


def proto_since(d, proto):
    """When protocol `proto` last changed state (`show protocols`), or None."""
    row = d.protocols().get(proto)
    return row and row[3]


def count(d):
    m = re.search(r"(\d+) of \d+ routes for \d+ networks in table master4", reply_text(d.raw("show route table master4 count")))
    return int(m.group(1)) if m else -1


# --- BIRD 2 ----------------------------------------------------------------------

class PeerBird(Daemon):
    """A BIRD 2 daemon playing a BGP peer."""

    def __init__(self, tmp_path, conf_text, name="bird.conf"):
        super().__init__(tmp_path, conf_text, name, binary=REFERENCE_BIRD)


@pytest.fixture
def ports():
    return conftest.free_ports(10)


@pytest.fixture
def peers(tmp_path):
    started = []

    def start(name, conf):
        d = tmp_path / name
        d.mkdir()
        p = PeerBird(d, conf)
        started.append(p)
        return p.start()

    yield start
    for p in started:
        p.close()


# --- GoBGP -----------------------------------------------------------------------

class GoBGP:
    """A gobgpd with one neighbor (us).

    families: GoBGP's names ("ipv4-unicast", "ipv6-unicast"); add_paths: send
    up to that many paths a prefix and accept several (0: no ADD-PATH); gr:
    graceful restart, helper and restarting speaker; extra: more of its
    configuration (TOML), e.g. policies.
    """

    def __init__(self, tmp, addr, port, asn, our_port, api_port, gr=False, ours=OURS_DEFAULT,
                 families=("ipv4-unicast",), add_paths=0, extra=""):
        self.addr, self.ours, self.api = addr, ours, "%d" % api_port
        self.conf = tmp / "gobgpd.toml"
        text = """[global.config]
  as = %d
  router-id = "%s"
  port = %d
  local-address-list = ["%s"]
[[neighbors]]
  [neighbors.config]
    neighbor-address = "%s"
    peer-as = 65001
    admin-down = ADMIN_DOWN
  [neighbors.transport.config]
    remote-port = %d
    local-address = "%s"
  [neighbors.ebgp-multihop.config]
    enabled = true
    multihop-ttl = 10
""" % (asn, addr, port, addr, ours, our_port, addr)
        if gr:
            # graceful restart (RFC 4724), helper and restarting speaker
            text += """  [neighbors.graceful-restart.config]
    enabled = true
    restart-time = 30
"""
        for fam in families:
            text += """  [[neighbors.afi-safis]]
    [neighbors.afi-safis.config]
      afi-safi-name = "%s"
""" % fam
            if gr:
                text += """    [neighbors.afi-safis.mp-graceful-restart.config]
      enabled = true
"""
            if add_paths:
                text += """    [neighbors.afi-safis.add-paths.config]
      receive = true
      send-max = %d
""" % add_paths
        self.text = text + extra
        self.log = open(tmp / "gobgpd.log", "wb")
        self.start()

    def start(self, restarting=False, admin_down=False):
        """admin_down: the session waits for enable(), e.g. until routes are in."""
        self.conf.write_text(self.text.replace("ADMIN_DOWN", "true" if admin_down else "false"))
        self.proc = subprocess.Popen([GOBGPD, "-f", str(self.conf), "--api-hosts", "127.0.0.1:" + self.api, "-l", "warn"]
                                     + (["-r"] if restarting else []), stdout=self.log, stderr=subprocess.STDOUT)
        assert poll(lambda: self.cli("global").returncode == 0, timeout=10)

    def enable(self):
        r = self.cli("neighbor", self.ours, "enable")
        assert r.returncode == 0, r.stderr

    def kill(self):
        self.proc.kill()
        self.proc.wait(timeout=5)

    def cli(self, *args):
        return subprocess.run(["gobgp", "-u", "127.0.0.1", "-p", self.api] + list(args),
                              capture_output=True, text=True, timeout=10)

    def rib(self, af="ipv4"):
        r = self.cli("global", "rib", "-a", af, "-j")
        return json.loads(r.stdout or "{}")

    def neighbor(self):
        """`gobgp neighbor OURS -j`: GoBGP's view of the session with us."""
        r = self.cli("neighbor", self.ours, "-j")
        return json.loads(r.stdout or "{}")

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=5)


# --- ExaBGP ----------------------------------------------------------------------

class ExaBGP:
    """An exabgp with one neighbor (us).

    Every message it receives is appended to received.json as a line of its
    JSON encoder; commands (`announce route ...`) appended to commands.txt
    are fed to it through a process that follows that file.  families and
    capability are blocks of its configuration, routes its static routes.
    """

    def __init__(self, tmp, addr, port, asn, our_port, routes, ours=OURS_DEFAULT,
                 families=("ipv4 unicast",), capability="route-refresh enable;"):
        self.tmp, self.addr, self.asn, self.ours = tmp, addr, asn, ours
        self.port, self.our_port = port, our_port
        self.families, self.capability = families, capability
        self.received = tmp / "received.json"
        self.commands = tmp / "commands.txt"
        self.log = open(tmp / "exabgp.log", "wb")
        self.start(routes)

    def start(self, routes):
        """(Re)write the configuration with these static routes and start exabgp
        (with no commands: those of an earlier run are not replayed)."""
        self.commands.write_text("")
        conf = self.tmp / "exabgp.conf"
        conf.write_text("""process dump {
  run /bin/sh -c "cat >> %s";
  encoder json;
}
process commands {
  run /bin/sh -c "tail -n +1 -F --pid=$PPID %s";
  encoder text;
}
neighbor %s {
  router-id %s;
  local-address %s;
  local-as %d;
  peer-as 65001;
  connect %d;
  listen %d;
  family { %s }
  capability { %s }
  api { processes [ dump ]; receive { parsed; update; open; refresh; } }
  api { processes [ commands ]; }
  static {
%s
  }
}
""" % (self.received, self.commands, self.ours, self.addr, self.addr, self.asn, self.our_port, self.port,
            " ".join("%s;" % f for f in self.families), self.capability,
            "\n".join("    route %s;" % r for r in routes)))
        env = dict(os.environ, **{"exabgp.daemon.user": "root", "exabgp.log.level": "WARNING",
                                  "exabgp.api.ack": "false"})
        self.proc = subprocess.Popen([EXABGP, str(conf)], cwd=str(self.tmp), env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def command(self, line):
        with open(self.commands, "a") as f:
            f.write(line + "\n")

    def messages(self, kind=None):
        """The messages received so far (JSON objects), of one type if kind is given."""
        out = []
        if not self.received.exists():
            return out
        for line in self.received.read_text().splitlines():
            # ExaBGP 4.2 quotes some strings twice ("afi": ""ipv4"" in refresh messages)
            line = re.sub(r'""([^",]+)""', r'"\1"', line)
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if kind is None or msg.get("type") == kind:
                out.append(msg)
        return out

    def held(self):
        """(prefix, path id) -> (family, next hop, attributes) of what it holds from us now."""
        held = {}
        for m in self.messages("update"):
            upd = m["neighbor"]["message"].get("update", {})
            for fam in upd.get("withdraw", {}).values():
                for n in fam:
                    held.pop((n["nlri"], n.get("path-information")), None)
            for family, by_nh in upd.get("announce", {}).items():
                for nh, nets in by_nh.items():
                    for n in nets:
                        held[(n["nlri"], n.get("path-information"))] = (family, nh, upd.get("attribute", {}))
        return held

    def announced(self):
        """prefix -> (next hop, attributes) of what it holds now (one path a prefix)."""
        return {k[0]: v[1:] for k, v in self.held().items()}

    def kill(self):
        """SIGKILL: its helpers end by themselves (end of input; tail --pid)."""
        self.proc.kill()
        self.proc.wait(timeout=5)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def tools(tmp_path):
    made = []

    def make(cls, name, *args, **kw):
        d = tmp_path / name
        d.mkdir()
        t = cls(d, *args, **kw)
        made.append(t)
        return t

    yield make
    for t in made:
        t.close()
