"""Uniform all-to-all throughput (`topo show --alltoall`): the multi-commodity flow LP on small
topologies, against the direct-connect paper's Table 7 (unit link capacity), and the
bandwidth-tax estimate above the LP's size limit."""

from __future__ import annotations

import pytest

from conftest import run_cli, run_json


@pytest.mark.parametrize(
    "spec, rate",
    [
        ("line(bipartite:4,4,bw=1)", 0.05714),  # Table 7, N = 32: L(K_{4,4}) MCF 5.71e-2
        ("complete:6,bw=3", 3.0),  # every pair has its own link
        ("ring:5,bw=1", 0.1),  # 5 links / (5 * (1+2+3+4)) hops
    ],
)
def test_alltoall_lp(spec, rate):
    s = run_json("topo", "show", spec, "--alltoall")
    assert s["alltoall_exact"] is True
    assert s["alltoall_rate_GBps"] == pytest.approx(rate, rel=1e-3)


def test_alltoall_time_and_estimate():
    # torus:16x16: 256 ranks x 1024 links is above the LP limit; estimate = 1024 / (256 * 2048).
    s = run_json("topo", "show", "torus:16x16,bw=1", "--alltoall", "--size", "1MiB")
    assert s["alltoall_exact"] is False
    assert s["alltoall_rate_GBps"] == pytest.approx(1 / 512)
    # each rank sends 1 MiB: 4096 B to each of 256 ranks at 1/512 GB/s = 2097.152 us
    assert s["alltoall_us"] == pytest.approx(4096 * 512 / 1e3)


def test_size_without_alltoall_is_bad_input():
    proc = run_cli("topo", "show", "ring:4", "--size", "1MiB", check_status=2)
    assert "--size applies to --alltoall only" in proc.stderr
