"""`collsynth simulate SCHEDULE.json --size S`."""

from __future__ import annotations

from collsynth._core import BadInput
from collsynth.cli.common import console, emit_json, table
from collsynth.cli.options import add_pipeline, check_pipeline, size_help
from collsynth.cli.synth import summary, summary_rows
from collsynth.cli.verify import load


def register(sub) -> None:
    p = sub.add_parser("simulate", help="simulate a schedule file at a size")
    p.add_argument("schedule", metavar="SCHEDULE.json")
    p.add_argument("--size", default="1GiB", help=size_help("nccl-tests size M (default 1GiB)"))
    p.add_argument("--json", action="store_true")
    add_pipeline(p)
    p.set_defaults(run=run_simulate)


def run_simulate(args) -> int:
    check_pipeline(args)
    sched = load(args.schedule)
    try:
        sched.verify()
    except BadInput as e:
        raise BadInput(f"{args.schedule}: {e}") from None
    s = summary(sched.topology, sched, args.size, args.pipeline)
    if args.json:
        emit_json(s)
        return 0
    console.print(
        table(
            f"{s['collective']} on {s['topology']}",
            [("", "left"), ("", "right")],
            summary_rows(s, sched.details),
        )
    )
    return 0
