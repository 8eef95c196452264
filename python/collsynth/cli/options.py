"""Arguments shared by the schedule commands."""

from __future__ import annotations

COLLECTIVES = ["allgather", "reduce-scatter", "allreduce", "broadcast", "reduce", "allgatherv"]

# Algorithm options: passed to the chosen algorithm only when given; an algorithm that does
# not take one rejects it (exit 2) instead of ignoring it.
ALGORITHM_OPTIONS = [
    "max-trees",
    "allreduce-lp",
    "chunks-per-npu",
    "seed",
    "restarts",
    "ranks",
    "switch-mode",
    "blocks",
    "counts",
]


def add_collective(p, required: bool = True) -> None:
    p.add_argument(
        "--collective",
        "-c",
        required=required,
        choices=COLLECTIVES,
        metavar="C",
        help="allgather, reduce-scatter, allreduce, broadcast, reduce, allgatherv",
    )
    p.add_argument("--root", type=int, default=0, help="root rank of broadcast / reduce (default 0)")


def add_algorithm_options(p) -> None:
    for name in ALGORITHM_OPTIONS:
        p.add_argument(
            f"--{name}", default=None, metavar="VALUE", help="algorithm option (see issues/README)"
        )


def algorithm_options(args) -> dict[str, str]:
    return {
        name: str(v) for name in ALGORITHM_OPTIONS if (v := getattr(args, name.replace("-", "_"))) is not None
    }


def add_pipeline(p) -> None:
    p.add_argument(
        "--pipeline",
        type=int,
        default=1,
        metavar="K",
        help="split every piece into K sub-chunks when simulating (default: the schedule's own)",
    )


def check_pipeline(args) -> None:
    from collsynth._core import BadInput

    if args.pipeline < 1:
        raise BadInput(f"--pipeline must be at least 1, got {args.pipeline}")
