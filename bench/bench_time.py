"""The time targets, measured: `auto`'s pick against the time bound and against NCCL's
own algorithms, by the calibrated runtime model (docs/simulator.md), on the target machines,
collectives and sizes. `python bench/run.py time`; writes bench/results/time.json and
bench/results/time_table.md (the README's table). Targets: `auto` within 1.15x
of the bound at 64 MiB and above, within 2x at 1 MiB, never slower than nccl-ring/nccl-tree.
`auto` chooses by the same runtime model (algorithm, form, pipeline depth and protocol
together). The second table is the program a user runs: `synth -a auto --format msccl-xml
--runtime R` per runtime, as a subprocess (its whole wall time recorded per cell), which
ranks auto's candidates by their packed programs and writes the fastest that fits."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import collsynth
from collsynth import BadInput
from collsynth.fileio import atomic_write

RESULTS = Path(__file__).parent / "results"
TOPOLOGIES = ["dgx-a100:2", "dgx-a100:4", "mi250:2", "hgx-h100:2", "dgx1", "torus:8x8"]
COLLECTIVES = ["allgather", "reduce-scatter", "allreduce"]
SIZES = {"1KiB": 1 << 10, "1MiB": 1 << 20, "64MiB": 64 << 20, "1GiB": 1 << 30, "4GiB": 4 << 30}


def _target(size: int) -> float | None:
    """The target bound ratio at `size`: 1.15 from 64 MiB, 2 at 1 MiB, none below."""
    if size >= 64 << 20:
        return 1.15
    if size >= 1 << 20:
        return 2.0
    return None


RUNTIMES = ["msccl-nccl", "rccl"]


def _runtime_us(topo, collective: str, algorithm: str, size: str) -> tuple[float, float, str] | None:
    """(runtime model's time, time bound, what ran) of `algorithm` at `size`; None where it
    does not apply."""
    r = _schedule(topo, collective, algorithm, size)
    return None if r is None else r[:3]


def _schedule(topo, collective: str, algorithm: str, size: str):
    """(time, bound, what ran, schedule, moved bytes), or None where it does not apply."""
    try:
        s = collsynth.synthesize(topo, collective, algorithm, size=size)
    except BadInput:
        return None
    e = s.evaluate(size)
    choice = s.details.get("auto_choice", s.algorithm)
    return e["runtime_time_us"], e["time_bound_us"], choice, s, int(e["size_moved_bytes"])


def _exported(spec: str, collective: str, label: str) -> dict:
    """Per runtime, what `synth -a auto --format msccl-xml --runtime R` writes, as a user
    runs it (a subprocess, timed whole): auto's pick among its candidates' packed programs,
    the runtime model's time of that XML in its thread blocks at the moved bytes, or the
    limit it cannot meet."""
    out = {}
    for runtime in RUNTIMES:
        with tempfile.TemporaryDirectory() as tmp:
            argv = ["synth", spec, "-c", collective, "-a", "auto", "--size", label, "--format", "msccl-xml"]
            argv += ["--runtime", runtime, "-o", tmp, "--json"]
            t0 = time.monotonic()
            cmd = [sys.executable, "-m", "collsynth.cli", *argv]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.monotonic() - t0
        if proc.returncode != 0:
            out[runtime] = {"error": proc.stderr.strip(), "wall_s": wall}
            continue
        s = json.loads(proc.stdout)
        x, j = s["msccl"], s["msccl"]["judged"]
        out[runtime] = {
            "auto_choice": s.get("auto_choice"),
            "time_us": j["time_us"] if j else None,
            "thread_blocks": x["thread_blocks"],
            "nchannels": x["nchannels"],
            "max_steps": x["max_steps"],
            "fallback": x["fallback"],
            "wall_s": wall,
        }
    return out


def bench_time() -> list[dict]:
    records = []
    for spec in TOPOLOGIES:
        topo = collsynth.Topology.from_spec(spec)
        for c in COLLECTIVES:
            for label, size in SIZES.items():
                print(f"{spec} {c} {label}", file=sys.stderr, flush=True)
                t, bound, choice, _, _ = _schedule(topo, c, "auto", label)
                nccl = [_runtime_us(topo, c, a, label) for a in ("nccl-ring", "nccl-tree")]
                best_nccl = min((r[0] for r in nccl if r), default=None)
                exported = _exported(spec, c, label) if size >= 1 << 20 else {}
                target = _target(size)
                records.append(
                    {
                        "spec": f"{spec} {c} {label}",
                        "auto_choice": choice,
                        "auto_runtime_us": t,
                        "time_bound_us": bound,
                        "ratio_to_bound": t / bound,
                        "target": target,
                        "bound_target_met": None if target is None else t / bound <= target,
                        "best_nccl_runtime_us": best_nccl,
                        "not_slower_than_nccl": None if best_nccl is None else t <= best_nccl * (1 + 1e-9),
                        # The program a user runs: the XML packed for each runtime.
                        "exported": {
                            r: {**x, "ratio_to_bound": x["time_us"] / bound if x.get("time_us") else None}
                            for r, x in exported.items()
                        },
                    }
                )
    atomic_write(RESULTS / "time_table.md", markdown(records) + "\n" + exported_markdown(records))
    return records


def markdown(records: list[dict]) -> str:
    """One row per (machine, collective): auto's time over the bound at each size; a `*`
    marks a missed bound target, `!` a size where NCCL's best is faster."""
    rows: dict[str, list[str]] = {}
    for r in records:
        spec, c, label = r["spec"].split(" ")
        mark = ("*" if r["bound_target_met"] is False else "") + (
            "!" if r["not_slower_than_nccl"] is False else ""
        )
        rows.setdefault(f"{spec} {c}", []).append(f"{r['ratio_to_bound']:.2f}x{mark}")
    head = "| machine, collective | " + " | ".join(SIZES) + " |\n|---|" + "---|" * len(SIZES) + "\n"
    return head + "".join(f"| {k} | " + " | ".join(v) + " |\n" for k, v in rows.items())


def exported_markdown(records: list[dict]) -> str:
    """The exported programs' time over the bound, per runtime (msccl-nccl / rccl), from 1 MiB;
    `*` marks a missed target, `-` a cell not exported."""
    rows: dict[str, list[str]] = {}
    labels = [k for k, v in SIZES.items() if v >= 1 << 20]
    for r in records:
        spec, c, label = r["spec"].split(" ")
        if label not in labels:
            continue
        cell = []
        for runtime in RUNTIMES:
            x = r["exported"].get(runtime, {})
            ratio = x.get("ratio_to_bound")
            miss = ratio is not None and r["target"] is not None and ratio > r["target"]
            cell.append("-" if ratio is None else f"{ratio:.2f}x" + ("*" if miss else ""))
        rows.setdefault(f"{spec} {c}", []).append(" / ".join(cell))
    head = "| machine, collective (msccl-nccl / rccl) | " + " | ".join(labels) + " |\n|---|"
    head += "---|" * len(labels) + "\n"
    return head + "".join(f"| {k} | " + " | ".join(v) + " |\n" for k, v in rows.items())


# The machines whose exported programs missed a target in the full table, at the sizes of
# the 1.15x target: re-measured alone in minutes, where the full table takes most of an hour.
EXPORTED_MACHINES = ["hgx-h100:2", "dgx-a100:2", "dgx1"]
EXPORTED_SIZES = ["64MiB", "1GiB"]


def bench_time_exported() -> list[dict]:
    """`synth -a auto --format msccl-xml --runtime R` per cell of EXPORTED_MACHINES x the
    collectives x EXPORTED_SIZES, each a subprocess (whole wall time recorded): the program
    over the time bound, next to the bound target."""
    records = []
    for spec in EXPORTED_MACHINES:
        topo = collsynth.Topology.from_spec(spec)
        for c in COLLECTIVES:
            for label in EXPORTED_SIZES:
                print(f"{spec} {c} {label}", file=sys.stderr, flush=True)
                # the time bound is the collective's, whatever schedule reports it
                bound_us = collsynth.synthesize(topo, c, "ring", size=label).evaluate(label)["time_bound_us"]
                for runtime, x in _exported(spec, c, label).items():
                    ratio = x["time_us"] / bound_us if x.get("time_us") else None
                    records.append(
                        {
                            "spec": f"{spec} {c} {label} {runtime}",
                            "time_bound_us": bound_us,
                            **x,
                            "ratio_to_bound": ratio,
                            "target_met": None if ratio is None else ratio <= 1.15,
                        }
                    )
    return records


BENCHMARKS = {"time": bench_time, "time_exported": bench_time_exported}
