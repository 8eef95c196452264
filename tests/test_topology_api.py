"""The Python API of the topology model."""

from fractions import Fraction

import pytest

import collsynth
from collsynth import BadInput, Topology

TWO_BOXES = """{"name": "two-boxes",
 "nodes": [{"name": "gpu0", "type": "compute", "group": "box0"},
           {"name": "gpu1", "type": "compute", "group": "box1"},
           {"name": "nvsw0", "type": "switch"}],
 "links": [{"src": "gpu0", "dst": "nvsw0", "bandwidth": 300, "latency": 0.7, "bidirectional": true},
           {"src": "gpu1", "dst": "nvsw0", "bandwidth": "100Gbps", "latency": "500ns",
            "bidirectional": true}]}"""


def test_load_units_ranks_and_iteration():
    t = Topology.loads(TWO_BOXES)
    assert t.name == "two-boxes" and len(t) == 2
    assert [n.rank for n in t] == [0, 1, None]
    assert [n.group for n in t] == ["box0", "box1", None]
    bw = {(lk.src, lk.dst): lk.bandwidth for lk in t.links}
    assert bw[("gpu1", "nvsw0")] == Fraction(25, 2)
    assert {lk.latency for lk in t.links} == {0.7, 0.5}
    m = t.metrics()
    assert (m["N"], m["switches"], m["links"], m["diameter"], m["bidirectional"]) == (
        2,
        1,
        4,
        2,
        True,
    )
    assert m["min_egress_GBps"] == 12.5 and m["max_egress_GBps"] == 300


def test_save_load_round_trip(tmp_path):
    t = Topology.from_spec("dgx-a100:2")
    path = tmp_path / "sub" / "a100.json"
    t.save(path)
    back = Topology.load(path)
    assert back == t and back.to_json() == path.read_text()
    assert [n.name for n in back] == [n.name for n in t]


def test_unknown_keys_warn():
    text = TWO_BOXES.replace('"name": "two-boxes",', '"name": "two-boxes", "colour": "red",')
    with pytest.warns(collsynth.TopologyWarning, match="unknown key 'colour'"):
        Topology.loads(text)


@pytest.mark.parametrize(
    "mutation, message",
    [
        (lambda s: s[:-5], "malformed JSON"),
        (lambda s: s.replace('"bandwidth": 300', '"bandwidth": 0'), "bandwidth must be positive"),
        (lambda s: s.replace('"bandwidth": 300', '"bandwidth": -1'), "bandwidth must be positive"),
        (lambda s: s.replace('"bandwidth": 300', '"bandwidth": "NaN"'), "links[0].bandwidth"),
        (
            lambda s: s.replace('"bandwidth": 300', '"bandwidth": [1]'),
            "links[0].bandwidth: expected",
        ),
        (lambda s: s.replace('"latency": 0.7', '"latency": -2'), "latency must be"),
        (
            lambda s: s.replace('"dst": "nvsw0", "bandwidth": 300', '"dst": "gpu9", "bandwidth": 300'),
            "unknown node 'gpu9'",
        ),
        (lambda s: s.replace('"name": "gpu1"', '"name": "gpu0"'), "duplicate node name 'gpu0'"),
        (
            lambda s: s.replace('"dst": "nvsw0", "bandwidth": 300', '"dst": "gpu0", "bandwidth": 300'),
            "self-loop",
        ),
        (lambda s: s.replace('"type": "switch"', '"type": "router"'), "nodes[2].type"),
        (
            lambda s: s.replace('"bidirectional": true}]', '"bidirectional": false}]'),
            "not all mutually reachable",
        ),
    ],
)
def test_every_bad_input_is_bad_input(mutation, message):
    with pytest.raises(BadInput) as e:
        Topology.loads(mutation(TWO_BOXES), source="t.json")
    assert message in str(e.value) and str(e.value).startswith("t.json: ")


def test_missing_file_and_bad_spec_are_bad_input(tmp_path):
    with pytest.raises(BadInput, match="cannot read file"):
        Topology.load(tmp_path / "nope.json")
    for spec in [
        "nosuch:3",
        "torus:4x",
        "ring:0",
        "torus:4x4,colour=red",
        "ring:8,bw=0",
        "ring:8,bw=1/2/3",
    ]:
        with pytest.raises(BadInput):
            Topology.from_spec(spec)


def test_families_cover_the_design_zoo():
    names = {f["name"] for f in collsynth.families()}
    expected = {
        "ring",
        "biring",
        "torus",
        "mesh",
        "twisted-torus",
        "hypercube",
        "complete",
        "bipartite",
        "circulant",
        "dcirculant",
        "hamming",
        "kautz",
        "debruijn",
        "switch",
        "fat-tree",
        "dragonfly",
        "rfs",
        "dgx-a100",
        "mi250",
        "dgx1",
        "hgx-h100",
        "traff",
        "dbjmod",
        "diamond",
        "drg",
    }
    assert expected <= names, expected - names
    for f in collsynth.families():
        assert f["help"] and "bw" in f["options"]
