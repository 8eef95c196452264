"""`collsynth synth TOPO --collective C --algorithm A ...`: synthesize, verify, evaluate, write."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from collsynth import _core, msccl, mscclpp
from collsynth._core import BadInput
from collsynth.cli.common import comma_items, console, emit_json, resolve_topology, table, with_version
from collsynth.cli.options import (
    add_algorithm_options,
    add_collective,
    add_msccl_options,
    add_pipeline,
    check_pipeline,
    given_algorithm_options,
    msccl_given,
    msccl_kwargs,
    size_help,
)
from collsynth.fileio import atomic_write_all, check_output_dir
from collsynth.progress import run_with_progress
from collsynth.schedule import Schedule, synthesize
from collsynth.topology import Topology

FORMATS = {"json", "msccl-xml", "mscclpp-json"}


def register(sub) -> None:
    p = sub.add_parser("synth", help="synthesize a verified schedule")
    p.add_argument("topo", metavar="TOPO")
    add_collective(p)
    p.add_argument(
        "--algorithm",
        "-a",
        required=True,
        metavar="A",
        help=", ".join(a[0] for a in _core.algorithms()) + " or auto",
    )
    p.add_argument("--size", default="1GiB", help=size_help("nccl-tests size M (default 1GiB)"))
    p.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="write DIR/schedule.json, DIR/schedule.xml, DIR/schedule.mscclpp.json",
    )
    p.add_argument(
        "--format", default="json", help="comma-separated output formats: json, msccl-xml, mscclpp-json"
    )
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--form",
        choices=["auto", "flat"],
        default="auto",
        help="auto: as the synthesizer states it (per orbit of a symmetry, collsynth-schedule/2, "
        "where it has one); flat: every transfer, verified, costed and written flat "
        "(collsynth-schedule/1, for tools that read only /1; slow and large at scale)",
    )
    p.add_argument(
        "--time-only",
        action="store_true",
        help=" and ".join(a[0] for a in _core.algorithms() if a[4])
        + ": report the collective time without building the schedule (huge N)",
    )
    add_pipeline(p)
    add_algorithm_options(p)
    add_msccl_options(p, sized=True)
    p.add_argument(
        "--threadblocks",
        type=int,
        metavar="G",
        help="MSCCL++ plan (--format mscclpp-json): thread blocks per slice group, 1-64 (default: 4, 2 or 1)",
    )
    p.set_defaults(run=run)


def _time_rows(algorithm: str, keys: dict) -> list[list]:
    """The text table of a `--time-only` report: time, bandwidths, then every other key."""
    rows = [
        ["algorithm", f"{algorithm} (time only)"],
        ["synthesis (s)", f"{keys['synthesis_seconds']:.4f}"],
        [f"collective time (us, {keys['time_model']})", f"{keys['time_us']:.3f}"],
        ["algbw / busbw (GB/s)", f"{keys['algbw_GBps']:.3f} / {keys['busbw_GBps']:.3f}"],
        ["size moved (bytes)", keys["size_moved_note"] or f"{keys['size_moved_bytes']:.0f}"],
    ]
    shown = {"N", "synthesis_seconds", "time_us", "time_model", "algbw_GBps", "busbw_GBps"}
    shown |= {"size_moved_bytes", "size_moved_exact", "size_moved_note"}
    for k, v in keys.items():
        if k in shown:
            continue
        if isinstance(v, list) and all(isinstance(p, dict) for p in v):
            rows += [[f"  {k}: " + ", ".join(f"{a} {b}" for a, b in p.items()), ""] for p in v]
        else:
            rows.append([k.replace("_", " "), f"{v:.6g}" if isinstance(v, float) else str(v)])
    return rows


def run_time_only(args) -> int:
    """`--time-only`: the algorithm's own account of the time, no IR, no verification (nothing
    to verify), hence no -o, --format msccl-xml or --pipeline (they need the schedule). Which
    algorithms have one is the core registry's to say."""
    if args.output:
        raise BadInput("--time-only writes no schedule: drop -o")
    if args.format != "json" or msccl_given(args) or args.threadblocks is not None:
        raise BadInput("--time-only exports nothing: drop --format and the MSCCL options")
    if args.form != "auto":
        raise BadInput("--time-only builds no schedule: drop --form")
    if args.pipeline_given:
        raise BadInput("--pipeline applies to the simulator, which --time-only does not run")
    topo = resolve_topology(args.topo)
    keys = run_with_progress(
        lambda: _core.time_only(
            topo._core,
            args.collective,
            args.algorithm,
            args.root,
            given_algorithm_options(args),
            str(args.size),
        ),
        f"{args.algorithm}: timing",
        poll=lambda: _core.progress(args.algorithm) or (0, 0),
    )
    rows = _time_rows(args.algorithm, keys)
    s = with_version(
        topo.name,
        {
            "N": keys.pop("N", topo.n_ranks),
            "collective": args.collective,
            "algorithm": args.algorithm,
            "size_bytes": float(Fraction(_core.size_bytes(str(args.size)))),
            **keys,
        },
    )
    if args.json:
        emit_json(s)
        return 0
    console.print(
        table(f"{args.collective} on {topo.name} (N={s['N']})", [("", "left"), ("", "right")], rows)
    )
    return 0


def summary(topo: Topology, sched: Schedule, size: str, pipeline: int) -> dict:
    """The `--json` object of one schedule (the keys of docs/contracts.md)."""
    e = sched.evaluate(size, pipeline)
    return with_version(
        topo.name,
        {
            "N": sched.n_ranks,  # with --ranks, the sub-collective's ranks
            "collective": sched.collective,
            "algorithm": sched.algorithm,
            "root": sched.root,
            "synthesis_seconds": sched.synthesis_seconds,
            "transfers": sched.n_transfers,
            **compact_keys(sched),
            "range_transfers": sched.range_transfers,
            **e,
            **sched.details,
        },
    )


def compact_keys(sched: Schedule) -> dict:
    """The symmetry of a schedule stated per orbit (all None for a flat one)."""
    c = sched.compact or {}
    return {
        "compact_group": c.get("group"),
        "compact_order": c.get("order"),
        "compact_transfers": c.get("representatives"),
    }


def size_text(s: dict) -> str:
    """The size asked and, where the costs are on another, the bytes moved (or why not)."""
    text = f"{s['size_bytes']:.0f}"
    if s.get("size_moved_note"):
        return f"{text} ({s['size_moved_note']})"
    if s.get("size_moved_bytes", s["size_bytes"]) != s["size_bytes"]:
        return f"{text} (nccl-tests moves {s['size_moved_bytes']:.0f})"
    return text


def summary_rows(s: dict, details: dict | None = None) -> list[list]:
    rows = [
        ["algorithm", s["algorithm"]],
        ["transfers / steps", f"{s['transfers']} / {s['steps']}"],
        [
            "synthesis (s)",
            f"{s['synthesis_seconds']:.4f}" if s.get("synthesis_seconds") is not None else "-",
        ],
        ["verified", "yes"],
        ["size (bytes)", size_text(s)],
    ]
    # One clock: the calibrated runtime model (docs/simulator.md) of the program written, against
    # its time bound; other models' times are in --json only (docs/contracts.md).
    rows += [
        [
            f"time (us, {s.get('time_of', 'runtime model')})",
            f"{s['time_us']:.3f}  ({s['runtime_protocol']}, {s['runtime_slices']} slices)",
        ],
        ["time bound (us) / time-opt", f"{s['time_bound_us']:.3f} / {s['time_optimality']:.4f}"],
        ["algbw / busbw (GB/s)", f"{s['algbw_GBps']:.3f} / {s['busbw_GBps']:.3f}"],
        ["bound algbw (GB/s)", f"{s['bound_algbw_GBps']:.3f}"],
        ["optimality (bandwidth term)", f"{s['optimality']:.4f}"],
    ]
    # the synthesizer's own facts (ForestColl's k, trees, ...), scalars only
    scalars = {k: v for k, v in (details or {}).items() if isinstance(v, (int, float, str))}
    rows += [
        [k.replace("_", " "), f"{v:.6g}" if isinstance(v, float) else str(v)] for k, v in scalars.items()
    ]
    return rows


def run(args) -> int:
    check_pipeline(args)
    if args.time_only:
        return run_time_only(args)
    formats = set(comma_items("--format", args.format))
    if unknown := formats - FORMATS:
        raise BadInput(
            f"--format: unknown format(s) {', '.join(sorted(unknown))} (json, msccl-xml, mscclpp-json)"
        )
    if "msccl-xml" not in formats and (given := msccl_given(args)):
        raise BadInput(f"{given[0]} applies to --format msccl-xml only")
    if args.threadblocks is not None and "mscclpp-json" not in formats:
        raise BadInput("--threadblocks applies to --format mscclpp-json only")
    if args.threadblocks is not None and not 1 <= args.threadblocks <= mscclpp.MAX_GROUP:
        raise BadInput(f"--threadblocks {args.threadblocks}: 1 to {mscclpp.MAX_GROUP}")
    if args.output:
        check_output_dir(args.output)
    if args.size_windows is not None:
        if args.form != "auto":
            raise BadInput("--size-windows writes MSCCL XML only, which is flat: drop --form")
        return run_windows(args, formats)
    topo = resolve_topology(args.topo)
    options = given_algorithm_options(args)
    # The summary's evaluation runs beside the verifier (its schedule: not with --form flat).
    pipeline = args.pipeline if args.form != "flat" else None
    # `auto` writing MSCCL XML picks by the program it writes (judged at the moved bytes).
    for_msccl = None
    if "msccl-xml" in formats and args.algorithm == "auto":
        for_msccl = {**msccl_kwargs(args), "size": None}
    sched = run_with_progress(
        lambda: synthesize(
            topo,
            args.collective,
            args.algorithm,
            root=args.root,
            size=args.size,
            evaluate_pipeline=pipeline,
            msccl=for_msccl,
            **options,
        ),
        f"{args.algorithm}: synthesizing and verifying",
        poll=lambda: _core.progress(args.algorithm) or (0, 0),
    )
    if args.form == "flat":
        sched = run_with_progress(sched.flat, "stating the schedule flat and verifying it")
    s = summary(topo, sched, args.size, args.pipeline)
    exported = None
    if "msccl-xml" in formats:
        kwargs = msccl_kwargs(args)
        if "/" not in s["size_moved_exact"]:
            # Judge the program at the bytes the table is for (nccl-tests' moved size).
            kwargs["size"] = s["size_moved_exact"]
        exported = run_with_progress(lambda: msccl.export(sched, text=False, **kwargs), "exporting MSCCL XML")
        s["msccl"] = msccl_summary(exported)
        the_program_written(s, exported["judged"])
    plan = None
    if "mscclpp-json" in formats:
        plan = run_with_progress(
            lambda: mscclpp.export(sched, args.threadblocks, text=False), "exporting the MSCCL++ plan"
        )
        s["mscclpp"] = mscclpp_summary(plan)
    if args.output:
        out = Path(args.output)
        writes = [(out / "schedule.json", sched.writer())] if "json" in formats else []
        if exported is not None:
            writes.append((out / "schedule.xml", exported["write"]))
        if plan is not None:
            writes.append((out / "schedule.mscclpp.json", plan["write"]))
        # All or none: never a schedule.json without the .xml asked for with it.
        atomic_write_all(writes)
        s["files"] = [str(path) for path, _ in writes]
    if args.json:
        emit_json(s)
        return 0
    title = f"{s['collective']} on {topo.name} (N={topo.n_ranks})"
    console.print(table(title, [("", "left"), ("", "right")], summary_rows(s, sched.details)))
    if exported is not None:
        print_msccl(s["msccl"])
    if plan is not None:
        print_mscclpp(s["mscclpp"])
    for f in s.get("files", []):
        console.print(f"wrote {f}")
    return 0


def run_windows(args, formats: set[str]) -> int:
    """`--size-windows MIN-MAX`: one XML per window, each the fastest variant there; the
    runtime picks the file by size (docs/msccl.md, "Size windows")."""
    if formats != {"msccl-xml"}:
        raise BadInput("--size-windows writes MSCCL XML only: use --format msccl-xml")
    if args.size_range is not None:
        raise BadInput("--size-windows sets every file's size range: drop --size-range")
    if args.pipeline_given:
        raise BadInput("--size-windows chooses the pipeline per window: drop --pipeline")
    topo = resolve_topology(args.topo)
    k = msccl_kwargs(args)
    rows = run_with_progress(
        lambda: msccl.export_windows(
            topo,
            args.collective,
            args.algorithm,
            args.size_windows,
            root=args.root,
            runtime=k["runtime"],
            dialect=k["dialect"],
            # auto is what the windows do anyway: each window's own choice
            protocol=None if args.protocol == "auto" else args.protocol,
            channels=k["channels"],
            unfused=k["unfused"],
            text=False,
            **{o.replace("-", "_"): v for o, v in given_algorithm_options(args).items()},
        ),
        f"{args.algorithm}: choosing a variant per size window",
    )
    files = []
    if args.output:
        writes = [
            (Path(args.output) / f"schedule-w{i}-{w['algorithm']}.xml", w["write"])
            for i, w in enumerate(rows)
        ]
        atomic_write_all(writes)
        files = [str(path) for path, _ in writes]
    windows = [{k: v for k, v in w.items() if k not in ("xml", "write", "stream")} for w in rows]
    s = with_version(
        topo.name,
        {
            "N": topo.n_ranks,
            "collective": args.collective,
            "algorithm": args.algorithm,
            "msccl_windows": windows,
            "files": files,
        },
    )
    if args.json:
        emit_json(s)
        return 0
    cols = [
        ("window (bytes)", "left"),
        ("variant", "left"),
        ("protocol", "left"),
        ("time at ends (us)", "right"),
        ("vs fastest", "right"),
    ]
    body = [
        [
            f"{w['min_bytes']}-{w['max_bytes']}",
            w["variant"],
            w["protocol"],
            f"{w['time_us_at_min']:.3f} / {w['time_us_at_max']:.3f}",
            f"{w['slowdown']:.3f}x",
        ]
        for w in windows
    ]
    console.print(table(f"{args.collective} on {topo.name}: MSCCL XML per size window", cols, body))
    for f in files:
        console.print(f"wrote {f}")
    return 0


def the_program_written(s: dict, judged: dict | None) -> None:
    """One clock: with an MSCCL XML written, the time, bandwidths and time optimality a user
    reads are the runtime model's of that program in its own thread blocks (when judged at
    the table's size), not the per-connection model's of the schedule."""
    if judged is None or judged["bytes"] != s["size_moved_bytes"]:
        return
    keys = ("time_us", "algbw_GBps", "busbw_GBps", "time_optimality")
    s.update({k: judged[k] for k in keys})
    s["runtime_protocol"] = judged["protocol"]
    s["time_of"] = "runtime model of the XML"


def msccl_summary(exported: dict) -> dict:
    """The `msccl` object of `synth --json` / `export --json`."""
    keys = ["nchunksperloop", "nchannels", "thread_blocks", "max_steps", "s_chunks", "pipeline"]
    out = {k: exported[k] for k in keys}
    out["minBytes"], out["maxBytes"] = exported["min_bytes"], exported["max_bytes"]
    out["runtime"] = exported["runtime"]
    out["dialect"] = exported["dialect"]
    out["fallback"] = exported["fallback"]
    out["judged"] = exported["judged"]
    return out


def print_msccl(m: dict) -> None:
    console.print(
        f"MSCCL XML for {m['runtime']}: {m['nchunksperloop']} chunks per loop, {m['nchannels']} "
        f"channel(s), up to {m['thread_blocks']} thread blocks per rank and {m['max_steps']} steps per "
        f"block, {m['s_chunks']} scratch chunks; validated. The runtime selects it for buffers of "
        f"{m['minBytes']} to {m['maxBytes']} bytes whose element count is a multiple of {m['nchunksperloop']}"
    )
    if m["judged"]:
        j = m["judged"]
        console.print(
            f"in MSCCL's thread blocks (one block runs its steps in order) the runtime model predicts "
            f"{j['time_us']:.3f} us at {j['bytes']} bytes under {j['protocol']}"
        )
    if m["fallback"]:
        console.print(f"note: {m['fallback']}")


def mscclpp_summary(plan: dict) -> dict:
    """The `mscclpp` object of `synth --json`: the plan's shape (no text)."""
    return {k: v for k, v in plan.items() if k not in ("json", "write", "stream", "schedule")}


def print_mscclpp(m: dict) -> None:
    console.print(
        f"MSCCL++ plan: {m['ranks']} ranks, up to {m['thread_blocks']} thread blocks per rank "
        f"(groups of {m['group']}, at most {m['max_ops']} ops each), {m['memory_channels']} memory and "
        f"{m['port_channels']} port channels, {m['scratch_chunks']} scratch chunks; judged by the "
        f"interpreter. Message sizes must be a multiple of {m['input_chunks']} x 16 bytes (input)"
    )
    if m.get("fallback"):
        console.print(f"note: {m['fallback']}")
