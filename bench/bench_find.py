"""Topology finder (`collsynth find`): the N = 1024, d = 4 frontier (Table 4) from a cold
cache, with the workload (all-to-all) evaluation; then a sweep over d in {2, 4, 8, 16} and N up
to 2000 of the frontier search alone, sharing the process-wide caches of base evaluations and
per-size pools as the paper's "under a minute for all d = 2, 4, 8, 16 and N up to 2000" run
would. The default sweep takes every 37th N plus the powers of two (64 sizes, about 18 s on
2 cores); COLLSYNTH_FIND_SWEEP=full sweeps every N (about 6 minutes, so not by default; see
docs/find.md "Performance"). Run by `make bench`; `python bench/run.py find` alone."""

from __future__ import annotations

import os
import time

from collsynth._core import find_frontier, find_topologies

DEGREES = [2, 4, 8, 16]


def _sizes() -> list[int]:
    if os.environ.get("COLLSYNTH_FIND_SWEEP") == "full":
        return list(range(2, 2001))
    return sorted(set(range(2, 2001, 37)) | {2**k for k in range(1, 11)})


def bench_find() -> list[dict]:
    """N = 1024, d = 4 with the workload, then the sweep per degree."""
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
    sizes = _sizes()
    total = 0.0
    for d in DEGREES:
        t0 = time.perf_counter()
        found = sum(1 for n in sizes if n > d and find_frontier(n, d))
        seconds = time.perf_counter() - t0
        total += seconds
        records.append(
            {
                "spec": f"sweep d={d}, {len(sizes)} sizes N <= 2000",
                "sizes": found,
                "synthesis_seconds": seconds,
            }
        )
    records.append({"spec": f"sweep d in {DEGREES}", "sizes": len(sizes), "synthesis_seconds": total})
    return records


BENCHMARKS = {"find": bench_find}
