"""MSCCL's thread blocks in the runtime model (docs/simulator.md, "Thread blocks"): `auto`'s
pick per cell under the default model (every transfer its own connection), run in the thread
blocks of the numbered lowering (one channel if it fits, T from the numbering: what `collsynth
export` wrote before), in the blocks of the timed lowering (T by time, one channel per piece),
and in the blocks `collsynth export` writes now (the fastest of its lowerings,
`cost::runtime::order::exported_lowering`). `python bench/run.py blocks`; writes
bench/results/blocks.json (run.py) and bench/results/blocks_table.md."""

from __future__ import annotations

import json
from pathlib import Path

import collsynth
from collsynth.fileio import atomic_write

RESULTS = Path(__file__).parent / "results"
CELLS = [
    (spec, c, size)
    for spec in ["dgx-a100:2", "dgx-a100:4", "hgx-h100:2", "mi250:2"]
    for c in ["allgather", "reduce-scatter", "allreduce"]
    for size in ["1MiB", "64MiB", "1GiB"]
]


def _in_blocks(s: collsynth.Schedule, size: str, order: str) -> float:
    """The runtime model's time of `s` marked to run in thread blocks (`order`: the detail
    value, "as numbered", "timed" or "exported")."""
    d = json.loads(s.to_json())
    d["provenance"].setdefault("details", {})["thread_block_order"] = order
    return collsynth.Schedule.loads(json.dumps(d)).runtime(size)["runtime_time_us"]


def bench_blocks() -> list[dict]:
    records = []
    for spec, c, size in CELLS:
        topo = collsynth.Topology.from_spec(spec)
        s = collsynth.synthesize(topo, c, "auto", size=size)
        e = s.evaluate(size)
        executor = json.loads(s.to_json())["provenance"].get("executor", "msccl")
        rec = {
            "spec": f"{spec} {c} {size}",
            "auto_choice": s.details.get("auto_choice", s.algorithm),
            "executor": executor,
            "time_bound_us": e["time_bound_us"],
            "default_us": e["runtime_time_us"],
        }
        msccl = executor == "msccl"
        rec["as_exported_us"] = _in_blocks(s, size, "as numbered") if msccl else None
        rec["timed_us"] = _in_blocks(s, size, "timed") if msccl else None
        rec["exported_us"] = _in_blocks(s, size, "exported") if msccl else None
        records.append(rec)
    atomic_write(RESULTS / "blocks_table.md", markdown(records))
    return records


def markdown(records: list[dict]) -> str:
    """One row per cell: auto's pick, the bound, and its time in each model."""
    lines = [
        "| cell | auto's pick | bound (us) | default model | numbered blocks (export before) "
        "| timed blocks, channel per piece | as exported now | now / default |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in records:

        def ratio(r: dict = r) -> str:
            return "" if r["exported_us"] is None else f"{r['exported_us'] / r['default_us']:.2f}"

        def cell(key: str, r: dict = r) -> str:
            if r[key] is None:
                return "(NCCL kernel)"
            return f"{r[key]:.1f} ({r[key] / r['time_bound_us']:.2f}x)"

        lines.append(
            f"| {r['spec']} | {r['auto_choice']} | {r['time_bound_us']:.1f} | {cell('default_us')} | "
            f"{cell('as_exported_us')} | {cell('timed_us')} | {cell('exported_us')} | {ratio(r)} |"
        )
    return "\n".join(lines) + "\n"


BENCHMARKS = {"blocks": bench_blocks}
