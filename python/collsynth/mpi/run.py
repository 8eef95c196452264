"""Run a schedule file, an MSCCL XML or an MSCCL program (JSON, the dict of collsynth.mpi.executor)
over MPI on random data, check the result and time it against the MPI library's own collective:

    mpiexec -n N python -m collsynth.mpi.run SCHEDULE.json|FILE.xml|PROGRAM.json --size 1MiB [--json]

(`python -m collsynth.run`, the name it was documented under first, runs the same.)

A schedule file is verified and lowered exactly as `collsynth export` does with default options.

`--size` is the full buffer M in bytes (nccl-tests' size: the allgather output, the reduce-scatter
input, the allreduce / broadcast / reduce buffer; `1MiB`, `64KB`, `4096`). Rank 0 prints one line
(or the JSON result with --json). Exit status: 0 if every rank's result is right, 1 if one is
wrong or the program deadlocks (the message names the first failing rank and the first wrong
element or the stuck steps), 2 for bad input (unreadable file, invalid program, wrong number of
ranks, a size that does not split into the program's chunks, a mode the program does not declare).
"""

from __future__ import annotations

import argparse
import json
import sys

from mpi4py import MPI

from collsynth._core import BadInput, __version__, size_bytes

DTYPES = ("float32", "float64", "int32")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors become BadInput, printed once by rank 0
        raise BadInput(f"{self.prog}: {message}")

    def _print_message(self, message, file=None):  # --help once, not once per rank
        if MPI.COMM_WORLD.Get_rank() == 0:
            super()._print_message(message, file)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = _Parser(prog="python -m collsynth.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("program", help="schedule file, MSCCL XML, or MSCCL program as JSON")
    ap.add_argument(
        "--size", default="1MiB", help="bytes of the full buffer M, or several comma-separated (default 1MiB)"
    )
    ap.add_argument("--dtype", default="float32", choices=DTYPES)
    ap.add_argument("--inplace", action="store_true", help="run in place (default: out of place)")
    ap.add_argument("--reps", type=int, default=5, help="timed runs; the minimum is reported (5)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random data (0)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds without progress = deadlock (30)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    return ap.parse_args(argv)


def parse_size(text: str) -> int:
    """Whole bytes of a size such as 4096, 64KB or 1MiB."""
    exact = size_bytes(text)
    if "/" in exact:
        raise BadInput(f"--size: {text!r} is not a whole number of bytes")
    return int(exact)


def load_program(path: str) -> dict | str:
    """The program of a file: an XML file's text, a schedule file verified and lowered (a program
    dict), or a program JSON file's dict; BadInput naming the file if it cannot be read. The core
    judges the program when the executor compiles it."""
    from collsynth import msccl
    from collsynth.fileio import read_text
    from collsynth.schedule import Schedule

    if path.lower().endswith(".xml"):
        return read_text(path, "MSCCL XML")
    text = read_text(path, "schedule JSON")
    try:
        program = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}: not JSON: {e}") from None
    if not isinstance(program, dict):
        raise BadInput(f"{path}: the program must be a JSON object")
    if str(program.get("format", "")).startswith("collsynth-schedule/"):
        sched = Schedule.loads(text, source=path)
        sched.verify()
        return msccl.export(sched)["program"]
    return program


def summary(result: dict) -> str:
    mode = "in place" if result["inplace"] else "out of place"
    what = (
        f"{result['name'] or 'program'} ({result['collective']}, {result['np']} ranks, "
        f"{result['size_bytes']} B {result['dtype']}, {mode})"
    )
    if not result["ok"]:
        return f"failed: {what}: {result['error']}"
    return f"ok: {what}: {result['time_us']:.1f} us, {result['library']} {result['mpi_time_us']:.1f} us"


def run(args: argparse.Namespace, comm: MPI.Comm) -> list[dict]:
    """Rank 0 reads and compiles the program, every rank runs its part at each size (BadInput on
    every rank); one result per size."""
    from collsynth.mpi.executor import compile_on

    program, error = None, None
    if comm.Get_rank() == 0:
        try:
            program = load_program(args.program)
        except BadInput as e:
            error = str(e)
    error = comm.bcast(error, root=0)
    if error:
        raise BadInput(error)
    sizes = [parse_size(text) for text in args.size.split(",")]
    try:
        plan = compile_on(comm, program, args.inplace)
    except BadInput as e:
        raise BadInput(f"{args.program}: {e}") from None
    return [run_size(args, comm, program, plan, nbytes) for nbytes in sizes]


def run_size(args: argparse.Namespace, comm: MPI.Comm, program, plan, nbytes: int) -> dict:
    """The checked, timed run at ``nbytes``: out of place, then in place where the program has
    that mode too (as nccl-tests runs both)."""
    from collsynth.mpi.executor import compile_on, run_plan_collective

    result = run_plan_collective(
        plan, nbytes, args.dtype, comm, args.seed, reps=args.reps, timeout=args.timeout
    )
    result["in_place"] = None
    if not args.inplace and result["ok"]:
        # nccl-tests runs both modes: in place too, when the program declares that mode
        try:
            inplace = compile_on(comm, program, True)
        except BadInput:
            inplace = None
        if inplace is not None:
            r = run_plan_collective(
                inplace, nbytes, args.dtype, comm, args.seed, reps=args.reps, timeout=args.timeout
            )
            result["in_place"] = {k: r[k] for k in IN_PLACE_KEYS}
            if not r["ok"]:
                result.update(ok=False, error=f"in place: {r['error']}")
    return {"collsynth_version": __version__, **result}


# the keys of the in-place run kept under "in_place" (an out-of-place run's result)
IN_PLACE_KEYS = ("ok", "error", "time_us", "mpi_time_us", "algbw_GBps", "busbw_GBps", "wrong_elements")


def nccl_tests_lines(results: list[dict]) -> str:
    """The results in nccl-tests' layout: header, then one line per size with out-of-place and
    in-place."""
    from collsynth import nccl_tests

    def half(r: dict | None) -> str:
        if r is None:
            return nccl_tests.half(None, None, None, None)
        return nccl_tests.half(r["time_us"], r["algbw_GBps"], r["busbw_GBps"], r["wrong_elements"])

    lines = [nccl_tests.HEADER]
    for result in results:
        out, inp = (None, result) if result["inplace"] else (result, result.get("in_place"))
        root = result.get("root") if result["collective"] in ("broadcast", "reduce") else None
        lines.append(
            nccl_tests.line(
                result["collective"],
                result["np"],
                result["size_bytes"],
                result["dtype"],
                root,
                half(out),
                half(inp),
            )
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    try:
        args = parse_args(argv)
        if args.reps < 1:
            raise BadInput(f"--reps must be at least 1, got {args.reps}")
        results = run(args, comm)
    except BadInput as e:
        if rank == 0:
            print(f"collsynth: error: {e}", file=sys.stderr)
        return 2
    if rank == 0:
        if args.json:  # one object for one size (as before), a list for a sweep
            text = json.dumps(results[0] if len(results) == 1 else results, indent=2)
        else:
            text = "\n".join(summary(r) for r in results) + "\n" + nccl_tests_lines(results)
        print(text, flush=True)
    return 0 if all(r["ok"] for r in results) else 1


def _entry() -> None:
    """main(), turning an unexpected exception on any rank into an abort of the whole job (the
    other ranks would otherwise wait for it forever)."""
    try:
        code = main()
    except SystemExit:
        raise
    except BaseException:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(3)
        raise
    sys.exit(code)


if __name__ == "__main__":
    _entry()
