"""nccl-tests' conventions: the -b/-e/-f size sweep with K, M, G as powers of 1024,
nccl-tests' busbw factors and count column, `compare` in nccl-tests' layout, and `collsynth
draw` (a schedule over its topology, link load from the core)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

import collsynth
from collsynth import _core, nccl_tests
from conftest import run_cli, run_json


def test_sweep_b8_e8g_f2():
    sizes = nccl_tests.sweep("8", "8G", 2)
    assert sizes == [8 << i for i in range(31)] and sizes[-1] == 8 * 2**30
    assert nccl_tests.sweep("128M", "1G", 2) == [128 << 20, 256 << 20, 512 << 20, 1 << 30]
    assert nccl_tests.sweep("1K", "100K", 4) == [1024, 4096, 16384, 65536]
    assert nccl_tests.sweep(None, None, 2) == [32 << 20]  # nccl-tests' default -b and -e: 32M
    # nccl-tests reads only the letter: 1MB is 1 MiB under -b/-e, as 1M and 1MiB are
    assert nccl_tests.sweep("1MB", "1MiB", 2) == [1 << 20]
    assert nccl_tests.sweep("8GB", "8GB", 2) == [8 << 30]


@pytest.mark.parametrize(
    "collective, n, factor",
    [("allreduce", 8, Fraction(14, 8)), ("allgather", 8, Fraction(7, 8)),
     ("reduce-scatter", 4, Fraction(3, 4)), ("broadcast", 8, 1), ("reduce", 5, 1)],
)  # fmt: skip
def test_busbw_factors(collective, n, factor):
    assert _core.busbw_factor(collective, n) == float(factor)


def test_compare_sweep_json_busbw_and_count():
    """ring:8 allreduce swept -b 1M -e 4M -f 2: sizes 1, 2, 4 MiB; busbw = algbw * 2(n-1)/n; the
    count is float elements (allgather's per rank)."""
    rows = run_json("compare", "ring:8", "-c", "allreduce", "-b", "1M", "-e", "4M", "-f", "2")
    ring = [r for r in rows if r["algorithm"] == "ring"]
    assert [r["size_bytes"] for r in ring] == [1 << 20, 2 << 20, 4 << 20]
    assert [r["count_elements"] for r in ring] == [262144, 524288, 1048576]
    for r in rows:
        assert r["busbw_GBps"] == pytest.approx(r["algbw_GBps"] * 1.75, rel=1e-12)
        assert (r["dtype"], r["redop"]) == ("float32", "sum")
    rows = run_json("compare", "ring:8", "-c", "allgather", "-b", "64K", "-e", "64K")
    assert {r["count_elements"] for r in rows} == {2048} and {r["redop"] for r in rows} == {"none"}
    assert all(r["busbw_GBps"] == pytest.approx(r["algbw_GBps"] * 7 / 8, rel=1e-12) for r in rows)


def test_compare_prints_nccl_tests_columns():
    out = run_cli("compare", "ring:4", "-c", "allreduce", "-b", "1K", "-e", "4K", "-f", "4").stdout
    lines = out.splitlines()
    assert "out-of-place" in lines[0] and "in-place" in lines[0]
    assert (
        lines[1].split()[1:] == "size count type redop root".split() + "time algbw busbw #wrong".split() * 2
    )
    ring = lines[lines.index("# algorithm: ring") + 1 : lines.index("# algorithm: ring") + 3]
    rows = json.loads(
        run_cli("compare", "ring:4", "-c", "allreduce", "--sizes", "1KiB,4KiB", "--json").stdout
    )
    want = [r for r in rows if r["algorithm"] == "ring"]
    for line, r in zip(ring, want, strict=True):
        cols = line.split()
        assert cols[:5] == [str(int(r["size_bytes"])), str(int(r["size_bytes"]) // 4), "float", "sum", "-1"]
        assert cols[5:9] == cols[9:13]  # the simulator has one time for both modes
        assert float(cols[7]) == pytest.approx(r["busbw_GBps"], abs=0.006) and cols[8] == "N/A"
    # --nccl-tests with the default sizes
    assert "# algorithm: ring" in run_cli("compare", "ring:4", "-c", "broadcast", "--nccl-tests").stdout


def test_float_columns_as_nccl_tests():
    assert nccl_tests.float_str(1234.5678, 7) == "1234.57"
    assert nccl_tests.float_str(12345.678, 7) == "12345.7"
    assert nccl_tests.float_str(0.5, 6) == "  0.50"
    assert nccl_tests.float_str(123456.0, 6) == "123456"
    assert nccl_tests.float_str(None, 6) == "   N/A"


def test_link_loads_come_from_the_core():
    """A ring allgather on a one-way ring:4 moves 3 of the 4 quarters over each link: 3M/4."""
    sched = collsynth.synthesize("ring:4", "allgather", "ring")
    loads = sched.link_loads("4MiB")
    used = [x["bytes"] for x in loads if x["bytes"] > 0]
    assert used and all(b == 3 * 2**20 for b in used)
    assert sum(used) == 4 * 3 * 2**20  # every rank receives 3 MiB


def test_draw_writes_png_and_deterministic_svg(tmp_path):
    sched = collsynth.synthesize("dgx-a100:1", "allreduce", "ring")
    sched.save(tmp_path / "s.json")
    png, svg = tmp_path / "f.png", tmp_path / "f.svg"
    run_cli("draw", str(tmp_path / "s.json"), "-o", str(png), "--size", "1MiB")
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    run_cli("draw", str(tmp_path / "s.json"), "-o", str(svg))
    first = svg.read_bytes()
    assert first.startswith(b"<?xml") and b"<svg" in first
    run_cli("draw", str(tmp_path / "s.json"), "-o", str(svg))
    assert svg.read_bytes() == first  # same input, same bytes
    assert {p.name for p in tmp_path.iterdir()} == {"s.json", "f.png", "f.svg"}  # no temporary files
    # the loads change the picture: another size of the same schedule scales the colour bar
    run_cli("draw", str(tmp_path / "s.json"), "-o", str(tmp_path / "g.svg"), "--size", "1KiB")
    assert (tmp_path / "g.svg").read_bytes() != first


def test_draw_from_the_api(tmp_path):
    sched = collsynth.synthesize("ring:4", "allgather", "ring")
    sched.draw(tmp_path / "r.svg", size=4096)
    assert b"<svg" in (tmp_path / "r.svg").read_bytes()
    with pytest.raises(collsynth.BadInput, match=".svg or .png"):
        sched.draw(tmp_path / "r.gif")
    assert {p.name for p in tmp_path.iterdir()} == {"r.svg"}


# What nccl-tests moves of an allgather or reduce-scatter of M bytes on N ranks: each rank's
# part trimmed to a multiple of 16 bytes (src/all_gather.cu AllGatherGetCollByteCount,
# src/reduce_scatter.cu ReduceScatterGetCollByteCount, since nccl-tests commit 29f4114).
def _moved(m: int, n: int) -> int:
    return 16 * n * (m // (16 * n))


@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter", "allreduce"])
def test_synth_costs_the_size_nccl_tests_moves(collective):
    """1 GiB on ring:5: allgather and reduce-scatter cost 1,073,741,760 bytes, bit for bit the
    run at that size; allreduce keeps its count whole (AllReduceGetCollByteCount): 2^30."""
    moved = _moved(1 << 30, 5) if collective != "allreduce" else 1 << 30
    s = run_json("synth", "ring:5", "-a", "ring", "-c", collective, "--json")
    at = run_json("synth", "ring:5", "-a", "ring", "-c", collective, "--size", str(moved), "--json")
    assert (s["size_bytes"], s["size_bytes_exact"]) == (1 << 30, str(1 << 30))
    assert (s["size_moved_bytes"], s["size_moved_exact"], s["size_moved_note"]) == (moved, str(moved), None)
    keys = ["time_us", "runtime_time_us", "alpha_beta_us", "algbw_GBps", "busbw_GBps", "time_bound_us"]
    assert {k: s[k] for k in keys + ["runtime_algbw_GBps", "optimality_exact"]} == {
        k: at[k] for k in keys + ["runtime_algbw_GBps", "optimality_exact"]
    }
    assert s["algbw_GBps"] == moved / s["time_us"] / 1e3
    assert s["runtime_algbw_GBps"] == moved / s["runtime_time_us"] / 1e3


def test_power_of_two_sizes_on_power_of_two_ranks_move_themselves():
    s = run_json("synth", "hypercube:4", "-a", "bfb", "-c", "reduce-scatter", "--size", "64KiB", "--json")
    assert s["size_moved_bytes"] == s["size_bytes"] == 65536 and s["size_moved_note"] is None


def test_below_16_n_bytes_the_size_asked_is_costed_and_said():
    s = run_json("synth", "ring:5", "-a", "ring", "-c", "allgather", "--size", "64", "--json")
    assert s["size_moved_bytes"] == 64 and s["time_us"] > 0 and s["algbw_GBps"] > 0
    assert s["size_moved_note"].startswith("below 16 N = 80 bytes nccl-tests moves nothing")
    text = run_cli("synth", "ring:5", "-a", "ring", "-c", "allgather", "--size", "64").stdout
    assert "below 16 N = 80 bytes" in text


def test_a_sweep_through_sizes_below_16_n_goes_on():
    """-b 8 -e 128 on ring:5 (16 N = 80): every size has a row; 8 to 64 bytes are costed as
    asked with nccl-tests' count 0 and one note per size; 128 bytes move 80 (4 floats a rank)."""
    out = run_cli("compare", "ring:5", "-c", "allgather", "-b", "8", "-e", "128", "-f", "2").stdout
    ring = out.splitlines()[out.splitlines().index("# algorithm: ring") + 1 :][:5]
    assert [line.split()[:2] for line in ring] == [
        ["8", "0"],
        ["16", "0"],
        ["32", "0"],
        ["64", "0"],
        ["80", "4"],
    ]
    notes = [line for line in out.splitlines() if line.startswith("# size ")]
    assert [n.split(":")[0] for n in notes] == ["# size 8", "# size 16", "# size 32", "# size 64"]
    rows = run_json("compare", "ring:5", "-c", "reduce-scatter", "--sizes", "64,1KiB", "--json")
    assert {(r["size_bytes"], r["size_moved_bytes"], r["count_elements"]) for r in rows} == {
        (64, 64, 0),
        (1024, 960, 48),
    }
    assert all((r["size_moved_note"] is None) == (r["size_bytes"] == 1024) for r in rows)


def test_time_only_times_the_moved_size():
    s = run_json("synth", "torus:3x3", "-a", "bfb", "-c", "allgather", "--time-only", "--json")
    at = run_json(
        "synth",
        "torus:3x3",
        "-a",
        "bfb",
        "-c",
        "allgather",
        "--time-only",
        "--json",
        "--size",
        str(_moved(1 << 30, 9)),
    )
    assert (
        s["size_bytes"] == 1 << 30 and s["size_moved_bytes"] == _moved(1 << 30, 9) == at["size_moved_bytes"]
    )
    assert (s["time_us"], s["algbw_GBps"]) == (at["time_us"], at["algbw_GBps"])


def test_schedule_methods_cost_the_moved_size():
    s = collsynth.synthesize("ring:5", "allgather", "ring")
    moved = str(_moved(1 << 30, 5))
    assert s.simulate("1GiB") == {
        **s.simulate(moved),
        "size_bytes": 1 << 30,
        "size_bytes_exact": str(1 << 30),
    }
    assert s.runtime("1GiB") == {**s.runtime(moved), "size_bytes": 1 << 30}
    assert s.runtime("1GiB", "Simple")["runtime_time_us"] == s.runtime(moved, "Simple")["runtime_time_us"]
    assert s.cost("1GiB") == {**s.cost(moved), "size_bytes": 1 << 30}
    assert s.link_loads("1GiB") == s.link_loads(moved) != s.link_loads(str(1 << 30 | 1 << 12))
    assert s.transfers(shard=0, size="1GiB") == s.transfers(shard=0, size=moved)
    assert s.evaluate("1GiB")["size_moved_bytes"] == int(moved)
