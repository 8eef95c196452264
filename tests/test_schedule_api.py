"""The Python API of docs/contracts.md: synthesize, bound, Schedule.verify/simulate/cost/save/load."""

import pytest

import collsynth
from collsynth import BadInput, Schedule


@pytest.mark.parametrize("spec", ["torus:4x4", "switch:8", "dgx-a100:1", "ring:5", "mesh:3x3", "biring:6"])
@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter", "allreduce", "broadcast", "reduce"])
def test_every_baseline_verifies_everywhere(spec, collective):
    topo = collsynth.Topology.from_spec(spec)
    for alg in collsynth.algorithms():
        if collective not in alg["collectives"]:
            continue
        try:
            s = collsynth.synthesize(topo, collective, alg["name"], root=topo.n_ranks - 1)
        except BadInput as e:
            expected = {"rhd": "power-of-two", "bfb": "needs a direct-connect topology"}
            assert alg["name"] in expected and expected[alg["name"]] in str(e), str(e)
            continue
        assert s.verify()["transfers"] == s.n_transfers
        e = s.evaluate("1MiB")
        assert e["time_us"] > 0 and 0 < e["optimality"] <= 1
        assert e["time_us"] >= e["size_bytes"] / e["bound_algbw_GBps"] / 1e3 * (1 - 1e-9)


def test_save_load_and_costs(tmp_path):
    s = collsynth.synthesize("torus:4x4", "allreduce", "ring", size="16MiB")
    assert s.synthesis_seconds is not None and s.synthesis_seconds >= 0
    s.save(tmp_path / "s.json")
    back = Schedule.load(tmp_path / "s.json")
    assert back.to_json() == s.to_json() and back.verify()["transfers"] == s.n_transfers
    sim, ab = back.simulate("16MiB"), back.cost("16MiB")
    assert sim["time_us"] > 0 and ab["alpha_beta_us"] == pytest.approx(ab["latency_us"] + ab["bandwidth_us"])


def test_bound_api():
    b = collsynth.bound("mi250:2", "allgather")
    assert b["inv_throughput"] == "15/166"
    assert b["bound_algbw_GBps"] == pytest.approx(354.1333, rel=1e-6)
