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


# Every algorithm x collective on these: where the fused lowering would hang the runtime
# (connection buffers in calls, docs/msccl.md), the exporter writes the unfused program.
FALLBACK_SPECS = [
    "ring:8",
    "torus:2x4",
    "dgx-a100:1",
    "hypercube:3",
    "mesh:2x3",
    "switch:5",
    "kautz:2:6",
    "torus:4x4",
]


def _steps_per_rank(program: dict) -> int:
    return max(sum(len(tb["steps"]) for tb in g["tbs"]) for g in program["gpus"])


def bench_unfused_fallback() -> list[dict]:
    """Where the exporter's deadlock fallback applies and what it costs: the written program's
    steps per rank and exact link time (per byte of M), with the export note, which names the
    fused program's steps per rank (the same bytes cross every link either way)."""
    records = []
    for spec in FALLBACK_SPECS:
        topo = collsynth.Topology.from_spec(spec)
        for alg in collsynth.algorithms():
            for coll in (c for c in alg["collectives"] if c != "allgatherv"):
                try:
                    written = msccl.export(collsynth.synthesize(topo, coll, alg["name"], size="1MiB"))
                except collsynth.BadInput:
                    continue  # the algorithm does not apply, or the runtime's limits do not fit
                note = written["fallback"] or ""
                records.append(
                    {
                        "case": f"{spec} {alg['name']} {coll}",
                        "fused_would_hang": "would hang" in note,
                        "steps_per_rank": _steps_per_rank(written["program"]),
                        "link_time_per_byte": msccl.validate(written["xml"], topo)["bandwidth_time_per_byte"],
                        "note": note,
                    }
                )
    return records


BENCHMARKS = {"msccl": bench_export, "msccl_fallback": bench_unfused_fallback}
