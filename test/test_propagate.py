"""Propagation smoke test: 2,000 routes from one eBGP sender through the daemon
under test to one receiver, then withdrawn, with bgpblast --propagate
(bench/propagate.py drives it; the full bench uses 100,000 routes).

Checks what must hold whatever the machine's load: every route arrives, with
the AS path behind the DUT's ASN and the sender's origin and communities,
every withdrawal arrives, and the timings are consistent with each other.
Addresses 127.80.20-22.1, so it does not meet the bench (127.80.0-2.1).
"""

import os
import shutil
import sys

import pytest

from conftest import BIRD_BIN

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
import propagate  # noqa: E402

ROUTES = 2000

pytestmark = pytest.mark.skipif(not shutil.which("gcc"), reason="bgpblast is built with gcc")


def test_propagate_small():
    r = propagate.run_once("ours", ROUTES, BIRD_BIN, block=20, timeout=60)
    where = "kept in %s" % r["dir"]
    assert r["result"] == "ok", where
    assert r["dut_alive"] and r["dut_exit"] == 0, where
    assert r["routes"] == ROUTES and r["received"] == ROUTES and r["lost"] == 0
    assert r["unexpected"] == 0 and r["early_withdrawals"] == 0
    # every route checked: AS path 64500 65001 ..., origin and communities as sent
    assert r["attr_checked"] == ROUTES
    assert (r["attr_bad_as_path"], r["attr_bad_origin"], r["attr_bad_communities"],
            r["attr_bad_large_communities"]) == (0, 0, 0, 0)
    assert r["expect_dut_as"] == propagate.DUT_AS
    assert r["next_hop"] != "none"
    # a route fed to the receiver is not sent again when its journal item comes by
    assert r["duplicates"] == 0
    assert r["withdrawals_rcvd"] == ROUTES and r["withdraw_lost"] == 0 and r["held_at_end"] == 0
    # sane numbers: positive, ordered, and convergence bounds every latency
    assert 0 < r["latency_min_ms"] <= r["latency_p50_ms"] <= r["latency_p99_ms"] <= r["latency_max_ms"]
    assert r["latency_max_ms"] <= r["converge_s"] * 1e3 + 1e-3
    assert 0 < r["converge_s"] < 30 and 0 < r["withdraw_s"] < 30
    assert r["routes_per_s"] == pytest.approx(ROUTES / r["converge_s"], rel=0.01)
    log = open(os.path.join(r["dir"], "daemon.log")).read() if r["dir"] else ""
    assert "AddressSanitizer" not in log and "runtime error" not in log
