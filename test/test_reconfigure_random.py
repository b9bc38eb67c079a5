"""Random reconfigurations of tables, pipes and static protocols, ours and
Debian's BIRD 2 side by side on the same configs: after every `configure`
both daemons hold the routes due in every table, as the test works them
out from the config (expected()).

The configs are a tree of tables (master4 and up to three more; a pipe
joins a table to its parent, with a random filter each way) and static
protocols with routes of a small set of prefixes (and one of 3,000
routes), each into some table at
a preference of its own, so the best route of every net is the same in
both daemons whatever order the routes came in. Each step changes one
thing: a static's routes, table, preference or import filter, a pipe's
filters (one of them adds one to the preference, two check ROAs) or its
parent, a ROA added to or removed from the ROA table the filters read, a
table
added, removed or made `sorted`, a static or pipe added, removed,
disabled or enabled; a step makes one to three changes, each configured at once, and
now and then configures softly and then reloads all, and now and then a
protocol is restarted or reloaded. A step that leaves the two daemons with different routes fails
with both listings and the configs so far.

RECONF_RANDOM_SEED repeats a run, RECONF_RANDOM_STEPS makes it longer. No
sockets but the control sockets.
"""

import ipaddress
import os
import random
import re
import time

import pytest

from conftest import poll, random_seed, start_beside_bird2, strip_codes

TABLES = ["master4", "t1", "t2", "t3"]
PREFIXES = (["10.%d.%d.0/24" % (a, b) for a in range(1, 4) for b in range(3)]
            + ["10.%d.0.0/16" % a for a in range(1, 4)] + ["10.0.0.0/8"])
DESTS = ["blackhole", "unreachable", "prohibit"]
BIG = ["11.%d.%d.0/24" % (i // 256, i % 256) for i in range(3000)]
PLUS = "filter { preference = preference + 1; accept; }"
FILTERS = ["all", "none", "where net.len = 24", "where net ~ [10.1.0.0/16+]", "where net.len <= 16",
           "where net ~ [10.2.0.0/16+, 10.0.0.0/8]", PLUS,
           "where roa_check(r4, net, 65001) != ROA_INVALID", "where roa_check(r4, net, 65002) = ROA_VALID"]
# The ROAs of r4 to pick from: (prefix, max length, ASN)
ROAS = [("10.0.0.0/8", 16, 65001), ("10.1.0.0/16", 24, 65002), ("10.2.0.0/16", 24, 65001),
        ("10.3.0.0/16", 16, 65001), ("11.0.0.0/8", 24, 65002), ("11.0.0.0/16", 24, 65001)]
PREFERENCES = [110, 120, 130, 140, 150, 160, 170, 180, 190, 200]


def new_filters(rnd):
    return [rnd.choice(FILTERS), rnd.choice(FILTERS)]


class State:
    """What a config says: tables (name -> sorted), the tree (table ->
    parent, for every table but master4), pipes (child table -> [import,
    export, disabled]), statics (name -> [table, preference, {prefix:
    dest}, import filter, disabled])."""

    def __init__(self, rnd):
        self.rnd = rnd
        self.tables = {"master4": False, "t1": False}
        self.parent = {"t1": "master4"}
        self.pipes = {"t1": ["all", "all", False]}
        self.statics = {}
        self.roas = set(rnd.sample(range(len(ROAS)), 3))
        self.next_static = 1
        for _ in range(3):
            self.add_static()
        # and one big enough that flushes and feeds take several steps,
        # which the next configure may overtake
        self.add_static({p: "blackhole" for p in BIG})

    def add_static(self, routes=None):
        free = [p for p in PREFERENCES if p not in {s[1] for s in self.statics.values()}]
        if not free:
            return
        name = "s%d" % self.next_static
        self.next_static += 1
        routes = routes or {p: self.rnd.choice(DESTS) for p in self.rnd.sample(PREFIXES, self.rnd.randint(1, 5))}
        self.statics[name] = [self.rnd.choice(sorted(self.tables)), self.rnd.choice(free), routes, "all", False]

    def remove_table(self, t):
        del self.tables[t]
        self.parent.pop(t, None)
        self.pipes.pop(t, None)
        for s in self.statics.values():
            if s[0] == t:
                s[0] = "master4"
        for child, par in list(self.parent.items()):
            if par == t:
                self.parent[child] = "master4"
                self.pipes.pop(child, None)

    def mutate(self):
        """One random change; returns what it did, for the failure message."""
        rnd = self.rnd
        others = sorted(t for t in self.tables if t != "master4")
        while True:
            what = rnd.choice(["routes", "routes", "move", "preference", "filters", "filters", "parent", "pipe",
                               "table", "sorted", "static", "import", "disabled", "roa"])
            if what == "roa":
                k = rnd.randrange(len(ROAS))
                self.roas ^= {k}
                return "ROA %s max %d as %d %s" % (*ROAS[k], "added" if k in self.roas else "removed")
            if what == "routes" and self.statics:
                name = rnd.choice(sorted(self.statics))
                routes = self.statics[name][2]
                p = rnd.choice(PREFIXES)
                if p in routes and (len(routes) > 1 and rnd.random() < 0.5):
                    del routes[p]
                else:
                    routes[p] = rnd.choice(DESTS)
                return "%s: route %s %s" % (name, p, routes.get(p, "removed"))
            if what == "move" and self.statics:
                name = rnd.choice(sorted(self.statics))
                self.statics[name][0] = rnd.choice(sorted(self.tables))
                return "%s: into %s" % (name, self.statics[name][0])
            if what == "preference" and self.statics:
                free = [p for p in PREFERENCES if p not in {s[1] for s in self.statics.values()}]
                if free:
                    name = rnd.choice(sorted(self.statics))
                    self.statics[name][1] = rnd.choice(free)
                    return "%s: preference %d" % (name, self.statics[name][1])
            if what == "import" and self.statics:
                name = rnd.choice(sorted(self.statics))
                self.statics[name][3] = rnd.choice(FILTERS)
                return "%s: import %s" % (name, self.statics[name][3])
            if what == "disabled" and (self.statics or self.pipes):
                which = rnd.choice(sorted(self.statics) + ["p_" + c for c in sorted(self.pipes)])
                x = self.pipes[which[2:]] if which.startswith("p_") else self.statics[which]
                x[-1] = not x[-1]
                return "%s: disabled %s" % (which, x[-1])
            if what == "filters" and self.pipes:
                child = rnd.choice(sorted(self.pipes))
                self.pipes[child][:2] = new_filters(rnd)
                return "pipe of %s: import %s, export %s" % (child, *self.pipes[child][:2])
            if what == "parent" and others:
                child = rnd.choice(others)
                # a tree: the parent comes before the child in TABLES
                parents = [t for t in TABLES[:TABLES.index(child)] if t in self.tables]
                self.parent[child] = rnd.choice(parents)
                return "%s: parent %s" % (child, self.parent[child])
            if what == "pipe" and others:
                child = rnd.choice(others)
                if child in self.pipes:
                    del self.pipes[child]
                    return "pipe of %s removed" % child
                self.pipes[child] = new_filters(rnd) + [False]
                return "pipe of %s to %s added" % (child, self.parent[child])
            if what == "table":
                absent = [t for t in TABLES if t not in self.tables]
                if absent and (not others or rnd.random() < 0.5):
                    t = absent[0]
                    self.tables[t] = False
                    self.parent[t] = rnd.choice([x for x in TABLES[:TABLES.index(t)] if x in self.tables])
                    if rnd.random() < 0.7:
                        self.pipes[t] = new_filters(rnd) + [False]
                    return "table %s added under %s" % (t, self.parent[t])
                if others:
                    t = rnd.choice(others)
                    self.remove_table(t)
                    return "table %s removed" % t
            if what == "sorted":
                t = rnd.choice(sorted(self.tables))
                self.tables[t] = not self.tables[t]
                return "table %s sorted %s" % (t, self.tables[t])
            if what == "static":
                if len(self.statics) > 1 and rnd.random() < 0.4:
                    name = rnd.choice(sorted(self.statics))
                    del self.statics[name]
                    return "%s removed" % name
                if len(self.statics) < 6:
                    self.add_static()
                    return "static added"

    def config(self):
        out = ["router id 10.98.0.1;"]
        for t in TABLES[1:]:
            if t in self.tables:
                out.append("ipv4 table %s%s;" % (t, " sorted" if self.tables[t] else ""))
        if self.tables["master4"]:
            out.append("ipv4 table master4 sorted;")
        out.append("roa4 table r4 { min settle time 50 ms; max settle time 500 ms; };")
        out.append("protocol static sroa { roa4 { table r4; }; %s }"
                   % " ".join("route %s max %d as %d;" % ROAS[k] for k in sorted(self.roas)))
        for name, (table, pref, routes, imp, off) in sorted(self.statics.items()):
            body = " ".join("route %s %s;" % (p, d) for p, d in sorted(routes.items()))
            out.append("protocol static %s {%s ipv4 { table %s; preference %d; import %s; }; %s }"
                       % (name, " disabled;" if off else "", table, pref, imp, body))
        for child, (imp, exp, off) in sorted(self.pipes.items()):
            out.append("protocol pipe p_%s {%s table %s; peer table %s; import %s; export %s; }"
                       % (child, " disabled;" if off else "", self.parent[child], child, imp, exp))
        return "\n".join(out) + "\n"


DEST_SHOWN = {"blackhole": "blackhole", "unreachable": "unreachable", "prohibit": "prohibited"}


def net_in(prefix, net):
    """net ~ [prefix+]: net is prefix or a subnet of it."""
    a, b = ipaddress.ip_network(prefix), ipaddress.ip_network(net)
    return b.prefixlen >= a.prefixlen and b.subnet_of(a)


def roa_check(roas, net, asn):
    """RFC 6811 as roa_check() answers: unknown without a ROA covering
    net, valid with one of asn whose max length takes it, else invalid."""
    covering = [ROAS[k] for k in roas if net_in(ROAS[k][0], net)]
    if not covering:
        return "unknown"
    plen = int(net.split("/")[1])
    return "valid" if any(a == asn and plen <= m for _, m, a in covering) else "invalid"


def apply(flt, net, pref, roas):
    """What a filter of FILTERS does to a route of net (ROAs roas in r4):
    its preference after, None when rejected."""
    plen = int(net.split("/")[1])
    ok = {"all": True, "none": False, "where net.len = 24": plen == 24,
          "where net ~ [10.1.0.0/16+]": net_in("10.1.0.0/16", net), "where net.len <= 16": plen <= 16,
          "where net ~ [10.2.0.0/16+, 10.0.0.0/8]": net_in("10.2.0.0/16", net) or net == "10.0.0.0/8",
          PLUS: True,
          FILTERS[-2]: roa_check(roas, net, 65001) != "invalid",
          FILTERS[-1]: roa_check(roas, net, 65002) == "valid"}[flt]
    return None if not ok else pref + 1 if flt == PLUS else pref


def expected(st):
    """The routes every table should hold: a pipe passes every route (not
    only the best) that its filter for the direction accepts, and in a tree
    of tables each route has one way to each table. The preferences of the
    statics are 10 apart and a way is at most three pipes long: the filter
    that adds one never makes two routes of a net equal."""
    edges = {}      # table -> [(next table, filter on the way)]
    for child, (imp, exp, off) in st.pipes.items():
        if not off:
            edges.setdefault(st.parent[child], []).append((child, exp))
            edges.setdefault(child, []).append((st.parent[child], imp))
    held = {t: [] for t in st.tables}
    for name, (table, pref, rts, imp, off) in st.statics.items():
        for net, dest in rts.items() if not off else ():
            first = apply(imp, net, pref, st.roas)
            if first is None:
                continue
            seen, todo = {table}, [(table, first)]
            while todo:
                t, p = todo.pop()
                held[t].append((p, net, "%s [%s]" % (DEST_SHOWN[dest], name)))
                for nxt, flt in edges.get(t, []):
                    q = apply(flt, net, p, st.roas)
                    if nxt not in seen and q is not None:
                        seen.add(nxt)
                        todo.append((nxt, q))
    out = {}
    for t, rows in held.items():
        best = {}
        for pref, net, _ in rows:
            best[net] = max(best.get(net, 0), pref)
        out[t] = sorted((net, "%s%s (%d)" % (text, " *" if pref == best[net] else "", pref))
                        for pref, net, text in rows)
    return out


TIME_RE = re.compile(r"\[(\S+) [0-9:.]+")


def routes(d, tables):
    """Each table's routes as (net, the rest of the line, the time left
    out), sorted: the order of nets, and of the routes after the best one
    (`*`), is each daemon's own."""
    out = {}
    for t in tables:
        rows, net = [], None
        for line in strip_codes(d.raw("show route table %s" % t)):
            if not line.strip() or line.startswith("Table "):
                continue
            if not line.startswith(" "):
                net, line = line.split(None, 1)
            rows.append((net, TIME_RE.sub(r"[\1", line.strip())))
        out[t] = sorted(rows)
    return out


def differences(got, want):
    """Per table, the rows that should not be there and those missing."""
    out = []
    for t in sorted(want):
        extra = sorted(set(got.get(t, [])) - set(want[t]))
        missing = sorted(set(want[t]) - set(got.get(t, [])))
        if extra or missing:
            out.append("%s: extra %r, missing %r" % (t, extra, missing))
    return "; ".join(out) or "as due"


def configure(d, soft=False):
    reply = d.raw("configure soft" if soft else "configure").decode()
    # a slow daemon (sanitizers) may still be at the one before: it queues
    assert reply.endswith(("0003 Reconfigured\n", "0004 Reconfiguration in progress\n",
                           "0005 Reconfiguration already in progress, queueing new config\n")), reply


def configured(d):
    """Wait until no reconfiguration is in progress or queued: a `reload`
    sent before a queued `configure soft` took effect reloads under the
    config before it, and what the soft one changed is never reloaded
    (BIRD 2 the same; sanitizer builds queue often)."""
    if not poll(lambda: not re.search(rb"^000[45]-", d.raw("configure status"), re.M), timeout=30):
        # what holds it up: a protocol still on its way down or restarting
        pytest.fail("%s: %s\n%s" % (d.dir, d.raw("configure status").decode(),
                                     d.raw("show protocols").decode()))


def test_random_reconfigurations_match_bird2(start_daemon, ours_only):
    seed = random_seed("RECONF_RANDOM_SEED")
    steps = int(os.environ.get("RECONF_RANDOM_STEPS", "50"))
    st = State(random.Random(seed))
    ours, ref = start_beside_bird2(start_daemon, st.config())
    history = [st.config()]

    def same():
        tables, want = sorted(st.tables), expected(st)
        a, b = routes(ours, tables), routes(ref, tables)
        return (a == want and b == want, a, b, want)

    def keep_history():
        name = os.path.join(os.path.dirname(ours.dir), "configs.txt")
        with open(name, "w") as f:
            f.write("\n".join(history))
        return name

    rnd = random.Random(seed + 1)
    try:
        run_steps(st, ours, ref, rnd, steps, history, same)
    except BaseException:       # pytest.fail() raises an outcome, not an Exception
        print("seed %d: the configs so far: %s" % (seed, keep_history()))
        raise


def run_steps(st, ours, ref, rnd, steps, history, same):
    for step in range(steps + 1):
        # a few changes in a row, each configured before the one before
        # has settled; now and then softly, the routes then reloaded
        soft = rnd.random() < 0.2
        for _ in range(rnd.choice([1, 1, 2, 3]) if step else 0):
            did = st.mutate()
            text = st.config()
            history.append("# %s%s\n%s" % (did, " (configure soft)" if soft else "", text))
            for d in (ours, ref):
                d.reconfigure_file(text)
                configure(d, soft)
        if soft:
            history.append("# reload all")
            for d in (ours, ref):
                configured(d)
                assert d.raw("reload all").decode().endswith("\n"), "no reply"
        # and now and then a command that changes no route when done
        if step and rnd.random() < 0.3:
            names = sorted(st.statics) + ["p_" + c for c in sorted(st.pipes)]
            cmd = "%s %s" % (rnd.choice(["restart", "reload", "reload in", "reload out"]), rnd.choice(names))
            history.append("# " + cmd)
            for d in (ours, ref):
                configured(d)
                assert d.raw(cmd).decode().endswith("\n"), "no reply"
        # both settle in their own time: the routes due within a few seconds
        end = time.monotonic() + 5
        ok, a, b, want = same()
        while not ok and time.monotonic() < end:
            time.sleep(0.05)
            ok, a, b, want = same()
        assert ok, "step %d:\nours: %s\nBIRD 2: %s" % (step, differences(a, want), differences(b, want))
