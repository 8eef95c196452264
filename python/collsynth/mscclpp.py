"""MSCCL++ execution plans: export a schedule, judge any plan (docs/mscclpp.md).

plan = collsynth.mscclpp.export(sched)               # judged before it is returned
text = sched.to_mscclpp_json()                        # the same, the text only
report = collsynth.mscclpp.validate(text)             # reader, executor rules, execution
"""

from __future__ import annotations

from collsynth import _args, _core
from collsynth._core import BadInput

# Thread blocks per slice group: every block of a plan stays resident (docs/mscclpp.md).
MAX_GROUP = 64


def export(schedule, threadblocks: int | None = None, text: bool = True) -> dict:
    """Lower a verified allgather, reduce-scatter or allreduce schedule to an MSCCL++ plan,
    judged by the interpreter before it is returned. ``threadblocks``: blocks per slice group
    (each takes a slice of every data op); None tries 4, 2, 1. Keys: ``json`` (the plan text),
    ``group``, ``collective``, ``ranks``, ``protocol``, ``inplace``, ``thread_blocks`` (per rank,
    max), ``max_ops``, ``scratch_chunks``, ``input_chunks``, ``output_chunks``,
    ``memory_channels``, ``port_channels``, ``fallback`` (a note, or None) and ``schedule`` (what
    was exported: a forest with fewer trees when the plan of the optimal one needs more thread
    blocks than stay resident).

    ``text=False`` (for a file or stdout): ``json`` is None; ``write`` streams the text into an
    existing file given by its path (``atomic_write(path, out["write"])``) and ``stream``
    passes it to a ``write(str)`` callable in pieces (``out["stream"](sys.stdout.write)``). The
    text is never built, and the judge runs on the plan the writer consumes (docs/mscclpp.md)."""
    if threadblocks is not None and not 1 <= _args.whole("threadblocks", threadblocks) <= MAX_GROUP:
        raise BadInput(f"--threadblocks {threadblocks}: 1 to {MAX_GROUP}")
    from collsynth.schedule import Schedule

    out = _core.mscclpp_export(
        _args.instance("schedule", schedule, Schedule).checked, threadblocks, bool(text)
    )
    if not text:
        writer = out.pop("writer")
        out["write"], out["stream"] = writer.write_json, writer.stream_json
    out["schedule"] = Schedule(out["schedule"])
    return out


def validate(text: str) -> dict:
    """Judge a plan text: ``ok``, ``refusal`` (the first problem, or None), ``parse``,
    ``structure`` and ``execution`` (problems), and the plan's shape when it reads."""
    return _core.mscclpp_validate(_args.text("text", text))


def looks_like_plan(text: str) -> bool:
    """A JSON object with ``gpus`` (an MSCCL++ plan), not a schedule file."""
    return _core.mscclpp_looks_like_plan(text)
