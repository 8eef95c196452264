"""MSCCL XML: export a schedule, judge an XML file, read one as a program for the MPI executor.

xml = sched.to_msccl_xml(runtime="rccl", channels=2)   # always validated before returned
report = collsynth.msccl.validate(text, topology=topo)  # every runtime's rules + execution
plan = collsynth.msccl.exec_plan(program, inplace=False)  # what the MPI executor runs
"""

from __future__ import annotations

import json

from collsynth import _args, _core
from collsynth._core import BadInput

# minBytes and maxBytes are signed 64-bit where the runtimes and our own reader of the XML
# hold them: 2^63 would be written, then refused when read back.
MAX_BYTES = 2**63 - 1

# The runtimes an XML is written for (docs/msccl.md, "Runtime targets"); the earlier
# --msccl-dialect names new and old stand for msccl-nccl and msccl-legacy.
RUNTIMES = ("msccl-nccl", "rccl", "msccl-legacy")
DIALECT_RUNTIME = {"new": "msccl-nccl", "old": "msccl-legacy"}
PROTOCOLS = ("Simple", "LL", "LL128")


def parse_size_range(text: str | None, option: str = "--size-range") -> tuple[int, int] | None:
    """``MIN-MAX`` in any size unit (``1MiB-1GiB``; ``0-0`` means unbounded in the new
    dialect); errors name ``option``."""
    if text is None:
        return None
    lo, sep, hi = text.partition("-")
    if not sep or not lo or not hi:
        raise BadInput(f"{option} {text!r}: expected MIN-MAX, e.g. 1MiB-1GiB")
    try:
        a, b = (_whole_bytes(x) for x in (lo, hi))
    except BadInput as e:
        raise BadInput(f"{option} {text!r}: {e}") from None
    return _checked_range((a, b), f"{option} {text!r}: MIN and MAX")


def _whole_bytes(size: str) -> int:
    exact = _core.size_bytes(size)
    if "/" in exact:
        raise BadInput(f"{size} is not a whole number of bytes")
    return int(exact)


def _checked_range(rng, name: str) -> tuple[int, int]:
    """(minBytes, maxBytes) as whole numbers the runtimes hold; 0 for MAX is unbounded."""
    try:
        a, b = rng
    except (TypeError, ValueError):
        raise BadInput(f"{name}: expected (MIN, MAX) bytes, got {rng!r}") from None
    a, b = (_args.whole(name, x, hi=MAX_BYTES) for x in (a, b))
    if b and a > b:
        raise BadInput(f"{name.removesuffix(': MIN and MAX')}: MIN is above MAX")
    return a, b


def runtime_of(runtime: str | None, dialect: str | None = None) -> str:
    """The runtime named by ``runtime`` or by the older ``dialect`` (``new``, ``old``)."""
    if runtime is not None and dialect is not None:
        raise BadInput("--runtime and --msccl-dialect name the same thing: give one")
    if dialect is not None:
        if not isinstance(dialect, str) or dialect not in DIALECT_RUNTIME:
            raise BadInput(f"--msccl-dialect {dialect!r}: expected new or old")
        return DIALECT_RUNTIME[dialect]
    runtime = runtime or RUNTIMES[0]
    if not isinstance(runtime, str) or runtime not in RUNTIMES:
        raise BadInput(f"--runtime {runtime!r}: expected {', '.join(RUNTIMES)}")
    return runtime


def export(
    schedule,
    runtime: str | None = None,
    protocol: str = "Simple",
    channels: int | None = None,
    unfused: bool = False,
    pipeline: int | None = None,
    size_range: str | tuple[int, int] | None = None,
    size: int | str | None = None,
    text: bool = True,
    dialect: str | None = None,
) -> dict:
    """Lower a verified schedule to MSCCL XML for ``runtime`` (``msccl-nccl``, ``rccl`` or
    ``msccl-legacy``: packed into that runtime's limits) (validated in both buffer modes, unbounded and
    finite connection buffers, before it is returned). ``protocol="auto"``: the protocol the
    runtime model picks at the middle of ``size_range``, else at ``size`` (default 1 GiB).
    Keys: ``xml``, ``program`` (dict), ``pipeline``, ``nchunksperloop``, ``nchannels``,
    ``thread_blocks``, ``max_steps``, ``s_chunks``, ``min_bytes``, ``max_bytes``, ``fallback``
    (a note or None), ``judged`` (``{"bytes", "protocol", "time_us"}``: the runtime model's time
    of the written program in its own thread blocks at the judge size, or None) and
    ``schedule`` (what was exported: a fixed-k forest when the optimal one does not fit the
    runtime).

    ``text=False`` (for writing a file: ``atomic_write(path, out["write"])``): no ``xml`` and
    no ``program`` (both None), but ``write``, which streams the XML into an existing file
    given by its path, and ``stream``, which passes it to a ``write(str)`` callable in pieces
    (``out["stream"](sys.stdout.write)``); the text is never built, and the checks run on the
    program the writer consumes (docs/msccl.md)."""
    from collsynth.schedule import Schedule

    core = _args.instance("schedule", schedule, Schedule).checked
    args = export_args(runtime, protocol, channels, unfused, pipeline, size_range, size, dialect)
    runtime = args[0]
    out = _core.msccl_export(core, *args, bool(text))
    if text:
        out["program"] = json.loads(out["program"])
    else:
        writer = out.pop("writer")
        out["write"], out["stream"] = writer.write_xml, writer.stream_xml

    out["schedule"] = Schedule(out["schedule"])
    out["runtime"] = runtime
    out["dialect"] = "old" if runtime == "msccl-legacy" else "new"
    return out


# The keyword arguments of `export_args` (those of `export` that say how to lower).
EXPORT_ARGS = ("runtime", "protocol", "channels", "unfused", "pipeline", "size_range", "size", "dialect")


def export_args(
    runtime: str | None = None,
    protocol: str = "Simple",
    channels: int | None = None,
    unfused: bool = False,
    pipeline: int | None = None,
    size_range: str | tuple[int, int] | None = None,
    size: int | str | None = None,
    dialect: str | None = None,
) -> tuple[str, str, int | None, bool, int | None, tuple[int, int] | None, str | None]:
    """:func:`export`'s arguments checked, in the order the core takes them: (runtime,
    protocol, channels, unfused, pipeline, size range, judge size). ``synthesize(...,
    msccl=...)`` passes the same to ``auto``, which ranks candidates by their exports."""
    runtime = runtime_of(runtime, dialect)
    if protocol not in PROTOCOLS and protocol != "auto":
        raise BadInput(f"--protocol {protocol!r}: expected Simple, LL, LL128 or auto")
    if channels is not None and not 1 <= _args.whole("channels", channels) <= 32:
        raise BadInput(f"--channels {channels}: the runtimes take 1 to 32 channels")
    if pipeline is not None and _args.whole("pipeline", pipeline) < 1:
        raise BadInput(f"--pipeline must be at least 1, got {pipeline}")
    if isinstance(size_range, str):
        rng = parse_size_range(size_range)
    else:
        rng = None if size_range is None else _checked_range(size_range, "size_range")
    size_text = None if size is None else _args.text("size", size)
    return (runtime, protocol, channels, bool(unfused), pipeline, rng, size_text)


def export_windows(
    topo,
    collective: str,
    algorithm: str = "auto",
    size_range: str | tuple[int, int] = "1KiB-4GiB",
    *,
    root: int = 0,
    runtime: str | None = None,
    dialect: str | None = None,
    protocol: str | None = None,
    channels: int | None = None,
    unfused: bool = False,
    text: bool = True,
    **options,
) -> list[dict]:
    """One XML per size window of ``size_range`` (nccl-tests sizes, which is the runtime's
    nBytes), each the fastest variant there by the simulator: a list of dicts with
    ``min_bytes``, ``max_bytes``, ``variant``, ``algorithm``, ``pipeline``,
    ``time_us_at_min``, ``time_us_at_max``, ``xml``, ``nchunksperloop``, ``nchannels``,
    ``protocol`` (without ``protocol``, each window's in the one the runtime model assumed) and
    ``fallback``. Every XML is validated before it is returned; the windows never overlap.

    ``text=False`` (for writing files): each ``xml`` is None, and each window has ``write``
    and ``stream`` as :func:`export`'s: the same bytes, never built as one string."""
    from collsynth.schedule import as_topology, option_texts

    topo = as_topology(topo)
    rng = parse_size_range(size_range, "--size-windows") if isinstance(size_range, str) else size_range
    lo, hi = _checked_range(rng, "size_range")
    runtime = runtime_of(runtime, dialect)
    opts = option_texts(options)
    rows = _core.msccl_export_windows(
        topo._core,
        _args.text("collective", collective),
        _args.text("algorithm", algorithm),
        _args.whole("root", root),
        opts,
        (lo, hi),
        runtime,
        protocol,
        channels,
        bool(unfused),
        bool(text),
    )
    for w in rows:
        if not text:
            writer = w.pop("writer")
            w["write"], w["stream"] = writer.write_xml, writer.stream_xml
    return rows


def validate(text: str, topology=None, size: str | int | None = None) -> dict:
    """Judge an MSCCL XML text: ``ok``, ``runtimes`` ({"msccl-nccl": [problems], "rccl":
    [...], "msccl-legacy": [...]}: each runtime's parser, what its fields store, and the
    structural rules), ``dialects`` (the same for ``new`` = msccl-nccl and ``old`` =
    msccl-legacy, as before runtimes had names), ``execution`` (problems of the symbolic
    run), the header, and with a topology ``link_loads``, ``bandwidth_time_per_byte`` and
    ``judged``: the runtime model's time of the program as written at ``size`` (the
    nccl-tests size, default 1 GiB; None for a program that is not ok), with its algbw,
    busbw and time optimality, the numbers ``synth --size`` prints for the XML it writes."""
    from collsynth.topology import Topology

    topo = None if topology is None else _args.instance("topology", topology, Topology)._core
    size_text = None if size is None else _args.text("size", size)
    v = _core.msccl_validate(_args.text("text", text), topo, size_text)
    v["dialects"] = {d: v["runtimes"][r] for d, r in DIALECT_RUNTIME.items()}
    return v


def require_loaded(path: str, problems_by_runtime: dict, runtime: str | None) -> None:
    """BadInput naming the first problem unless ``runtime`` (when given) loads the file as
    written (``problems_by_runtime``: :func:`validate`'s ``runtimes``)."""
    if runtime and (problems := problems_by_runtime[runtime]):
        raise BadInput(f"{path}: {runtime} does not load it as written: {problems[0]}")


def program(text: str) -> dict:
    """The program of an XML text (as the MPI executor takes it); BadInput if unreadable."""
    return json.loads(_core.msccl_program(_args.text("text", text)))


def exec_plan(program: dict | str, inplace: bool = False) -> dict:
    """What the MPI executor runs: `program` (the JSON dict, or XML text) judged exactly as
    ``collsynth verify`` judges an XML file (BadInput "not a valid MSCCL program: ..." naming
    the same problem, or if it does not claim the mode) and compiled in the core, per rank, to
    ordered byte moves with the mode's buffer aliasing resolved (see ``_core.msccl_exec_plan``)."""
    if isinstance(program, str):
        return _core.msccl_exec_plan(_args.text("program", program), "xml", bool(inplace))
    if not isinstance(program, dict):
        raise BadInput(
            f"the program must be a dict (a JSON object) or XML text, got {type(program).__name__}"
        )
    try:
        text = json.dumps(program)
    except (TypeError, ValueError) as e:
        raise BadInput(f"the program is not JSON data: {e}") from None
    return _core.msccl_exec_plan(text, "json", bool(inplace))
