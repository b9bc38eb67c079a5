#!/usr/bin/env python3
"""DOC: convergence, thread-scaling and memory charts from a stats CSV.

Reads CSV files in the format that BIRD's thread benchmarks write (and that
our convergence bench appends to):

    VERSION;TYPE;PEERS;ROUTES;;TOTAL_ROUTES;TOTAL_PREFICES;RSS;SZ;VSZ;i;
    TIMEDIF;DATETIME                                  (one line in the file)

and draws, with matplotlib's Agg backend:

  * convergence-TYPE.{png,pdf}: one chart per route-server layout (TYPE), as
    in BIRD's threads chapter: log-log, x = TOTAL_ROUTES, y = TIMEDIF
    (seconds), one line per (version, peers) through the medians, a box from
    the 25th to the 75th percentile and whiskers to min and max at each point,
    and a dashed line at 2 s, the measurement instability limit;
  * scaling.{png,pdf}: speedup against thread count per workload
    (version, TYPE, PEERS, ROUTES), when the rows carry a thread count;
  * memory.{png,pdf}: median RSS against TOTAL_ROUTES, one panel per TYPE and
    one line per (version, peers).

Data flow: parse_stats() -> rows -> *_series() (pure statistics, no
matplotlib) -> draw_*() (matplotlib, imported lazily so the statistics can be
imported and tested by a Python without matplotlib) -> files.  Malformed
lines are reported with their line numbers and skipped; an input without a
single usable row is an error (exit status 2).

Run with --help for the options; doc/threads/README.md explains the format
and how BIRD's published charts are reproduced.
"""

import argparse
import json
import math
import os
import re
import sys
from collections import defaultdict, namedtuple

# The column layout of BIRD's stats.csv, used when a file has no header line.
# The fifth column is unnamed in stats.csv and called BLOCKSIZE in
# stats-longfilters.csv; nothing here reads it.
DEFAULT_COLUMNS = ("VERSION", "TYPE", "PEERS", "ROUTES", "", "TOTAL_ROUTES",
                   "TOTAL_PREFICES", "RSS", "SZ", "VSZ", "i", "TIMEDIF",
                   "DATETIME")
REQUIRED_COLUMNS = ("VERSION", "TYPE", "PEERS", "ROUTES", "TOTAL_ROUTES",
                    "TIMEDIF")
# Optional column holding the thread count; it wins over the VERSION suffix.
THREAD_COLUMNS = ("THREADS", "THREAD")
# A trailing "/t4" or "-t4" on VERSION is the thread count.
DEFAULT_THREADS_RE = r"[/-]t(\d+)$"
INSTABILITY_LIMIT_S = 2.0
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
RSS_UNITS = {"KiB": 1.0, "MiB": 1024.0, "GiB": 1024.0 * 1024.0}
MAX_REPORTED_PROBLEMS = 50

Row = namedtuple("Row", "line version base_version threads type peers routes "
                        "total_routes rss timedif")
Problem = namedtuple("Problem", "line reason text")
ParseResult = namedtuple("ParseResult", "rows problems notes")
Summary = namedtuple("Summary", "n min q1 median q3 max")
Series = namedtuple("Series", "label version peers points")
Workload = namedtuple("Workload", "label version type peers routes points")
DrawResult = namedtuple("DrawResult", "files labels")


class StatsError(Exception):
    """The input cannot give a single chart (missing, empty, no valid row).
    problems holds the malformed lines met on the way, if any."""

    def __init__(self, message, problems=()):
        super().__init__(message)
        self.problems = list(problems)


# ---------------------------------------------------------------- parsing --

def _stats_header(fields):
    return fields and fields[0].strip().upper() == "VERSION"


def _parse_int(text, name):
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError("%s is not an integer: %r" % (name, text)) from None
    if value <= 0:
        raise ValueError("%s must be positive: %r" % (name, text))
    return value


def stats_time_seconds(text):
    """TIMEDIF as seconds: a plain number is seconds ('.87' too, as BIRD's
    `bc` writes it); a trailing s, ms, us or ns unit is converted."""
    m = re.fullmatch(r"\s*([-+0-9.eE]+)\s*(s|ms|us|ns)?\s*", text)
    if not m:
        raise ValueError("TIMEDIF is not a time: %r" % text)
    try:
        value = float(m.group(1)) * TIME_UNITS[m.group(2) or "s"]
    except ValueError:
        raise ValueError("TIMEDIF is not a number: %r" % text) from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError("TIMEDIF must be a positive time: %r" % text)
    return value


def stats_split_threads(version, threads_re):
    """Split a VERSION like 'ours-0.1.0/t4' into ('ours-0.1.0', 4).
    threads_re is a compiled regex whose group 1 is the thread count; the
    matched text is cut out of the version. No match gives (version, None)."""
    m = threads_re.search(version)
    if not m:
        return version, None
    base = (version[:m.start()] + version[m.end():]).strip()
    return base or version, int(m.group(1))


def _parse_row(lineno, fields, cols, threads_re):
    def get(name):
        return fields[cols[name]]

    version = get("VERSION").strip()
    typ = get("TYPE").strip()
    if not version or not typ:
        raise ValueError("empty VERSION or TYPE")
    peers = _parse_int(get("PEERS"), "PEERS")
    routes = _parse_int(get("ROUTES"), "ROUTES")
    total = _parse_int(get("TOTAL_ROUTES"), "TOTAL_ROUTES")
    timedif = stats_time_seconds(get("TIMEDIF"))
    if "DATETIME" in cols and get("DATETIME").strip():
        # BIRD writes `date +%F@%T`; a number here means shifted columns.
        if not re.match(r"\d{4}-\d\d-\d\d", get("DATETIME").strip()):
            raise ValueError("DATETIME is not a date (columns shifted?): %r"
                             % get("DATETIME"))
    rss = None
    if "RSS" in cols and get("RSS").strip():
        rss = _parse_int(get("RSS"), "RSS")
    base, threads = stats_split_threads(version, threads_re)
    for name in THREAD_COLUMNS:
        if name in cols and get(name).strip():
            base, threads = version, _parse_int(get(name), name)
            break
    return Row(lineno, version, base, threads, typ, peers, routes, total,
               rss, timedif)


def parse_stats(path, threads_re=DEFAULT_THREADS_RE):
    """Read a stats CSV. Returns ParseResult(rows, problems, notes).

    A line whose first field is VERSION is a header and (re)defines the
    columns, so files concatenated with their headers read fine; without a
    header BIRD's 13-column layout is assumed. A row must have as many fields
    as the header, except that a missing trailing DATETIME is tolerated
    (nothing reads it). Blank lines and lines starting with '#' are ignored.
    Anything else that does not parse is a Problem and is skipped.
    Raises StatsError when the file cannot be read or has no data row."""
    if isinstance(threads_re, str):
        threads_re = re.compile(threads_re)
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise StatsError("cannot read %s: %s" % (path, e.strerror or e))

    cols = {name: i for i, name in enumerate(DEFAULT_COLUMNS) if name}
    ncols = len(DEFAULT_COLUMNS)
    last_is_datetime = True
    rows, problems, notes = [], [], []
    short_datetime = 0
    for lineno, line in enumerate(lines, 1):
        line = line.strip().lstrip("\ufeff")
        if not line or line.startswith("#"):
            continue
        fields = line.split(";")
        if _stats_header(fields):
            names = [x.strip().upper() for x in fields]
            names = ["i" if x == "I" else x for x in names]
            missing = [c for c in REQUIRED_COLUMNS if c not in names]
            if missing:
                problems.append(Problem(lineno, "header lacks column(s) %s"
                                        % ", ".join(missing), line))
                continue
            cols = {}
            for i, name in enumerate(names):
                if name and name not in cols:
                    cols[name] = i
            ncols = len(names)
            last_is_datetime = names[-1] == "DATETIME"
            continue
        if len(fields) != ncols:
            if not (last_is_datetime and len(fields) == ncols - 1):
                problems.append(Problem(lineno, "%d fields, expected %d"
                                        % (len(fields), ncols), line))
                continue
            short_datetime += 1
            fields.append("")
        try:
            rows.append(_parse_row(lineno, fields, cols, threads_re))
        except ValueError as e:
            problems.append(Problem(lineno, str(e), line))
    if short_datetime:
        notes.append("%d row(s) lack the trailing DATETIME field; "
                     "accepted, it is not used" % short_datetime)
    if not rows:
        if not problems and not any(l.strip() for l in lines):
            raise StatsError("%s is empty" % path)
        raise StatsError("%s has no valid data row (%d malformed line(s))"
                         % (path, len(problems)), problems)
    return ParseResult(rows, problems, notes)


# ------------------------------------------------------------- statistics --

def stats_percentile(values, q):
    """q-th percentile (0..100) with linear interpolation between closest
    ranks (numpy's default, and what BIRD's stats-filter script does)."""
    if not values:
        raise ValueError("percentile of no values")
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    frac = pos - lo
    return s[lo] * (1.0 - frac) + s[hi] * frac


def stats_summary(values):
    """Summary(n, min, q1, median, q3, max) of a non-empty list."""
    return Summary(len(values), min(values), stats_percentile(values, 25),
                   stats_percentile(values, 50), stats_percentile(values, 75),
                   max(values))


def _natural_key(text):
    return [(0, int(t), "") if t.isdigit() else (1, 0, t)
            for t in re.split(r"(\d+)", text)]


class VersionNames:
    """--label and --exclude: display names for VERSION strings.

    A label maps the raw VERSION first, then its base version (the VERSION
    without thread suffix) keeping the '/tN' on; an exclusion matches the
    raw VERSION, the base version or the displayed name."""

    def __init__(self, labels=None, exclude=None):
        self.labels = dict(labels or {})
        self.exclude = set(exclude or ())

    def series_name(self, row):
        """Name of the row's version in convergence and memory charts;
        rows of one version with different thread counts stay apart."""
        if row.version in self.labels:
            name = self.labels[row.version]
            if row.base_version == row.version and row.threads is not None:
                name += "/t%d" % row.threads     # count from a column
            return name
        name = self.labels.get(row.base_version, row.base_version)
        return name + ("/t%d" % row.threads if row.threads is not None else "")

    def base_name(self, row):
        """Name of the row's version without thread count (scaling chart)."""
        return self.labels.get(row.base_version, row.base_version)

    def excluded(self, row):
        return bool(self.exclude & {row.version, row.base_version,
                                    self.series_name(row),
                                    self.base_name(row)})


def stats_filter(rows, names, types=None):
    """Rows not excluded by names, of the given TYPEs (all when None)."""
    return [r for r in rows if not names.excluded(r)
            and (not types or r.type in types)]


def stats_types(rows):
    """TYPEs in the order of BIRD's chapter first, then the others sorted."""
    known = ["single", "multi", "imex", "mulimex"]
    present = {r.type for r in rows}
    return ([t for t in known if t in present]
            + sorted(present - set(known), key=_natural_key))


def _series(rows, typ, names, value):
    groups = defaultdict(lambda: defaultdict(list))
    for r in rows:
        v = value(r)
        if r.type == typ and v is not None and not names.excluded(r):
            groups[(names.series_name(r), r.peers)][r.total_routes].append(v)
    out = []
    for ver, peers in sorted(groups,
                             key=lambda k: (_natural_key(k[0]), k[1])):
        pts = groups[(ver, peers)]
        out.append(Series("%s, %d peers" % (ver, peers), ver, peers,
                          [(x, stats_summary(pts[x])) for x in sorted(pts)]))
    return out


def convergence_series(rows, typ, names):
    """Series of one TYPE: one per (version name, peers), each a sorted list
    of (total_routes, Summary of TIMEDIF in seconds)."""
    return _series(rows, typ, names, lambda r: r.timedif)


def memory_series(rows, typ, names):
    """Like convergence_series() but summarising RSS (as in the file, KiB);
    rows without RSS are left out."""
    return _series(rows, typ, names,
                   lambda r: None if r.rss is None else float(r.rss))


def _routes_text(n):
    for div, suffix in ((1000000, "M"), (1000, "k")):
        if n >= div and n % (div // 10) == 0:
            return ("%g" % (n / div)) + suffix
    return str(n)


def scaling_workloads(rows, names):
    """Speedup per workload (version, TYPE, PEERS, ROUTES):
    median TIMEDIF at 1 thread / median TIMEDIF at N threads.

    Returns (workloads, messages): workloads have points
    [(threads, speedup, Summary at that thread count)] sorted by threads;
    messages say which workloads were left out and why."""
    groups = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.threads is not None and not names.excluded(r):
            key = (names.base_name(r), r.type, r.peers, r.routes)
            groups[key][r.threads].append(r.timedif)
    workloads, messages = [], []
    order = {t: i for i, t in enumerate(stats_types(rows))}
    for key in sorted(groups, key=lambda k: (_natural_key(k[0]),
                                             order.get(k[1], 99), k[2], k[3])):
        ver, typ, peers, routes = key
        label = "%s, %s, %d peers x %s routes" % (ver, typ, peers,
                                                  _routes_text(routes))
        by_threads = groups[key]
        if 1 not in by_threads:
            messages.append("scaling: %s has no 1-thread runs; left out"
                            % label)
            continue
        if len(by_threads) < 2:
            messages.append("scaling: %s ran at 1 thread only; left out"
                            % label)
            continue
        base = stats_summary(by_threads[1]).median
        pts = []
        for n in sorted(by_threads):
            s = stats_summary(by_threads[n])
            pts.append((n, base / s.median, s))
        workloads.append(Workload(label, ver, typ, peers, routes, pts))
    return workloads, messages


# ---------------------------------------------------------------- drawing --

# One sequential colormap per version; the peers of a version are its shades.
# Ordered so that the first few versions differ most (blue against orange).
PALETTES = ("Blues", "Oranges", "Greens", "Purples", "Reds", "Greys",
            "YlOrBr", "PuRd", "BuGn", "GnBu", "YlGn", "OrRd")


def chart_palettes(versions):
    """Deterministic palette per version name: the names in natural order
    take the palettes in order (so '2.0.8' is blue and '3.0-alpha0' orange,
    whatever order the rows came in). main() computes this once over the
    whole file, so a version has the same colour in every chart of a run."""
    names = sorted(set(versions), key=_natural_key)
    return {v: PALETTES[i % len(PALETTES)] for i, v in enumerate(names)}


def _shade(plt, palette, i, n):
    cmap = plt.get_cmap(palette)
    return cmap(0.45 + 0.5 * (i / (n - 1) if n > 1 else 1.0))


def _mpl():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError as e:
        raise StatsError(
            "matplotlib is not importable by %s (%s); install Debian's "
            "python3-matplotlib (and run /usr/bin/python3) or pip install "
            "matplotlib" % (sys.executable, e))
    return plt, ticker


def _count_text(x, _pos=None):
    for div, suffix in ((1e6, "M"), (1e3, "k")):
        if x >= div:
            return ("%g" % (x / div)) + suffix
    return "%g" % x


def _plain_text(y, _pos=None):
    return "%g" % y


def _log_axis(ax, axis, ticker, formatter, span=None):
    """Log axis with labels at 1 and 3 of each decade, or at 1, 2 and 5
    when the data spans under two decades (so short ranges get labels)."""
    ax_ = ax.xaxis if axis == "x" else ax.yaxis
    subs = (1.0, 2.0, 5.0) if span is not None and span < 2.0 else (1.0, 3.0)
    ax_.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    ax_.set_minor_locator(ticker.LogLocator(base=10, subs="auto"))
    ax_.set_major_formatter(ticker.FuncFormatter(formatter))
    ax_.set_minor_formatter(ticker.NullFormatter())


def _save(fig, outdir, stem, formats):
    os.makedirs(outdir, exist_ok=True)
    files = []
    for fmt in formats:
        path = os.path.join(outdir, "%s.%s" % (stem, fmt))
        fig.savefig(path, format=fmt, dpi=150, bbox_inches="tight",
                    metadata=({"Software": None} if fmt == "png" else
                              {"Creator": None, "Producer": None,
                               "CreationDate": None}
                              if fmt == "pdf" else None))
        files.append(path)
    return files


def _file_stem(prefix, typ):
    return prefix + re.sub(r"[^A-Za-z0-9_.+-]+", "_", typ)


def draw_convergence(series, typ, outdir, formats=("png", "pdf"),
                     title_suffix="", palettes=None, box_decades=0.012,
                     dodge_decades=0.016):
    """Draw the convergence chart of one TYPE; returns DrawResult(files,
    labels) where labels are the legend texts as drawn.

    Boxes are drawn by hand as rectangles whose width is a fixed fraction of
    a decade, so they look alike along the log x axis. The series of
    different versions at the same x are spread by dodge_decades (about 4 %
    in x per step, centred on the true x) so their boxes do not hide each
    other; the line and box of one series share the spread position."""
    plt, ticker = _mpl()
    from matplotlib.patches import Rectangle
    from matplotlib.lines import Line2D

    versions = []
    for s in series:
        if s.version not in versions:
            versions.append(s.version)
    palettes = palettes or chart_palettes(versions)
    peers_of = {v: sorted({s.peers for s in series if s.version == v})
                for v in versions}

    # Versions with a point at each x, for the spread.
    at_x = defaultdict(set)
    for s in series:
        for x, _ in s.points:
            at_x[x].add(s.version)
    at_x = {x: [v for v in versions if v in vs] for x, vs in at_x.items()}

    fig, ax = plt.subplots(figsize=(11, 7))
    ax.set_xscale("log")
    ax.set_yscale("log")
    lo_y, hi_y, lo_x, hi_x = math.inf, 0.0, math.inf, 0.0
    for s in series:
        pi = peers_of[s.version].index(s.peers)
        color = _shade(plt, palettes[s.version], pi, len(peers_of[s.version]))
        xs = [x * 10 ** ((at_x[x].index(s.version)
                          - (len(at_x[x]) - 1) / 2.0) * dodge_decades)
              for x, _ in s.points]
        ax.plot(xs, [st.median for _, st in s.points], color=color,
                linewidth=1.8, marker="o", markersize=2.5, label=s.label,
                zorder=3)
        half = 10 ** box_decades
        for x, (_, st) in zip(xs, s.points):
            ax.vlines(x, st.min, st.max, color=color, linewidth=0.9, zorder=2)
            ax.hlines([st.min, st.max], x / half * 1.0, x * half,
                      color=color, linewidth=0.9, zorder=2)
            ax.add_patch(Rectangle((x / half, st.q1), x * half - x / half,
                                   max(st.q3 - st.q1, 1e-12),
                                   facecolor=color, edgecolor="black",
                                   linewidth=0.5, alpha=0.85, zorder=2.5))
            lo_y, hi_y = min(lo_y, st.min), max(hi_y, st.max)
            lo_x, hi_x = min(lo_x, x), max(hi_x, x)
    ax.axhline(INSTABILITY_LIMIT_S, color="black", linestyle="--",
               linewidth=1.2, zorder=1,
               label="measurement instability limit (2 s)")
    if lo_y < math.inf:
        ax.set_ylim(min(0.5, lo_y / 1.5), max(10.0, hi_y * 1.5))
        ax.set_xlim(lo_x / 1.35, hi_x * 1.35)
    ax.text(0.995, INSTABILITY_LIMIT_S * 1.06,
            "2 s: measurement instability limit",
            transform=ax.get_yaxis_transform(), ha="right", va="bottom",
            fontsize=8.5, zorder=4,
            bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1))
    if lo_y < math.inf:
        _log_axis(ax, "x", ticker, _count_text, math.log10(hi_x / lo_x))
        _log_axis(ax, "y", ticker, _plain_text, math.log10(hi_y / lo_y))
    ax.grid(True, which="major", linewidth=0.6, alpha=0.6)
    ax.grid(True, which="minor", linewidth=0.3, alpha=0.3)
    ax.set_xlabel("Total number of routes (TOTAL_ROUTES)")
    ax.set_ylabel("Time to converge (s)")
    ax.set_title("Route server convergence time: %s%s" % (typ, title_suffix))
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], color="none"))
    labels.append("line: median; box: 25th-75th\n"
                  "percentile; whiskers: min-max")
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=8.5, frameon=False, borderaxespad=0)
    drawn = [t.get_text() for t in ax.get_legend().get_texts()]
    files = _save(fig, outdir, _file_stem("convergence-", typ), formats)
    plt.close(fig)
    return DrawResult(files, drawn)


def draw_memory(per_type, outdir, formats=("png", "pdf"), title_suffix="",
                palettes=None, rss_unit="MiB"):
    """Median RSS against total routes: one panel per TYPE (per_type is a
    list of (TYPE, [Series])), one line per (version, peers). Returns
    DrawResult(files, labels) with the legend texts as drawn."""
    plt, ticker = _mpl()
    versions = []
    for _, series in per_type:
        for s in series:
            if s.version not in versions:
                versions.append(s.version)
    palettes = palettes or chart_palettes(versions)
    n = len(per_type)
    ncol = 2 if n > 1 else 1
    nrow = (n + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.2 * ncol, 4.4 * nrow),
                             sharex=True, sharey=True, squeeze=False)
    div = RSS_UNITS[rss_unit]
    seen = {}
    for k, (typ, series) in enumerate(per_type):
        ax = axes[k // ncol][k % ncol]
        ax.set_xscale("log")
        ax.set_yscale("log")
        for s in series:
            peers = sorted({t.peers for _, ss in per_type for t in ss
                            if t.version == s.version})
            color = _shade(plt, palettes[s.version], peers.index(s.peers),
                           len(peers))
            line, = ax.plot([x for x, _ in s.points],
                            [st.median / div for _, st in s.points],
                            color=color, marker="o", markersize=3,
                            linewidth=1.6)
            seen.setdefault(s.label, line)
        ax.set_title(typ)
        ax.grid(True, which="major", linewidth=0.6, alpha=0.6)
        ax.grid(True, which="minor", linewidth=0.3, alpha=0.3)
        _log_axis(ax, "x", ticker, _count_text)
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(
            lambda y, _p: "%g" % y))
        if k // ncol == nrow - 1:
            ax.set_xlabel("Total number of routes")
        if k % ncol == 0:
            ax.set_ylabel("Median RSS (%s)" % rss_unit)
    for k in range(n, nrow * ncol):
        axes[k // ncol][k % ncol].set_visible(False)
    labels = sorted(seen, key=lambda l: (_natural_key(l.rsplit(", ", 1)[0]),
                                         int(l.rsplit(", ", 1)[1].split()[0])))
    leg = fig.legend([seen[l] for l in labels], labels, loc="upper left",
                     bbox_to_anchor=(1.0, 0.95), fontsize=8.5, frameon=False)
    fig.suptitle("Route server memory (median RSS)%s" % title_suffix)
    fig.tight_layout()
    drawn = [t.get_text() for t in leg.get_texts()]
    files = _save(fig, outdir, "memory", formats)
    plt.close(fig)
    return DrawResult(files, drawn)


def draw_scaling(workloads, outdir, formats=("png", "pdf"), title_suffix=""):
    """Speedup against threads, one line per workload, with the ideal
    (linear) speedup dashed. Returns DrawResult(files, labels)."""
    plt, ticker = _mpl()
    fig, ax = plt.subplots(figsize=(10, 6.5))
    cmap = plt.get_cmap("tab20" if len(workloads) > 10 else "tab10")
    styles = ["-", "--", ":", "-."]
    versions = sorted({w.version for w in workloads}, key=_natural_key)
    max_t = max(t for w in workloads for t, _, _ in w.points)
    for i, w in enumerate(workloads):
        ax.plot([t for t, _, _ in w.points], [sp for _, sp, _ in w.points],
                color=cmap(i % cmap.N), marker="o", markersize=4,
                linestyle=styles[versions.index(w.version) % len(styles)],
                linewidth=1.6, label=w.label)
    ax.plot([1, max_t], [1, max_t], color="black", linestyle="--",
            linewidth=1, label="ideal (speedup = threads)")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ticks = sorted({t for w in workloads for t, _, _ in w.points})
    ax.set_xticks(ticks)
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _p: "%g" % x))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _p: "%g" % y))
    ax.grid(True, which="major", linewidth=0.6, alpha=0.6)
    ax.set_xlabel("Threads")
    ax.set_ylabel("Speedup (median time at 1 thread / at N threads)")
    ax.set_title("Thread scaling of convergence time%s" % title_suffix)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
              frameon=False, borderaxespad=0)
    drawn = [t.get_text() for t in ax.get_legend().get_texts()]
    files = _save(fig, outdir, "scaling", formats)
    plt.close(fig)
    return DrawResult(files, drawn)


# -------------------------------------------------------------------- CLI --

def _label_pair(text):
    old, sep, new = text.partition("=")
    if not sep or not old or not new:
        raise argparse.ArgumentTypeError("expected OLD=NEW, got %r" % text)
    return old, new


def _regex(text):
    try:
        rx = re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError("bad regex %r: %s" % (text, e))
    if rx.groups < 1:
        raise argparse.ArgumentTypeError(
            "regex %r needs a group capturing the thread count" % text)
    return rx


def _formats(text):
    fmts = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in fmts if f not in ("png", "pdf", "svg")]
    if not fmts or bad:
        raise argparse.ArgumentTypeError("formats are png, pdf, svg: %r"
                                         % text)
    return fmts


def _arg_parser():
    p = argparse.ArgumentParser(
        description="Draw convergence, thread-scaling and memory charts "
                    "from a BIRD-format stats CSV.")
    p.add_argument("csv", help="stats CSV (VERSION;TYPE;PEERS;ROUTES;;"
                               "TOTAL_ROUTES;TOTAL_PREFICES;RSS;SZ;VSZ;i;"
                               "TIMEDIF;DATETIME)")
    p.add_argument("--outdir", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "out"),
        help="output folder (default: doc/threads/out)")
    p.add_argument("--label", action="append", type=_label_pair, default=[],
                   metavar="OLD=NEW",
                   help="show VERSION OLD as NEW (repeatable)")
    p.add_argument("--exclude", action="append", default=[],
                   metavar="VERSION",
                   help="drop the series of this VERSION, raw or as "
                        "labelled (repeatable)")
    p.add_argument("--types", action="append", default=[], metavar="T[,T]",
                   help="only these TYPEs (comma-separated, repeatable; "
                        "default: all in the file)")
    p.add_argument("--format", dest="formats", type=_formats,
                   default=["png", "pdf"], metavar="png,pdf",
                   help="output formats (default png,pdf)")
    p.add_argument("--title-suffix", default="",
                   help="text appended to every chart title")
    p.add_argument("--threads-from-version", type=_regex,
                   default=re.compile(DEFAULT_THREADS_RE), metavar="REGEX",
                   help="regex on VERSION whose group 1 is the thread count "
                        "(default %r: 'ours-0.1/t4' or 'ours-0.1-t4'); a "
                        "THREADS column wins over it" % DEFAULT_THREADS_RE)
    p.add_argument("--rss-unit", choices=sorted(RSS_UNITS), default="MiB",
                   help="unit of the memory chart; the RSS column is KiB "
                        "(ps rss) (default MiB)")
    p.add_argument("--summary", metavar="FILE",
                   help="also write what was drawn (files, legend labels, "
                        "medians) as JSON to FILE")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print only problems and errors")
    return p


def _report_problems(path, problems, notes):
    for pr in problems[:MAX_REPORTED_PROBLEMS]:
        print("%s:%d: %s; line skipped: %s" % (path, pr.line, pr.reason,
                                               pr.text[:120]),
              file=sys.stderr)
    if len(problems) > MAX_REPORTED_PROBLEMS:
        print("%s: ... and %d more malformed line(s) skipped"
              % (path, len(problems) - MAX_REPORTED_PROBLEMS), file=sys.stderr)
    for n in notes:
        print("%s: note: %s" % (path, n), file=sys.stderr)


def _series_json(series):
    return [{"label": s.label, "version": s.version, "peers": s.peers,
             "points": [dict(x=x, **st._asdict()) for x, st in s.points]}
            for s in series]


def main(argv=None):
    args = _arg_parser().parse_args(argv)
    say = (lambda *a: None) if args.quiet else print
    try:
        parsed = parse_stats(args.csv, args.threads_from_version)
    except StatsError as e:
        _report_problems(args.csv, e.problems, [])
        print("chart.py: error: %s" % e, file=sys.stderr)
        return 2
    _report_problems(args.csv, parsed.problems, parsed.notes)
    names = VersionNames(dict(args.label), args.exclude)
    wanted = [t.strip() for arg in args.types for t in arg.split(",")
              if t.strip()]
    rows = stats_filter(parsed.rows, names, wanted or None)
    for t in wanted:
        if t not in {r.type for r in parsed.rows}:
            print("chart.py: warning: no rows of TYPE %r" % t,
                  file=sys.stderr)
    for v in names.exclude:
        if not any(v in (r.version, r.base_version, names.series_name(r),
                         names.base_name(r)) for r in parsed.rows):
            print("chart.py: warning: --exclude %r matches no VERSION" % v,
                  file=sys.stderr)
    for v in names.labels:
        if not any(v in (r.version, r.base_version) for r in parsed.rows):
            print("chart.py: warning: --label %r matches no VERSION" % v,
                  file=sys.stderr)
    if not rows:
        print("chart.py: error: no rows left after --types/--exclude",
              file=sys.stderr)
        return 2
    say("%s: %d rows, %d malformed line(s) skipped"
        % (args.csv, len(parsed.rows), len(parsed.problems)))

    types = stats_types(rows)
    palettes = chart_palettes({names.series_name(r) for r in rows})
    summary = {"csv": args.csv, "rows": len(parsed.rows),
               "malformed_lines": [p.line for p in parsed.problems],
               "charts": [], "skipped": []}
    try:
        for typ in types:
            series = convergence_series(rows, typ, names)
            res = draw_convergence(series, typ, args.outdir, args.formats,
                                   args.title_suffix, palettes)
            summary["charts"].append({"kind": "convergence", "type": typ,
                                      "files": res.files,
                                      "labels": res.labels,
                                      "series": _series_json(series)})
            say("wrote %s" % ", ".join(res.files))
            for s in series:
                x, st = s.points[-1]
                say("  %-40s largest x %8d: median %9.3f s (n=%d, "
                    "%.3f..%.3f)" % (s.label, x, st.median, st.n, st.min,
                                     st.max))

        workloads, messages = scaling_workloads(rows, names)
        for m in messages:
            say(m)
        if workloads:
            res = draw_scaling(workloads, args.outdir, args.formats,
                               args.title_suffix)
            summary["charts"].append({
                "kind": "scaling", "files": res.files, "labels": res.labels,
                "workloads": [{"label": w.label, "points": [
                    {"threads": t, "speedup": sp, "median": st.median}
                    for t, sp, st in w.points]} for w in workloads]})
            say("wrote %s" % ", ".join(res.files))
        else:
            why = ("no thread count in the data (no THREADS column, no "
                   "VERSION matching %r)" % args.threads_from_version.pattern
                   if not any(r.threads is not None for r in rows) else
                   "no workload has runs at 1 thread and at more threads")
            say("scaling chart skipped: %s" % why)
            summary["skipped"].append({"kind": "scaling", "reason": why})

        per_type = [(t, memory_series(rows, t, names)) for t in types]
        per_type = [(t, s) for t, s in per_type if s]
        if per_type:
            res = draw_memory(per_type, args.outdir, args.formats,
                              args.title_suffix, palettes, args.rss_unit)
            summary["charts"].append({
                "kind": "memory", "files": res.files, "labels": res.labels,
                "types": {t: _series_json(s) for t, s in per_type}})
            say("wrote %s" % ", ".join(res.files))
        else:
            say("memory chart skipped: no RSS values")
            summary["skipped"].append({"kind": "memory",
                                       "reason": "no RSS values"})
    except StatsError as e:
        print("chart.py: error: %s" % e, file=sys.stderr)
        return 2
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
