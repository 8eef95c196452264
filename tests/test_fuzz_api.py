"""Fuzz of the public Python API's arguments: every call answers or raises BadInput, never
another exception (OverflowError, TypeError, AttributeError, a panic as InternalError).
Derandomized with a fixed budget, so CI runs the same calls every time; `make bench` runs
the same calls 10^5 times over (bench/bench_api_fuzz.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_calls  # noqa: E402

import collsynth  # noqa: E402
from collsynth import BadInput, Topology, msccl, nccl_tests  # noqa: E402


@st.composite
def calls(draw):
    name, n, call = draw(st.sampled_from(api_calls.CALLS))
    args = [draw(st.sampled_from(api_calls.pool(name))) for _ in range(n)]
    return name, call, args


@settings(
    derandomize=True,
    max_examples=3000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(calls())
def test_the_api_raises_bad_input_and_nothing_else(case):
    name, call, args = case
    got = api_calls.outcome(call, args)
    assert got in ("ok", "BadInput"), f"{name}{tuple(args)!r}: {got}"


@pytest.mark.parametrize(
    "call",
    [
        lambda: nccl_tests.sweep("8", "8G", 10**20),
        lambda: nccl_tests.sweep(8, None, -1),
        lambda: nccl_tests.sweep(object(), "8G", 2),
        lambda: Topology.from_matrix([[0, 1], [1]]),
        lambda: Topology.from_matrix([[0, 1], [1, 0]], [[0], [0, 1]]),
        lambda: Topology.from_matrix([[0, "x"], [1, 0]]),
        lambda: msccl.export(api_calls.SCHEDULE, size_range=(0, 2**63)),
        lambda: msccl.export("schedule.json"),
        lambda: msccl.export(api_calls.SCHEDULE, size="\udcff"),
        lambda: msccl.validate(api_calls.XML, "ring:4"),
        lambda: collsynth.mscclpp.export(api_calls.TOPO),
        lambda: api_calls.SCHEDULE.runtime("1MiB", protocol=5),
        lambda: api_calls.SCHEDULE.runtime("1MiB", protocol="LL256"),
        lambda: api_calls.SCHEDULE.runtime("1MiB", protocol="\udcff"),
        lambda: collsynth.synthesize("ring:4", "allgather", "forestcoll", max_trees="\udcff"),
        lambda: msccl.export(api_calls.SCHEDULE, runtime={"a": 1}),
        lambda: msccl.export(api_calls.SCHEDULE, dialect=["old"]),
        # a crafted schedule file: a piece past its shard, costed without being verified first
        lambda: collsynth.Schedule.loads(api_calls.TEXTS[2]).simulate("1MiB"),
        lambda: collsynth.Schedule.loads(api_calls.TEXTS[2]).evaluate("1MiB"),
        lambda: collsynth.Schedule.loads(api_calls.TEXTS[2]).runtime("1MiB"),
        lambda: collsynth.Schedule.loads(api_calls.TEXTS[2]).link_loads("1MiB"),
        lambda: msccl.export(collsynth.Schedule.loads(api_calls.TEXTS[2])),
    ],
)
def test_listed_calls_raise_bad_input(call):
    with pytest.raises(BadInput):
        call()


def test_a_crafted_schedule_is_verified_before_it_is_costed():
    text = api_calls.TEXTS[2]
    with pytest.raises(BadInput, match="is not a non-empty interval"):
        collsynth.Schedule.loads(text).simulate("1MiB")
    good = collsynth.Schedule.loads(api_calls.SCHEDULE_TEXT)
    assert good.simulate("1MiB")["time_us"] > 0


def _gpus_and_nics(nic_type):
    g = nx.Graph()
    for i in range(4):
        g.add_node(f"gpu{i}", type="gpu")
        g.add_node(f"nic{i}", **({} if nic_type is None else {"type": nic_type}))
        g.add_edge(f"gpu{i}", f"nic{i}", capacity=np.float64(50.0), latency=np.float64(0.5))
        g.add_edge(f"nic{i}", "ib", capacity=np.float64(25))
    g.nodes["ib"]["type"] = "switch"
    return g


def test_networkx_first_hour():
    """numpy floats are numbers; gpu is a rank; a graph typed in part, a type we do not know
    and names in compute= that are not nodes are refused; errors name the edge."""
    t = Topology.from_networkx(_gpus_and_nics("switch"))
    assert t.n_ranks == 4 and t.links[0].bandwidth == 50 and t.links[0].latency == 0.5
    with pytest.raises(BadInput, match="node 'nic0' has no type while 'gpu0' has one"):
        Topology.from_networkx(_gpus_and_nics(None))
    with pytest.raises(BadInput, match="type 'nic' is not one of compute, gpu, switch"):
        Topology.from_networkx(_gpus_and_nics("nic"))
    with pytest.raises(BadInput, match="compute names 1 node"):
        Topology.from_networkx(_gpus_and_nics("switch"), compute=["gpu0", "gpu9"])
    g = _gpus_and_nics("switch")
    g.edges["gpu2", "nic2"]["capacity"] = "fast"
    with pytest.raises(BadInput, match=r"edge \('gpu2', 'nic2'\)\.bandwidth: cannot read"):
        Topology.from_networkx(g)
    g = _gpus_and_nics("switch")
    del g.edges["gpu1", "nic1"]["capacity"]
    with pytest.raises(BadInput, match=r"edge \('gpu1', 'nic1'\) has no bandwidth attribute 'capacity'"):
        Topology.from_networkx(g)
    # an untyped graph: every node a rank, as before
    assert Topology.from_networkx(nx.cycle_graph(5), bandwidth=np.float32(10)).n_ranks == 5
