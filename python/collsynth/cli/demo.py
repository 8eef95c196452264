"""`collsynth demo`: the main job on a built-in topology."""

from __future__ import annotations

from collsynth.cli.common import console, table
from collsynth.cli.topo import show_rows
from collsynth.topology import Topology

DEMO_TOPOLOGY = "dgx-a100:2"


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
    console.print(table("Metrics", [("metric", "left"), ("value", "right")], show_rows(topo.metrics())))
    by_group: dict[str, list[str]] = {}
    for node in topo:
        by_group.setdefault(node.group or "(global)", []).append(node.name)
    rows = [
        [g, len(names), ", ".join(names[:4]) + (" ..." if len(names) > 4 else "")]
        for g, names in by_group.items()
    ]
    console.print(table("Groups", [("group", "left"), ("nodes", "right"), ("first nodes", "left")], rows))
    return 0
