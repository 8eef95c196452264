"""Träff's circulant schedules through the Python binding and the CLI (docs/circulant.md)."""

import pytest

from collsynth import _core
from conftest import run_cli, run_json

# Table 1 of the paper (p = 20): column r of recv[i] / send[i].
P20_RECV_R1 = [0, -3, -4, -2, -1]
P20_SEND_R1 = [-5, -5, 0, 0, 0]
P20_RECV_ROOT = [-5, -3, -4, -2, -1]
P20_SEND_ROOT = [0, 1, 2, 3, 4]


def block(sched: list[int], q: int, n: int, j: int) -> int | None:
    """The documented rule: block of schedule `sched` in real round j of an n-block broadcast."""
    x = (q - (n - 1) % q) % q
    i = j + x
    v = sched[i % q] + q * (i // q) - x
    return None if v < 0 else min(v, n - 1)


def test_schedule_matches_table_1():
    s = _core.circulant_schedule(20, 1)
    assert s["q"] == 5 and s["skips"] == [1, 2, 3, 5, 10, 20]
    assert s["recv_blocks"] == P20_RECV_R1 and s["send_blocks"] == P20_SEND_R1
    assert s["recv_from"] == [0, 19, 18, 16, 11] and s["send_to"] == [2, 3, 4, 6, 11]
    root = _core.circulant_schedule(20, 0, root=0)
    assert root["recv_blocks"] == P20_RECV_ROOT and root["send_blocks"] == P20_SEND_ROOT


def test_root_renumbering_and_edge_cases():
    # rank 8 with root 7 is virtual rank 1; partners are real ranks.
    s = _core.circulant_schedule(20, 8, root=7)
    assert s["recv_blocks"] == P20_RECV_R1 and s["send_blocks"] == P20_SEND_R1
    assert s["send_to"] == [9, 10, 11, 13, 18] and s["recv_from"] == [7, 6, 5, 3, 18]
    one = _core.circulant_schedule(1, 0)
    assert one == {
        "q": 0,
        "skips": [1],
        "recv_blocks": [],
        "send_blocks": [],
        "recv_from": [],
        "send_to": [],
    }
    assert _core.circulant_rounds(1, 5) == 0
    assert _core.circulant_rounds(20, 1) == 5
    assert _core.circulant_rounds(1000, 64) == 63 + 10
    for bad in [(20, 20, 0), (20, 0, 20), (0, 0, 0)]:
        with pytest.raises(_core.BadInput):
            _core.circulant_schedule(*bad)
    with pytest.raises(_core.BadInput):
        _core.circulant_rounds(8, 0)


def test_optimal_blocks_theorem_2():
    # p = 1152 (q = 11), alpha 1 us, beta 1e-4 us/B, m = 4e8 B: n* = sqrt(4e5) = 632.5
    assert _core.circulant_blocks(1152, 4e8, 1.0, 1e-4) in (632, 633)
    assert _core.circulant_blocks(2, 1e9, 1.0, 1e-4) == 1  # q = 1: one block is optimal
    assert _core.circulant_blocks(64, 0, 1.0, 1e-4) == 1
    assert _core.circulant_blocks(64, 1000, 10.0, 1e-9) == 1
    with pytest.raises(_core.BadInput):
        _core.circulant_blocks(8, -1, 1.0, 1.0)


@pytest.mark.parametrize("p", [2, 3, 5, 7, 9, 16, 17, 20, 31, 33])
def test_documented_runtime_rule_broadcasts_correctly(p):
    """Simulate the MPI runtime's loop exactly as docs/circulant.md tells it, every root."""
    for root in range(p):
        scheds = [_core.circulant_schedule(p, r, root) for r in range(p)]
        q = scheds[0]["q"]
        for n in [1, 2, 3, q + 1, 2 * q + 3]:
            have = [set(range(n)) if r == root else set() for r in range(p)]
            received = [[] for _ in range(p)]
            for j in range(_core.circulant_rounds(p, n)):
                k = (j + (q - (n - 1) % q) % q) % q
                incoming = []
                for r, s in enumerate(scheds):
                    t = s["send_to"][k]
                    b = block(s["send_blocks"], q, n, j)
                    assert scheds[t]["recv_from"][k] == r
                    assert block(scheds[t]["recv_blocks"], q, n, j) == b
                    if b is None or t == root:
                        continue
                    assert b in have[r], (p, root, n, j, r, b)
                    incoming.append((t, b))
                for t, b in incoming:
                    received[t].append(b)
                    have[t].add(b)
            for r in range(p):
                assert have[r] == set(range(n))
                blocks = received[r]
                if r != root:  # each block once, except capped repeats of n - 1
                    assert sorted(set(blocks)) == list(range(n))
                    assert all(blocks.count(b) == 1 for b in range(n - 1))


def test_exhaustive_check_up_to_2000():
    r = _core.circulant_check(list(range(2, 2001)))
    assert r["failures"] == []
    assert r["ps"] == 1999 and r["max_p"] == 2000
    assert r["processes"] == sum(range(2, 2001))
    # n in {1, 2, q, q+1, 2q+3}: 3 distinct values for p = 2 (q = 1), 4 for q = 2, else 5.
    assert r["broadcasts"] == 3 + 4 * 2 + 5 * 1996


def test_cli_check_json_and_errors():
    r = run_json("circulant", "check", "--max-p", "64", "--random", "3", "--random-max", "5000")
    assert r["failures"] == [] and r["ps"] == 63 + 3 and len(r["random_ps"]) == 3
    assert r["processes"] == sum(range(2, 65)) + sum(r["random_ps"])
    out = run_cli("circulant", "check", "--max-p", "40").stdout
    assert "p = 2..40" in out and "all correct" in out
    proc = run_cli("circulant", "check", "--max-p", "1", check_status=2)
    assert "--max-p must be at least 2" in proc.stderr


def test_synth_broadcast_is_round_optimal():
    s = run_json(
        "synth",
        "traff:20",
        "-c",
        "broadcast",
        "-a",
        "circulant",
        "--blocks",
        "7",
        "--root",
        "3",
        "--size",
        "1MB",
    )
    assert s["steps"] == 7 - 1 + 5 and s["transfers"] == 19 * 7
    # (n - 1 + q)(alpha + M / (n b)) with 1 us and 100 GB/s links
    assert s["alpha_beta_us"] == pytest.approx(11 * (1 + 1e6 / 7 / 1e5))
    assert s["blocks"] == 7 and s["circulant_rounds"] == 11


@pytest.mark.parametrize("c", ["allgather", "reduce-scatter", "allreduce", "reduce"])
def test_synth_other_collectives(c):
    s = run_json("synth", "traff:12", "-c", c, "-a", "circulant", "--size", "1MB")
    q = 4
    if c == "allgather" or c == "reduce-scatter":
        assert s["steps"] == q and s["transfers"] == 12 * 11
    elif c == "allreduce":
        assert s["steps"] == 2 * q
    else:
        assert s["steps"] == s["blocks"] - 1 + q


def test_synth_allgatherv_counts_with_zeros():
    counts = ",".join(str((r % 3) * 100) for r in range(9))
    s = run_json(
        "synth", "switch:9", "-c", "allgatherv", "-a", "circulant", "--counts", counts, "--blocks", "3"
    )
    assert s["steps"] == 3 - 1 + 4 and s["transfers"] == 9 * 8 * 3
    proc = run_cli(
        "synth", "switch:9", "-c", "allgatherv", "-a", "circulant", "--counts", "1,2", check_status=2
    )
    assert "2 counts for 9 ranks" in proc.stderr
    proc = run_cli("synth", "switch:9", "-c", "broadcast", "-a", "circulant", "--blocks", "0", check_status=2)
    assert "--blocks must be at least 1" in proc.stderr


def test_census_allreduce_cli(tmp_path):
    """Algorithm 8 in the IR: q rounds of the whole buffer through scratch slots S and B; the
    file keeps the slots, and `verify` and `simulate` read it back."""
    s = run_json(
        "synth", "complete:16", "-c", "allreduce", "-a", "circulant", "--size", "1KiB", "-o", str(tmp_path)
    )
    # q = 4 rounds of alpha + M beta (1 us, 100 GB/s): census 4 * (1 + 1024 / 1e5) beats
    # reduce-scatter + allgather 8 + 2 * 15/16 * 1024 / 1e5 at 1 KiB.
    assert s["variant"] == "census" and s["steps"] == 4 and s["transfers"] == 16 * (3 * 4 - 1)
    assert s["alpha_beta_us"] == pytest.approx(4 * (1 + 1024 / 1e5))
    assert s["variant_us"]["census"] < s["variant_us"]["rs-ag"]
    path = tmp_path / "schedule.json"
    assert '"src_slot": 0, "dst_slot": 2' in path.read_text()
    assert "valid allreduce schedule" in run_cli("verify", str(path)).stdout
    sim = run_json("simulate", str(path), "--size", "1KiB")
    assert sim["sf_time_us"] == pytest.approx(4 * (1 + 1024 / 1e5), rel=1e-3)
    assert sim["time_us"] == sim["runtime_time_us"] and sim["time_model"] == "runtime"
    # At 1 GiB the bandwidth-optimal variant wins; --variant forces either.
    assert run_json("synth", "complete:16", "-c", "allreduce", "-a", "circulant")["variant"] == "rs-ag"
    forced = run_json("synth", "traff:9", "-c", "allreduce", "-a", "circulant", "--variant", "census")
    assert forced["variant"] == "census" and forced["steps"] == 4


def test_census_options_errors_and_msccl_export(tmp_path):
    base = ("synth", "traff:9", "-a", "circulant")
    proc = run_cli(*base, "-c", "broadcast", "--variant", "census", check_status=2)
    assert "--variant applies to allreduce only" in proc.stderr
    proc = run_cli(*base, "-c", "allreduce", "--variant", "ring", check_status=2)
    assert "'ring' is not one of census, rs-ag" in proc.stderr
    proc = run_cli(*base, "-c", "allreduce", "--variant", "census", "--blocks", "2", check_status=2)
    assert "--blocks does not apply to the census" in proc.stderr
    # The census exports to MSCCL: S and B in scratch, local re steps.
    out = ("-o", str(tmp_path), "--format", "json,msccl-xml", "--pipeline", "1")
    run_cli(*base, "-c", "allreduce", "--variant", "census", *out)
    xml = (tmp_path / "schedule.xml").read_text()
    assert 's_chunks="2"' in xml and 'type="re"' in xml
    assert run_json("verify", str(tmp_path / "schedule.xml"), "--topology", "traff:9")["ok"]
