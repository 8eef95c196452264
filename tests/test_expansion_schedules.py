"""Expanded schedules of the direct-connect paper on the CLI: `bfb` on `line^k(..)` / `degree*n(..)`
maps the base's BFB schedule (Def 1 / Def 2) and reports how in the JSON details."""

from __future__ import annotations

import pytest

from conftest import run_json


@pytest.mark.parametrize(
    "spec, steps, factor, construction",
    [
        # Cor 10.1 on K_{2,2} (2 steps, 3/4): k = 2 gives 2 + 2 steps, 3/4 + 2 (1/4 - 1/16) = 9/8.
        ("line^2(bipartite:2,2)", 4, "9/8", "line-graph mapping (x2) of bfb(bipartite:2,2)"),
        # Thm 11 on K_{2,2}: one more step, 3/4 + 2/12 = 11/12 (bandwidth-optimal for N = 12).
        ("degree*3(bipartite:2,2)", 3, "11/12", "degree-expansion mapping (n=3) of bfb(bipartite:2,2)"),
    ],
)
def test_expanded_allgather_is_mapped_from_the_base(spec, steps, factor, construction):
    s = run_json("synth", spec, "-c", "allgather", "-a", "bfb")
    assert (s["latency_steps"], s["bandwidth_factor"]) == (steps, factor)
    assert s["construction"] == construction
    assert s["tau"] == factor


def test_products_and_reduce_scatter_stay_plain_bfb():
    s = run_json("synth", "power^2(complete:3)", "-c", "allgather", "-a", "bfb")
    assert "construction" not in s and s["bandwidth_factor"] == "8/9"
    s = run_json("synth", "line^2(bipartite:2,2)", "-c", "reduce-scatter", "-a", "bfb")
    assert "construction" not in s and (s["latency_steps"], s["bandwidth_factor"]) == (4, "9/8")


def test_bfb_chunks_option():
    # torus:4x4's splits are in quarters, so 4 chunks per shard keep the optimum 15/16.
    s = run_json("synth", "torus:4x4", "-c", "allgather", "-a", "bfb", "--chunks", "4")
    assert s["bandwidth_factor"] == "15/16"
    assert s["chunks"] == 4 and s["tau"] == s["tau_fractional"] == "15/16"
