"""The LP path of the direct-connect issue, kept only as a cross-check: HiGHS (PyPI's highspy)
solves the BFB subproblems' LP (1) and the all-to-all multi-commodity flow LP as floats, and
they must agree with what the Rust core computes exactly (BFB: Newton on integer max-flows;
all-to-all: microlp's simplex). The core never calls an LP solver for BFB."""

from __future__ import annotations

import json
from collections import deque
from fractions import Fraction

import highspy
import pytest

import collsynth
from conftest import run_json


def _graph(spec: str):
    """(ranks, {(src, dst): bandwidth}) of a direct-connect topology (zoo spec or file)."""
    topo = collsynth.Topology.resolve(spec)
    rank = {n.name: n.rank for n in topo.nodes}
    links = {(rank[link.src], rank[link.dst]): float(link.bandwidth) for link in topo.links}
    return topo.n_ranks, links


def _hops(n: int, links) -> list[list[int]]:
    """dist[v][u]: hops from v to u."""
    out = [[] for _ in range(n)]
    for v, u in links:
        out[v].append(u)
    dist = []
    for v in range(n):
        d = [-1] * n
        d[v] = 0
        queue = deque([v])
        while queue:
            x = queue.popleft()
            for y in out[x]:
                if d[y] < 0:
                    d[y] = d[x] + 1
                    queue.append(y)
        dist.append(d)
    return dist


def _quiet() -> highspy.Highs:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def _lp1(sources, senders, bandwidth) -> float:
    """LP (1) for one (u, t): min U, every source v split over its senders w (one hop closer),
    sum over v of x[v][w] <= U * bandwidth[w]."""
    h = _quiet()
    big_u = h.addVariable(lb=0)
    x = {(v, w): h.addVariable(lb=0) for v in sources for w in senders[v]}
    for v in sources:
        h.addConstr(sum(x[v, w] for w in senders[v]) == 1)
    for w, bw in bandwidth.items():
        load = [x[v, w] for v in sources if w in senders[v]]
        if load:
            h.addConstr(sum(load) - bw * big_u <= 0)
    h.minimize(big_u)
    return h.val(big_u)


def _bfb_tau(spec: str) -> float:
    """tau = sum_t max_u U*_{u,t} * (largest ingress) / N, every U* from HiGHS."""
    n, links = _graph(spec)
    dist = _hops(n, links)
    ins = {u: {w: bw for (w, x), bw in links.items() if x == u} for u in range(n)}
    steps = max(max(row) for row in dist)
    total = 0.0
    for t in range(1, steps + 1):
        worst = 0.0
        for u in range(n):
            sources = [v for v in range(n) if dist[v][u] == t]
            if sources:
                senders = {v: [w for w in ins[u] if dist[v][w] == t - 1] for v in sources}
                worst = max(worst, _lp1(sources, senders, ins[u]))
        total += worst
    return total * max(sum(i.values()) for i in ins.values()) / n


@pytest.mark.parametrize(
    "spec",
    [
        "kautz:2:12",  # generalized Kautz, several senders per source
        "circulant:15:1,4,5",  # against Conjecture 1 of the direct-connect paper: tau 1, above (N-1)/N
        "torus:3x4",
        "hamming:2,3",
        "dcirculant:10:1,3",
        "debruijn:2:16",
    ],
)
def test_bfb_lp1_matches_highs(spec):
    s = run_json("synth", spec, "--algorithm", "bfb", "--collective", "allgather", "--time-only")
    assert float(Fraction(s["tau"])) == pytest.approx(_bfb_tau(spec), rel=1e-7)


def test_bfb_lp1_matches_highs_with_unequal_bandwidths(tmp_path):
    # Figure 5's point: unequal in-link bandwidths change the split (a 3-ary Kautz graph
    # with one link of each rank doubled).
    data = json.loads(collsynth.Topology.from_spec("kautz:3:12").to_json())
    for i, link in enumerate(data["links"]):
        if i % 3 == 0:
            link["bandwidth"] = float(link["bandwidth"]) * 2
    path = tmp_path / "hetero.json"
    path.write_text(json.dumps(data))
    s = run_json("synth", str(path), "--algorithm", "bfb", "--collective", "allgather", "--time-only")
    assert float(Fraction(s["tau"])) == pytest.approx(_bfb_tau(str(path)), rel=1e-7)


def _alltoall_rate(spec: str) -> float:
    """Largest f with every ordered pair sending f at once: a source-aggregated
    multi-commodity flow (commodity s leaves s at (N-1) f and drops f at every other rank)."""
    n, links = _graph(spec)
    h = _quiet()
    f = h.addVariable(lb=0)
    flow = {(s, e): h.addVariable(lb=0) for s in range(n) for e in links}
    for s in range(n):
        for v in range(n):
            out = sum(flow[s, e] for e in links if e[0] == v)
            into = sum(flow[s, e] for e in links if e[1] == v)
            h.addConstr(out - into - ((n - 1) * f if v == s else -f) == 0)
    for e, bw in links.items():
        h.addConstr(sum(flow[s, e] for s in range(n)) <= bw)
    h.maximize(f)
    return h.val(f)


@pytest.mark.parametrize("spec", ["kautz:2:10,bw=1", "torus:3x3,bw=2", "circulant:12:1,5,bw=1"])
def test_alltoall_lp_matches_highs(spec):
    s = run_json("topo", "show", spec, "--alltoall")
    assert s["alltoall_exact"] is True
    assert s["alltoall_rate_GBps"] == pytest.approx(_alltoall_rate(spec), rel=1e-6)
