"""Topology finder (`collsynth find`): the N = 1024, d = 4 frontier (Table 4) from a cold
cache, with the workload (all-to-all) evaluation; then the paper's "under a minute for all
d = 2, 4, 8, 16 and N up to 2000": `find --sweep 2000` (every N, every degree, unidirectional,
on every core, sharing the process-wide caches of base evaluations, per-size pools and
product factors). Run by `make bench`; `python bench/run.py find` alone."""

from __future__ import annotations

import time

from collsynth._core import find_sweep, find_topologies

DEGREES = [2, 4, 8, 16]
MAX_NODES = 2000


def bench_find() -> list[dict]:
    """N = 1024, d = 4 with the workload, then the full sweep."""
    t0 = time.perf_counter()
    res = find_topologies(1024, 4)
    rec = res["recommended"]
    # Every record has the same keys (run.py tabulates them side by side).
    records = [
        {
            "spec": f"find --nodes 1024 --degree 4 -> {len(res['frontier'])} members, best {rec['topology']}",
            "sizes": 1,
            "synthesis_seconds": time.perf_counter() - t0,
        }
    ]
    t0 = time.perf_counter()
    rows = find_sweep(MAX_NODES, DEGREES, False)
    records.append(
        {
            "spec": f"find --sweep {MAX_NODES} --degrees {','.join(map(str, DEGREES))} (every N)",
            "sizes": len(rows),
            "synthesis_seconds": time.perf_counter() - t0,
        }
    )
    return records


BENCHMARKS = {"find": bench_find}
