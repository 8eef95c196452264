"""The direct-connect paper's cost notions in every schedule's JSON: `latency_steps` (T_L / alpha)
and `bandwidth_factor` (T_B / (M/B), exact "p/q")."""

from __future__ import annotations

import pytest

from conftest import run_json


@pytest.mark.parametrize(
    "spec, collective, algorithm, steps, factor",
    [
        ("ring:8", "allgather", "ring", 7, "7/8"),  # (N-1) alpha, (N-1)/N: bandwidth-optimal
        ("ring:8", "allreduce", "ring", 14, "7/4"),  # RS then AG
        ("complete:5", "allgather", "direct", 1, "4/5"),  # one step, optimal
        ("ring:6", "reduce-scatter", "ring", 5, "5/6"),
    ],
)
def test_latency_steps_and_bandwidth_factor(spec, collective, algorithm, steps, factor):
    s = run_json("synth", spec, "-c", collective, "-a", algorithm)
    assert (s["latency_steps"], s["bandwidth_factor"]) == (steps, factor)


@pytest.mark.parametrize(
    "spec, collective, moore, optimum",
    [
        ("ring:8", "allgather", 7, "7/8"),
        ("ring:8", "allreduce", 14, "7/4"),
        ("torus:4x4", "allgather", 2, "15/16"),  # degree 4: 1 + 4 + 16 >= 16
        ("switch:4", "allgather", None, "3/4"),  # no Moore bound through switches
    ],
)
def test_moore_bound_and_bandwidth_optimum(spec, collective, moore, optimum):
    s = run_json("synth", spec, "-c", collective, "-a", "ring")
    assert (s["moore_latency_steps"], s["bandwidth_factor_optimum"]) == (moore, optimum)
