"""`collsynth export SCHEDULE.json --format msccl-xml`."""

from __future__ import annotations

import sys

from collsynth import msccl
from collsynth.cli.common import console, emit_json
from collsynth.cli.options import add_msccl_options, add_pipeline, check_pipeline, msccl_kwargs
from collsynth.cli.synth import msccl_summary, print_msccl
from collsynth.cli.verify import verified
from collsynth.fileio import atomic_write


def register(sub) -> None:
    p = sub.add_parser("export", help="export a schedule file as MSCCL XML (validated)")
    p.add_argument("schedule", metavar="SCHEDULE.json")
    p.add_argument("--format", required=True, choices=["msccl-xml"], help="msccl-xml")
    p.add_argument("-o", "--output", metavar="FILE", help="write FILE (default: print the XML)")
    p.add_argument("--json", action="store_true", help="print a summary as JSON (the XML goes to -o)")
    add_pipeline(p)
    add_msccl_options(p)
    p.set_defaults(run=run_export)


def run_export(args) -> int:
    check_pipeline(args)
    exported = msccl.export(verified(args.schedule), **msccl_kwargs(args))
    s = msccl_summary(exported)
    if args.output:
        atomic_write(args.output, exported["xml"])
        s["files"] = [args.output]
    if args.json:
        emit_json({"schedule": args.schedule, "msccl": s, "files": s.pop("files", [])})
    elif args.output:
        print_msccl(s)
        console.print(f"wrote {args.output}")
    else:
        sys.stdout.write(exported["xml"])
    return 0
