"""`make bench`: measure, write bench/results/*.json and a short human summary.

Never a timed assertion in a test: numbers live here. Each benchmark is one function that
returns a list of records; results are written atomically.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from collsynth import Topology, __version__
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


BENCHMARKS = {"topology": bench_topology}


def main(argv: list[str]) -> int:
    chosen = argv or list(BENCHMARKS)
    for name in chosen:
        records = BENCHMARKS[name]()
        doc = {
            "benchmark": name,
            "collsynth_version": __version__,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "records": records,
        }
        atomic_write(RESULTS / f"{name}.json", json.dumps(doc, indent=2) + "\n")
        t = Table(title=f"bench {name} (seconds)", title_justify="left")
        for key in records[0]:
            t.add_column(key, justify="right" if key != "spec" else "left")
        for r in records:
            t.add_row(*[f"{v:.4f}" if isinstance(v, float) else str(v) for v in r.values()])
        console.print(t)
        console.print(f"wrote {RESULTS / (name + '.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
