"""What fitting exports to each runtime costs, as the user waits for it: the whole
`collsynth synth T -a auto -c C --size S --format msccl-xml --runtime R -o DIR --json` command
per cell (wall time and peak memory of the process), the program's thread blocks and channels,
the runtime model's time of the program written, and whether the command exited 2 naming a
limit. Run by `make bench` (bench/run.py); `python bench/run.py fit` alone.
`COLLSYNTH_BENCH_FIT=quick` keeps 64 MiB only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MACHINES = ["dgx-a100:2", "dgx-a100:4", "hgx-h100:2", "mi250:2", "dgx1", "torus:8x8"]
DUMPS = Path(__file__).resolve().parents[2] / "shared" / "data" / "nccl-topo"
COLLECTIVES = ["allgather", "reduce-scatter", "allreduce"]
SIZES = ["1MiB", "64MiB", "1GiB"]
RUNTIMES = ["msccl-nccl", "rccl"]
COLLSYNTH = str(Path(sys.executable).with_name("collsynth"))


def machines() -> list[str]:
    dumps = sorted(p for p in DUMPS.glob("*.xml") if "partial" not in p.name) if DUMPS.is_dir() else []
    return MACHINES + [f"nccl:{p}" for p in dumps]


def _run(argv: list[str]) -> tuple[int, float, float, str, str]:
    """Exit status, wall seconds and peak MiB of the whole process (`/usr/bin/time`), stdout,
    stderr."""
    with tempfile.NamedTemporaryFile("r") as t:
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%e %M", "-o", t.name, *argv], capture_output=True, text=True
        )
        wall, kib = t.read().split()[-2:]
    return proc.returncode, float(wall), int(kib) / 1024, proc.stdout, proc.stderr


def _cell(topo: str, coll: str, size: str, runtime: str) -> dict:
    with tempfile.TemporaryDirectory() as out:
        argv = [COLLSYNTH, "synth", topo, "-a", "auto", "-c", coll, "--size", size]
        argv += ["--format", "msccl-xml", "--runtime", runtime, "-o", out, "--json"]
        rc, wall, peak, stdout, stderr = _run(argv)
    rec = {"topology": topo, "collective": coll, "size": size, "runtime": runtime, "exit": rc}
    rec.update({"wall_s": wall, "peak_MiB": round(peak, 1)})
    if rc != 0:
        rec["error"] = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        return rec
    s = json.loads(stdout)
    m = s["msccl"]
    rec.update(
        {
            "algorithm": s.get("auto_choice", s.get("algorithm")),
            "thread_blocks": m["thread_blocks"],
            "nchannels": m["nchannels"],
            "pipeline": m["pipeline"],
            "fallback": m["fallback"],
            "judged_us": m["judged"]["time_us"] if m["judged"] else None,
            "time_bound_us": s.get("time_bound_us"),
        }
    )
    return rec


def bench_fit() -> list[dict]:
    sizes = ["64MiB"] if os.environ.get("COLLSYNTH_BENCH_FIT") == "quick" else SIZES
    return [_cell(t, c, s, r) for t in machines() for c in COLLECTIVES for s in sizes for r in RUNTIMES]


BENCHMARKS = {"fit": bench_fit}
