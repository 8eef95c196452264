"""The exact allgather bound (max-flow cuts) on large topologies, switches included. Run by
`make bench`; `python bench/run.py bound_large` alone."""

from __future__ import annotations

import time

from collsynth import Topology, bound

SPECS = ["torus:32x32", "dgx-a100:64", "mi250:16", "fat-tree:16", "hgx-h100:64"]


def bench_bound() -> list[dict]:
    """One bound per topology (the first call: nothing is cached between topologies)."""
    records = []
    for spec in SPECS:
        topo = Topology.from_spec(spec)
        t0 = time.perf_counter()
        b = bound(topo, "allgather")
        seconds = time.perf_counter() - t0
        records.append(
            {
                "spec": spec,
                "N": topo.n_ranks,
                "inv_throughput": b["inv_throughput"],
                "bound_seconds": seconds,
            }
        )
    return records


BENCHMARKS = {"bound_large": bench_bound}
