"""`collsynth find --nodes N --degree D [--bidirectional] [--alpha A --node-bw B --size M] [--json]`
and `collsynth find --sweep MAX_N [--degrees 2,4,8,16] [...]`.

The direct-connect paper's topology finder: the Pareto frontier of topologies (and their BFB
schedules) on total-hop latency vs bandwidth runtime, judged by one workload; or, with
`--sweep`, the frontier and recommendation of every N up to MAX_N for each degree (the paper
runs its finder once for all N and d and keeps the results).
"""

from __future__ import annotations

from collsynth import _core
from collsynth._core import BadInput, find_sweep, find_topologies
from collsynth.cli.common import comma_items, console, emit_json, table, with_version
from collsynth.cli.options import size_help, whole
from collsynth.progress import run_with_progress


def register(sub) -> None:
    p = sub.add_parser("find", help="Pareto frontier of direct-connect topologies for N nodes of degree D")
    p.add_argument("--nodes", type=whole(), metavar="N", help="number of nodes (>= 2)")
    p.add_argument("--degree", type=whole(), metavar="D", help="links per node (>= 1)")
    p.add_argument(
        "--sweep",
        type=whole(),
        metavar="MAX_N",
        help="instead of one target: every N up to MAX_N for each of --degrees (no all-to-all figures)",
    )
    p.add_argument(
        "--degrees", metavar="LIST", help="degrees of a --sweep, comma-separated (default 2,4,8,16)"
    )
    p.add_argument(
        "--bidirectional", action="store_true", help="only topologies whose every link has its reverse"
    )
    p.add_argument("--alpha", default="10us", help="latency per communication step (default 10us)")
    p.add_argument("--node-bw", default="100Gbps", help="bandwidth of a node, all D links (default 100Gbps)")
    p.add_argument("--size", default="1MiB", help=size_help("collective size M (default 1MiB)"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def run(args) -> int:
    """Print the frontier as a table (or JSON) and the recommended topology."""
    if args.sweep is not None:
        return run_sweep(args)
    if args.degrees is not None:
        raise BadInput("--degrees applies to --sweep only (one target takes --degree)")
    missing = [flag for flag, v in (("--nodes", args.nodes), ("--degree", args.degree)) if v is None]
    if missing:
        raise BadInput(f"find needs {' and '.join(missing)} (or --sweep MAX_N)")
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


def _degrees(text: str | None) -> list[int]:
    if text is None:
        return [2, 4, 8, 16]
    items = comma_items("--degrees", text)
    try:
        return [int(x) for x in items]
    except ValueError:
        raise BadInput(f"--degrees: expected comma-separated integers, got {text!r}") from None


def run_sweep(args) -> int:
    """Every (N, d) of the sweep: its recommended member per row (JSON: every frontier)."""
    given = [flag for flag, v in (("--nodes", args.nodes), ("--degree", args.degree)) if v is not None]
    if given:
        verb = "does" if len(given) == 1 else "do"
        raise BadInput(f"{' and '.join(given)} {verb} not apply with --sweep (it covers every N up to MAX_N)")
    degrees = _degrees(args.degrees)
    rows = run_with_progress(
        lambda: find_sweep(args.sweep, degrees, args.bidirectional, args.alpha, args.node_bw, args.size),
        f"finder sweep: N <= {args.sweep}, d in {','.join(map(str, degrees))}",
        poll=_core.find_sweep_progress,
    )
    if args.json:
        fields = {"max_nodes": args.sweep, "degrees": degrees, "rows": rows}
        emit_json(with_version(f"sweep:{args.sweep}", fields))
        return 0
    out = []
    for r in rows:
        rec = r["frontier"][r["recommended"]]
        out.append(
            [
                r["N"],
                r["degree"],
                len(r["frontier"]),
                rec["topology"],
                rec["latency_steps"],
                f"{rec['bandwidth_factor_value']:.4f}",
                f"{rec['allreduce_us']:.1f}",
            ]
        )
    kind = "bidirectional " if args.bidirectional else ""
    columns = [
        ("N", "right"),
        ("d", "right"),
        ("frontier", "right"),
        ("recommended", "left"),
        ("T_L/alpha", "right"),
        ("T_B/(M/B)", "right"),
        ("allreduce us", "right"),
    ]
    title = f"{kind}finder sweep, alpha={args.alpha}, B={args.node_bw}, M={args.size}"
    console.print(table(title, columns, out))
    return 0
