"""`collsynth synth TOPO --algorithm bfb --time-only`: the plan-only costs equal the full
path's (the Rust tests check the same on more cases; here the CLI and its JSON keys)."""

from fractions import Fraction

import pytest

from conftest import run_cli, run_json

# Keys both paths report, equal exactly (floats bit for bit, fractions as strings).
SHARED = [
    "N",
    "steps",
    "latency_steps",
    "bandwidth_factor",
    "moore_latency_steps",
    "bandwidth_factor_optimum",
    "alpha_beta_us",
    "latency_us",
    "bandwidth_us",
]


def both(spec: str, collective: str, *options: str) -> tuple[dict, dict]:
    full = run_json("synth", spec, "-c", collective, "-a", "bfb", *options)
    quick = run_json("synth", spec, "-c", collective, "-a", "bfb", "--time-only", *options)
    return full, quick


def assert_same(full: dict, quick: dict) -> None:
    """Every key both report is equal, except the clocks (time_us is the runtime model's in the
    full path, the alpha-beta model's with --time-only, each named by time_model); every
    detail of the schedule (tau, bfb_steps, rs_/ag_ keys, ...) is there."""
    clocks = {"synthesis_seconds", "time_us", "time_model", "algbw_GBps", "busbw_GBps"}
    common = set(full) & set(quick) - clocks
    assert set(SHARED) <= common
    for key in common:
        assert quick[key] == full[key], key
    ends = ("tau", "bfb_steps", "bandwidth_optimal", "tau_fractional", "chunks", "hetero")
    assert {k for k in full if k.endswith(ends)} <= set(quick)


@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter", "allreduce"])
@pytest.mark.parametrize("spec", ["hypercube:3", "kautz:2:12", "circulant:15:1,4,5", "mesh:3x4,bw=50/100"])
def test_time_only_equals_the_full_path(spec, collective):
    full, quick = both(spec, collective, "--size", "3MiB")
    assert_same(full, quick)
    # BFB's own clock is the analytic model; the simulator needs the transfers.
    assert quick["time_model"] == "alpha-beta" and quick["time_us"] == full["alpha_beta_us"]
    # algbw is on the bytes nccl-tests moves: each rank's part trimmed to 16 bytes for allgather
    # and reduce-scatter (src/all_gather.cu AllGatherGetCollByteCount, src/reduce_scatter.cu
    # ReduceScatterGetCollByteCount); 3 MiB on circulant:15 moves 3,145,680 bytes
    n, m = quick["N"], 3 * 2**20
    moved = m if collective == "allreduce" else 16 * n * (m // (16 * n))
    assert quick["size_moved_bytes"] == full["size_moved_bytes"] == moved
    assert quick["algbw_GBps"] == pytest.approx(moved / quick["time_us"] / 1e3)


def test_exact_values_of_kautz_2_12():
    _, quick = both("kautz:2:12", "allreduce")
    assert (quick["latency_steps"], quick["bandwidth_factor"], quick["tau"]) == (6, "7/3", "7/3")
    assert (quick["rs_tau"], quick["ag_tau"], quick["ag_bfb_steps"]) == ("7/6", "7/6", 3)


@pytest.mark.parametrize("collective", ["allgather", "allreduce"])
def test_with_chunks_and_hetero(collective):
    full, quick = both("circulant:15:1,4,5", collective, "--chunks", "3")
    assert_same(full, quick)
    assert quick["chunks"] == 3 and quick["tau_fractional"] == full["tau_fractional"]
    full, quick = both("mesh:3x4,bw=50/100,lat=0.5/2", collective, "--hetero", "1", "--size", "1MiB")
    assert_same(full, quick)
    # --hetero's exact time (a detail) is the same key in both, apart from the clocks' time_us.
    assert quick["hetero"] is True and quick["hetero_time_us_exact"] == full["hetero_time_us_exact"]
    assert isinstance(full["time_us"], float) and isinstance(quick["time_us"], float)
    assert quick["hetero_time_us"] == pytest.approx(float(Fraction(full["hetero_time_us_exact"])))


@pytest.mark.parametrize(
    "args,message",
    [
        (["line(bipartite:2,2)", "-c", "allgather"], "mapped from its base"),
        (["hypercube:3", "-c", "broadcast"], "does not support"),
        (["hypercube:3", "-c", "allgather", "--chunks", "2", "--hetero", "1"], "cannot be combined"),
        (["hypercube:3", "-c", "allgather", "--max-trees", "2"], "does not apply"),
        (["hypercube:3", "-c", "allgather", "-o", "out"], "drop -o"),
        (["hypercube:3", "-c", "allgather", "--pipeline", "4"], "--pipeline"),
        (["hypercube:3", "-c", "allgather", "--format", "msccl-xml"], "exports nothing"),
        (["switch:4", "-c", "allgather"], "direct-connect"),
    ],
)
def test_what_does_not_apply_is_bad_input(args, message):
    p = run_cli("synth", *args, "-a", "bfb", "--time-only", check_status=2)
    assert message in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_table_output():
    p = run_cli("synth", "torus:4x4", "-c", "allreduce", "-a", "bfb", "--time-only")
    assert "bfb (time only)" in p.stdout and "15/8" in p.stdout


def test_hetero_text_table_prints():
    """`--hetero 1`'s exact time once shadowed the simulator's `time_us` with a string, and the
    text table of both paths crashed (exit 1)."""
    for extra in ([], ["--time-only"]):
        p = run_cli(
            "synth", "mesh:3x4,bw=50/100,lat=0.5/2", "-c", "allgather", "-a", "bfb", "--hetero", "1", *extra
        )
        assert "hetero time us" in p.stdout and "algbw" in p.stdout
