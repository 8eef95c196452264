"""`collsynth export SCHEDULE.json --format msccl-xml`, `collsynth verify FILE.xml` (called by
`verify` for .xml files) and `collsynth run SCHEDULE.json|FILE.xml --np N`."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

from collsynth import msccl
from collsynth._core import BadInput
from collsynth.cli.common import console, emit_json, table
from collsynth.cli.options import (
    MAX_PROCESSES,
    add_msccl_options,
    add_pipeline,
    check_pipeline,
    msccl_given,
    msccl_kwargs,
    whole,
)
from collsynth.cli.synth import msccl_summary, print_msccl
from collsynth.fileio import atomic_write, read_text
from collsynth.schedule import Schedule


def register(sub) -> None:
    p = sub.add_parser("export", help="export a schedule file as MSCCL XML (validated)")
    p.add_argument("schedule", metavar="SCHEDULE.json")
    p.add_argument("--format", required=True, choices=["msccl-xml"], help="msccl-xml")
    p.add_argument("-o", "--output", metavar="FILE", help="write FILE (default: print the XML)")
    p.add_argument("--json", action="store_true", help="print a summary as JSON (the XML goes to -o)")
    add_pipeline(p)
    add_msccl_options(p)
    p.set_defaults(run=run_export)

    p = sub.add_parser("run", help="execute a schedule or MSCCL XML on MPI ranks and check the result")
    p.add_argument("schedule", metavar="SCHEDULE.json|FILE.xml")
    p.add_argument(
        "--np", type=whole(1, MAX_PROCESSES), required=True, help="MPI ranks (must equal the schedule's N)"
    )
    p.add_argument("--size", default="1MiB", help="nccl-tests size (default 1MiB)")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64", "int32"])
    p.add_argument("--reps", type=whole(1), default=5, help="timed repetitions (default 5)")
    p.add_argument("--inplace", action="store_true", help="run the collective in place")
    p.add_argument("--json", action="store_true")
    add_pipeline(p)
    add_msccl_options(p)
    p.set_defaults(run=run_run)


def verified(path: str) -> Schedule:
    sched = Schedule.load(path)
    try:
        sched.verify()
    except BadInput as e:
        raise BadInput(f"{path}: {e}") from None
    return sched


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


def run_verify_xml(args) -> int:
    """Both runtimes' parser rules, then symbolic execution; exit 2 if no runtime would run it
    correctly (the report says why), 0 otherwise."""
    from collsynth.topology import Topology

    text = read_text(args.schedule)
    topo = Topology.resolve(args.topology) if getattr(args, "topology", None) else None
    v = msccl.validate(text, topo)
    if args.json:
        emit_json({"file": args.schedule, **v})
    else:
        print_validation(args.schedule, v)
    if not v["ok"]:
        raise BadInput(f"{args.schedule}: not a valid MSCCL program: {v['refusal']}")
    return 0


def print_validation(path: str, v: dict) -> None:
    rows = []
    for dialect, problems in v["dialects"].items():
        verdict = "accepted" if not problems else f"rejected: {problems[0]}"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        rows.append([f"{dialect} runtime", verdict + more])
    if "collective" in v:
        modes = [m for m, on in (("in-place", v["inplace"]), ("out-of-place", v["outofplace"])) if on]
        rows.append(["program", f"{v['collective']}, {v['ngpus']} ranks, {v['nchunksperloop']} chunks/loop"])
        rows.append(["thread blocks", f"{v['thread_blocks']} per rank max, {v['max_steps']} steps max"])
        execution = "correct" if not v["execution"] else v["execution"][0]
        rows.append(
            [
                "execution",
                f"{execution} ({', '.join(modes)}; unbounded buffers, and the runtime's buffers "
                "at every maxAllowedCount)",
            ]
        )
    if "bandwidth_time_per_byte" in v:
        num, _, den = v["bandwidth_time_per_byte"].partition("/")
        algbw = int(den or 1) / int(num) if int(num) else float("inf")
        rows.append(
            ["bandwidth time", f"{v['bandwidth_time_per_byte']} ns per byte of M (algbw {algbw:.2f} GB/s)"]
        )
        if v["link_loads"]:
            src, dst, load = max(v["link_loads"], key=lambda r: Fraction(r[2]))
            rows.append(["heaviest link", f"{src} -> {dst}: {load} of M"])
    console.print(table(path, [("", "left"), ("", "left")], rows))
    for p in v["execution"][1:]:
        console.print(f"  {p}")


def program_for(args) -> dict:
    """The MSCCL program to execute: an XML file as it is, a schedule file lowered."""
    if args.schedule.lower().endswith(".xml"):
        if given := msccl_given(args):
            raise BadInput(f"{given[0]} applies to schedule files, not to an XML file")
        return msccl.program(read_text(args.schedule))
    return msccl.export(verified(args.schedule), **msccl_kwargs(args))["program"]


def run_run(args) -> int:
    check_pipeline(args)
    from collsynth.mpi import launch

    program = program_for(args)
    if program["ngpus"] != args.np:
        raise BadInput(f"--np {args.np}: the schedule is for {program['ngpus']} ranks")
    if args.reps < 1:
        raise BadInput(f"--reps must be at least 1, got {args.reps}")
    with tempfile.TemporaryDirectory(prefix="collsynth-run-") as tmp:
        # An XML file goes to the ranks as it is, so the core judges it with both dialects'
        # rules (a JSON copy would lose what only the XML says, e.g. the old dialect's nthreads).
        if args.schedule.lower().endswith(".xml"):
            path = Path(args.schedule).resolve()
        else:
            path = Path(tmp) / "program.json"
            path.write_text(json.dumps(program))
        argv = [sys.executable, "-m", "collsynth.run", str(path), "--size", str(args.size)]
        argv += ["--dtype", args.dtype, "--reps", str(args.reps)]
        argv += (["--json"] if args.json else []) + (["--inplace"] if args.inplace else [])
        proc = subprocess.run(launch.command(args.np, argv), capture_output=True, text=True, timeout=600)
    sys.stdout.write(proc.stdout)
    if proc.returncode == 2:
        raise BadInput(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "bad input")
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return 1
    return 0
