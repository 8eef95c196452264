"""MPI runtime benchmark (`make bench`): collsynth.mpi's circulant bcast / allgatherv against the MPI
library's (the `mpich` wheel), 4 processes on this machine, small sizes, min of 35 runs of the
slowest rank, schedule computation included. Same harness as `collsynth bench-mpi`."""

from __future__ import annotations

from collsynth import _core
from collsynth.cli.bench_mpi import launch_bench

NP = 4
SIZES = [1, 1024, 65536, 262144]


def bench_mpi() -> list[dict]:
    if not hasattr(_core, "circulant_schedule"):
        return [{"spec": "skipped", "reason": "collsynth._core lacks the circulant schedules"}]
    result = launch_bench(NP, SIZES, 35, ["bcast", "allgatherv"], [], timeout=600)
    return [
        {
            "spec": f"{r['op']} {r['size_bytes']}B np{result['np']}",
            "ours_us": r["ours_us"],
            "library_us": r["library_us"],
            "ratio": r["ratio"],
            "blocks": r["blocks"],
            "alpha_us": result["alpha_us"],
            "beta_us_per_byte": result["beta_us_per_byte"],
        }
        for r in result["records"]
    ]


BENCHMARKS = {"mpi": bench_mpi}
