"""Directed and asymmetric topologies through the real CLI: every algorithm either prints a
verified schedule (exit 0) or says in one line why it does not apply (exit 2); never exit 1
(internal error) or a traceback."""

import json
from pathlib import Path

import pytest

from collsynth.schedule import Schedule
from conftest import run_cli, run_json


def _write(tmp_path, name, nodes, links):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"name": name, "nodes": nodes, "links": links}))
    return str(path)


def _asymmetric_switch(tmp_path):
    """Four GPUs on a one-way ring of unequal links, plus a switch whose up and down links differ."""
    gpus = [{"name": f"g{i}", "type": "compute"} for i in range(4)]
    links = [
        {"src": f"g{i}", "dst": f"g{(i + 1) % 4}", "bandwidth": 10 + 5 * i, "latency": 0.5} for i in range(4)
    ]
    for i in range(4):
        links.append({"src": f"g{i}", "dst": "sw", "bandwidth": 2.5 * (i + 1), "latency": 1})
        links.append({"src": "sw", "dst": f"g{i}", "bandwidth": 4, "latency": 0.25})
    return _write(tmp_path, "asym-switch", [*gpus, {"name": "sw", "type": "switch"}], links)


def _two_boxes_one_way(tmp_path):
    """Two boxes of three GPUs behind a box switch; NIC links run one way from box to box."""
    nodes, links = [], []
    for b in range(2):
        nodes += [{"name": f"b{b}.g{i}", "type": "compute", "group": f"box{b}"} for i in range(3)]
        nodes.append({"name": f"b{b}.sw", "type": "switch", "group": f"box{b}"})
        for i in range(3):
            links.append({"src": f"b{b}.g{i}", "dst": f"b{b}.sw", "bandwidth": 100, "latency": 0.5})
            links.append({"src": f"b{b}.sw", "dst": f"b{b}.g{i}", "bandwidth": 75, "latency": 0.5})
            links.append(
                {"src": f"b{b}.g{i}", "dst": f"b{1 - b}.g{i}", "bandwidth": 12.5 * (b + 1), "latency": 2}
            )
    return _write(tmp_path, "two-boxes-one-way", nodes, links)


# Every algorithm's allreduce, and ForestColl's other collectives (transposes and roots).
RUNS = [
    (a, "allreduce")
    for a in ["forestcoll", "tacos", "bfb", "circulant", "ring", "direct", "rhd", "dbt", "auto"]
]
RUNS += [("forestcoll", c) for c in ["reduce-scatter", "broadcast", "reduce"]]


@pytest.mark.parametrize("topology", ["kautz:2:12", "line(kautz:2:6)", "asym-switch", "two-boxes"])
def test_directed_inputs_verify_or_do_not_apply(tmp_path, topology):
    spec = {"asym-switch": _asymmetric_switch, "two-boxes": _two_boxes_one_way}.get(topology)
    spec = spec(tmp_path) if spec else topology
    outcomes = {}
    for algorithm, collective in RUNS:
        out = tmp_path / f"{algorithm}-{collective}"
        args = ["synth", spec, "-c", collective, "-a", algorithm, "--root", "1", "-o", str(out), "--json"]
        proc = run_cli(*args, check_status=None)
        where = (topology, algorithm, collective, proc.returncode, proc.stderr)
        if proc.returncode == 0:
            assert json.loads(proc.stdout)["collective"] == collective, where
            schedule = Schedule.load(out / "schedule.json")
            assert schedule.verify()["transfers"] > 0, where
            outcomes[(algorithm, collective)] = "verified"
        else:
            assert proc.returncode == 2, where
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("collsynth: error: "), where
            outcomes[(algorithm, collective)] = lines[0]
    # The general algorithms apply to every one of these inputs; ForestColl to every
    # switch-free one (its switch removal needs Eulerian switches: exit 2 above otherwise).
    general = ["tacos", "ring", "direct", "auto"]
    if "kautz" in topology:
        general.append("forestcoll")
        assert outcomes[("forestcoll", "reduce-scatter")] == "verified", outcomes
    for algorithm in general:
        assert outcomes[(algorithm, "allreduce")] == "verified", (topology, algorithm, outcomes)


def test_infeasible_is_exit_2_does_not_apply_because():
    """A random multi-box machine (found by the core's registry property test) whose switches
    cannot forward ForestColl's broadcast from rank 14: one line, exit 2, saying why."""
    data = Path(__file__).parent / "data" / "switches_cannot_forward_broadcast.json"
    proc = run_cli("synth", str(data), "-c", "broadcast", "-a", "forestcoll", "--root", "14", check_status=2)
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "collsynth: error: algorithm 'forestcoll' does not apply to broadcast on this topology because "
        "forestcoll broadcast/reduce (single-root packing): "
        "the switches cannot forward a broadcast from this root"
    ]
    # `auto` skips it and picks another algorithm.
    run_cli("synth", str(data), "-c", "broadcast", "-a", "auto", "--root", "14")


def test_infeasible_is_its_own_exception_and_a_bad_input():
    """The core's Infeasible arrives as collsynth.Infeasible (a BadInput, so `except BadInput`
    and exit 2 still hold); malformed input stays a plain BadInput."""
    import collsynth

    data = Path(__file__).parent / "data" / "switches_cannot_forward_broadcast.json"
    with pytest.raises(collsynth.Infeasible, match="switches cannot forward a broadcast"):
        collsynth.synthesize(str(data), "broadcast", "forestcoll", root=14)
    assert issubclass(collsynth.Infeasible, collsynth.BadInput)
    with pytest.raises(collsynth.BadInput, match="--max-trees: 'x' is not a whole number") as bad:
        collsynth.synthesize("ring:4", "allgather", "forestcoll", max_trees="x")
    assert not isinstance(bad.value, collsynth.Infeasible)


def test_algorithm_option_help_comes_from_the_core_registry():
    """`synth --help` shows every algorithm option with the core's one line of help and the
    algorithms that take it; no placeholder text."""
    from collsynth import _core

    out = " ".join(run_cli("synth", "--help").stdout.split())
    assert "issues/README" not in out
    options = _core.algorithm_options()
    assert [n for n, _ in options][:2] == ["max-trees", "allreduce-lp"]
    for name, help_line in options:
        takers = [a[0] for a in _core.algorithms() if name in a[3]]
        assert takers, name
        assert f"--{name} VALUE {help_line} [{', '.join(takers)}]" in out, name


def test_compare_synthesizes_sized_algorithms_per_size():
    """Circulant's block count follows the size (one block at 1 KiB, many at 1 GiB): compare
    must synthesize it for each size, not time the 1 GiB schedule at 1 KiB."""
    rows = run_json("compare", "traff:16", "-c", "broadcast", "--sizes", "1KiB,1GiB")
    circ = {r["size_bytes"]: r for r in rows if r["algorithm"] == "circulant"}
    assert circ[1024.0]["blocks"] == 1 and circ[2.0**30]["blocks"] > 1
    fc = [r["transfers"] for r in rows if r["algorithm"] == "forestcoll"]
    assert len(set(fc)) == 1
