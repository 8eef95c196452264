"""`collsynth bench-mpi`: our circulant bcast / allgatherv against the MPI library's, under
mpiexec (started here), with an OSU-benchmark-style table, `--json` and `--plot`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from collsynth._core import BadInput, InternalError
from collsynth.cli.common import comma_items, emit_json
from collsynth.cli.options import MAX_PROCESSES, seconds, size_help, whole
from collsynth.fileio import atomic_write

DEFAULT_SIZES = "1,16,256,4KiB,64KiB,1MiB"


def parse_sizes(text: str) -> list[int]:
    """'1,4KiB,1MB' -> whole bytes, read by the core's one size parser (KB, MB, GB are powers
    of 1000, KiB, MiB, GiB powers of 1024, as for every other command)."""
    from collsynth._core import size_bytes

    sizes = []
    for part in comma_items("--sizes", text):
        try:
            exact = size_bytes(part.strip())
        except BadInput as e:
            raise BadInput(f"--sizes: {str(e).removeprefix('--size: ')}") from None
        if "/" in exact:
            raise BadInput(f"--sizes: {part.strip()!r} is not a whole number of bytes")
        sizes.append(int(exact))
    return sizes


def register(sub) -> None:
    p = sub.add_parser(
        "bench-mpi",
        help="time the circulant MPI bcast/allgatherv against the MPI library's (starts mpiexec)",
        description="Run `mpiexec -n NP python -m collsynth.mpi.bench`: min over REPS runs of the "
        "slowest rank's time, schedule computation included, for each size.",
    )
    p.add_argument(
        "--np", type=whole(1, MAX_PROCESSES), required=True, metavar="P", help="number of MPI processes"
    )
    p.add_argument(
        "--sizes", default=DEFAULT_SIZES, help=size_help(f"bytes, comma-separated (default {DEFAULT_SIZES})")
    )
    p.add_argument("--reps", type=whole(1), default=35, help="timed runs per size; the minimum is kept (35)")
    p.add_argument("--ops", default="bcast,allgatherv", help="bcast, allgatherv or both (default)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--plot", metavar="FILE", help="write a log-log plot (PNG, SVG, PDF)")
    p.add_argument(
        "--mpiexec-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra mpiexec argument, repeatable (e.g. --mpiexec-arg=--oversubscribe for Open MPI)",
    )
    p.add_argument("--timeout", type=seconds, default=600, help="seconds before the run is killed (600)")
    p.set_defaults(run=run)


def launch_bench(
    np_: int, sizes: list[int], reps: int, ops: list[str], extra: list[str], timeout: float
) -> dict:
    # subprocess and tempfile here, not at start-up of every command (README, "Start-up")
    import subprocess
    import tempfile

    from collsynth.mpi import launch

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        argv = [sys.executable, "-m", "collsynth.mpi.bench", "--sizes", ",".join(map(str, sizes))]
        argv += ["--reps", str(reps), "--ops", ",".join(ops), "--out", str(out)]
        try:
            proc = subprocess.run(
                launch.command(np_, argv, extra), capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            # the user's own limit: what to change is theirs to choose
            raise BadInput(
                f"mpiexec -n {np_} did not finish within --timeout {timeout:g} s "
                "(raise it, or lower --reps or --sizes)"
            ) from None
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise InternalError(f"mpiexec -n {np_} failed with status {proc.returncode}: {tail[0]}")
        return json.loads(out.read_text())


def osu_table(result: dict) -> str:
    lines = []
    for op in dict.fromkeys(r["op"] for r in result["records"]):
        lib_name = "Bcast" if op == "bcast" else "Allgatherv"
        lines.append(f"# collsynth circulant {op} vs {result['library']} MPI_{lib_name}")
        lines.append(
            f"# {result['np']} processes, min of {result['reps']} runs, slowest rank, schedule"
            " computation included"
        )
        lines.append(
            f"# alpha {result['alpha_us']:.3g} us,"
            f" beta {result['beta_us_per_byte'] * 1e3:.3g} ns/B (measured)"
        )
        lines.append(f"{'# Size':<12}{'collsynth (us)':>16}{'library (us)':>16}{'ratio':>9}{'blocks':>8}")
        for r in result["records"]:
            if r["op"] == op:
                lines.append(
                    f"{r['size_bytes']:<12}{r['ours_us']:>16.2f}{r['library_us']:>16.2f}"
                    f"{r['ratio']:>9.2f}{r['blocks']:>8}"
                )
        lines.append("")
    return "\n".join(lines)


def plot(result: dict, output: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for op, colour in (("bcast", "tab:blue"), ("allgatherv", "tab:orange")):
        rows = [r for r in result["records"] if r["op"] == op]
        if not rows:
            continue
        x = [max(r["size_bytes"], 1) for r in rows]
        ax.plot(x, [r["ours_us"] for r in rows], "o-", color=colour, label=f"collsynth {op}")
        ax.plot(x, [r["library_us"] for r in rows], "s--", color=colour, label=f"library {op}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("time (us), slowest rank, min of runs")
    ax.set_title(f"{result['library']}, {result['np']} processes")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=(Path(output).suffix[1:] or "png").lower())
    plt.close(fig)
    atomic_write(output, buf.getvalue())


def run(args) -> int:
    sizes = parse_sizes(args.sizes)
    ops = comma_items("--ops", args.ops)
    if bad := [o for o in ops if o not in ("bcast", "allgatherv")]:
        raise BadInput(f"--ops: unknown operation(s) {bad}; choose from bcast, allgatherv")
    if args.reps < 1:
        raise BadInput(f"--reps must be at least 1, got {args.reps}")
    from collsynth.mpi import preflight

    # each rank holds a few buffers of the largest size: its input, the output, the library's
    preflight.check_memory(
        f"bench-mpi --sizes up to {max(sizes)} bytes",
        args.np,
        4 * max(sizes),
        "4 buffers of the largest size",
    )
    # per size and operation: one untimed and --reps timed runs of ours and of the library's
    runs = 2 * (args.reps + 1) * len(sizes) * len(ops)
    preflight.check_time(f"bench-mpi --reps {args.reps}", runs, args.timeout)
    result = launch_bench(args.np, sizes, args.reps, ops, args.mpiexec_arg, args.timeout)
    if args.plot:
        plot(result, args.plot)
    if args.json:
        emit_json(result)
    else:
        print(osu_table(result), end="")
        if args.plot:
            print(f"wrote {args.plot}")
    return 0
