"""`collsynth bound TOPO --collective C [--root R] [--json]`."""

from __future__ import annotations

from collsynth.cli.common import console, emit_json, resolve_topology, table, with_version
from collsynth.cli.options import add_collective
from collsynth.progress import run_with_progress
from collsynth.schedule import bound


def register(sub) -> None:
    p = sub.add_parser("bound", help="exact bandwidth bound (with its bottleneck cut) and latency bounds")
    p.add_argument("topo", metavar="TOPO")
    add_collective(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def run(args) -> int:
    topo = resolve_topology(args.topo)
    # Max flows across a long ring take minutes: a spinner, and Ctrl-C answered at once.
    b = run_with_progress(lambda: bound(topo, args.collective, args.root), "computing the bound")
    doc = with_version(topo.name, {"N": topo.n_ranks, "collective": args.collective, **b})
    if args.json:
        emit_json(doc)
        return 0
    cut = b["bottleneck_cut"]
    rows = [
        ["inverse throughput (exact)", b["inv_throughput"]],
        ["bound algbw (GB/s)", f"{b['bound_algbw_GBps']:.6g}  (= {b['bound_algbw_exact']})"],
        [
            "bottleneck cut",
            f"{len(cut)} nodes: " + ", ".join(cut[:8]) + (" ..." if len(cut) > 8 else ""),
        ],
        ["diameter (hops)", b["diameter"]],
        ["Moore bound (steps)", b["moore_steps"]],
        ["one-ported broadcast rounds", b["one_ported_rounds"]],
    ]
    if "rs_ag_algbw_GBps" in b:
        lp = b["lp_algbw_GBps"]
        rows.insert(2, ["reduce-scatter + allgather algbw", f"{b['rs_ag_algbw_GBps']:.6g}"])
        rows.insert(3, ["allreduce LP algbw", "not solved" if lp is None else f"{lp:.6g}"])
    console.print(
        table(
            f"Bounds: {args.collective} on {topo.name} (N={topo.n_ranks})",
            [("bound", "left"), ("value", "right")],
            rows,
        )
    )
    return 0
