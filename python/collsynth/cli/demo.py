"""`collsynth demo`: the main job on a built-in topology, end to end."""

from __future__ import annotations

from collsynth import msccl
from collsynth.cli.common import console, table
from collsynth.cli.compare import compare
from collsynth.cli.topo import show_rows
from collsynth.schedule import bound, synthesize
from collsynth.topology import Topology

DEMO_TOPOLOGY = "dgx-a100:2"
DEMO_SIZES = ["1MiB", "1GiB"]
# Runtimes stream every piece in chunks; tree schedules need it to reach their bandwidth.
DEMO_PIPELINE = 16


def register(sub) -> None:
    p = sub.add_parser("demo", help="a tour on a built-in DGX-A100 two-box topology")
    p.set_defaults(run=run)


def run(args) -> int:
    topo = Topology.from_spec(DEMO_TOPOLOGY)
    console.rule(f"collsynth demo: {DEMO_TOPOLOGY}")
    console.print(
        "Two DGX-A100 boxes: 8 GPUs per box on an NVSwitch (300 GB/s per GPU), one 25 GB/s NIC\n"
        "per GPU, NICs on two InfiniBand switches by parity. Ranks are the 16 GPUs."
    )
    console.print(
        table("1. The topology", [("metric", "left"), ("value", "right")], show_rows(topo.metrics()))
    )

    b = bound(topo, "allgather")
    cut = set(b["bottleneck_cut"])
    outside = [n.name for n in topo if n.rank is not None and n.name not in cut]
    console.print(
        f"2. Exact allgather bound: inverse throughput {b['inv_throughput']} per shard byte, so no\n"
        f"   schedule beats {b['bound_algbw_GBps']:.2f} GB/s algbw. Certificate: a cut S of\n"
        f"   {len(cut)} nodes holding {topo.n_ranks - len(outside)} ranks' shards, all of which"
        f" must cross into {', '.join(outside)}.",
        markup=False,
    )

    rows, skipped = compare(topo, "allreduce", 0, DEMO_SIZES, DEMO_PIPELINE)
    cols = [
        ("algorithm", "left"),
        ("size", "right"),
        ("runtime us", "right"),
        ("time bound us", "right"),
        ("time-opt", "right"),
        ("algbw GB/s", "right"),
        ("bw optimality", "right"),
    ]
    out = [
        [
            r["algorithm"],
            f"{r['size_bytes']:.0f}",
            f"{r['time_us']:.1f}",
            f"{r['time_bound_us']:.1f}",
            f"{r['time_optimality']:.3f}",
            f"{r['algbw_GBps']:.2f}",
            f"{r['optimality']:.3f}",
        ]
        for r in rows
    ]
    console.print(
        table(
            "3. Allreduce: every algorithm, verified, timed by the calibrated runtime model\n"
            "   (NCCL's protocols, slices, cut-through switches; docs/calibration.md) against the time bound",
            cols,
            out,
        )
    )
    for name, reason in skipped.items():
        console.print(f"   {name}: not applicable ({reason})", markup=False)
    show_msccl(topo)
    show_windows(topo)
    console.print(
        "Next: collsynth synth dgx-a100:2 -c allreduce -a forestcoll --format json,msccl-xml -o out/\n"
        "      collsynth run out/schedule.json --np 16   (runs it on MPI ranks and checks the sums)"
    )
    return 0


def show_msccl(topo: Topology) -> None:
    """4. The optimal allreduce as MSCCL XML, validated the way the runtimes would read it."""
    sched = synthesize(topo, "allreduce", "forestcoll")
    # Packed for RCCL's 64 thread blocks, the strictest target: every runtime loads it as written.
    out = msccl.export(sched, runtime="rccl")
    v = msccl.validate(out["xml"], topology=topo)
    accepted = [r for r, problems in v["runtimes"].items() if not problems]
    g, verdict = out["nchunksperloop"], "correct" if not v["execution"] else v["execution"][0]
    console.print(
        f"4. As MSCCL XML: {len(out['xml']) // 1024} KiB, {g} chunks per loop, "
        f"{out['nchannels']} channels, up to {out['thread_blocks']} thread blocks per GPU\n"
        f"   (buffer element counts must be multiples of {g} for the runtime to pick it);\n"
        f"   fits and is accepted by {', '.join(accepted)}; symbolic run in place and out of\n"
        f"   place, unbounded and 2-slot connections: {verdict}."
    )
    if j := out["judged"]:
        # One clock: the time of this program in its own thread blocks, as the table's.
        console.print(
            f"   In its thread blocks the runtime model gives {j['time_us']:.1f} us at {j['bytes']} bytes "
            f"({j['algbw_GBps']:.2f} GB/s, time-opt {j['time_optimality']:.3f}, {j['protocol']})."
        )


def show_windows(topo: Topology) -> None:
    """5. No one schedule is best at every size: one XML per size window, each the fastest
    variant there (the runtime picks the file by size)."""
    rows = msccl.export_windows(topo, "allgather", "auto", "1KiB-4GiB")
    body = [
        [
            f"{w['min_bytes']}-{w['max_bytes']}",
            w["variant"],
            f"{w['time_us_at_min']:.1f} / {w['time_us_at_max']:.1f}",
        ]
        for w in rows
    ]
    cols = [("window (bytes)", "left"), ("variant", "left"), ("runtime us at ends", "right")]
    console.print(
        table("5. Allgather from 1 KiB to 4 GiB: one validated MSCCL XML per size window", cols, body)
    )
