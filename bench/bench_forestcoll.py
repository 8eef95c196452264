"""ForestColl synthesis time against its targets, with the per-stage split and counters the
core reports in the schedule details. `python bench/run.py forestcoll`."""

from __future__ import annotations

import time

from collsynth import Topology, synthesize

# spec -> target synthesis_seconds on 2 cores.
TARGETS = {
    "dgx-a100:2": 0.1,
    "dgx-a100:8": 0.5,
    "mi250:4": 1.0,
    "mi250:8": 2.0,
    "dgx-a100:128": 60.0,
    "torus:32x32": 30.0,
}

STAGES = ["optimality", "fixed_k", "symmetric", "split", "packing", "map_back"]

# Specs measured by default: all six targets (the 1024-rank ones take the symmetric fast path,
# about a second each); FORESTCOLL_BENCH_SPECS="a;b" picks others.
DEFAULT = list(TARGETS)


def bench_forestcoll() -> list[dict]:
    import os

    specs = os.environ.get("FORESTCOLL_BENCH_SPECS", ";".join(DEFAULT)).split(";")
    records = []
    for spec in specs:
        topo = Topology.from_spec(spec)
        t0 = time.perf_counter()
        s = synthesize(topo, "allgather", "forestcoll")
        wall = time.perf_counter() - t0
        d = s.details
        records.append(
            {
                "spec": spec,
                "N": topo.n_ranks,
                "synthesis_seconds": s.synthesis_seconds,
                "synthesize_and_verify_s": wall,
                "target_s": TARGETS.get(spec),
                "k": d["k"],
                "trees": d["trees"],
                "tree_batches": d["tree_batches"],
                "split_flows": d["split_flows"],
                "mu_flows": d["mu_flows"],
                "symmetry": d["symmetry"],
                # Stages the symmetric fast path skips are None (same keys in every record).
                **{f"{k}_s": d["stage_seconds"].get(k) for k in STAGES},
                "algbw_GBps": d["forest_algbw_GBps"],
            }
        )
    return records


# The Fig. 11 rows too slow for the debug-build tests (their values are checked by
# tests/test_forestcoll.py), the fixed-k scan up to k = 8, and the allreduce LP (`always`).
CASES = [
    ("dgx-a100:6", "allgather", {}),
    ("mi250:3", "allgather", {}),
    ("mi250:2", "allgather", {"max_trees": 8}),
    ("dgx-a100:2", "allgather", {"max_trees": 13}),
    ("dgx-a100:2", "allreduce", {"allreduce_lp": "always"}),
    ("torus:4x4", "allreduce", {"allreduce_lp": "always"}),
]


def bench_cases() -> list[dict]:
    """Synthesis (and verification) per case; the options as given to `synthesize`."""
    records = []
    for spec, collective, options in CASES:
        topo = Topology.from_spec(spec)
        t0 = time.perf_counter()
        s = synthesize(topo, collective, "forestcoll", **options)
        wall = time.perf_counter() - t0
        records.append(
            {
                "spec": spec,
                "collective": collective,
                "options": ",".join(f"{k}={v}" for k, v in options.items()) or None,
                "synthesis_seconds": s.synthesis_seconds,
                "synthesize_and_verify_s": wall,
            }
        )
    return records


BENCHMARKS = {"forestcoll": bench_forestcoll, "forestcoll_cases": bench_cases}
