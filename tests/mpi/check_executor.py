"""Run under ``mpiexec -n P python -m mpi4py tests/mpi/check_executor.py PROGRAM.json ...
[--wrong PROGRAM.json] [--deadlock PROGRAM.json] [--api PROGRAM.json]``: every program through
collsynth.mpi.executor.run_collective, in one launch.

- positional programs must be right in every mode they declare, for float32, float64 and int32, on
  buffers of 0, 1 and 3 chunks per chunk-slot;
- --wrong programs must be reported wrong, naming a rank and an element;
- --deadlock programs must be reported stuck (timeout 1 s);
- --api names an allreduce valid in both modes for direct execute() calls and input checks.
Rank 0 prints ``OK <name>: ...`` per program, every failure, and ``ok: P ranks`` if there were none;
the exit status is 1 on failure."""

from __future__ import annotations

import argparse
import copy
import json
import sys

import numpy as np
from mpi_report import finish

from collsynth import BadInput, mpi
from collsynth.mpi import MPI
from collsynth.mpi.executor import check_program, run_collective

comm = mpi.comm_world()
P, RANK = comm.Get_size(), comm.Get_rank()
DTYPES = ("float32", "float64", "int32")
failures: list[str] = []
report: list[str] = []


def load(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def modes(program: dict) -> list[bool]:
    return [m for m, key in ((False, "outofplace"), (True, "inplace")) if program[key]]


def check_good(program: dict, seed: int) -> None:
    runs = 0
    for inplace in modes(program):
        for dtype in DTYPES:
            for per_chunk in (0, 1, 3):
                nbytes = program["nchunksperloop"] * per_chunk * np.dtype(dtype).itemsize
                res = run_collective(program, nbytes, dtype, comm, inplace, seed + runs, reps=2)
                runs += 1
                if not res["ok"]:
                    failures.append(f"{program['name']} inplace={inplace} {dtype} {nbytes} B: {res['error']}")
                elif per_chunk and not (res["time_us"] > 0 and res["mpi_time_us"] > 0):
                    failures.append(f"{program['name']}: no times in {res}")
    report.append(f"OK {program['name']}: {runs} checked runs ({', '.join(map(mode_name, modes(program)))})")


def mode_name(inplace: bool) -> str:
    return "in place" if inplace else "out of place"


def check_wrong(program: dict) -> None:
    for inplace in modes(program):
        res = run_collective(program, program["nchunksperloop"] * 8 * 4, "float32", comm, inplace, reps=1)
        err = res["error"] or ""
        if res["ok"] or not err.startswith("rank ") or "element" not in err or "expected" not in err:
            failures.append(f"{program['name']}: the wrong result was not reported properly: {res}")
            return
    report.append(f"OK {program['name']}: wrong result detected: {err}")


def check_deadlock(program: dict) -> None:
    res = run_collective(
        program, program["nchunksperloop"] * 4, "int32", comm, modes(program)[0], timeout=1.0
    )
    err = res["error"] or ""
    if res["ok"] or not ("deadlock" in err or "no progress" in err) or "tb " not in err:
        failures.append(f"{program['name']}: the deadlock was not reported properly: {res}")
        return
    report.append(f"OK {program['name']}: deadlock detected: {err}")


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


def check_program_errors(ring: dict) -> None:
    """Malformed variants of a ring allreduce are rejected by check_program (no MPI involved)."""
    first = lambda p: p["gpus"][0]["tbs"][0]["steps"][0]  # noqa: E731
    cases = [
        ("unknown type", lambda p: first(p).update(type="xx"), "unknown type"),
        ("offset out of range", lambda p: first(p).update(srcoff=p["nchunksperloop"]), "outside"),
        ("step numbering", lambda p: first(p).update(s=5), "numbered"),
        ("bad collective", lambda p: p.update(collective="alltoall"), "collective"),
        ("send/recv mismatch", lambda p: first(p).update(cnt=2, srcoff=0), "chunks"),
        ("missing message", lambda p: first(p).update(type="nop"), "messages"),
        ("dependency on a later own step", lambda p: first(p).update(depid=0, deps=2), "comes later"),
        (
            "dependency without hasdep",
            lambda p: p["gpus"][0]["tbs"].append(
                {
                    "id": 1,
                    "send": -1,
                    "recv": -1,
                    "chan": 0,
                    "steps": [{**first(p), "type": "nop", "depid": 0, "deps": 0}],
                }
            ),
            "hasdep=0",
        ),
        ("channel", lambda p: p["gpus"][0]["tbs"][0].update(chan=1), "nchannels"),
        ("peer", lambda p: p["gpus"][0]["tbs"][0].update(send=0), "another rank"),
    ]
    for what, change, needle in cases:
        expect_bad(f"check_program: {what}", lambda c=change: check_program(mutated(ring, c)), needle)


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
    check_program_errors(ring)
    report.append("OK api: execute in both modes, user message intact, input errors")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("programs", nargs="*")
    ap.add_argument("--wrong", action="append", default=[])
    ap.add_argument("--deadlock", action="append", default=[])
    ap.add_argument("--api")
    args = ap.parse_intermixed_args()
    if args.api:
        check_api(load(args.api))
    for i, path in enumerate(args.programs):
        check_good(load(path), seed=100 * i)
    for path in args.wrong:
        check_wrong(load(path))
    for path in args.deadlock:
        check_deadlock(load(path))
    return finish(comm, failures, report)


sys.exit(main())
