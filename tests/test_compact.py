"""Schedules stated per orbit (docs/schedule-format.md, format 2) through the API and the CLI:
the compact form is kept from synthesis to the summary and the file, and agrees with its
flat expansion."""

import json

import pytest

import collsynth
from conftest import run_cli, run_json


def test_synth_json_reports_the_group_and_counts_flat_transfers(tmp_path):
    s = run_json("synth", "torus:4x4", "-c", "allgather", "-a", "forestcoll", "-o", str(tmp_path))
    assert (s["compact_group"], s["compact_order"]) == ("Z_4 x Z_4", 16)
    assert s["transfers"] == 16 * s["compact_transfers"]
    # ForestColl's allgather on a 4x4 torus: k trees per rank, each spanning 15 edges.
    assert s["transfers"] == 16 * s["k"] * 15
    text = (tmp_path / "schedule.json").read_text()
    assert json.loads(text)["format"] == "collsynth-schedule/2"
    v = run_json("verify", str(tmp_path / "schedule.json"))
    assert v["transfers"] == s["transfers"]
    # A flat schedule keeps format 1 and null compact keys.
    r = run_json("synth", "ring:4", "-c", "allgather", "-a", "ring")
    assert (r["compact_group"], r["compact_order"], r["compact_transfers"]) == (None, None, None)


def test_compact_and_flat_files_evaluate_alike(tmp_path):
    sched = collsynth.synthesize("hypercube:3", "allgather", "forestcoll")
    assert sched.compact == {
        "group": "Z_2 x Z_2 x Z_2",
        "order": 8,
        "representatives": sched.n_transfers // 8,
    }
    sched.save(tmp_path / "c.json")
    back = collsynth.Schedule.load(tmp_path / "c.json")
    assert back.to_json() == sched.to_json()
    assert back.verify() == sched.verify()
    # The flat form (what the exporters see) costs the same, bit for bit.
    e = back.evaluate("1MiB")
    loads = back.link_loads("1MiB")
    assert len(loads) == len(back.topology.links) and all(x["bytes"] > 0 for x in loads)
    sim = back.simulate("1MiB")
    assert sim["time_us"] == e["sf_time_us"]
    assert back.runtime("1MiB")["runtime_time_us"] == e["runtime_time_us"] == e["time_us"]
    xml = back.to_msccl_xml()
    assert xml.count("<gpu ") == 8


@pytest.mark.parametrize("edit, fragment", [("v1", "only a collsynth-schedule/2"), ("gen", "generators[0]")])
def test_bad_symmetry_exits_2_in_one_line(tmp_path, edit, fragment):
    sched = collsynth.synthesize("torus:4x4", "allgather", "forestcoll")
    d = json.loads(sched.to_json())
    if edit == "v1":
        d["format"] = "collsynth-schedule/1"
    else:
        g = d["symmetry"]["generators"][0]
        g[0], g[1] = g[1], g[0]
    (tmp_path / "bad.json").write_text(json.dumps(d))
    proc = run_cli("verify", str(tmp_path / "bad.json"), check_status=2)
    assert fragment in proc.stderr and len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    "args",
    [
        ["torus:8x8", "-c", "allgather", "-a", "bfb"],
        ["ring:64", "-c", "allreduce", "-a", "ring"],
        ["torus:4x4", "-c", "reduce-scatter", "-a", "forestcoll", "--size", "1000"],
    ],
)
def test_form_flat_states_verifies_and_costs_the_schedule_flat(tmp_path, args):
    """`synth --form flat`: file format 1 with every transfer, null compact keys, and every
    other key the compact form's, bit for bit (printed JSON numbers); `Schedule.flat()` is
    the same schedule, verified."""
    auto = run_json("synth", *args, "-o", str(tmp_path / "auto"))
    flat = run_json("synth", *args, "--form", "flat", "-o", str(tmp_path / "flat"))
    assert auto["compact_group"] is not None and flat["compact_group"] is None
    assert flat["compact_order"] is None and flat["compact_transfers"] is None
    assert flat["range_transfers"] is None  # the flat form has one transfer per piece too
    timing = {k for k in auto if k.endswith("_seconds")}
    compact_keys = {"compact_group", "compact_order", "compact_transfers", "range_transfers", "files"}
    same = set(auto) - timing - compact_keys
    assert {k: flat[k] for k in same} == {k: auto[k] for k in same}
    doc = json.loads((tmp_path / "flat" / "schedule.json").read_text())
    assert doc["format"] == "collsynth-schedule/1" and len(doc["transfers"]) == auto["transfers"]
    assert run_json("verify", str(tmp_path / "flat" / "schedule.json"))["transfers"] == auto["transfers"]
    sched = collsynth.Schedule.load(tmp_path / "auto" / "schedule.json")
    f = sched.flat()
    assert f.compact is None and f.n_transfers == sched.n_transfers == auto["transfers"]
    assert f.flat() is f
