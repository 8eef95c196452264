"""ForestColl's allreduce LP (appendix E) and single-root broadcast / reduce, through the
CLI and the Python API (release build): exact values: LP = RS+AG on A100 2x8
(as §4.6 reports for every topology the paper tried) and our weak-node counterexample where LP > RS+AG."""

import json
from fractions import Fraction

import pytest

from collsynth import Topology, bound, synthesize
from tests.conftest import run_cli, run_json


def weak_node(path):
    """Our weak-node counterexample: triangle 0-1-2 at 10 per direction, node 3 with 1 to each."""
    nodes = [{"name": f"n{i}", "type": "compute"} for i in range(4)]
    links = [
        {"src": f"n{a}", "dst": f"n{b}", "bandwidth": 10, "bidirectional": True}
        for a, b in [(0, 1), (1, 2), (0, 2)]
    ]
    links += [{"src": f"n{a}", "dst": "n3", "bandwidth": 1, "bidirectional": True} for a in range(3)]
    f = path / "weak.json"
    f.write_text(json.dumps({"name": "weak-node", "nodes": nodes, "links": links}))
    return str(f)


def test_weak_node_lp_beats_rs_ag(tmp_path):
    spec = weak_node(tmp_path)
    b = bound(Topology.load(spec), "allreduce")
    assert b["rs_ag_algbw_GBps"] == 2.0
    assert b["lp_algbw_GBps"] == 3.0
    assert b["bound_algbw_exact"] == "3"
    s = synthesize(spec, "allreduce", "forestcoll")
    assert s.verify()
    assert s.details["allreduce_method"] == "lp"
    assert s.evaluate("1GiB", 1)["optimality"] == 1.0
    never = synthesize(spec, "allreduce", "forestcoll", allreduce_lp="never")
    assert never.details["allreduce_method"] == "rs+ag"


def test_bound_cli_a100():
    d = run_json("bound", "dgx-a100:2", "--collective", "allreduce")
    assert d["rs_ag_algbw_GBps"] == pytest.approx(520 / 3)
    # LP = RS+AG on A100 x2 (as the paper's §4.6 reports); small enough for `auto`.
    assert d["lp_algbw_GBps"] == pytest.approx(520 / 3)
    assert Fraction(d["bound_algbw_exact"]) == Fraction(520, 3)


@pytest.mark.parametrize("spec,want", [("mi250:1", Fraction(1200, 7)), ("ring:6", None)])
def test_lp_equals_rs_ag(spec, want):
    b = bound(Topology.from_spec(spec), "allreduce")
    assert b["lp_algbw_GBps"] == pytest.approx(b["rs_ag_algbw_GBps"])
    if want is not None:
        assert Fraction(b["bound_algbw_exact"]) == want


@pytest.mark.parametrize("spec", ["switch:5", "ring:5", "torus:4x4", "dgx-a100:2"])
@pytest.mark.parametrize("collective", ["broadcast", "reduce"])
def test_rooted_is_optimal(spec, collective):
    root = Topology.from_spec(spec).n_ranks - 1
    s = synthesize(spec, collective, "forestcoll", root=root)
    assert s.verify()
    assert s.evaluate("1GiB", 1)["optimality"] == 1.0


def test_bad_mode():
    p = run_cli(
        "synth",
        "ring:4",
        "--collective",
        "allreduce",
        "--algorithm",
        "forestcoll",
        "--allreduce-lp",
        "sometimes",
        check_status=2,
    )
    assert "allreduce-lp" in p.stderr
