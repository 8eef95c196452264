"""`collsynth find`: the direct-connect paper's topology finder against its Table 4 (N = 1024,
d = 4) and Table 5 (N = 5..12, d = 4), the JSON keys of docs/contracts.md, buildable expressions and
one-line bad-input errors."""

from __future__ import annotations

from fractions import Fraction

import pytest

from collsynth import Topology
from conftest import run_cli, run_json

# Table 4: (T_L / alpha, T_B / (M/B)); exact values where the paper's rounding hides them.
TABLE4 = [
    (5, Fraction(341, 256)),  # Pi_{4,1024}
    (6, Fraction(15, 16) + Fraction(4, 3) * (Fraction(1, 16) - Fraction(1, 1024))),  # L^3(C(16,{3,4}))
    (8, Fraction(63, 64) + Fraction(4, 3) * (Fraction(1, 64) - Fraction(1, 1024))),  # L^2(Diamond^2)
    (11, Fraction(1)),  # L(DBJMod(2,4)^2)
    (20, Fraction(1023, 1024)),  # (UniRing(1,4) x UniRing(1,8))^2
]


def _covered(frontier: list[dict], steps: int, tau: Fraction) -> bool:
    return any(c["latency_steps"] <= steps and Fraction(c["bandwidth_factor"]) <= tau for c in frontier)


@pytest.fixture(scope="module")
def table4():
    return run_json("find", "--nodes", "1024", "--degree", "4")


def test_table4_frontier(table4):
    f = table4["frontier"]
    for steps, tau in TABLE4:
        assert _covered(f, steps, tau), (steps, tau, f)
    keys = {"topology", "N", "degree", "latency_steps", "bandwidth_factor", "diameter"}
    keys |= {"allreduce_us", "alltoall_us", "alltoall_exact"}
    assert all(keys <= set(c) for c in f)
    steps = [c["latency_steps"] for c in f]
    assert steps == sorted(steps)
    by_name = {c["topology"]: c for c in f}
    assert by_name["kautz:4:1024"]["bandwidth_factor"] == "341/256"
    l3 = by_name["line^3(circulant:16:3,4)"]
    assert (l3["latency_steps"], Fraction(l3["bandwidth_factor"])) == TABLE4[1]
    assert l3["allreduce_us"] == pytest.approx(291.0, abs=0.2)  # Table 4: 2(T_L + T_B)
    assert table4["recommended"]["topology"] == "line^3(circulant:16:3,4)"
    assert table4["recommended"]["allreduce_us"] == min(c["allreduce_us"] for c in f)


def test_table4_members_build(table4):
    for c in table4["frontier"]:
        t = Topology.from_spec(c["topology"])
        m = t.metrics()
        assert (t.n_ranks, m["diameter"]) == (1024, c["diameter"]), c["topology"]
        assert m["max_degree"] <= 4


@pytest.mark.parametrize("n", range(5, 13))
def test_table5_best_d4(n):
    # Table 5: all bandwidth-optimal, allreduce T_L 2 (K_5) or 4, i.e. allgather 1 or 2 steps.
    steps = 1 if n == 5 else 2
    for extra in ([], ["--bidirectional"]):
        f = run_json("find", "--nodes", str(n), "--degree", "4", *extra)["frontier"]
        assert _covered(f, steps, Fraction(n - 1, n)), (n, extra, f)
        for c in f:
            assert Topology.from_spec(c["topology"]).n_ranks == n


@pytest.mark.parametrize("n", [64, 128])
def test_bidirectional_frontier_members_build(n):
    # Every member is symmetric with N nodes and at most 4 distinct neighbours (a converted
    # graph's merged 2-cycles give fewer); A.6's conversions bi(G) of unidirectional degree-2
    # candidates reach the frontier at N = 128 (T_L 7 < the best circulant's 8). At N = 64 none
    # does: every degree-2 candidate needs 6 steps and circulant:64:6,7 has (6, 63/64) already.
    f = run_json("find", "--nodes", str(n), "--degree", "4", "--bidirectional")["frontier"]
    for c in f:
        m = run_json("topo", "show", c["topology"])
        assert (m["N"], m["bidirectional"], c["bidirectional"]) == (n, True, True), c["topology"]
        assert m["max_degree"] <= 4 and m["diameter"] == c["diameter"], c["topology"]
    converted = [c for c in f if c["topology"].startswith("bi(")]
    if n == 128:
        # Valued as synth schedules it: A.6's split keeps line^4(C(8,{2,3}))'s (7, 71/64).
        assert [(c["topology"], c["latency_steps"], c["bandwidth_factor"]) for c in converted] == [
            ("bi(line^4(dcirculant:8:2,3))", 7, "71/64")
        ]
        s = run_json("synth", converted[0]["topology"], "-a", "bfb", "-c", "allgather")
        assert (s["latency_steps"], s["bandwidth_factor"]) == (7, "71/64"), s
    else:
        assert not converted and [c["topology"] for c in f] == ["circulant:64:6,7"], f


def test_text_output():
    out = run_cli("find", "--nodes", "12", "--degree", "4").stdout
    assert "Pareto frontier" in out and "recommended" in out


@pytest.mark.parametrize(
    "args",
    [
        ["--nodes", "1", "--degree", "4"],
        ["--nodes", "8", "--degree", "0"],
        ["--nodes", "3", "--degree", "5"],
        ["--nodes", "8"],
        ["--nodes", "8", "--degree", "2", "--degrees", "2,4"],
        ["--sweep", "20", "--nodes", "8"],
        ["--sweep", "20", "--degrees", "2,x"],
        ["--sweep", "20", "--degrees", "0"],
        ["--sweep", "1"],
        ["--sweep", "20", "--degrees", "4", "--alpha", "-1us"],
    ],
)
def test_bad_input(args):
    p = run_cli("find", *args, check_status=2)
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_sweep_rows_match_single_targets():
    """Every row of `find --sweep` is the frontier `find` gives for that target, with the
    recommendation of the least allreduce time."""
    out = run_json("find", "--sweep", "24", "--degrees", "4,2")
    assert out["degrees"] == [4, 2]
    rows = out["rows"]
    assert [(r["N"], r["degree"]) for r in rows] == [(n, d) for n in range(3, 25) for d in (2, 4) if d < n]
    for r in rows:
        if r["N"] in (12, 16, 24):
            single = run_json("find", "--nodes", str(r["N"]), "--degree", str(r["degree"]))
            assert [c["topology"] for c in r["frontier"]] == [c["topology"] for c in single["frontier"]]
            assert r["frontier"][r["recommended"]]["topology"] == single["recommended"]["topology"]
            for a, b in zip(r["frontier"], single["frontier"], strict=True):
                assert a["allreduce_us"] == pytest.approx(b["allreduce_us"], rel=1e-12)
    # Table 5's d = 4 answers for N = 5..12 reappear in the sweep.
    best = {r["N"]: r["frontier"][0] for r in rows if r["degree"] == 4}
    assert best[5]["topology"] == "complete:5" and best[5]["latency_steps"] == 1
    assert best[8]["latency_steps"] == 2


def test_sweep_table():
    out = run_cli("find", "--sweep", "10", "--degrees", "2").stdout
    assert "finder sweep" in out and "recommended" in out
    assert "biring:3" in out and "line(biring:5)" in out
