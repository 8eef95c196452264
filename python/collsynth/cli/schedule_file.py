"""`collsynth verify SCHEDULE.json` and `collsynth simulate SCHEDULE.json --size S`."""

from __future__ import annotations

from collsynth._core import BadInput
from collsynth.cli.common import console, emit_json, table
from collsynth.cli.options import add_pipeline, check_pipeline
from collsynth.cli.synth import summary, summary_rows
from collsynth.schedule import Schedule


def register(sub) -> None:
    p = sub.add_parser("verify", help="verify a schedule file or an MSCCL XML by symbolic execution")
    p.add_argument("schedule", metavar="SCHEDULE.json|FILE.xml")
    p.add_argument("--topology", metavar="TOPO", help="FILE.xml only: report link loads on TOPO")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run_verify)

    p = sub.add_parser("simulate", help="simulate a schedule file at a size")
    p.add_argument("schedule", metavar="SCHEDULE.json")
    p.add_argument("--size", default="1GiB")
    p.add_argument("--json", action="store_true")
    add_pipeline(p)
    p.set_defaults(run=run_simulate)


def load(path: str) -> Schedule:
    if path.lower().endswith(".xml"):
        raise BadInput(f"{path}: an MSCCL XML file; `collsynth verify` and `collsynth run` take it")
    return Schedule.load(path)


def run_verify(args) -> int:
    if args.schedule.lower().endswith(".xml"):
        from collsynth.cli.msccl_cmds import run_verify_xml

        return run_verify_xml(args)
    if args.topology:
        raise BadInput("--topology applies to MSCCL XML files only (a schedule file embeds its topology)")
    sched = load(args.schedule)
    try:
        report = sched.verify()
    except BadInput as e:
        raise BadInput(f"{args.schedule}: {e}") from None
    if args.json:
        emit_json({"schedule": args.schedule, "valid": True, **report})
    else:
        console.print(
            f"{args.schedule}: valid {sched.collective} schedule ({sched.algorithm}, "
            f"{report['transfers']} transfers, depth {report['depth']}, N={sched.n_ranks})"
        )
    return 0


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
