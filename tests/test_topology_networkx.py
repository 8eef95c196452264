"""Topologies from and to networkx graphs and numpy matrices: conversions only, the JSON
reader in the core validates (so bad input is BadInput with the reader's message)."""

import warnings
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsynth
from collsynth import BadInput, Topology


def test_the_documented_example_file():
    """docs/topology-file.md's complete example loads, with every key, and its optimum is the
    one the page derives: box 0 receives 2 shards over 50 + 100/3 GB/s."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "topology-file.md").read_text()
    text = re.search(r"```json\n(.*?)```", page, re.S).group(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no unknown key
        t = Topology.loads(text)
    assert (t.name, t.n_ranks, len(t.nodes)) == ("two-boxes-two-rails", 4, 8)
    assert collsynth.bound(t, "allgather")["inv_throughput"] == "3/125"
    bw = {(lk.src, lk.dst): lk.bandwidth for lk in t.links}
    assert bw[("rail1", "box0.gpu1")] == Fraction(100, 3) and bw[("box0.gpu0", "rail0")] == 50


def test_from_networkx_with_switches_and_attributes():
    g = nx.Graph()
    for i in range(4):
        g.add_node(f"gpu{i}", group="box0")
    for i in range(4):
        g.add_edge(f"gpu{i}", "nvsw", capacity=300, lat=0.5)
    t = Topology.from_networkx(g, compute=[f"gpu{i}" for i in range(4)], latency="lat", name="box")
    assert t.name == "box" and t.n_ranks == 4
    assert [n.type for n in t.nodes] == ["compute"] * 4 + ["switch"]
    assert [n.group for n in t.nodes][:4] == ["box0"] * 4
    assert {(lk.bandwidth, lk.latency) for lk in t.links} == {(300, 0.5)}
    assert len(t.links) == 8  # undirected edges become both directions
    # 4 GPUs on one 300 GB/s switch: allgather 3/300 = 1/100
    assert collsynth.bound(t, "allgather")["inv_throughput"] == "1/100"


def test_directed_asymmetric_and_parallel_edges():
    g = nx.MultiDiGraph()
    g.add_edge(0, 1, capacity=Fraction(1, 3))
    g.add_edge(0, 1, capacity=Fraction(1, 6))  # parallel: adds up to 1/2
    g.add_edge(1, 2, capacity=2)
    g.add_edge(2, 0, capacity="100Gbps")
    t = Topology.from_networkx(g)
    bw = {(lk.src, lk.dst): lk.bandwidth for lk in t.links}
    assert bw == {("0", "1"): Fraction(1, 2), ("1", "2"): 2, ("2", "0"): Fraction(25, 2)}
    # a directed ring: each rank sends N-1 = 2 shards over its out-link; the slowest (1/2) binds
    assert collsynth.bound(t, "allgather")["inv_throughput"] == "4"


def test_compute_as_a_node_attribute_and_constant_bandwidth():
    g = nx.path_graph(3)
    nx.set_node_attributes(g, {0: True, 1: False, 2: True}, "gpu")
    t = Topology.from_networkx(g, compute="gpu", bandwidth=25, latency=1)
    assert [n.type for n in t.nodes] == ["compute", "switch", "compute"]
    assert {lk.bandwidth for lk in t.links} == {25}


def test_to_networkx_keeps_everything():
    t = Topology.from_spec("dgx-a100:2")
    g = t.to_networkx()
    assert isinstance(g, nx.DiGraph)
    assert g.number_of_nodes() == len(t.nodes) and g.number_of_edges() == len(t.links)
    assert g.nodes["box1.gpu0"] == {"type": "compute", "group": "box1", "rank": 8}
    assert g.edges["box0.gpu0", "box0.nvsw"]["capacity"] == 300
    assert Topology.from_networkx(g, name=t.name) == t


def test_from_matrix():
    bw = np.array([[0, 50, 0], [25, 0, 50], [50, 0, 0]])
    lat = np.full((3, 3), 2.5)
    t = Topology.from_matrix(bw, latency=lat)
    assert [n.name for n in t.nodes] == ["n0", "n1", "n2"]
    assert {(lk.src, lk.dst): lk.bandwidth for lk in t.links} == {
        ("n0", "n1"): 50,
        ("n1", "n0"): 25,
        ("n1", "n2"): 50,
        ("n2", "n0"): 50,
    }
    assert {lk.latency for lk in t.links} == {2.5}
    t2 = Topology.from_matrix([[0, 0.1], [0.1, 0]])
    assert {lk.bandwidth for lk in t2.links} == {Fraction(1, 10)}


@pytest.mark.parametrize(
    "bw, lat, fragment",
    [
        ([[0, -1], [1, 0]], None, "bandwidth must be positive"),
        ([[0, float("nan")], [1, 0]], None, "bandwidth"),
        ([[0, float("inf")], [1, 0]], None, "bandwidth"),
        ([[0, 1, 2], [1, 0, 2]], None, "square"),
        ([1, 2], None, "square"),
        ([[0, 1], [1, 0]], [[0, 1]], "latency matrix shape"),
        ([[0, 1], [1, 0]], [[0, -1], [1, 0]], "latency must be"),
        ([[0, 1], [1, 0]], [[0, float("nan")], [1, 0]], "latency"),
        ([[1, 1], [1, 0]], None, "self-loop"),
        ([[0, 1], [0, 0]], None, "not all mutually reachable"),
    ],
)
def test_from_matrix_bad_input(bw, lat, fragment):
    with pytest.raises(BadInput, match=fragment):
        Topology.from_matrix(np.array(bw, dtype=float) if not isinstance(bw[0], int) else bw, latency=lat)


def test_from_networkx_bad_input():
    g = nx.DiGraph()
    g.add_edge("a", "b", capacity=-3)
    g.add_edge("b", "a", capacity=1)
    with pytest.raises(BadInput, match="bandwidth must be positive"):
        Topology.from_networkx(g)
    g = nx.DiGraph()
    g.add_edge("a", "b")
    with pytest.raises(BadInput, match="capacity"):
        Topology.from_networkx(g)
    with pytest.raises(BadInput, match="compute must be"):
        Topology.from_networkx(nx.path_graph(2), compute=5)
    with pytest.raises(BadInput, match="networkx graph"):
        Topology.from_networkx([[0, 1]])


@st.composite
def strongly_connected_digraphs(draw):
    """Random directed, asymmetric graphs: a Hamiltonian cycle (so the ranks are mutually
    reachable) plus random extra arcs, each with its own exact bandwidth and latency."""
    n = draw(st.integers(2, 7))
    bw = st.fractions(min_value=Fraction(1, 8), max_value=400, max_denominator=64)
    lat = st.integers(0, 10_000).map(lambda x: x / 1000)  # us, as the JSON reader takes them
    arcs = {(i, (i + 1) % n) for i in range(n)}
    arcs |= draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=12))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for u, v in sorted(arcs):
        if u != v:
            g.add_edge(u, v, capacity=draw(bw), latency=draw(lat))
    return g


@settings(max_examples=60, deadline=None)
@given(strongly_connected_digraphs())
def test_networkx_round_trip(g):
    t = Topology.from_networkx(g, latency="latency")
    back = t.to_networkx()
    assert sorted(back.edges(data="capacity")) == sorted(
        (str(u), str(v), c) for u, v, c in g.edges(data="capacity")
    )
    assert Topology.from_networkx(back, latency="latency") == t


@settings(max_examples=60, deadline=None)
@given(strongly_connected_digraphs())
def test_matrix_round_trip(g):
    n = g.number_of_nodes()
    m = [[Fraction(0)] * n for _ in range(n)]
    for u, v, c in g.edges(data="capacity"):
        m[u][v] = c
    t = Topology.from_matrix(np.array(m, dtype=object))
    bw = {(lk.src, lk.dst): lk.bandwidth for lk in t.links}
    assert bw == {(f"n{u}", f"n{v}"): c for u, v, c in g.edges(data="capacity")}
