"""BFB schedule generation against the paper's Gurobi times (Table 6: 1024-node hypercube
52.7 s, 2500-node 2D torus 61.1 s). `synthesis_seconds` is the whole verified-IR synthesis
(solving every (node, step) problem and building every transfer); the exact solve alone is
timed by the Rust test `synth::bfb::tests::timing` (ignored by default). Run by `make bench`;
`python bench/run.py bfb` alone."""

from __future__ import annotations

import time

import collsynth

CASES = ["hypercube:10", "torus:50x50", "kautz:4:1024", "line^3(circulant:16:3,4)"]


def _case(spec: str) -> dict:
    topo = collsynth.Topology.from_spec(spec)
    t0 = time.perf_counter()
    sched = collsynth.synthesize(topo, "allgather", "bfb")
    total = time.perf_counter() - t0
    d = sched.details
    return {
        "spec": spec,
        "N": topo.n_ranks,
        "steps": sched.steps,
        "tau": d.get("tau"),
        "bandwidth_optimal": d.get("bandwidth_optimal"),
        "transfers": sched.n_transfers,
        "synthesis_seconds": sched.synthesis_seconds,
        "with_verification_seconds": total,
    }


def bench_bfb() -> list[dict]:
    """BFB allgather synthesis (verified separately by `synthesize`) per topology."""
    return [_case(s) for s in CASES]


BENCHMARKS = {"bfb": bench_bfb}
