"""`collsynth compare TOPO --collective C [--sizes ...] [--json] [--plot FILE.png]`."""

from __future__ import annotations

from rich.progress import Progress

from collsynth._core import BadInput, size_bytes
from collsynth.cli.common import console, emit_json, table
from collsynth.cli.options import add_collective, add_pipeline, check_pipeline
from collsynth.cli.synth import summary
from collsynth.schedule import algorithms, synthesize
from collsynth.topology import Topology


def register(sub) -> None:
    p = sub.add_parser("compare", help="every applicable algorithm against the bound, per size")
    p.add_argument("topo", metavar="TOPO")
    add_collective(p)
    p.add_argument("--sizes", default="1KiB,1MiB,1GiB", help="comma-separated sizes")
    p.add_argument("--json", action="store_true")
    p.add_argument("--plot", metavar="FILE.png", help="time vs size, one curve per algorithm plus the bound")
    add_pipeline(p)
    p.set_defaults(run=run)


def compare(
    topo: Topology, collective: str, root: int, sizes: list[str], pipeline: int
) -> tuple[list[dict], dict]:
    """Rows for every (algorithm, size) and the algorithms that do not apply (name -> reason).
    An algorithm whose schedule depends on the size (TACOS, circulant) is synthesized for each
    size, the others once."""
    algs = [a for a in algorithms() if collective in a["collectives"]]
    rows, skipped = [], {}
    # no bar off a terminal: a non-terminal Progress still ends with a stray blank line
    with Progress(console=console, transient=True, disable=console.quiet or not console.is_terminal) as bar:
        task = bar.add_task("synthesizing and simulating", total=len(algs) * len(sizes))
        for alg in algs:
            sched = None
            for size in sizes:
                if sched is None or alg["sized"]:
                    try:
                        sched = synthesize(topo, collective, alg["name"], root=root, size=size)
                    except BadInput as e:
                        skipped[alg["name"]] = str(e)
                        bar.advance(task, len(sizes) - sizes.index(size))
                        break
                rows.append(summary(topo, sched, size, pipeline))
                bar.advance(task)
    return rows, skipped


def run(args) -> int:
    check_pipeline(args)
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    if not sizes:
        raise BadInput("--sizes: give at least one size")
    for size in sizes:  # every size is read before any work starts, errors naming --sizes
        try:
            size_bytes(size)
        except BadInput as e:
            raise BadInput(str(e).replace("--size:", "--sizes:", 1)) from None
    topo = Topology.resolve(args.topo)
    if args.json:
        console.quiet = True
    rows, skipped = compare(topo, args.collective, args.root, sizes, args.pipeline)
    if args.plot:
        from collsynth.plots import plot_compare

        plot_compare(rows, args.plot, f"{args.collective} on {topo.name} (N={topo.n_ranks})")
    if args.json:
        emit_json(rows)
        return 0
    cols = [
        ("algorithm", "left"),
        ("size", "right"),
        ("sim us", "right"),
        ("alpha-beta us", "right"),
        ("algbw GB/s", "right"),
        ("busbw GB/s", "right"),
        ("bound GB/s", "right"),
        ("optimality", "right"),
        ("runtime us", "right"),
        ("time-opt", "right"),
    ]
    out = [
        [
            r["algorithm"],
            f"{r['size_bytes']:.0f}",
            f"{r['time_us']:.2f}",
            f"{r['alpha_beta_us']:.2f}",
            f"{r['algbw_GBps']:.2f}",
            f"{r['busbw_GBps']:.2f}",
            f"{r['bound_algbw_GBps']:.2f}",
            f"{r['optimality']:.3f}",
            f"{r['runtime_time_us']:.2f}",
            f"{r['time_optimality']:.3f}",
        ]
        for r in rows
    ]
    console.print(table(f"{args.collective} on {topo.name} (N={topo.n_ranks})", cols, out))
    for name, reason in skipped.items():
        console.print(f"{name}: not applicable ({reason})", markup=False)
    if args.plot:
        console.print(f"wrote {args.plot}")
    return 0
