"""`collsynth circulant check --max-p P`: exhaustive check of Träff's circulant schedules.

For every p in 2..P (plus optional random p), every process and n in {1, 2, q, q+1, 2q+3},
the n-block broadcast is simulated round by round in the Rust core (see docs/circulant.md).
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Iterable, Iterator

from collsynth import _core
from collsynth._core import BadInput
from collsynth.cli.common import console, emit_json, fail, with_version
from collsynth.cli.options import whole
from collsynth.progress import bar_console

# Below this many process schedules (sum of p) no progress bar is shown.
PROGRESS_MIN_WORK = 5_000_000
# Random p drawn by `--random K` (they are held in a list).
MAX_RANDOM = 1 << 20

# Work (sum of p) per call into the core, so the bar moves.
BATCH_WORK = 2_000_000


def register(sub) -> None:
    p = sub.add_parser("circulant", help="Träff's round-optimal circulant schedules")
    csub = p.add_subparsers(dest="circulant_command", metavar="ACTION", required=True)
    q = csub.add_parser("check", help="exhaustively check the schedules for every p up to P")
    q.add_argument("--max-p", type=whole(), required=True, metavar="P", help="check every p in 2..P")
    q.add_argument(
        "--random", type=whole(), default=0, metavar="K", help="also check K random p up to --random-max"
    )
    q.add_argument("--random-max", type=whole(), default=1_000_000, metavar="U")
    q.add_argument("--seed", type=whole(), default=0, help="seed of the random p (default 0)")
    q.add_argument(
        "--threads", type=whole(0, 1024), default=0, help="worker threads, at most 1024 (default: all cores)"
    )
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(run=run_check)


def batches(ps: Iterable[int]) -> Iterator[list[int]]:
    """Consecutive groups of ps with about BATCH_WORK process schedules each, made as they are
    consumed (so `--max-p 10**11` needs no list of 10**11 numbers)."""
    cur, work = [], 0
    for p in ps:
        cur.append(p)
        work += p
        if work >= BATCH_WORK:
            yield cur
            cur, work = [], 0
    if cur:
        yield cur


def check(ps: range, extra: list[int], threads: int = 0, show_progress: bool = False) -> dict:
    """Check every p of ps; returns the core's summary plus `seconds`."""
    total: dict = {
        "ps": 0,
        "max_p": 0,
        "processes": 0,
        "broadcasts": 0,
        "rounds": 0,
        "capped_duplicates": 0,
        "failures": [],
    }
    work = (ps.start + ps.stop - 1) * len(ps) // 2 + sum(extra)  # sum of every p, in O(1)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    t0 = time.perf_counter()
    columns = [
        TextColumn("circulant check"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    ]
    with Progress(
        *columns,
        console=bar_console(),
        transient=True,
        disable=not show_progress or not bar_console().is_terminal or work < PROGRESS_MIN_WORK,
    ) as bar:
        task = bar.add_task("check", total=work)
        for group in batches(itertools.chain(ps, extra)):
            r = _core.circulant_check(group, threads)
            for key in ("ps", "processes", "broadcasts", "rounds", "capped_duplicates"):
                total[key] += r[key]
            total["max_p"] = max(total["max_p"], r["max_p"])
            total["failures"].extend(r["failures"])
            bar.advance(task, sum(group))
    total["failures"] = total["failures"][:10]
    total["seconds"] = time.perf_counter() - t0
    return total


def run_check(args) -> int:
    if args.max_p < 2:
        raise BadInput(f"--max-p must be at least 2, got {args.max_p}")
    if args.random_max < 2:
        raise BadInput("--random-max must be at least 2")
    if args.random > MAX_RANDOM:
        raise BadInput(f"--random must be at most {MAX_RANDOM}, got {args.random}")
    rng = random.Random(args.seed)
    extra = sorted(rng.randint(2, args.random_max) for _ in range(args.random))
    r = check(range(2, args.max_p + 1), extra, args.threads, show_progress=True)
    r["random_ps"] = extra
    if args.json:
        emit_json(with_version(f"traff:2..{args.max_p}", {"command": "circulant check", **r}))
    else:
        rand = f" + {len(extra)} random p up to {args.random_max}" if extra else ""
        status = "all correct" if not r["failures"] else f"{len(r['failures'])}+ FAILURES"
        console.print(
            f"circulant check p = 2..{args.max_p}{rand}: {r['processes']} processes, "
            f"{r['broadcasts']} broadcasts, {r['rounds']} rounds in {r['seconds']:.2f} s: {status}"
        )
    if r["failures"]:
        for line in r["failures"]:
            fail(f"circulant check: {line}", 1)
        return 1
    return 0
