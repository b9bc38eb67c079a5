"""Tests of doc/threads/chart.py, the stats CSV chart tool.

The statistics are tested in-process: they need nothing beyond the standard
library. Drawing needs matplotlib, which the `python3` on PATH may lack
(Debian's python3-matplotlib lives in /usr/bin/python3), so the drawing tests
run the tool with the first interpreter that can import matplotlib and skip,
saying why, when none can.
"""

import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHART = os.path.join(REPO, "doc", "threads", "chart.py")
BIRD_CSV = os.path.join(REPO, "..", "shared", "data", "bird-threads-stats.csv")
HEADER = ("VERSION;TYPE;PEERS;ROUTES;;TOTAL_ROUTES;TOTAL_PREFICES;RSS;SZ;VSZ;"
          "i;TIMEDIF;DATETIME\n")
BIRD_TYPES = ("single", "multi", "imex", "mulimex")
BIRD_LABELS = ["--label", "v2.0.8=2.0.8",
               "--label", "v2.0.8-191-g68d8716f=3.0-alpha0"]


def _load_chart():
    spec = importlib.util.spec_from_file_location("chart", CHART)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


chart = _load_chart()


def _row(version, typ, peers, routes, total, rss, timedif,
         dt="2022-02-02@15:17:22"):
    return "%s;%s;%d;%d;;%d;%d;%d;1;1;1;%s;%s\n" % (
        version, typ, peers, routes, total, total // 2, rss, timedif, dt)


@pytest.fixture
def small_csv(tmp_path):
    """Header, 4 good rows of one point, 2 of another, and bad lines."""
    lines = [HEADER,
             _row("v1", "single", 10, 1000, 12000, 100, "1.0"),
             _row("v1", "single", 10, 1000, 12000, 300, "2.0"),
             "\n",                                                 # blank
             _row("v1", "single", 10, 1000, 12000, 200, ".5"),     # line 5
             "v1;single;10;1000;;12000;6000;100;1;1;1\n",          # 6: short
             _row("v1", "single", 10, 1000, 12000, 400, "4.0"),
             _row("v1", "single", 10, 1000, 12000, 400, "fast"),   # 8: bad
             _row("v1", "single", 10, 10000, 90000, 900, "8.0"),
             _row("v1", "single", 10, 10000, 90000, 1100, "10.0"),
             _row("v2", "multi", 10, 1000, 12000, 50, "-1"),       # 11: bad
             "v1;single;10;1000;;12000;6000;;1;1;1;26;5.6\n",      # 12: shift
             ]
    path = tmp_path / "stats.csv"
    path.write_text("".join(lines))
    return str(path)


# --------------------------------------------------------------- parsing --

def test_parse_reports_malformed_lines_and_keeps_good_rows(small_csv):
    res = chart.parse_stats(small_csv)
    assert len(res.rows) == 6
    assert [p.line for p in res.problems] == [6, 8, 11, 12]
    assert "fields" in res.problems[0].reason
    assert "TIMEDIF" in res.problems[1].reason
    assert "DATETIME" in res.problems[3].reason
    first = res.rows[0]
    assert (first.line, first.version, first.type, first.peers, first.routes,
            first.total_routes, first.rss, first.timedif) == \
        (2, "v1", "single", 10, 1000, 12000, 100, 1.0)
    assert res.rows[2].timedif == 0.5          # BIRD's bc writes ".5"


def test_parse_without_header_uses_bird_layout(tmp_path):
    path = tmp_path / "noheader.csv"
    path.write_text(_row("v1", "imex", 32, 10000, 16892, 25192, "0.874940633")
                    + _row("v1", "imex", 32, 10000, 16892, 25328, "1250ms"))
    res = chart.parse_stats(str(path))
    assert not res.problems
    assert [r.timedif for r in res.rows] == [0.874940633, 1.25]
    assert res.rows[0].total_routes == 16892 and res.rows[0].rss == 25192


def test_parse_repeated_header_and_missing_datetime(tmp_path):
    path = tmp_path / "cat.csv"
    path.write_text(HEADER + _row("a", "single", 1, 1, 1, 1, "1")
                    + HEADER + "a;single;1;1;;1;1;1;1;1;1;2\n")
    res = chart.parse_stats(str(path))
    assert [r.timedif for r in res.rows] == [1.0, 2.0]
    assert not res.problems and res.notes


def test_parse_empty_and_header_only_are_errors(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(chart.StatsError, match="empty"):
        chart.parse_stats(str(empty))
    header_only = tmp_path / "header.csv"
    header_only.write_text(HEADER)
    with pytest.raises(chart.StatsError, match="no valid data row"):
        chart.parse_stats(str(header_only))
    assert chart.main([str(empty), "--outdir", str(tmp_path / "o")]) == 2
    assert chart.main([str(header_only), "--outdir", str(tmp_path)]) == 2
    assert chart.main([str(tmp_path / "missing.csv")]) == 2
    assert not (tmp_path / "o").exists()


def test_thread_count_from_version_and_column(tmp_path):
    rx = chart.re.compile(chart.DEFAULT_THREADS_RE)
    assert chart.stats_split_threads("ours-0.1.0/t4", rx) == ("ours-0.1.0", 4)
    assert chart.stats_split_threads("ours-0.1.0-t16", rx) == \
        ("ours-0.1.0", 16)
    assert chart.stats_split_threads("v2.0.8-191-g68d8716f", rx) == \
        ("v2.0.8-191-g68d8716f", None)
    assert chart.stats_split_threads("v2.0.8", rx) == ("v2.0.8", None)
    custom = chart.re.compile(r"@(\d+)thr")
    assert chart.stats_split_threads("x@8thr", custom) == ("x", 8)

    path = tmp_path / "col.csv"
    path.write_text("VERSION;TYPE;PEERS;ROUTES;;TOTAL_ROUTES;TOTAL_PREFICES;"
                    "RSS;SZ;VSZ;i;TIMEDIF;DATETIME;THREADS\n"
                    "ours;multi;10;1000;;12000;6000;1;1;1;1;2.0;"
                    "2026-01-01@00:00:00;4\n"
                    "ours;multi;10;1000;;12000;6000;1;1;1;1;2.0;"
                    "2026-01-01@00:00:00;\n")
    rows = chart.parse_stats(str(path)).rows
    assert [(r.base_version, r.threads) for r in rows] == \
        [("ours", 4), ("ours", None)]
    names = chart.VersionNames({"ours": "Ours"})
    assert names.series_name(rows[0]) == "Ours/t4"
    assert names.series_name(rows[1]) == "Ours"


# ------------------------------------------------------------ statistics --

def test_percentiles_interpolate_linearly():
    vals = [4.0, 1.0, 3.0, 2.0]
    assert chart.stats_percentile(vals, 0) == 1.0
    assert chart.stats_percentile(vals, 25) == pytest.approx(1.75)
    assert chart.stats_percentile(vals, 50) == pytest.approx(2.5)
    assert chart.stats_percentile(vals, 75) == pytest.approx(3.25)
    assert chart.stats_percentile(vals, 100) == 4.0
    assert chart.stats_summary([7.0]) == chart.Summary(1, 7.0, 7.0, 7.0,
                                                       7.0, 7.0)
    s = chart.stats_summary([1.0, 2.0, 3.0, 4.0, 100.0])
    assert (s.n, s.min, s.q1, s.median, s.q3, s.max) == \
        (5, 1.0, 2.0, 3.0, 4.0, 100.0)
    with pytest.raises(ValueError):
        chart.stats_percentile([], 50)


def test_convergence_series_medians(small_csv):
    rows = chart.parse_stats(small_csv).rows
    series = chart.convergence_series(rows, "single", chart.VersionNames())
    assert [s.label for s in series] == ["v1, 10 peers"]
    (x1, s1), (x2, s2) = series[0].points
    assert (x1, x2) == (12000, 90000)
    # TIMEDIF 1, 2, .5, 4 -> sorted .5 1 2 4
    assert (s1.n, s1.min, s1.max) == (4, 0.5, 4.0)
    assert s1.median == pytest.approx(1.5)
    assert s1.q1 == pytest.approx(0.875)
    assert s1.q3 == pytest.approx(2.5)
    assert (s2.n, s2.median) == (2, pytest.approx(9.0))
    mem = chart.memory_series(rows, "single", chart.VersionNames())
    assert mem[0].points[0][1].median == pytest.approx(250.0)
    assert chart.convergence_series(rows, "multi", chart.VersionNames()) == []


def test_labels_and_exclusion_in_series(tmp_path):
    path = tmp_path / "two.csv"
    path.write_text(HEADER + _row("v2.0.8", "single", 10, 1, 100, 1, "3")
                    + _row("v2.0.8-191-g68d8716f", "single", 10, 1, 100, 1,
                           "1")
                    + _row("v2.0.8-169-ga840170e", "single", 10, 1, 100, 1,
                           "2"))
    rows = chart.parse_stats(str(path)).rows
    names = chart.VersionNames({"v2.0.8-191-g68d8716f": "3.0-alpha0"},
                               ["v2.0.8-169-ga840170e"])
    labels = [s.label for s in chart.convergence_series(rows, "single",
                                                        names)]
    # series are ordered by displayed name, numbers compared as numbers
    assert labels == ["3.0-alpha0, 10 peers", "v2.0.8, 10 peers"]
    assert len(chart.stats_filter(rows, names)) == 2
    # exclusion also matches the displayed label
    names = chart.VersionNames({"v2.0.8": "2.0.8"}, ["2.0.8"])
    assert {r.version for r in chart.stats_filter(rows, names)} == \
        {"v2.0.8-191-g68d8716f", "v2.0.8-169-ga840170e"}


def test_scaling_speedup(tmp_path):
    lines = [HEADER]
    for t, times in ((1, ("8", "8.2", "7.8")), (2, ("4", "4.1", "3.9")),
                     (4, ("2.5", "2.5", "2.6"))):
        for tm in times:
            lines.append(_row("ours-0.1/t%d" % t, "single", 10, 1000, 12000,
                              1, tm))
    lines.append(_row("ours-0.1/t2", "multi", 10, 1000, 12000, 1, "5"))
    lines.append(_row("bird-2.0.12", "single", 10, 1000, 12000, 1, "9"))
    path = tmp_path / "thr.csv"
    path.write_text("".join(lines))
    rows = chart.parse_stats(str(path)).rows
    loads, msgs = chart.scaling_workloads(rows, chart.VersionNames())
    assert [w.label for w in loads] == \
        ["ours-0.1, single, 10 peers x 1k routes"]
    pts = [(t, round(sp, 6)) for t, sp, _ in loads[0].points]
    assert pts == [(1, 1.0), (2, 2.0), (4, round(8 / 2.5, 6))]
    assert len(msgs) == 1 and "no 1-thread runs" in msgs[0]
    none, _ = chart.scaling_workloads(
        [r for r in rows if r.threads is None], chart.VersionNames())
    assert none == []


def test_palettes_are_deterministic_and_distinct():
    vs = ["2.0.8", "3.0-alpha0", "ours/t1", "ours/t2"]
    a = chart.chart_palettes(vs)
    assert a == chart.chart_palettes(list(reversed(vs)))
    assert len(set(a.values())) == len(vs)
    assert len(set(chart.chart_palettes(["v%d" % i for i in range(9)])
                   .values())) == 9


# --------------------------------------------------------------- drawing --

def _mpl_python():
    for cand in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if cand and os.path.exists(cand) and subprocess.run(
                [cand, "-c", "import matplotlib"],
                capture_output=True).returncode == 0:
            return cand
    pytest.skip("no python3 here can import matplotlib (install Debian's "
                "python3-matplotlib or pip install matplotlib)")


def _run_chart(args, tmp_path):
    summary = tmp_path / "summary.json"
    proc = subprocess.run([_mpl_python(), CHART] + args
                          + ["--summary", str(summary)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(summary.read_text()), proc


def _check_pngs(paths):
    for p in paths:
        with open(p, "rb") as f:
            head = f.read(24)
        assert head[:8] == b"\x89PNG\r\n\x1a\n", p
        w, h = struct.unpack(">II", head[16:24])
        assert w > 800 and h > 500, (p, w, h)
        assert os.path.getsize(p) > 10 * 1024, p
    code = ("import sys, json, matplotlib; matplotlib.use('Agg');"
            "import matplotlib.image as mi;"
            "print(json.dumps([[list(a.shape), float(a[..., :3].std())]"
            " for a in map(mi.imread, sys.argv[1:])]))")
    out = subprocess.run([_mpl_python(), "-c", code] + list(paths),
                         capture_output=True, text=True, check=True).stdout
    for shape, spread in json.loads(out):
        assert shape[0] > 500 and shape[1] > 800 and shape[2] in (3, 4)
        assert spread > 0.05          # not a blank canvas


needs_bird = pytest.mark.skipif(
    not os.path.exists(BIRD_CSV),
    reason="BIRD's published stats are not at ../shared/data/")


@pytest.fixture(scope="module")
def bird_charts(tmp_path_factory):
    if not os.path.exists(BIRD_CSV):
        pytest.skip("BIRD's published stats are not at ../shared/data/")
    tmp = tmp_path_factory.mktemp("bird")
    return _run_chart([BIRD_CSV, "--outdir", str(tmp / "out")] + BIRD_LABELS
                      + ["--exclude", "v2.0.8-169-ga840170e"], tmp)


@needs_bird
def test_bird_four_convergence_charts(bird_charts):
    summary, proc = bird_charts
    conv = [c for c in summary["charts"] if c["kind"] == "convergence"]
    assert [c["type"] for c in conv] == list(BIRD_TYPES)
    pngs = []
    for c in conv:
        names = sorted(os.path.basename(f) for f in c["files"])
        assert names == ["convergence-%s.pdf" % c["type"],
                         "convergence-%s.png" % c["type"]]
        pdf = [f for f in c["files"] if f.endswith(".pdf")][0]
        with open(pdf, "rb") as f:
            assert f.read(5) == b"%PDF-"
        pngs += [f for f in c["files"] if f.endswith(".png")]
        assert c["labels"][:10] == (
            ["2.0.8, %d peers" % p for p in (10, 32, 100, 316, 1000)]
            + ["3.0-alpha0, %d peers" % p for p in (10, 32, 100, 316, 1000)])
        assert any("instability" in l for l in c["labels"])
    _check_pngs(pngs)
    # A number read off BIRD's chapter: single, 10 peers, 1M routes per
    # peer converged in about 37 s on 2.0.8 and 10 s on 3.0-alpha0.
    single = {s["label"]: s for s in conv[0]["series"]}
    last = single["2.0.8, 10 peers"]["points"][-1]
    assert last["x"] == 1316089 and 30 < last["median"] < 45
    last = single["3.0-alpha0, 10 peers"]["points"][-1]
    assert 5 < last["median"] < 15
    assert "scaling chart skipped" in proc.stdout


@needs_bird
def test_bird_memory_chart(bird_charts):
    summary, _ = bird_charts
    mem = [c for c in summary["charts"] if c["kind"] == "memory"]
    assert len(mem) == 1 and sorted(mem[0]["types"]) == sorted(BIRD_TYPES)
    _check_pngs([f for f in mem[0]["files"] if f.endswith(".png")])
    assert [s["kind"] for s in summary["skipped"]] == ["scaling"]


@needs_bird
def test_labels_and_exclusion_change_legend(tmp_path):
    raw, _ = _run_chart([BIRD_CSV, "--outdir", str(tmp_path / "raw"),
                         "--types", "single", "--format", "png"], tmp_path)
    labels = raw["charts"][0]["labels"]
    assert "v2.0.8-191-g68d8716f, 10 peers" in labels
    assert "v2.0.8-169-ga840170e, 10 peers" in labels
    assert [c["type"] for c in raw["charts"]
            if c["kind"] == "convergence"] == ["single"]

    mapped, _ = _run_chart([BIRD_CSV, "--outdir", str(tmp_path / "mapped"),
                            "--types", "single", "--format", "png",
                            "--label", "v2.0.8-191-g68d8716f=3.0-alpha0",
                            "--exclude", "v2.0.8-169-ga840170e"], tmp_path)
    labels = mapped["charts"][0]["labels"]
    assert "3.0-alpha0, 10 peers" in labels
    assert not any("191" in l or "169" in l for l in labels)
    assert "v2.0.8, 1000 peers" in labels
    assert sorted(os.listdir(tmp_path / "mapped")) == \
        ["convergence-single.png", "memory.png"]


def test_scaling_chart_drawn_from_thread_suffix(tmp_path):
    lines = [HEADER]
    for t in (1, 2, 4):
        for typ in ("single", "multi"):
            for tm in (8.0 / t, 8.4 / t, 7.9 / t):
                lines.append(_row("ours-0.1/t%d" % t, typ, 10, 1000, 12000,
                                  5000, "%.3f" % tm))
    path = tmp_path / "thr.csv"
    path.write_text("".join(lines) + "garbage line\n")
    summary, proc = _run_chart([str(path), "--outdir", str(tmp_path / "o"),
                                "--label", "ours-0.1=Ours",
                                "--title-suffix", " (test)"], tmp_path)
    assert "thr.csv:%d:" % (len(lines) + 1) in proc.stderr
    scaling = [c for c in summary["charts"] if c["kind"] == "scaling"][0]
    assert scaling["labels"][:2] == ["Ours, single, 10 peers x 1k routes",
                                     "Ours, multi, 10 peers x 1k routes"]
    sp = [p["speedup"] for p in scaling["workloads"][0]["points"]]
    assert sp[0] == 1.0 and sp[1] == pytest.approx(2.0) and \
        sp[2] == pytest.approx(4.0)
    conv = [c for c in summary["charts"] if c["kind"] == "convergence"][0]
    assert conv["labels"][:3] == ["Ours/t1, 10 peers", "Ours/t2, 10 peers",
                                  "Ours/t4, 10 peers"]
    _check_pngs([f for c in summary["charts"] for f in c["files"]
                 if f.endswith(".png")])


def test_draw_returns_legend_labels_in_process(tmp_path, small_csv):
    pytest.importorskip("matplotlib")
    rows = chart.parse_stats(small_csv).rows
    series = chart.convergence_series(
        rows, "single", chart.VersionNames({"v1": "one"}))
    res = chart.draw_convergence(series, "single", str(tmp_path), ("png",))
    assert res.labels[0] == "one, 10 peers"
    assert res.files == [str(tmp_path / "convergence-single.png")]
