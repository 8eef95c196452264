"""`collsynth export SCHEDULE.json --format msccl-xml|mscclpp-json`."""

from __future__ import annotations

import sys

from collsynth import msccl, mscclpp
from collsynth._core import BadInput
from collsynth.cli.common import console, emit_json
from collsynth.cli.options import add_msccl_options, add_pipeline, check_pipeline, msccl_given, msccl_kwargs
from collsynth.cli.synth import msccl_summary, mscclpp_summary, print_msccl, print_mscclpp
from collsynth.cli.verify import verified
from collsynth.fileio import atomic_write


def register(sub) -> None:
    p = sub.add_parser("export", help="export a schedule file as MSCCL XML (validated)")
    p.add_argument("schedule", metavar="SCHEDULE.json")
    p.add_argument(
        "--format", required=True, choices=["msccl-xml", "mscclpp-json"], help="msccl-xml or mscclpp-json"
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write FILE (default: print the XML)")
    p.add_argument("--json", action="store_true", help="print a summary as JSON (the XML goes to -o)")
    add_pipeline(p)
    add_msccl_options(p)
    p.add_argument(
        "--threadblocks", type=int, metavar="G", help="mscclpp-json: thread blocks per slice group (1-64)"
    )
    p.set_defaults(run=run_export)


def run_export(args) -> int:
    check_pipeline(args)
    if args.format == "mscclpp-json":
        return run_export_plan(args)
    if args.threadblocks is not None:
        raise BadInput("--threadblocks applies to --format mscclpp-json only")
    # Streamed to the file or stdout, the text never built (`msccl.export(text=False)`).
    exported = msccl.export(verified(args.schedule), text=False, **msccl_kwargs(args))
    return emit(args, exported, "msccl", msccl_summary(exported), print_msccl)


def run_export_plan(args) -> int:
    """An MSCCL++ execution plan, judged before it is written (docs/mscclpp.md)."""
    if given := msccl_given(args):
        raise BadInput(f"{given[0]} applies to --format msccl-xml only")
    if args.pipeline_given:
        raise BadInput("--pipeline applies to --format msccl-xml only")
    plan = mscclpp.export(verified(args.schedule), args.threadblocks, text=False)
    return emit(args, plan, "mscclpp", mscclpp_summary(plan), print_mscclpp)


def emit(args, exported: dict, key: str, summary: dict, show) -> int:
    """The exported text, streamed by ``exported["write"]`` into -o (atomically) or by
    ``exported["stream"]`` to stdout in pieces, and its summary as JSON or a table."""
    files = []
    if args.output:
        atomic_write(args.output, exported["write"])
        files = [args.output]
    if args.json:
        emit_json({"schedule": args.schedule, key: summary, "files": files})
    elif args.output:
        show(summary)
        console.print(f"wrote {args.output}")
    else:
        exported["stream"](sys.stdout.write)
    return 0
