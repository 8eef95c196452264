"""The scale table (bench/run.py discovers `BENCHMARKS`): every row as a whole process
under `/usr/bin/time -v` (wall, user seconds, peak memory) with its synthesis time and its
result (optimality, time), so that "every row keeps its result exactly" is visible next to
the speed. Writes bench/results/scale.json and scale_table.md.

Standalone: `python bench/bench_scale.py [--quick] [--label L] [--cli PATH]`; `--quick`
skips the big rows, `--cli` times another build (e.g. main's, labelled "before"); each label's
records are kept side by side in scale.json, and the table compares them."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

from collsynth.fileio import atomic_write

RESULTS = Path(__file__).parent / "results"


def _tacos_bench():
    path = Path(__file__).with_name("bench_tacos.py")
    spec = importlib.util.spec_from_file_location("bench_tacos", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# (topology, algorithm, collective, extra args, target seconds, target peak MB, big row)
ROWS = [
    ("torus:50x50", "bfb", "allgather", [], 3.0, 500, True),
    ("hypercube:10", "bfb", "allgather", [], 1.0, None, False),
    ("torus:32x32", "forestcoll", "allgather", [], 1.5, None, False),
    ("torus:32x32", "ring", "allreduce", [], 1.5, None, False),
    ("torus:32x32", "forestcoll", "allreduce", [], None, None, False),
    ("dgx-a100:128", "forestcoll", "allgather", [], None, None, False),
    ("dgx-a100:128", "forestcoll", "allreduce", [], None, None, False),
    ("dgx-a100:512", "forestcoll", "allgather", [], 10.0, 1000, True),
    ("dgx-a100:512", "forestcoll", "allreduce", [], 10.0, 1000, True),
    ("rfs:2,4,128", "tacos", "allreduce", [], 15.0, None, True),
    ("mesh:200x200", "tacos", "allgather", ["--time-only"], 120.0, None, True),
]

# The result keys that must not move between builds.
RESULT_KEYS = ["optimality_exact", "time_us", "runtime_time_us", "alpha_beta_us", "transfers"]


def row(spec, algorithm, collective, extra, target_s, target_mb, cli=None) -> dict:
    whole = _tacos_bench().whole_command([spec, "-c", collective, "--json", *extra], algorithm, cli)
    res = whole.pop("result")
    wall, synth = whole["wall_seconds"], res.get("synthesis_seconds") or 0.0
    peak_mb = whole["max_rss_kib"] / 1024
    met = (target_s is None or wall <= target_s) and (target_mb is None or peak_mb <= target_mb)
    return {
        "spec": spec,
        "command": " ".join(["collsynth synth", spec, "-a", algorithm, "-c", collective, *extra]),
        "synthesis_seconds": synth,
        **whole,
        "peak_mb": round(peak_mb, 1),
        "whole_over_synthesis": wall / synth if synth > 0 else None,
        **{k: res.get(k) for k in RESULT_KEYS},
        "target_seconds": target_s,
        "target_mb": target_mb,
        "target_met": met,
        "within_2x_of_synthesis": synth > 0 and wall <= 2 * synth,
        "load_average": os.getloadavg()[0],
    }


def run(quick: bool = False, cli: str | None = None, only: str | None = None) -> list[dict]:
    """Every row (`quick`: not the big ones; `only`: those whose command contains one of
    its `|`-separated texts)."""
    rows = [r for r in ROWS if not (quick and r[6])]
    wanted = None if only is None else only.split("|")
    command = lambda r: " ".join([r[0], "-a", r[1], "-c", r[2], *r[3]])  # noqa: E731
    rows = [r for r in rows if wanted is None or any(w in command(r) for w in wanted)]
    return [row(*r[:6], cli=cli) for r in rows]


def table(runs: dict[str, list[dict]]) -> str:
    """Markdown: per row and label, wall / peak / synthesis, the target, and whether the
    result equals the first label's."""
    labels = list(runs)
    lines = [
        "| command | "
        + " | ".join(f"{x}: wall s / CPU s / peak MB / synth s" for x in labels)
        + " | target | met | "
        "result (optimality, time_us) | same result |",
        "|---|" + "---|" * len(labels) + "---|---|---|---|",
    ]
    # Every command of any label, in order of first appearance; results compare with the
    # first label that ran it.
    first: dict[str, dict] = {}
    for x in labels:
        for r in runs[x]:
            first.setdefault(r["command"], r)
    for cmd in first:
        cells, same, last = [], True, first[cmd]
        for x in labels:
            r = next((r for r in runs[x] if r["command"] == cmd), None)
            if r is None:
                cells.append("-")
                continue
            keys = ["wall_seconds", "user_seconds", "peak_mb", "synthesis_seconds"]
            cells.append(" / ".join(f"{r[k]:.2f}" for k in keys))
            same &= all(r[k] == first[cmd][k] for k in RESULT_KEYS)
            last = r
        target = " ".join(
            t
            for t in [
                last["target_seconds"] and f"<= {last['target_seconds']} s",
                last["target_mb"] and f"<= {last['target_mb']} MB",
            ]
            if t
        )
        result = f"{last['optimality_exact']}, {last['time_us']}"
        lines.append(
            f"| `{cmd}` | "
            + " | ".join(cells)
            + f" | {target or '-'} | {'yes' if last['target_met'] else 'no'} "
            f"| {result} | {'yes' if same else 'NO'} |"
        )
    loads = {x: max(r["load_average"] for r in runs[x]) for x in labels}
    lines.append("")
    lines.append(
        "CPU s: user seconds of all threads. 2 cores shared with other jobs (wall times swing with"
        " them; CPU seconds are steadier); highest 1-minute load average seen per label: "
        + ", ".join(f"{x} {v:.1f}" for x, v in loads.items())
    )
    return "\n".join(lines) + "\n"


def save(label: str, records: list[dict]) -> None:
    path = RESULTS / "scale.json"
    runs = json.loads(path.read_text())["runs"] if path.exists() else {}
    runs[label] = records
    atomic_write(path, json.dumps({"benchmark": "scale", "runs": runs}, indent=2) + "\n")
    atomic_write(RESULTS / "scale_table.md", table(runs))


def bench_scale() -> list[dict]:
    records = run()
    save("after", records)
    return records


BENCHMARKS = {"scale": bench_scale}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="skip the big rows")
    ap.add_argument("--label", default="after")
    ap.add_argument("--cli", help="the collsynth executable to time (default: this environment's)")
    ap.add_argument("--only", metavar="TEXT", help="only the rows whose command contains TEXT (A|B: either)")
    a = ap.parse_args()
    save(a.label, run(a.quick, a.cli, a.only))
    print((RESULTS / "scale_table.md").read_text())
    sys.exit(0)
