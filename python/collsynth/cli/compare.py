"""`collsynth compare TOPO --collective C [--sizes ... | -b MIN -e MAX -f F] [--nccl-tests] [--json]
[--plot FILE.png]`."""

from __future__ import annotations

from collsynth import _core, nccl_tests
from collsynth._core import BadInput, size_bytes
from collsynth.cli.common import comma_items, console, emit_json, resolve_topology, table
from collsynth.cli.options import (
    add_collective,
    add_nccl_sweep,
    add_pipeline,
    check_pipeline,
    nccl_sweep,
    size_help,
)
from collsynth.cli.synth import summary
from collsynth.progress import bar_console, in_worker
from collsynth.schedule import algorithms, synthesize
from collsynth.topology import Topology


def register(sub) -> None:
    p = sub.add_parser("compare", help="every applicable algorithm against the bound, per size")
    p.add_argument("topo", metavar="TOPO")
    add_collective(p)
    p.add_argument("--sizes", default=None, help=size_help("comma-separated sizes (default 1KiB,1MiB,1GiB)"))
    add_nccl_sweep(p)
    p.add_argument(
        "--nccl-tests",
        action="store_true",
        help="print nccl-tests' columns, one block per algorithm (implied by -b/-e/-f)",
    )
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
    from rich.progress import Progress

    rows, skipped = [], {}
    with Progress(console=bar_console(), transient=True, disable=not bar_console().is_terminal) as bar:
        task = bar.add_task("synthesizing and simulating", total=len(algs) * len(sizes))
        for alg in algs:
            sched = None
            for size in sizes:
                if sched is None or alg["sized"]:
                    try:
                        # evaluated beside the verifier, the time bound beside the synthesis
                        # on a worker: Ctrl-C is answered at once, whatever the core is doing
                        name = alg["name"]
                        sched = in_worker(
                            lambda name=name, size=size: synthesize(
                                topo, collective, name, root=root, size=size, evaluate_pipeline=pipeline
                            )
                        )
                    except BadInput as e:
                        skipped[alg["name"]] = str(e)
                        bar.advance(task, len(sizes) - sizes.index(size))
                        break
                rows.append(summary(topo, sched, size, pipeline))
                bar.advance(task)
    return rows, skipped


def run(args) -> int:
    check_pipeline(args)
    sweep = nccl_sweep(args)
    if sweep is not None and args.sizes is not None:
        raise BadInput("--sizes and -b/-e/-f: give one or the other")
    if sweep is not None:
        args.nccl_tests = True
        sizes = [str(b) for b in sweep]
    else:
        sizes = comma_items("--sizes", args.sizes or "1KiB,1MiB,1GiB")
    if not sizes:
        raise BadInput("--sizes: give at least one size")
    for size in sizes:  # every size is read before any work starts, errors naming --sizes
        try:
            size_bytes(size)
        except BadInput as e:
            raise BadInput(str(e).replace("--size:", "--sizes:", 1)) from None
    topo = resolve_topology(args.topo)
    if args.json:
        console.quiet = True
    rows, skipped = compare(topo, args.collective, args.root, sizes, args.pipeline)
    if not rows:  # nothing to compare is a refusal, as `auto` says it
        name, reason = next(iter(skipped.items()))
        applies = f"no registered algorithm applies to {args.collective} on this topology"
        raise BadInput(f"{applies} ({name}: {reason})")
    if args.plot:
        from collsynth.plots import plot_compare

        plot_compare(rows, args.plot, f"{args.collective} on {topo.name} (N={topo.n_ranks})")
    for r in rows:  # nccl-tests' count column and the data type the simulator's times stand for
        r["count_elements"] = nccl_count(args.collective, r["size_bytes"], r["N"])
        r["dtype"], r["redop"] = "float32", nccl_tests.redop(args.collective)
    if args.json:
        emit_json(rows)
        return 0
    if args.nccl_tests:
        print_nccl_tests(rows, args.collective)
        for name, reason in skipped.items():
            print(f"# {name}: not applicable ({reason})")
        if args.plot:
            print(f"# wrote {args.plot}")
        return 0
    cols = [
        ("algorithm", "left"),
        ("size", "right"),
        ("time us", "right"),
        ("time bound us", "right"),
        ("time-opt", "right"),
        ("algbw GB/s", "right"),
        ("busbw GB/s", "right"),
        ("bound GB/s", "right"),
        ("bw optimality", "right"),
    ]
    out = [
        [
            r["algorithm"],
            f"{r['size_bytes']:.0f}",
            f"{r['time_us']:.2f}",
            f"{r['time_bound_us']:.2f}",
            f"{r['time_optimality']:.3f}",
            f"{r['algbw_GBps']:.2f}",
            f"{r['busbw_GBps']:.2f}",
            f"{r['bound_algbw_GBps']:.2f}",
            f"{r['optimality']:.3f}",
        ]
        for r in rows
    ]
    console.print(table(f"{args.collective} on {topo.name} (N={topo.n_ranks})", cols, out))
    for name, reason in skipped.items():
        console.print(f"{name}: not applicable ({reason})", markup=False)
    for note in size_notes(rows):
        console.print(note, markup=False)
    if args.plot:
        console.print(f"wrote {args.plot}")
    return 0


def nccl_count(collective: str, size_bytes: float, n: int) -> int:
    """nccl-tests' count column (float elements; per rank for allgather and reduce-scatter)."""
    size = min(int(size_bytes), 2**64 - 1)  # the core counts in u64
    return _core.nccl_tests_count(collective, size, nccl_tests.TYPES["float32"][1], n)[1]


def print_nccl_tests(rows: list[dict], collective: str) -> None:
    """nccl-tests' layout, one block per algorithm: the runtime model's time, algbw and busbw (the
    core's keys). The simulator has one time for out-of-place and in-place; #wrong is N/A, as
    nothing runs (every schedule passed the verifier)."""
    print(nccl_tests.HEADER)
    for alg in dict.fromkeys(r["algorithm"] for r in rows):
        print(f"# algorithm: {alg}")
        for r in (r for r in rows if r["algorithm"] == alg):
            h = nccl_tests.half(r["time_us"], r["algbw_GBps"], r["busbw_GBps"], None)
            root = r["root"] if collective in ("broadcast", "reduce") else None
            # the size column is what nccl-tests moves (and the times are for), as it prints it
            size = int(r["size_moved_bytes"])
            print(nccl_tests.line(collective, r["N"], size, "float32", root, h, h))
    for note in size_notes(rows):
        print(f"# {note}")


def size_notes(rows: list[dict]) -> list[str]:
    """One line per size costed as asked because nccl-tests would move nothing there."""
    notes = {f"{r['size_bytes']:.0f}": r["size_moved_note"] for r in rows if r["size_moved_note"]}
    return [f"size {size}: {note}" for size, note in notes.items()]
