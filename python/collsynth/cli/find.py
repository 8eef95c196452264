"""`collsynth find --nodes N --degree D [--bidirectional] [--alpha A --node-bw B --size M] [--json]`.

The direct-connect paper's topology finder: the Pareto frontier of topologies (and their BFB
schedules) on total-hop latency vs bandwidth runtime, judged by one workload.
"""

from __future__ import annotations

from collsynth._core import find_topologies
from collsynth.cli.common import console, emit_json, table, with_version


def register(sub) -> None:
    p = sub.add_parser("find", help="Pareto frontier of direct-connect topologies for N nodes of degree D")
    p.add_argument("--nodes", type=int, required=True, metavar="N", help="number of nodes (>= 2)")
    p.add_argument("--degree", type=int, required=True, metavar="D", help="links per node (>= 1)")
    p.add_argument(
        "--bidirectional", action="store_true", help="only topologies whose every link has its reverse"
    )
    p.add_argument("--alpha", default="10us", help="latency per communication step (default 10us)")
    p.add_argument("--node-bw", default="100Gbps", help="bandwidth of a node, all D links (default 100Gbps)")
    p.add_argument("--size", default="1MiB", help="collective size M (default 1MiB)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def run(args) -> int:
    """Print the frontier as a table (or JSON) and the recommended topology."""
    res = find_topologies(args.nodes, args.degree, args.bidirectional, args.alpha, args.node_bw, args.size)
    rec = res["recommended"]
    if args.json:
        emit_json(with_version(rec["topology"], {"N": args.nodes, "degree": args.degree, **res}))
        return 0
    rows = [
        [
            c["topology"],
            c["latency_steps"],
            f"{c['bandwidth_factor_value']:.4f}",
            c["diameter"],
            f"{c['allreduce_us']:.1f}",
            f"{c['alltoall_us']:.1f}" + ("" if c["alltoall_exact"] else "*"),
        ]
        for c in res["frontier"]
    ]
    kind = "bidirectional " if args.bidirectional else ""
    title = (
        f"Pareto frontier, {kind}N={args.nodes}, d={args.degree} "
        f"(alpha={res['alpha_us']:g}us, M/B={res['m_over_b_us']:.3f}us)"
    )
    columns = [
        ("topology", "left"),
        ("T_L/alpha", "right"),
        ("T_B/(M/B)", "right"),
        ("diameter", "right"),
        ("allreduce us", "right"),
        ("all-to-all us", "right"),
    ]
    console.print(table(title, columns, rows))
    if not all(c["alltoall_exact"] for c in res["frontier"]):
        console.print("* bandwidth-tax estimate (the exact LP is too large)")
    console.print(
        f"recommended (least allreduce time): {rec['topology']}  "
        f"({rec['allreduce_us']:.1f} us allreduce, {rec['alltoall_us']:.1f} us all-to-all)"
    )
    return 0
