"""`collsynth verify SCHEDULE.json|FILE.xml`: a schedule file by the verifier, an MSCCL XML by
both runtimes' parser rules and symbolic execution; and the loaders the other schedule-file
commands share (`simulate`, `export`, `run`)."""

from __future__ import annotations

from fractions import Fraction

from collsynth import msccl, mscclpp
from collsynth._core import BadInput
from collsynth.cli.common import console, emit_json, resolve_topology, table
from collsynth.fileio import read_text
from collsynth.schedule import Schedule


def register(sub) -> None:
    p = sub.add_parser("verify", help="verify a schedule file or an MSCCL XML by symbolic execution")
    p.add_argument("schedule", metavar="SCHEDULE.json|FILE.xml|PLAN.json")
    p.add_argument(
        "--topology",
        metavar="TOPO",
        help="FILE.xml only: report link loads on TOPO and the runtime model's time of the program "
        "as written",
    )
    p.add_argument(
        "--size",
        metavar="SIZE",
        help="FILE.xml with --topology: the collective size the time is for (default 1GiB; synth --size S "
        "prints the same numbers for the XML it writes)",
    )
    p.add_argument(
        "--runtime",
        choices=list(msccl.RUNTIMES),
        default=None,
        help="FILE.xml only: exit 2 unless this runtime loads it as written (default: any runtime)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run_verify)


def load(path: str) -> Schedule:
    if path.lower().endswith(".xml"):
        raise BadInput(f"{path}: an MSCCL XML file; `collsynth verify` and `collsynth run` take it")
    return Schedule.load(path)


def verified(path: str) -> Schedule:
    sched = Schedule.load(path)
    try:
        sched.verify()
    except BadInput as e:
        raise BadInput(f"{path}: {e}") from None
    return sched


def run_verify(args) -> int:
    if args.schedule.lower().endswith(".xml"):
        return run_verify_xml(args)
    text = read_text(args.schedule, "schedule JSON")
    if args.runtime:
        raise BadInput("--runtime applies to MSCCL XML files only")
    if args.size is not None:
        raise BadInput("--size applies to MSCCL XML files with --topology")
    if mscclpp.looks_like_plan(text):
        return run_verify_plan(args, text)
    if args.topology:
        raise BadInput("--topology applies to MSCCL XML files only (a schedule file embeds its topology)")
    sched = Schedule.loads(text, source=args.schedule)  # read once: a FIFO has no second reading
    try:
        report = sched.verify()
    except BadInput as e:
        raise BadInput(f"{args.schedule}: {e}") from None
    if args.json:
        emit_json({"schedule": args.schedule, "valid": True, **report})
    else:
        console.print(
            f"{args.schedule}: valid {sched.collective} schedule ({sched.algorithm}, "
            f"{report['transfers']} transfers, depth {report['depth']}, N={sched.n_ranks})"
        )
    return 0


def run_verify_xml(args) -> int:
    """Both runtimes' parser rules, then symbolic execution; exit 2 if no runtime would run it
    correctly (the report says why), 0 otherwise."""

    text = read_text(args.schedule, "MSCCL XML")
    topo = resolve_topology(args.topology) if getattr(args, "topology", None) else None
    if args.size is not None and topo is None:
        raise BadInput("--size applies with --topology: the time of the program on that machine")
    v = msccl.validate(text, topo, args.size)
    if args.json:
        emit_json({"file": args.schedule, **v})
    else:
        print_validation(args.schedule, v)
    if not v["ok"]:
        raise BadInput(f"{args.schedule}: not a valid MSCCL program: {v['refusal']}")
    msccl.require_loaded(args.schedule, v["runtimes"], args.runtime)
    return 0


def run_verify_plan(args, text: str) -> int:
    """An MSCCL++ execution plan: the executor's reader and checks, then symbolic execution
    (postcondition, deadlock, races; docs/mscclpp.md). Exit 2 with the first problem."""
    if args.topology:
        raise BadInput("--topology applies to MSCCL XML files only, not to MSCCL++ plans")
    v = mscclpp.validate(text)
    if args.json:
        emit_json({"file": args.schedule, "format": "mscclpp-json", **v})
    elif v["ok"]:
        console.print(
            f"{args.schedule}: valid MSCCL++ {v['collective']} plan ({v['ranks']} ranks, {v['protocol']}, "
            f"up to {v['thread_blocks']} thread blocks per rank): correct result, no deadlock, no race"
        )
    if not v["ok"]:
        raise BadInput(f"{args.schedule}: not a valid MSCCL++ plan: {v['refusal']}")
    return 0


def print_validation(path: str, v: dict) -> None:
    rows = []
    for runtime, problems in v["runtimes"].items():
        verdict = "accepted" if not problems else f"rejected: {problems[0]}"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        rows.append([runtime, verdict + more])
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
        # A bound from the program's link loads over the topology's routes, not a time: the
        # runtime model's time of an export is synth's and export's `judged` (docs/msccl.md).
        rows.append(
            [
                "link-load bound",
                f"{v['bandwidth_time_per_byte']} ns per byte of M: at most {algbw:.2f} GB/s algbw",
            ]
        )
        if v["link_loads"]:
            src, dst, load = max(v["link_loads"], key=lambda r: Fraction(r[2]))
            rows.append(["heaviest link", f"{src} -> {dst}: {load} of M"])
    if v.get("judged"):
        j = v["judged"]
        rows.append(
            [
                "time (runtime model)",
                f"{j['time_us']:.3f} us at {j['bytes']} bytes ({j['protocol']}): "
                f"algbw {j['algbw_GBps']:.3f} / busbw {j['busbw_GBps']:.3f} GB/s, "
                f"time-opt {j['time_optimality']:.4f}",
            ]
        )
    console.print(table(path, [("", "left"), ("", "left")], rows))
    for p in v["execution"][1:]:
        console.print(f"  {p}")
