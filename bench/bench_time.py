"""The time targets, measured: `auto`'s pick against the time bound and against NCCL's
own algorithms, by the calibrated runtime model (docs/simulator.md), on the target machines,
collectives and sizes. `python bench/run.py time`; writes bench/results/time.json and
bench/results/time_table.md (the README's table). Targets: `auto` within 1.15x
of the bound at 64 MiB and above, within 2x at 1 MiB, never slower than nccl-ring/nccl-tree.
`auto` chooses by the same runtime model (algorithm, form, pipeline depth and protocol
together), so this bench judges its pick as a user running the XML would."""

from __future__ import annotations

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


def _runtime_us(topo, collective: str, algorithm: str, size: str) -> tuple[float, float, str] | None:
    """(runtime model's time, time bound, what ran) of `algorithm` at `size`; None where it
    does not apply."""
    try:
        s = collsynth.synthesize(topo, collective, algorithm, size=size)
    except BadInput:
        return None
    e = s.evaluate(size)
    return e["runtime_time_us"], e["time_bound_us"], s.details.get("auto_choice", s.algorithm)


def bench_time() -> list[dict]:
    records = []
    for spec in TOPOLOGIES:
        topo = collsynth.Topology.from_spec(spec)
        for c in COLLECTIVES:
            for label, size in SIZES.items():
                auto = _runtime_us(topo, c, "auto", label)
                nccl = [_runtime_us(topo, c, a, label) for a in ("nccl-ring", "nccl-tree")]
                best_nccl = min((r[0] for r in nccl if r), default=None)
                t, bound, choice = auto
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
                    }
                )
    atomic_write(RESULTS / "time_table.md", markdown(records))
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


BENCHMARKS = {"time": bench_time}
