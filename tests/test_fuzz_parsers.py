"""Fuzz of every parser through the Python API: topology JSON, zoo specs and
expressions, size / bandwidth / latency strings, schedule JSON and MSCCL XML. Whatever the
input, the answer is a result or BadInput, never another exception (OverflowError, a panic
surfacing as InternalError, MemoryError). Derandomized with a fixed budget, so CI runs the
same examples every time."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collsynth
from collsynth import BadInput, Schedule, Topology, msccl
from collsynth._core import size_bytes

BUDGET = settings(
    derandomize=True,
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

# Numbers that break parsers: huge, negative, fractional, exponents, not numbers at all.
NUMBERS = st.sampled_from(
    [
        "0", "1", "-1", "2", "7", "1e+2", "1E-3", "1e400", "-0", "0.5", "1/3", "1/0", "nan", "inf", "",
        "99999999999999999999999999999999999999", "9223372036854775807", "18446744073709551616",
        "1000000000", "1000000000000", "2000000000", "4294967296", "0x10", " 1", "1 ", "+3", "--1",
    ]
)  # fmt: skip
UNITS = st.sampled_from(
    ["", "B", "KB", "KiB", "MB", "MiB", "GiB", "TiB", "K", "M", "Gbps", "GB/s", "us", "ns", "x"]
)


def quietly(call):
    """Run ``call``: BadInput is an answer, every other exception fails the test."""
    try:
        return call()
    except BadInput:
        return None


@BUDGET
@given(NUMBERS, UNITS)
def test_size_strings(number, unit):
    text = f"{number}{unit}"
    got = quietly(lambda: size_bytes(text))
    assert got is None or "/" in got or int(got) >= 0
    quietly(lambda: collsynth.synthesize("ring:3", "allgather", "ring", size=text))


SPEC_PARTS = st.sampled_from(
    [
        "ring", "torus", "mesh", "hypercube", "complete", "circulant", "kautz", "debruijn", "hamming",
        "switch", "traff", "rfs", "dragonfly", "fat-tree", "dgx-a100", "hgx-h100", "line^", "power^",
        "degree*", "product(", "bi(", ":", ",", ";", "x", "(", ")", "bw=", "lat=", "/", "=", "^",
    ]
)  # fmt: skip


@BUDGET
@given(st.lists(st.one_of(SPEC_PARTS, NUMBERS), min_size=1, max_size=12))
def test_zoo_specs(parts):
    spec = "".join(parts)
    t = quietly(lambda: Topology.from_spec(spec))
    if t is not None:
        assert t.n_ranks >= 1


NODE = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["a", "b", "c", "s", ""]),
        "type": st.sampled_from(["compute", "switch", "gpu"]),
    },
    optional={"group": st.one_of(st.none(), st.text(max_size=3), st.integers())},
)
QUANTITY = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.builds(lambda n, u: f"{n}{u}", NUMBERS, UNITS),
    st.booleans(),
    st.none(),
)
LINK = st.fixed_dictionaries(
    {"src": st.sampled_from(["a", "b", "c", "s", "z"]), "dst": st.sampled_from(["a", "b", "c", "s"])},
    optional={
        "bandwidth": QUANTITY,
        "latency": QUANTITY,
        "bidirectional": st.one_of(st.booleans(), st.integers()),
    },
)
TOPOLOGY = st.fixed_dictionaries(
    {"nodes": st.lists(NODE, max_size=5), "links": st.lists(LINK, max_size=8)},
    optional={"name": st.one_of(st.text(max_size=5), st.integers()), "version": QUANTITY},
)


@BUDGET
@given(TOPOLOGY)
def test_topology_json(doc):
    import warnings

    text = json.dumps(doc)  # Python's own float spelling (1e+20, Infinity) included
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = quietly(lambda: Topology.loads(text))
    if t is not None:
        assert Topology.loads(t.to_json()) == t
        quietly(lambda: collsynth.bound(t, "allgather"))


@BUDGET
@given(st.text(max_size=40))
def test_topology_json_raw_text(text):
    quietly(lambda: Topology.loads(text))


def _mutations(doc, path=()):
    """Every (path, leaf) of a JSON document."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _mutations(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _mutations(v, (*path, i))
    else:
        yield path, doc


def _set(doc, path, value):
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


GOOD_SCHEDULE = json.loads(collsynth.synthesize("ring:4", "allreduce", "ring").to_json())
SCHEDULE_LEAVES = [p for p, _ in _mutations(GOOD_SCHEDULE) if "topology" not in p[:1] or len(p) > 2]
HOSTILE_VALUES = st.one_of(
    st.integers(min_value=-(2**66), max_value=2**66),
    st.sampled_from([10**12, 2**63, -1, 0, 1, 3, None, "", "1/0", "x", [], {}, 1e300, 0.5]),
)


@BUDGET
@given(st.lists(st.tuples(st.sampled_from(SCHEDULE_LEAVES), HOSTILE_VALUES), min_size=1, max_size=3))
def test_schedule_json(edits):
    doc = json.loads(json.dumps(GOOD_SCHEDULE))
    for path, value in edits:
        _set(doc, path, value)
    s = quietly(lambda: Schedule.loads(json.dumps(doc)))
    if s is not None and quietly(s.verify) is not None:
        quietly(lambda: s.evaluate("1MiB"))
        quietly(lambda: s.simulate("1MiB", pipeline=2))


GOOD_XML = msccl.export(collsynth.synthesize("ring:4", "allreduce", "ring"))["xml"]
XML_ATTRS = sorted({a.split("=")[0] for a in GOOD_XML.replace("<", " ").split() if "=" in a})
XML_VALUES = st.one_of(NUMBERS, st.sampled_from(["s", "r", "rrc", "i", "o", "Simple", "LL", "allreduce"]))


@BUDGET
@given(
    st.lists(st.tuples(st.sampled_from(XML_ATTRS), st.integers(0, 40), XML_VALUES), min_size=1, max_size=4)
)
def test_msccl_xml(edits):
    text = GOOD_XML
    for attr, nth, value in edits:
        pieces = text.split(f' {attr}="')
        if len(pieces) < 2:
            continue
        i = 1 + nth % (len(pieces) - 1)
        rest = pieces[i].split('"', 1)
        pieces[i] = f'{value}"{rest[1]}'
        text = f' {attr}="'.join(pieces)
    report = quietly(lambda: msccl.validate(text))
    assert report is None or isinstance(report["ok"], bool)
    quietly(lambda: msccl.program(text))


@settings(BUDGET, max_examples=60)
@given(st.text(alphabet='<>/=" \nalgogputbstep', max_size=60))
def test_msccl_xml_raw_text(text):
    quietly(lambda: msccl.validate(text))


@BUDGET
@given(
    st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.floats(), st.text(max_size=3)),
    st.sampled_from(["root", "pipeline", "size", "channels", "size_range"]),
)
def test_api_arguments(value, name):
    t = Topology.from_spec("ring:4")
    s = collsynth.synthesize(t, "broadcast", "ring")
    calls = {
        "root": lambda: collsynth.synthesize(t, "broadcast", "ring", root=value),
        "pipeline": lambda: s.evaluate("1KiB", pipeline=value),
        "size": lambda: s.simulate(value),
        "channels": lambda: msccl.export(s, channels=value),
        "size_range": lambda: msccl.export(s, size_range=(0, value)),
    }
    quietly(calls[name])
