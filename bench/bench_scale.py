"""The scale table (bench/run.py discovers `BENCHMARKS`): every row as a whole process
under `/usr/bin/time -v` (wall, user seconds, peak memory) with its synthesis time and its
result (optimality, time), so that "every row keeps its result exactly" is visible next to
the speed: where the flat form is affordable, the same build also runs the row with
`--form flat` (every transfer, verified, costed and written flat) and the table says whether
both forms give the same result keys, bit for bit. Writes bench/results/scale.json and
scale_table.md.

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


# (topology, algorithm, collective, extra args, target seconds, target peak MB, big row,
# flat form affordable: also run with `--form flat` and compare)
ROWS = [
    ("torus:50x50", "bfb", "allgather", [], 3.0, 500, True, False),
    ("hypercube:10", "bfb", "allgather", [], 1.0, None, False, True),
    ("torus:32x32", "forestcoll", "allgather", [], 1.5, None, False, True),
    ("torus:32x32", "ring", "allreduce", [], 1.5, None, False, True),
    ("torus:32x32", "forestcoll", "allreduce", [], None, None, False, True),
    ("dgx-a100:128", "forestcoll", "allgather", [], None, None, False, True),
    ("dgx-a100:128", "forestcoll", "allreduce", [], None, None, False, True),
    ("dgx-a100:512", "forestcoll", "allgather", [], 10.0, 1000, True, True),
    ("dgx-a100:512", "forestcoll", "allreduce", [], 10.0, 1000, True, False),
    ("rfs:2,4,128", "tacos", "allreduce", [], 15.0, None, True, False),
    ("mesh:200x200", "tacos", "allgather", ["--time-only"], 120.0, None, True, False),
]

# The result keys that must not move between builds.
RESULT_KEYS = [
    "optimality_exact",
    "time_us",
    "runtime_time_us",
    "alpha_beta_us",
    "transfers",
    "size_moved_bytes",
]


def row(spec, algorithm, collective, extra, target_s, target_mb, flat=False, cli=None) -> dict:
    """One row as a whole process; with ``flat``, the same command with `--form flat` too, and
    whether its result keys equal the row's (the compact form's, same build)."""
    whole = _tacos_bench().whole_command([spec, "-c", collective, "--json", *extra], algorithm, cli)
    res = whole.pop("result")
    flat_record = None
    if flat:
        f = _tacos_bench().whole_command(
            [spec, "-c", collective, "--json", "--form", "flat", *extra], algorithm, cli
        )
        fres = f.pop("result")
        flat_record = {
            "wall_seconds": f["wall_seconds"],
            "user_seconds": f["user_seconds"],
            "peak_mb": round(f["max_rss_kib"] / 1024, 1),
            "synthesis_seconds": fres.get("synthesis_seconds") or 0.0,
            "compact_group": fres.get("compact_group"),
            **{k: fres.get(k) for k in RESULT_KEYS},
        }
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
        "compact_group": res.get("compact_group"),
        "flat": flat_record,
        "same_as_flat": None
        if flat_record is None
        else all(res.get(k) == flat_record[k] for k in RESULT_KEYS),
        "load_average": os.getloadavg()[0],
    }


def run(quick: bool = False, cli: str | None = None, only: str | None = None) -> list[dict]:
    """Every row (`quick`: not the big ones; `only`: those whose command contains one of
    its `|`-separated texts)."""
    rows = [r for r in ROWS if not (quick and r[6])]
    wanted = None if only is None else only.split("|")
    command = lambda r: " ".join([r[0], "-a", r[1], "-c", r[2], *r[3]])  # noqa: E731
    rows = [r for r in rows if wanted is None or any(w in command(r) for w in wanted)]
    return [row(*r[:6], flat=r[7], cli=cli) for r in rows]


def table(runs: dict[str, list[dict]]) -> str:
    """Markdown: per row and label, wall / CPU / peak / synthesis; then, from the last label
    that ran the row: the flat form's wall / CPU / peak (`--form flat`, same build), the target,
    the results of both forms and whether they are the same, bit for bit."""
    labels = list(runs)
    lines = [
        "| command | "
        + " | ".join(f"{x}: wall s / CPU s / peak MB / synth s" for x in labels)
        + " | whole / synth (last label) | flat form (last label): wall s / CPU s / peak MB | target | met | "
        "result (optimality, time_us) | flat form's result | same result |",
        "|---|" + "---|" * len(labels) + "---|---|---|---|---|---|---|",
    ]
    commands: list[str] = []
    for x in labels:
        commands += [r["command"] for r in runs[x] if r["command"] not in commands]
    for cmd in commands:
        cells, last = [], None
        for x in labels:
            r = next((r for r in runs[x] if r["command"] == cmd), None)
            if r is None:
                cells.append("-")
                continue
            keys = ["wall_seconds", "user_seconds", "peak_mb", "synthesis_seconds"]
            cells.append(" / ".join(f"{r[k]:.2f}" for k in keys))
            last = r
        assert last is not None
        target = " ".join(
            t
            for t in [
                last["target_seconds"] and f"<= {last['target_seconds']} s",
                last["target_mb"] and f"<= {last['target_mb']} MB",
            ]
            if t
        )
        result = f"{last['optimality_exact']}, {last['time_us']}"
        flat = last.get("flat")
        if flat is None:
            flat_cells = "- | -"
            same = "schedule is flat" if "compact_group" in last and last["compact_group"] is None else "-"
        else:
            flat_cells = " / ".join(f"{flat[k]:.2f}" for k in ["wall_seconds", "user_seconds", "peak_mb"])
            flat_cells += f" | {flat['optimality_exact']}, {flat['time_us']}"
            same = "yes" if last["same_as_flat"] else "NO"
        ratio = last.get("whole_over_synthesis")
        lines.append(
            f"| `{cmd}` | "
            + " | ".join(cells)
            + f" | {'-' if ratio is None else f'{ratio:.1f}x'}"
            + f" | {flat_cells.split(' | ')[0]} | {target or '-'} | {'yes' if last['target_met'] else 'no'} "
            f"| {result} | {flat_cells.split(' | ')[1]} | {same} |"
        )
    loads = {x: max(r["load_average"] for r in runs[x]) for x in labels}
    lines.append("")
    lines.append(
        "CPU s: user seconds of all threads. 2 cores shared with other jobs (wall times swing with"
        " them; CPU seconds are steadier); highest 1-minute load average seen per label: "
        + ", ".join(f"{x} {v:.1f}" for x, v in loads.items())
    )
    lines.append("")
    lines.append(
        "whole / synth: the whole command's wall time over its `synthesis_seconds` (the scale"
        " targets ask for at most 2x); a sub-second row's whole includes the interpreter's"
        " start-up and imports (about 0.07 s on an idle machine, 0.04 s CPU), which its"
        " synthesis cannot."
    )
    lines.append("")
    lines.append(
        "Same result: the row's `optimality_exact`, `time_us`, `runtime_time_us`, `alpha_beta_us` and"
        " `transfers` equal the flat form's (`synth --form flat`: the schedule expanded, verified and"
        " costed flat) on the same build, compared as the printed JSON numbers. Earlier labels were"
        " other builds, some of which costed a different flat schedule (the flat plans from before"
        " the per-orbit form: the same loads per step and link, other pieces and transfer order);"
        " there the last digits of time_us may differ (README, Performance)."
    )
    return "\n".join(lines) + "\n"


def save(label: str, records: list[dict]) -> None:
    path = RESULTS / "scale.json"
    runs = json.loads(path.read_text())["runs"] if path.exists() else {}
    # a rerun of some rows (`--only`) replaces those rows and keeps the label's others
    fresh = {r["command"] for r in records}
    runs[label] = [r for r in runs.get(label, []) if r["command"] not in fresh] + records
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
