"""`collsynth draw SCHEDULE.json -o FILE.png|svg [--size S] [--shard K | --step K]`: the
schedule over its topology, link load as colour and width; with --shard or --step, a second
panel with that shard's transfers (its trees) or that step's, as arrows along their routes."""

from __future__ import annotations

from collsynth._core import size_bytes
from collsynth.cli.options import size_help, whole
from collsynth.cli.verify import verified


def register(sub) -> None:
    p = sub.add_parser("draw", help="draw a schedule over its topology, link load as colour and width")
    p.add_argument("schedule", metavar="SCHEDULE.json")
    p.add_argument("-o", "--output", required=True, metavar="FILE.png|svg")
    p.add_argument(
        "--size", default="1GiB", help=size_help("nccl-tests size the loads are shown at (default 1GiB)")
    )
    which = p.add_mutually_exclusive_group()
    for name, what in [
        ("shard", "shard K's transfers (its trees)"),
        ("step", "step K's transfers (a step schedule's step, else the level in the DAG)"),
    ]:
        which.add_argument(
            f"--{name}", type=whole(), metavar="K", help=f"also draw {what} along their routes"
        )
    p.set_defaults(run=run_draw)


def run_draw(args) -> int:
    from collsynth import draw  # matplotlib is imported only when drawing

    draw._suffix(args.output)  # a wrong file type is refused before any work
    size_bytes(args.size)
    sched = verified(args.schedule)
    sched.draw(args.output, args.size, shard=args.shard, step=args.step)
    print(f"wrote {args.output}")
    return 0
