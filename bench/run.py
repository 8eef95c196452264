"""`make bench`: measure, write bench/results/*.json and a short human summary.

Never a timed assertion in a test: numbers live here. Each benchmark is one function that
returns a list of records; results are written atomically.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from collsynth import Topology, __version__, bound, synthesize
from collsynth.fileio import atomic_write

RESULTS = Path(__file__).parent / "results"
console = Console()


def timed(fn, repeat: int = 3) -> float:
    """Best wall-clock seconds of `repeat` runs."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_topology() -> list[dict]:
    """Zoo construction, metrics (one BFS per rank) and JSON round trip on large topologies."""
    records = []
    for spec in [
        "torus:32x32",
        "mesh:64x64",
        "dgx-a100:128",
        "mi250:8",
        "kautz:4:1024",
        "fat-tree:16",
    ]:
        topo = Topology.from_spec(spec)
        text = topo.to_json()
        records.append(
            {
                "spec": spec,
                "N": topo.n_ranks,
                "build_s": timed(lambda s=spec: Topology.from_spec(s)),
                "metrics_s": timed(topo.metrics, repeat=1),
                "json_round_trip_s": timed(lambda t=text: Topology.loads(t).to_json()),
            }
        )
    return records


def bench_bounds_and_simulation() -> list[dict]:
    """The bounds-and-simulation benchmark: the exact allgather bound, then a ring allreduce synthesized,
    verified and simulated with 64 pipeline chunks per piece, on torus:32x32 and dgx-a100:64."""
    records = []
    for spec in ["torus:32x32", "dgx-a100:64"]:
        topo = Topology.from_spec(spec)
        t0 = time.perf_counter()
        b = bound(topo, "allgather")
        bound_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        sched = synthesize(topo, "allreduce", "ring")
        synth_verify_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        sim = sched.simulate("1GiB", pipeline=64)
        sim_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        ab = sched.cost("1GiB")
        ab_s = time.perf_counter() - t0
        records.append(
            {
                "spec": spec,
                "N": topo.n_ranks,
                "bound_s": bound_s,
                "inv_throughput": b["inv_throughput"],
                "ring_transfers": sched.n_transfers,
                "synthesis_s": sched.synthesis_seconds,
                "synthesis_and_verify_s": synth_verify_s,
                "chunk_transfers": sim["chunk_transfers"],
                "simulate_64_chunks_s": sim_s,
                "simulated_us": sim["time_us"],
                "alpha_beta_s": ab_s,
                "alpha_beta_us": ab["alpha_beta_us"],
            }
        )
    return records


BENCHMARKS = {"topology": bench_topology, "bounds_simulation": bench_bounds_and_simulation}


def discover() -> dict:
    """This file's benchmarks plus those of every bench/bench_*.py (a module-level BENCHMARKS
    dict of name -> function returning records), so each feature keeps its own file."""
    found = dict(BENCHMARKS)
    for path in sorted(Path(__file__).parent.glob("bench_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.update(module.BENCHMARKS)
    return found


def main(argv: list[str]) -> int:
    available = discover()
    if unknown := [a for a in argv if a not in available]:
        console.print(f"unknown benchmark(s) {unknown}; available: {', '.join(available)}")
        return 2
    for name in argv or list(available):
        records = available[name]()
        doc = {
            "benchmark": name,
            "collsynth_version": __version__,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "records": records,
        }
        atomic_write(RESULTS / f"{name}.json", json.dumps(doc, indent=2) + "\n")
        # one column per record: readable however many metrics a benchmark has
        t = Table(title=f"bench {name} (times in seconds)", title_justify="left")
        t.add_column("metric")
        for r in records:
            t.add_column(str(r.get("spec", "")), justify="right")
        for key in records[0]:
            if key == "spec" or isinstance(records[0][key], (dict, list)):
                continue  # nested detail stays in the JSON file
            t.add_row(key, *[f"{r[key]:.4g}" if isinstance(r[key], float) else str(r[key]) for r in records])
        console.print(t)
        console.print(f"wrote {RESULTS / (name + '.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
