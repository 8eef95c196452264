"""`collsynth run SCHEDULE.json|FILE.xml --np N`: starts `mpiexec -n N python -m
collsynth.mpi.run` on the program and relays its result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from collsynth import msccl
from collsynth._core import BadInput
from collsynth.cli.options import (
    MAX_PROCESSES,
    add_msccl_options,
    add_pipeline,
    check_pipeline,
    msccl_given,
    msccl_kwargs,
    whole,
)
from collsynth.cli.verify import verified
from collsynth.fileio import read_text

# Repetitions of one run: each is at least one collective over MPI (milliseconds at 1 GiB), and
# the whole run must end within the 600 s that `run` waits for mpiexec.
MAX_REPS = 10_000


def register(sub) -> None:
    p = sub.add_parser("run", help="execute a schedule or MSCCL XML on MPI ranks and check the result")
    p.add_argument("schedule", metavar="SCHEDULE.json|FILE.xml")
    p.add_argument(
        "--np", type=whole(1, MAX_PROCESSES), required=True, help="MPI ranks (must equal the schedule's N)"
    )
    p.add_argument("--size", default="1MiB", help="nccl-tests size (default 1MiB)")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64", "int32"])
    p.add_argument(
        "--reps",
        type=whole(1, MAX_REPS),
        default=5,
        help=f"timed repetitions (default 5, at most {MAX_REPS}: the run must end within its time limit)",
    )
    p.add_argument("--inplace", action="store_true", help="run the collective in place")
    p.add_argument("--json", action="store_true")
    add_pipeline(p)
    add_msccl_options(p)
    p.set_defaults(run=run_run)


def program_for(args) -> dict:
    """The MSCCL program to execute: an XML file as it is, a schedule file lowered."""
    if args.schedule.lower().endswith(".xml"):
        if given := [g for g in msccl_given(args) if g != "--runtime"]:
            raise BadInput(f"{given[0]} applies to schedule files, not to an XML file")
        text = read_text(args.schedule)
        # --runtime: run only what that runtime would load as written.
        if args.runtime:
            msccl.require_loaded(args.schedule, msccl.validate(text)["runtimes"], args.runtime)
        return msccl.program(text)
    return msccl.export(verified(args.schedule), **msccl_kwargs(args))["program"]


def run_run(args) -> int:
    check_pipeline(args)
    import subprocess
    import tempfile

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
        argv = [sys.executable, "-m", "collsynth.mpi.run", str(path), "--size", str(args.size)]
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
