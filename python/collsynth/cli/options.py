"""Arguments shared by the schedule commands."""

from __future__ import annotations

import argparse
import math

from collsynth._core import algorithm_options, algorithms

# The largest whole number an option passes to the core (its counts are 64-bit); the core's
# own checks then say what is sensible for each.
MAX_WHOLE = 2**63 - 1
# MPI processes one `--np` may start.
MAX_PROCESSES = 1 << 16


# The one rule of every size option (the core's parser, units::parse_size), said in its --help.
SIZE_RULE = "K, M, G, T and KiB, MiB, GiB, TiB are powers of 1024 (as in nccl-tests), KB, MB, GB, TB of 1000"


def size_help(text: str) -> str:
    """An option's help with the size rule after it."""
    return f"{text}; {SIZE_RULE}"


def whole(lo: int = 0, hi: int = MAX_WHOLE):
    """An argparse type: a whole number in lo..hi, else a one-line usage error (exit 2)."""

    def parse(text: str) -> int:
        # ASCII digits only: int() would also take ' 5', '+5', '1_000' and other scripts' digits
        stripped = text[1:] if text.startswith("-") else text
        if not (stripped.isascii() and stripped.isdigit()):
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
        v = int(text)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be a whole number from {lo} to {hi}, got {text}")
        return v

    return parse


def seconds(text: str) -> float:
    """An argparse type: a positive finite number of seconds."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return v


COLLECTIVES = ["allgather", "reduce-scatter", "allreduce", "broadcast", "reduce", "allgatherv"]

# Algorithm options, (name, one line of help) as the core's registry states them: passed to
# the chosen algorithm only when given; an algorithm that does not take one rejects it (exit 2)
# instead of ignoring it.
ALGORITHM_OPTIONS = algorithm_options()


def add_collective(p, required: bool = True) -> None:
    p.add_argument(
        "--collective",
        "-c",
        required=required,
        choices=COLLECTIVES,
        metavar="C",
        help="allgather, reduce-scatter, allreduce, broadcast, reduce, allgatherv",
    )
    p.add_argument("--root", type=whole(), default=0, help="root rank of broadcast / reduce (default 0)")


def add_algorithm_options(p) -> None:
    takers = {name: [a[0] for a in algorithms() if name in a[3]] for name, _ in ALGORITHM_OPTIONS}
    g = p.add_argument_group("algorithm options (the algorithms that take each are in brackets)")
    for name, help_line in ALGORITHM_OPTIONS:
        g.add_argument(
            f"--{name}", default=None, metavar="VALUE", help=f"{help_line} [{', '.join(takers[name])}]"
        )


def given_algorithm_options(args) -> dict[str, str]:
    return {
        name: str(v)
        for name, _ in ALGORITHM_OPTIONS
        if (v := getattr(args, name.replace("-", "_"))) is not None
    }


def add_pipeline(p) -> None:
    p.add_argument(
        "--pipeline",
        type=whole(1),
        default=None,
        metavar="K",
        help="split every piece into K sub-chunks when simulating and exporting (default: the "
        "schedule's own when simulating; for MSCCL XML, tree schedules stream in 4, 2 or 1)",
    )


def check_pipeline(args) -> None:
    from collsynth._core import BadInput

    args.pipeline_given = args.pipeline is not None
    if args.pipeline is None:
        args.pipeline = 1
    if args.pipeline < 1:
        raise BadInput(f"--pipeline must be at least 1, got {args.pipeline}")


MSCCL_OPTIONS = ["runtime", "msccl-dialect", "channels", "protocol", "unfused", "size-range", "size-windows"]


def add_msccl_options(p, sized: bool = False) -> None:
    """The MSCCL exporter's options (see docs/msccl.md)."""
    g = p.add_argument_group("MSCCL XML (with --format msccl-xml)")
    g.add_argument(
        "--runtime",
        choices=["msccl-nccl", "rccl", "msccl-legacy"],
        default=None,
        help="the runtime whose limits the program fits (default msccl-nccl)",
    )
    g.add_argument(
        "--msccl-dialect", choices=["new", "old"], default=None, help="new = msccl-nccl, old = msccl-legacy"
    )
    g.add_argument(
        "--channels", type=whole(1), default=None, metavar="C", help="channels (default: fewest that fit)"
    )
    g.add_argument(
        "--protocol",
        choices=["Simple", "LL", "LL128", "auto"],
        default=None,
        help="default auto: the one the runtime model picks at --size (or the --size-range's middle, else "
        "1GiB), so that the program written is the one timed",
    )
    g.add_argument("--unfused", action="store_true", default=None, help="only s, r, rrc, nop steps")
    g.add_argument(
        "--size-range", default=None, metavar="MIN-MAX", help=size_help("minBytes-maxBytes, e.g. 1MiB-1GiB")
    )
    if sized:
        g.add_argument(
            "--size-windows",
            default=None,
            metavar="MIN-MAX",
            help=size_help(
                "one XML per size window of MIN-MAX (e.g. 1KiB-4GiB), each the fastest variant there"
            ),
        )


def msccl_given(args) -> list[str]:
    return [f"--{n}" for n in MSCCL_OPTIONS if getattr(args, n.replace("-", "_"), None) is not None]


def msccl_kwargs(args) -> dict:
    """Keyword arguments of :func:`collsynth.msccl.export` from the command line."""
    return {
        "runtime": args.runtime,
        "dialect": args.msccl_dialect,
        "protocol": args.protocol or "auto",
        "channels": args.channels,
        "unfused": bool(args.unfused),
        "pipeline": args.pipeline if getattr(args, "pipeline_given", False) else None,
        "size_range": args.size_range,
        "size": getattr(args, "size", None),
    }


def add_nccl_sweep(p) -> None:
    """nccl-tests' size sweep: -b MIN -e MAX -f FACTOR, read as nccl-tests reads them."""
    g = p.add_argument_group(
        "nccl-tests size sweep (read as nccl-tests reads -b and -e: the letter decides, K, M, G are powers "
        "of 1024, and so 8GB is 8 GiB here too)"
    )
    g.add_argument("-b", "--minbytes", default=None, metavar="MIN", help="smallest size (default 32M)")
    g.add_argument("-e", "--maxbytes", default=None, metavar="MAX", help="largest size (default 32M)")
    g.add_argument(
        "-f",
        "--stepfactor",
        type=whole(0),
        default=None,
        metavar="F",
        help="size factor per step (default 2)",
    )


def nccl_sweep(args) -> list[int] | None:
    """The sizes of -b/-e/-f in bytes, None if none of them was given."""
    if args.minbytes is None and args.maxbytes is None and args.stepfactor is None:
        return None
    from collsynth import nccl_tests
    from collsynth._core import BadInput

    try:
        return nccl_tests.sweep(
            args.minbytes, args.maxbytes, 2 if args.stepfactor is None else args.stepfactor
        )
    except BadInput as e:
        raise BadInput(f"-b/-e/-f: {e}") from None
