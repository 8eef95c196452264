"""Property: topology JSON round-trips byte for byte, for random topologies and every zoo family."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import collsynth
from collsynth import Topology

SAMPLE_SPECS = [
    "ring:5",
    "biring:6",
    "torus:4x4x2,bw=50/50/25",
    "mesh:3x4",
    "hypercube:3",
    "complete:5",
    "bipartite:3,4",
    "circulant:16:3,4",
    "dcirculant:16:1,7",
    "kautz:2:12",
    "debruijn:2:16",
    "hamming:2,3",
    "twisted-torus:4x2",
    "switch:8",
    "traff:33",
    "rfs:2,4,8",
    "dragonfly:4,5",
    "fat-tree:4",
    "dgx-a100:2",
    "mi250:2",
    "dgx1",
    "hgx-h100:2",
    "diamond",
    "dbjmod:2:3",
    "drg:petersen",
    "dgx-a100:2,bw=300/12.5,lat=2us",
]


def test_every_sample_spec_round_trips():
    for spec in SAMPLE_SPECS:
        t = Topology.from_spec(spec)
        text = t.to_json()
        back = Topology.loads(text)
        assert back.to_json() == text, spec
        assert [n.name for n in back] == [n.name for n in t]


@st.composite
def topology_json(draw):
    nc = draw(st.integers(2, 6))  # a collective needs two ranks
    ns = draw(st.integers(0, 3))
    nodes = [{"name": f"c{i}", "type": "compute"} for i in range(nc)]
    nodes += [{"name": f"s{i}", "type": "switch", "group": "g"} for i in range(ns)]
    names = [n["name"] for n in nodes]
    bw = st.one_of(
        st.integers(1, 10**6),
        st.decimals(min_value="0.001", max_value="10000", places=3).map(lambda d: float(d) if d else 1),
        st.sampled_from(["100Gbps", "25GB/s", "12.5 GB/s", "50GiB/s", "400Mbps"]),
    )
    lat = st.one_of(st.integers(0, 10), st.sampled_from(["500ns", "2us", "1ms", 0.7]))
    links = []
    n = len(names)
    for i in range(n if n > 1 else 0):  # a ring keeps everything strongly connected
        links.append(
            {
                "src": names[i],
                "dst": names[(i + 1) % n],
                "bandwidth": draw(bw),
                "latency": draw(lat),
            }
        )
    for _ in range(draw(st.integers(0, 8))):
        a, b = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        if a != b:
            links.append(
                {
                    "src": a,
                    "dst": b,
                    "bandwidth": draw(bw),
                    "latency": draw(lat),
                    "bidirectional": draw(st.booleans()),
                }
            )
    return json.dumps({"name": "random", "nodes": nodes, "links": links})


@settings(max_examples=150, deadline=None)
@given(topology_json())
def test_random_topologies_round_trip(text):
    t = Topology.loads(text)
    canonical = t.to_json()
    again = Topology.loads(canonical)
    assert again.to_json() == canonical
    assert again.metrics() == t.metrics()


def test_families_listing_is_stable():
    assert collsynth.families() == collsynth.families()
