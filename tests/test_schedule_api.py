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


@pytest.mark.parametrize("spec,alg", [("torus:4x4", "ring"), ("switch:8", "tacos"), ("ring:6", "auto")])
def test_an_evaluation_made_beside_the_verifier_is_the_same_evaluation(spec, alg):
    """`evaluate_pipeline` evaluates while the verifier checks: `evaluate` at that size and
    depth answers the dict a schedule synthesized without it computes; at another size or
    depth, and when asked again, it computes afresh."""
    ahead = collsynth.synthesize(spec, "allreduce", alg, size="16MiB", evaluate_pipeline=2)
    plain = collsynth.synthesize(spec, "allreduce", alg, size="16MiB")
    assert plain.n_transfers == ahead.n_transfers
    assert ahead.evaluate("16MiB", 2) == plain.evaluate("16MiB", 2) == ahead.evaluate("16MiB", 2)
    assert ahead.evaluate("1MiB", 2) == plain.evaluate("1MiB", 2)
    assert ahead.evaluate("16MiB") == plain.evaluate("16MiB")
    for bad in [0, -1, 1.5, True, "2"]:
        with pytest.raises(BadInput, match="evaluate_pipeline"):
            collsynth.synthesize(spec, "allreduce", alg, evaluate_pipeline=bad)


def test_save_streams_atomically_with_the_umask(tmp_path):
    """`save` lets the core stream the text into the temporary file: the same bytes as
    `to_json`, mode 0666 minus the umask, nothing left behind when the writer fails."""
    import os

    from collsynth.fileio import atomic_write

    s = collsynth.synthesize("torus:3x3", "allgather", "forestcoll")
    old = os.umask(0o027)
    try:
        s.save(tmp_path / "s.json")
    finally:
        os.umask(old)
    path = tmp_path / "s.json"
    assert path.read_text() == s.to_json()
    assert path.stat().st_mode & 0o777 == 0o640
    s.save(path)  # replaces in place
    assert path.read_text() == s.to_json()

    def fails(tmp):
        s._core.write_json(tmp)
        raise OSError(28, "No space left on device")

    with pytest.raises(BadInput, match="No space left"):
        atomic_write(tmp_path / "t.json", fails)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_bound_api():
    b = collsynth.bound("mi250:2", "allgather")
    assert b["inv_throughput"] == "15/166"
    assert b["bound_algbw_GBps"] == pytest.approx(354.1333, rel=1e-6)
