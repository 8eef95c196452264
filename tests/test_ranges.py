"""Range transfers (docs/schedule-format.md "Range transfers") through the API and the CLI:
BFB states its schedules with them from 64 ranks; the counts stay those of single-piece
transfers, the file round-trips, and the exporters see the flat schedule."""

import json

import collsynth
from conftest import run_json


def test_synth_reports_flat_transfers_and_the_ranges_stored(tmp_path):
    s = run_json("synth", "torus:8x8", "-c", "allgather", "-a", "bfb", "-o", str(tmp_path))
    # 64 ranks, 4 pieces per shard: 64 x 63 x 4 single-piece transfers, 252 representatives,
    # stored as 68 range transfers.
    assert (s["transfers"], s["compact_order"], s["compact_transfers"]) == (16128, 64, 252)
    assert s["range_transfers"] == 68
    doc = json.loads((tmp_path / "schedule.json").read_text())
    assert doc["format"] == "collsynth-schedule/2"
    assert sum(t.get("count", 1) for t in doc["transfers"]) == 252
    assert run_json("verify", str(tmp_path / "schedule.json"))["transfers"] == 16128
    # Below 64 ranks nothing changes: no ranges, no key value.
    small = run_json("synth", "torus:4x4", "-c", "allgather", "-a", "bfb")
    assert small["range_transfers"] is None


def test_a_ranged_file_costs_and_exports_as_its_expansion(tmp_path):
    sched = collsynth.synthesize("circulant:64:1,5", "allreduce", "bfb")
    assert sched.range_transfers is not None and sched.range_transfers < sched.n_transfers
    sched.save(tmp_path / "r.json")
    back = collsynth.Schedule.load(tmp_path / "r.json")
    assert back.to_json() == sched.to_json()
    assert back.verify() == sched.verify()
    assert back.evaluate("1GiB") == sched.evaluate("1GiB")
    # The flat twin, written as format 1 by hand: every range spelled out piece by piece.
    doc = json.loads(sched.to_json())
    flat = []
    for t in doc["transfers"]:
        k = t.pop("count", 1)
        flat += [{**t, "piece": t["piece"] + i, "after": [a + i for a in t["after"]]} for i in range(k)]
    doc.update(format="collsynth-schedule/1", transfers=flat)
    twin = collsynth.Schedule.loads(json.dumps(doc))
    assert twin.range_transfers is None and twin.n_transfers == sched.n_transfers
    assert twin.evaluate("1GiB") == sched.evaluate("1GiB")
    assert twin.link_loads("1GiB") == sched.link_loads("1GiB")
    assert collsynth.msccl.export(twin)["xml"] == collsynth.msccl.export(sched)["xml"]
