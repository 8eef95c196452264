"""Run under ``mpiexec -n P python -m mpi4py tests/mpi/check_executor.py PROGRAM.json|.xml ...
[--refused PROGRAM.json] [--api PROGRAM.json] [--tamper PROGRAM.json]``: every program through
collsynth.mpi.executor.run_collective, in one launch.

- positional programs must be right in every mode they declare, for float32, float64 and int32, on
  buffers of 0, 1 and 3 chunks per chunk-slot;
- --refused programs must be refused by the core (BadInput on every rank, before any data moves);
- --api names an allreduce valid in both modes for direct execute() calls and input checks;
- --tamper names a program whose compiled plan is altered here (the byte mover's own safety net):
  without its reductions the result must be reported wrong (naming a rank and an element), with
  rank 0 sending nothing the run must be reported stuck (timeout 1 s).
Rank 0 prints ``OK <name>: ...`` per program, every failure, and ``ok: P ranks`` if there were none;
the exit status is 1 on failure."""

from __future__ import annotations

import argparse
import copy
import json
import sys

import numpy as np
from mpi_report import finish

from collsynth import BadInput, mpi, msccl
from collsynth.mpi import MPI
from collsynth.mpi.executor import _Case, compile_on, run_collective, run_plan, run_plan_collective

comm = mpi.comm_world()
P, RANK = comm.Get_size(), comm.Get_rank()
DTYPES = ("float32", "float64", "int32")
failures: list[str] = []
report: list[str] = []


def load(path: str) -> dict | str:
    """A program: an XML file's text, a JSON file's dict."""
    with open(path) as f:
        return f.read() if path.endswith(".xml") else json.load(f)


def header(program: dict | str) -> dict:
    return msccl.program(program) if isinstance(program, str) else program


def modes(program: dict | str) -> list[bool]:
    return [m for m, key in ((False, "outofplace"), (True, "inplace")) if header(program)[key]]


def check_good(program: dict | str, seed: int) -> None:
    runs, name = 0, header(program)["name"]
    for inplace in modes(program):
        for dtype in DTYPES:
            for per_chunk in (0, 1, 3):
                nbytes = header(program)["nchunksperloop"] * per_chunk * np.dtype(dtype).itemsize
                res = run_collective(program, nbytes, dtype, comm, inplace, seed + runs, reps=2)
                runs += 1
                if not res["ok"] or res["wrong_elements"] != 0:
                    failures.append(f"{name} inplace={inplace} {dtype} {nbytes} B: {res['error']}")
                elif per_chunk and not (res["time_us"] > 0 and res["mpi_time_us"] > 0):
                    failures.append(f"{name}: no times in {res}")
    report.append(f"OK {name}: {runs} checked runs ({', '.join(map(mode_name, modes(program)))})")


def mode_name(inplace: bool) -> str:
    return "in place" if inplace else "out of place"


def check_refused(program: dict) -> None:
    """The core refuses the program on every rank alike, before any data moves."""
    try:
        run_collective(program, program["nchunksperloop"] * 4, "int32", comm, modes(program)[0])
    except BadInput as e:
        messages = comm.allgather(str(e))
        if len(set(messages)) != 1 or not messages[0].startswith("not a valid MSCCL program: "):
            failures.append(f"{program['name']}: refused unlike verify, or differently per rank: {messages}")
            return
        report.append(f"OK {program['name']}: refused: {messages[0]}")
        return
    comm.allgather(None)
    failures.append(f"rank {RANK}: {program['name']}: ran although the core refuses it")


def check_tampered(program: dict) -> None:
    """The byte mover's checks on plans altered after compilation: a wrong result and a hang."""
    plan = compile_on(comm, program)
    nbytes = program["nchunksperloop"] * 8 * 4
    no_adds = plan._replace(ops=tuple(op._replace(add_region=-1) for op in plan.ops))
    res = run_plan_collective(no_adds, nbytes, "float32", comm, reps=1)
    err = res["error"] or ""
    if res["ok"] or not err.startswith("rank ") or "element" not in err or "expected" not in err:
        failures.append(f"tampered: the wrong result was not reported properly: {res}")
    else:
        report.append(f"OK tampered: wrong result detected: {err}")
    if not res["wrong_elements"]:
        failures.append(f"tampered: #wrong is not counted: {res}")
    check_wrong_count(plan, nbytes)
    silent = tuple(op._replace(send_to=-1) for op in plan.ops)  # rank 0 sends nothing: all wait
    mute = plan._replace(ops=silent) if RANK == 0 else plan
    res = run_plan_collective(mute, nbytes, "int32", comm, reps=1, timeout=1.0)
    err = res["error"] or ""
    if res["ok"] or "no progress" not in err or "tb " not in err:
        failures.append(f"tampered: the hang was not reported properly: {res}")
    else:
        report.append(f"OK tampered: hang detected: {err}")


def check_wrong_count(plan, nbytes: int) -> None:
    """nccl-tests' #wrong from real data: 0 after a correct run, then exactly the 3 elements
    rank 0 corrupts in its output (summed over ranks)."""
    case = _Case(plan, nbytes // 4, np.dtype("float32"), 7)
    case.reset()
    run_plan(plan, case.sendbuf, case.recvbuf, comm)
    before = case.wrong(comm)
    if RANK == 0:
        case.span(plan.output)[[0, 2, -1]] += 1
    after = case.wrong(comm)
    if (before, after) != (0, 3):
        failures.append(f"#wrong: {before} after a correct run, {after} after corrupting 3 elements")
    else:
        report.append("OK #wrong: 0, then 3 after corrupting 3 elements")


def expect_bad(what: str, fn, needle: str = "") -> None:
    try:
        fn()
    except BadInput as e:
        if needle not in str(e):
            failures.append(f"rank {RANK}: {what}: message {str(e)!r} lacks {needle!r}")
        return
    except Exception as e:  # noqa: BLE001
        failures.append(f"rank {RANK}: {what}: raised {type(e).__name__}: {e}, not BadInput")
        return
    failures.append(f"rank {RANK}: {what}: no BadInput")


def mutated(program: dict, change) -> dict:
    p = copy.deepcopy(program)
    change(p)
    return p


def check_api(ring: dict) -> None:
    """execute() directly: both modes against the library's Allreduce, a user message left alone,
    and input errors raised before any communication (on every rank alike)."""
    m = ring["nchunksperloop"] * 5
    x = np.arange(m, dtype=np.float64) * (RANK + 1)
    want = np.zeros_like(x)
    comm.Allreduce(x, want)
    req = comm.Isend(np.array([42], dtype=np.int64), (RANK + 1) % P, 0)  # tag 0 = channel 0
    out = np.full_like(x, np.nan)
    mpi.execute(ring, x, out, comm)
    if not np.array_equal(out, want):
        failures.append(f"rank {RANK}: execute out of place differs from Allreduce")
    buf = x.copy()
    mpi.execute(ring, MPI.IN_PLACE, buf, comm, inplace=True)
    if not np.array_equal(buf, want):
        failures.append(f"rank {RANK}: execute in place differs from Allreduce")
    got = np.zeros(1, dtype=np.int64)
    comm.Recv(got, (RANK - 1) % P, 0)
    req.Wait()
    if got[0] != 42:
        failures.append(f"rank {RANK}: the user's message was taken or changed: {got}")
    odd = np.zeros(m + 1)
    expect_bad(
        "size not a multiple of nchunksperloop", lambda: mpi.execute(ring, odd, odd.copy(), comm), "multiple"
    )
    expect_bad("sizes differ", lambda: mpi.execute(ring, x, np.zeros(m + 3), comm), "do not fit")
    expect_bad("dtypes differ", lambda: mpi.execute(ring, x, np.zeros(m, np.float32), comm), "float32")
    inplace_only = mutated(ring, lambda p: p.update(outofplace=False))
    expect_bad("mode", lambda: mpi.execute(inplace_only, x, out, comm), "in-place only")
    expect_bad("run_collective size", lambda: run_collective(ring, 7, "float32", comm), "float32")
    expect_bad(
        "ranks", lambda: run_collective(mutated(ring, lambda p: p.update(ngpus=P + 1)), 0, "int32", comm)
    )
    report.append("OK api: execute in both modes, user message intact, input errors")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("programs", nargs="*")
    ap.add_argument("--refused", action="append", default=[])
    ap.add_argument("--api")
    ap.add_argument("--tamper")
    args = ap.parse_intermixed_args()
    if args.api:
        check_api(load(args.api))
    for i, path in enumerate(args.programs):
        check_good(load(path), seed=100 * i)
    for path in args.refused:
        check_refused(load(path))
    if args.tamper:
        check_tampered(load(args.tamper))
    return finish(comm, failures, report)


sys.exit(main())
