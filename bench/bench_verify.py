"""The verifier at the brief's scale: a ring allreduce on 1024 ranks (2 x 1024 x 1023
transfers) and a tree allreduce (double binary tree) on a 1024-rank switch, whose race
checks need backward searches (a broadcast's copy into a rank waits for that rank's send up
the tree). Each schedule is synthesized once, then verified alone, best of 3. Run by
`make bench`; `python bench/run.py verify_large` alone."""

from __future__ import annotations

from collsynth import Topology, synthesize

CASES = [("ring:1024", "ring"), ("switch:1024", "dbt")]


def _timed_verify(sched, repeat: int = 3) -> tuple[float, dict]:
    import time

    best, report = float("inf"), {}
    for _ in range(repeat):
        t0 = time.perf_counter()
        report = sched.verify()
        best = min(best, time.perf_counter() - t0)
    return best, report


def bench_verify() -> list[dict]:
    """Verify alone, per case (synthesis, which verifies too, is not counted)."""
    records = []
    for spec, alg in CASES:
        sched = synthesize(Topology.from_spec(spec), "allreduce", alg)
        seconds, report = _timed_verify(sched)
        records.append(
            {
                "spec": spec,
                "algorithm": alg,
                "transfers": sched.n_transfers,
                "depth": report.get("depth"),
                "verify_seconds": seconds,
            }
        )
    return records


BENCHMARKS = {"verify_large": bench_verify}
