"""Träff's circulant schedules: the exhaustive check (every p <= 20000 plus 200 random p up
to 10^6) and the per-process schedule computation time. Run by `make bench` (bench/run.py)."""

from __future__ import annotations

import os
import random
import time

from collsynth import _core

CHECK_MAX_P = 20_000
RANDOM_PS = 200
RANDOM_MAX = 1_000_000
SCHEDULE_REPEATS = 10


def _check(ps: list[int]) -> dict:
    t0 = time.perf_counter()
    r = _core.circulant_check(ps)
    seconds = time.perf_counter() - t0
    assert not r["failures"], r["failures"]
    return {
        "ps": r["ps"],
        "max_p": r["max_p"],
        "processes": r["processes"],
        "broadcasts": r["broadcasts"],
        "rounds": r["rounds"],
        "failures": len(r["failures"]),
        "threads": os.cpu_count(),
        "seconds": seconds,
    }


def bench_check() -> list[dict]:
    """Exhaustive round-by-round check: p = 2..20000, then 200 random p up to 10^6 (seed 0)."""
    every = {"spec": f"every p <= {CHECK_MAX_P}", **_check(list(range(2, CHECK_MAX_P + 1)))}
    rng = random.Random(0)
    ps = sorted(rng.randint(2, RANDOM_MAX) for _ in range(RANDOM_PS))
    rand = {"spec": f"{RANDOM_PS} random p <= {RANDOM_MAX}", **_check(ps)}
    return [every, rand]


def bench_schedule() -> list[dict]:
    """Microseconds for one process's receive + send schedules (Algorithms 4 and 5): the
    minimum over SCHEDULE_REPEATS calls (each the best of 7 runs over 256 ranks), so that a
    moment of load from other processes does not count."""
    records = []
    for p in [2**10, 2**16, 2**20, 10**6 + 3]:
        us = min(_core.circulant_schedule_time_us(p, 256, 7) for _ in range(SCHEDULE_REPEATS))
        records.append(
            {"spec": f"p={p}", "p": p, "q": _core.circulant_schedule(p, 1)["q"], "us_per_process": us}
        )
    return records


def bench_check_one() -> list[dict]:
    """One large p at a time on one thread: nanoseconds per process of the whole check."""
    records = []
    for p in [20_000, 100_003]:
        t0 = time.perf_counter()
        r = _core.circulant_check([p], 1)
        seconds = time.perf_counter() - t0
        assert not r["failures"], r["failures"]
        records.append({"spec": f"p={p}", "p": p, "seconds": seconds, "ns_per_process": seconds * 1e9 / p})
    return records


BENCHMARKS = {
    "circulant_check": bench_check,
    "circulant_check_one": bench_check_one,
    "circulant_schedule": bench_schedule,
}
