"""Calls of the public Python API with hostile arguments, shared by the fuzz test
(tests/test_fuzz_api.py, derandomized, in `make test`) and the long run of `make bench`
(bench/bench_api_fuzz.py). A call's outcome is "ok", "BadInput", or a failure: any other
exception (OverflowError, TypeError, a panic surfacing as InternalError) is a bug."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import collsynth
from collsynth import BadInput, Schedule, Topology, msccl, mscclpp, nccl_tests

TOPO = Topology.from_spec("ring:4")
SCHEDULE = collsynth.synthesize(TOPO, "allgather", "ring")
BROADCAST = collsynth.synthesize(TOPO, "broadcast", "ring")
SCHEDULE_TEXT = SCHEDULE.to_json()
XML = msccl.export(SCHEDULE)["xml"]
PLAN = mscclpp.export(SCHEDULE)["json"]

# Values that break argument conversion: out of every integer type's range, of the wrong type,
# not finite, empty, not UTF-8, numpy scalars.
VALUES = [
    -1, 0, 1, 2, 3, 5, 7, 64, 2**31, 2**32, 2**63 - 1, 2**63, 2**64, 10**20, -(2**70),
    0.5, 1.0, -0.0, math.nan, math.inf, 1e300, Fraction(1, 3),
    np.float64(1.5), np.int64(4), np.float32(2.0), np.int8(-1),
    "", " ", "x", "0", "4", "-1", "1KiB", "8G", "8GB", "1e12TiB", "99999999999999999999", "1/3",
    "nan", "ring:4", "ring:3", "ring:0", "torus:2x2", "ring::4", "\udcff", "a\x00b", "\n",
    "Simple", "LL", "LL128", "auto", "rccl", "msccl-nccl", "new",
    "allgather", "allreduce", "broadcast", "ring", "direct", "forestcoll",
    None, True, False, [], {}, (), (0,), (0, 2**63), (1, 0), (0, 10**24), [1, 2, 3], {"a": 1},
    b"x", object(), TOPO, SCHEDULE,
]  # fmt: skip

# Documents that parse as something close to valid.
TEXTS = [
    SCHEDULE_TEXT,
    SCHEDULE_TEXT.replace('"step": 0', '"step": 1000000000000', 1),
    SCHEDULE_TEXT.replace('"0", "1"', '"223593", "1"', 1),
    SCHEDULE_TEXT[: len(SCHEDULE_TEXT) // 2],
    XML,
    XML.replace('srcoff="0"', 'srcoff="9223372036854775807"', 1),
    XML.replace('cnt="1"', 'cnt="-1"', 1),
    XML[: len(XML) // 2],
    PLAN,
    TOPO.to_json(),
    "{}",
    "[]",
    "<algo/>",
    "\x00",
]


def _kw(**kw):
    return {k: v for k, v in kw.items() if v is not _ABSENT}


_ABSENT = object()

# (name, number of arguments drawn, the call): each argument is drawn from VALUES (or, for a
# parser, from TEXTS and VALUES).
CALLS = [
    ("Topology.from_spec", 1, lambda a: Topology.from_spec(a)),
    ("Topology.loads", 1, lambda a: Topology.loads(a)),
    ("Topology.resolve", 1, lambda a: Topology.resolve(a)),
    ("Topology.from_matrix", 2, lambda a, b: Topology.from_matrix(a, b)),
    ("Topology.from_matrix/ragged", 1, lambda a: Topology.from_matrix([[0, 1], [a]])),
    ("Topology.from_matrix/values", 2, lambda a, b: Topology.from_matrix([[0, a], [b, 0]])),
    ("Topology.alltoall", 1, lambda a: TOPO.alltoall(a)),
    ("synthesize", 3, lambda a, b, c: collsynth.synthesize(a, b, c)),
    ("synthesize/root", 1, lambda a: collsynth.synthesize(TOPO, "broadcast", "ring", root=a)),
    ("synthesize/size", 1, lambda a: collsynth.synthesize(TOPO, "allgather", "ring", size=a)),
    ("synthesize/option", 2, lambda a, b: collsynth.synthesize(TOPO, "allgather", "forestcoll", max_trees=a)),
    ("bound", 3, lambda a, b, c: collsynth.bound(a, b, root=c)),
    ("time_only", 2, lambda a, b: collsynth.time_only(TOPO, "allgather", "bfb", size=a, root=b)),
    ("Schedule.loads", 1, lambda a: Schedule.loads(a)),
    ("Schedule.loads+simulate", 1, lambda a: Schedule.loads(a).simulate("1MiB")),
    ("Schedule.loads+evaluate", 1, lambda a: Schedule.loads(a).evaluate("1MiB")),
    ("Schedule.loads+runtime", 1, lambda a: Schedule.loads(a).runtime("1MiB")),
    ("Schedule.loads+export", 1, lambda a: msccl.export(Schedule.loads(a))),
    ("Schedule.evaluate", 2, lambda a, b: SCHEDULE.evaluate(a, b)),
    ("Schedule.simulate", 2, lambda a, b: SCHEDULE.simulate(a, b)),
    ("Schedule.runtime", 2, lambda a, b: SCHEDULE.runtime(a, b)),
    ("Schedule.cost", 1, lambda a: SCHEDULE.cost(a)),
    ("Schedule.link_loads", 1, lambda a: SCHEDULE.link_loads(a)),
    ("Schedule.transfers", 3, lambda a, b, c: SCHEDULE.transfers(**_kw(shard=a, step=b, size=c))),
    ("Schedule.transfers/shard", 1, lambda a: SCHEDULE.transfers(shard=a)),
    ("Schedule.to_mscclpp_json", 1, lambda a: SCHEDULE.to_mscclpp_json(a)),
    ("msccl.export", 1, lambda a: msccl.export(a)),
    ("msccl.export/runtime", 2, lambda a, b: msccl.export(SCHEDULE, runtime=a, dialect=b)),
    ("msccl.export/protocol", 1, lambda a: msccl.export(SCHEDULE, protocol=a)),
    ("msccl.export/channels", 1, lambda a: msccl.export(SCHEDULE, channels=a)),
    ("msccl.export/pipeline", 1, lambda a: msccl.export(BROADCAST, pipeline=a)),
    ("msccl.export/size_range", 1, lambda a: msccl.export(SCHEDULE, size_range=a)),
    ("msccl.export/size_range2", 2, lambda a, b: msccl.export(SCHEDULE, size_range=(a, b))),
    ("msccl.export/size", 1, lambda a: msccl.export(SCHEDULE, size=a)),
    ("msccl.export/unfused", 1, lambda a: msccl.export(SCHEDULE, unfused=a)),
    ("msccl.validate", 2, lambda a, b: msccl.validate(a, b)),
    ("msccl.validate/text", 1, lambda a: msccl.validate(a)),
    ("msccl.program", 1, lambda a: msccl.program(a)),
    ("msccl.exec_plan", 2, lambda a, b: msccl.exec_plan(a, b)),
    ("mscclpp.export", 2, lambda a, b: mscclpp.export(a, b)),
    ("mscclpp.validate", 1, lambda a: mscclpp.validate(a)),
    ("nccl_tests.sweep", 3, lambda a, b, c: nccl_tests.sweep(a, b, c)),
]

PARSERS = {
    "Topology.loads",
    "Schedule.loads",
    "Schedule.loads+simulate",
    "Schedule.loads+evaluate",
    "Schedule.loads+runtime",
    "Schedule.loads+export",
    "msccl.validate",
    "msccl.validate/text",
    "msccl.program",
    "msccl.exec_plan",
    "mscclpp.validate",
}


# Pipeline depths are drawn small: what a deep pipeline allocates is the memory budget's to
# refuse, and its tests cover it.
DEPTHS = {"msccl.export/pipeline"}


def pool(name: str) -> list:
    """The values an argument of call ``name`` is drawn from."""
    if name in DEPTHS:
        return [v for v in VALUES if not isinstance(v, int) or v < 2**16]
    return TEXTS + VALUES if name in PARSERS else VALUES


def outcome(call, args) -> str:
    """ "ok", "BadInput", or the name of the other exception raised (a failure)."""
    try:
        call(*args)
    except BadInput:
        return "BadInput"
    except Exception as e:  # noqa: BLE001 - every other exception is what the fuzz counts
        return f"{type(e).__name__}: {e}"
    return "ok"
