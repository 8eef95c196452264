"""`collsynth run SCHEDULE.json|FILE.xml --np N`: starts `mpiexec -n N python -m
collsynth.mpi.run` on the program and relays its result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from collsynth import msccl
from collsynth._core import BadInput, InternalError
from collsynth.cli.options import (
    MAX_PROCESSES,
    add_msccl_options,
    add_nccl_sweep,
    add_pipeline,
    check_pipeline,
    msccl_given,
    msccl_kwargs,
    nccl_sweep,
    size_help,
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
    p.add_argument(
        "--size",
        default=None,
        help=size_help("nccl-tests size (default 1MiB)"),
    )
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
    add_nccl_sweep(p)
    p.set_defaults(run=run_run)


def program_for(args) -> dict:
    """The MSCCL program to execute: an XML file as it is, a schedule file lowered."""
    if args.schedule.lower().endswith(".xml"):
        if given := [g for g in msccl_given(args) if g != "--runtime"]:
            raise BadInput(f"{given[0]} applies to schedule files, not to an XML file")
        text = read_text(args.schedule, "MSCCL XML")
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

    sizes = run_sizes(args)
    program = program_for(args)
    if program["ngpus"] != args.np:
        raise BadInput(f"--np {args.np}: the schedule is for {program['ngpus']} ranks")
    if args.reps < 1:
        raise BadInput(f"--reps must be at least 1, got {args.reps}")
    preflight(args, sizes)
    with tempfile.TemporaryDirectory(prefix="collsynth-run-") as tmp:
        # An XML file goes to the ranks as it is, so the core judges it with both dialects'
        # rules (a JSON copy would lose what only the XML says, e.g. the old dialect's nthreads).
        if args.schedule.lower().endswith(".xml"):
            path = Path(args.schedule).resolve()
        else:
            path = Path(tmp) / "program.json"
            path.write_text(json.dumps(program))
        argv = [sys.executable, "-m", "collsynth.mpi.run", str(path), "--size", ",".join(map(str, sizes))]
        argv += ["--dtype", args.dtype, "--reps", str(args.reps)]
        argv += (["--json"] if args.json else []) + (["--inplace"] if args.inplace else [])
        try:
            proc = subprocess.run(
                launch.command(args.np, argv), capture_output=True, text=True, timeout=RUN_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            raise BadInput(
                f"the run did not finish within {RUN_TIMEOUT_S} s (lower --reps or --size)"
            ) from None
    sys.stdout.write(proc.stdout)
    # The ranks' own one-line error, without its prefix (fail() adds ours): never their tracebacks.
    last = proc.stderr.strip().splitlines()[-1:] or [
        f"mpiexec -n {args.np} exited with status {proc.returncode}"
    ]
    message = last[0].removeprefix("collsynth: error: ")
    if proc.returncode == 2:
        raise BadInput(message)
    if proc.returncode != 0 and not proc.stdout.strip():
        raise InternalError(f"mpiexec -n {args.np} failed with status {proc.returncode}: {message}")
    return 0 if proc.returncode == 0 else 1


# `run` waits this long for mpiexec.
RUN_TIMEOUT_S = 600
# Per rank: its input, its output, the expected result and the library's run, about a buffer of
# the whole size each (nccl-tests' M), with numpy's temporaries while the data is made.
BUFFERS_PER_RANK = 6


def run_sizes(args) -> list[int]:
    """The sizes to run in whole bytes: --size, or nccl-tests' sweep -b/-e/-f."""
    from collsynth._core import size_bytes

    sweep = nccl_sweep(args)
    if sweep is not None and args.size is not None:
        raise BadInput("--size and -b/-e/-f: give one or the other")
    if sweep is not None:
        return sweep
    exact = size_bytes(args.size or "1MiB")
    if "/" in exact:
        raise BadInput(f"--size: {args.size!r} is not a whole number of bytes")
    return [int(exact)]


def preflight(args, sizes: list[int]) -> None:
    """Refuse, before mpiexec starts, a run that cannot fit in memory or end in time."""
    from collsynth.mpi import preflight

    largest = max(sizes)
    preflight.check_memory(
        f"run --np {args.np} at {largest} bytes",
        args.np,
        BUFFERS_PER_RANK * largest,
        f"about {BUFFERS_PER_RANK} buffers of the size",
    )
    # per size: out of place and in place, ours and the library's, one untimed and --reps timed
    preflight.check_time(f"run --reps {args.reps}", 4 * (args.reps + 1) * len(sizes), RUN_TIMEOUT_S)
