"""`collsynth draw SCHEDULE.json -o FILE.png|svg [--size S]`: the schedule over its topology,
link load as colour and width."""

from __future__ import annotations

from collsynth._core import size_bytes
from collsynth.cli.verify import verified


def register(sub) -> None:
    p = sub.add_parser("draw", help="draw a schedule over its topology, link load as colour and width")
    p.add_argument("schedule", metavar="SCHEDULE.json")
    p.add_argument("-o", "--output", required=True, metavar="FILE.png|svg")
    p.add_argument("--size", default="1GiB", help="nccl-tests size the loads are shown at (default 1GiB)")
    p.set_defaults(run=run_draw)


def run_draw(args) -> int:
    from collsynth import draw  # matplotlib is imported only when drawing

    draw._suffix(args.output)  # a wrong file type is refused before any work
    size_bytes(args.size)
    draw.draw_schedule(verified(args.schedule), args.output, args.size)
    print(f"wrote {args.output}")
    return 0
