"""collsynth.mpi: the round plans simulated for every rank in one process (fast, no MPI), then
the real collectives under ``mpiexec -n P`` for P = 1..8, compared with the MPI library's own
Bcast / Allgather(v) / Allreduce (tests/mpi/check_collectives.py, one launch per P)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from collsynth import _core
from collsynth.mpi import launch, plan

sys.path.insert(0, str(Path(__file__).parent / "mpi"))
import circulant_ref as ref  # noqa: E402

CHECK = Path(__file__).parent / "mpi" / "check_collectives.py"


def block_counts(q: int) -> list[int]:
    return sorted({1, 2, 3, max(q, 1), q + 1, 2 * q + 3, 11})


def simulate_bcast(p: int, root: int, n: int) -> None:
    plans = [plan.bcast_rounds(p, r, root, n) for r in range(p)]
    rounds = plan.n_rounds_per_phase(p) + n - 1 if p > 1 else 0
    assert all(len(pl) == rounds for pl in plans)
    have = [set(range(n)) if r == root else set() for r in range(p)]
    for i in range(rounds):
        arrivals = []
        for r in range(p):
            t, sb, f, rb = plans[r][i]
            assert plans[t][i][2] == r and plans[t][i][3] == sb, (p, root, n, i, r)
            if sb >= 0:
                assert sb in have[r], f"p={p} root={root} n={n} round {i}: {r} sends {sb} it lacks"
                arrivals.append((t, sb))
            if rb >= 0:
                assert plans[f][i][0] == r and plans[f][i][1] == rb
        for t, b in arrivals:
            assert b not in have[t] or b == n - 1, f"p={p} n={n}: {t} receives {b} twice"
            have[t].add(b)
    assert all(h == set(range(n)) for h in have), (p, root, n)


def simulate_allgatherv(p: int, n: int) -> None:
    plans = [plan.allgatherv_rounds(p, r, n) for r in range(p)]
    have = [[set(range(n)) if j == r else set() for j in range(p)] for r in range(p)]
    for i in range(len(plans[0])):
        arrivals = []
        for r in range(p):
            t, sb, f, rb = plans[r][i]
            assert (plans[t][i][3] == sb).all(), (p, n, i, r)
            for j in np.flatnonzero(sb >= 0):
                assert sb[j] in have[r][j], f"p={p} n={n} round {i}: {r} sends {j}:{sb[j]} it lacks"
                arrivals.append((t, j, int(sb[j])))
        for t, j, b in arrivals:
            have[t][j].add(b)
    assert all(h == set(range(n)) for row in have for h in row), (p, n)


@pytest.mark.parametrize("p", list(range(1, 34)))
def test_bcast_plan_every_root(p):
    q = plan.n_rounds_per_phase(p)
    for root in sorted({0, 1 % p, p // 2, p - 1}):
        for n in block_counts(q):
            simulate_bcast(p, root, n)


@pytest.mark.parametrize("p", list(range(1, 20)))
def test_allgatherv_plan(p):
    for n in block_counts(plan.n_rounds_per_phase(p)):
        simulate_allgatherv(p, n)


def test_reference_reproduces_paper_table_p20():
    recv0 = [-5, 0, -5, -4, -3, -5, -2, -5, -4, -3, -5, -1, -5, -4, -3, -5, -2, -5, -4, -3]
    send4 = [4, 0, 1, 2, 0, 3, 0, 1, 2, 0, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1]
    assert [ref.recvsched(20, r)[0] for r in range(20)] == recv0
    assert [ref.sendsched(20, r)[4] for r in range(20)] == send4


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8, 9, 20, 31, 32, 33, 100])
def test_rust_matches_reference(p):
    for root in sorted({0, p - 1, p // 3}):
        for rank in range(p):
            assert _core.circulant_schedule(p, rank, root) == ref.circulant_schedule(p, rank, root)
    for n in (1, 2, 7):
        assert _core.circulant_rounds(p, n) == ref.circulant_rounds(p, n)


@pytest.mark.parametrize("np_", list(range(1, 9)))
def test_collectives_under_mpiexec(np_):
    cmd = launch.command(np_, [sys.executable, "-m", "mpi4py", str(CHECK)])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"mpiexec -n {np_} timed out:\n{e.stdout}\n{e.stderr}")
    assert proc.returncode == 0, f"mpiexec -n {np_} exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert f"ok: {np_} ranks" in proc.stdout, proc.stdout


def test_parse_sizes_and_table():
    from collsynth import BadInput
    from collsynth.cli.bench_mpi import osu_table, parse_sizes

    assert parse_sizes("0,1,4KiB,1MiB,2KiB,1MB") == [0, 1, 4096, 1 << 20, 2048, 10**6]
    with pytest.raises(BadInput):
        parse_sizes("4X")
    result = {
        "np": 4, "library": "MPICH Version: 5.0.2", "reps": 35, "alpha_us": 2.0, "beta_us_per_byte": 1e-3,
        "records": [{"op": "bcast", "size_bytes": 1024, "ours_us": 10.0, "library_us": 8.0, "ratio": 1.25,
                     "blocks": 2}],
    }  # fmt: skip
    text = osu_table(result)
    assert "# Size" in text and "1024" in text and "1.25" in text


def test_bench_mpi_cli_usage_errors(cli):
    assert "--sizes" in cli("bench-mpi", "--np", "2", "--sizes", "4X", check_status=2).stderr
    assert "--ops" in cli("bench-mpi", "--np", "2", "--ops", "gather", check_status=2).stderr


def test_bench_mpi_cli(cli, tmp_path):
    import json

    png = tmp_path / "b.png"
    out = cli("bench-mpi", "--np", "2", "--sizes", "1,1KiB", "--reps", "3", "--json", "--plot", str(png))
    doc = json.loads(out.stdout)
    assert doc["np"] == 2 and len(doc["records"]) == 4 and png.stat().st_size > 0
    assert "# Size" in cli("bench-mpi", "--np", "1", "--sizes", "0,8", "--reps", "2").stdout
