"""BFB on `bi(G)` through the CLI: appendix A.6's split schedule (G's T_L and tau), the
`--bi-method` choice and its errors (the Rust tests cover more bases)."""

import pytest

from conftest import run_cli, run_json


def synth(spec: str, collective: str = "allgather", *options: str) -> dict:
    return run_json("synth", spec, "-c", collective, "-a", "bfb", *options)


@pytest.mark.parametrize(
    "collective,steps,factor",
    [("allgather", 2, "5/6"), ("reduce-scatter", 2, "5/6"), ("allreduce", 4, "5/3")],
)
def test_split_keeps_the_base_values(collective, steps, factor):
    # docs/find.md: BFB on the union gets T_L 1, tau 4/3; the split keeps G's 2, 5/6.
    s = synth("bi(dcirculant:6:1,2,3,4)", collective)
    assert (s["bi_method"], s["latency_steps"], s["bandwidth_factor"]) == ("split", steps, factor)
    assert s["tau"] == factor and s["bi_isomorphism"] == "structural"


def test_auto_reports_both_candidates_and_union_can_be_forced():
    s = synth("bi(dcirculant:6:1,2,3,4)")
    assert s["bi_candidates"] == {"split": [2, "5/6"], "union": [1, "4/3"]}
    u = synth("bi(dcirculant:6:1,2,3,4)", "allgather", "--bi-method", "union")
    assert (u["bi_method"], u["latency_steps"], u["bandwidth_factor"]) == ("union", 1, "4/3")


@pytest.mark.parametrize(
    "base,steps,factor",
    [("kautz:2:12", 3, "7/6"), ("line(dcirculant:6:1,2)", 4, "1"), ("dcirculant:16:6,7", 5, "15/16")],
)
def test_forced_split_equals_the_base(base, steps, factor):
    g = synth(base)
    s = synth(f"bi({base})", "allgather", "--bi-method", "split")
    assert (g["latency_steps"], g["bandwidth_factor"]) == (steps, factor)
    assert (s["latency_steps"], s["bandwidth_factor"]) == (steps, factor)


def test_written_schedule_verifies(tmp_path):
    synth("bi(kautz:2:12)", "allreduce", "--bi-method", "split", "-o", str(tmp_path))
    v = run_json("verify", str(tmp_path / "schedule.json"))
    # Every shard in two halves (G's schedule keeps its shards whole here).
    assert v["valid"] and v["pieces"] == 24 and v["depth"] == 6


@pytest.mark.parametrize(
    "args,message",
    [
        (["dcirculant:6:1,2", "--bi-method", "split"], "applies to bi(G) topologies"),
        (["bi(diamond)", "--bi-method", "split"], "no isomorphism to the transpose found"),
        (["bi(ring:5)", "--bi-method", "both"], "not one of auto, split, union"),
        (["bi(ring:5)", "--bi-method", "split", "--chunks", "2"], "cannot be combined"),
        (["bi(ring:5)", "--time-only"], "add --bi-method union"),
    ],
)
def test_errors_are_one_line_exit_2(args, message):
    p = run_cli("synth", *args, "-c", "allgather", "-a", "bfb", check_status=2)
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_time_only_with_the_union():
    args = ["bi(dcirculant:6:1,2,3,4)", "-c", "allreduce", "-a", "bfb", "--bi-method", "union"]
    full = run_json("synth", *args)
    quick = run_json("synth", *args, "--time-only")
    for key in ["latency_steps", "bandwidth_factor", "tau", "bi_method", "alpha_beta_us", "bandwidth_us"]:
        assert quick[key] == full[key], key
