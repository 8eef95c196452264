"""MSCCL export and validation: lowering + self-validation (parser, rules, symbolic execution in
both modes, unbounded and 2-slot buffers) of large schedules, and validation alone of the
XML written. Run by `make bench` (bench/run.py); `python bench/run.py msccl` alone."""

from __future__ import annotations

import time

import collsynth
from collsynth import msccl

CASES = [
    ("dgx-a100:2", "allreduce", "forestcoll"),
    ("mi250:2", "allgather", "forestcoll"),
    ("torus:8x8", "allreduce", "ring"),
    ("dgx-a100:4", "allgather", "tacos"),
    ("switch:64", "allgather", "direct"),
]


def _case(spec: str, coll: str, alg: str) -> dict:
    sched = collsynth.synthesize(collsynth.Topology.from_spec(spec), coll, alg)
    t0 = time.perf_counter()
    out = msccl.export(sched)
    export_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    v = msccl.validate(out["xml"])
    validate_s = time.perf_counter() - t0
    assert v["ok"], v
    steps = out["xml"].count("<step ")
    return {
        "spec": f"{spec} {coll} {alg}",
        "transfers": sched.n_transfers,
        "xml_steps": steps,
        "nchunksperloop": out["nchunksperloop"],
        "nchannels": out["nchannels"],
        "fallback": out["fallback"],
        "export_seconds": export_s,
        "validate_seconds": validate_s,
    }


def bench_export() -> list[dict]:
    """Export (lower + validate) and validation alone, per case."""
    return [_case(*c) for c in CASES]


BENCHMARKS = {"msccl": bench_export}
