"""nccl-ring / nccl-tree through the CLI: NCCL's channels on dgx-a100:2 (docs/nccl.md)."""

from __future__ import annotations

from fractions import Fraction

from conftest import run_json


def test_nccl_ring_allreduce_on_dgx_a100_2():
    s = run_json("synth", "dgx-a100:2", "-c", "allreduce", "-a", "nccl-ring")
    assert s["algorithm"] == "nccl-ring"
    # 8 channels at 24 GB/s (one per NIC), doubled by connect.cc's Postset
    assert (s["nccl_search_channels"], s["nccl_channels"], s["nccl_channel_speed_GBps"]) == (8, 16, 24.0)
    # channel c enters both boxes at NIC c's GPU: every NIC carries a channel
    assert [ring[0] for ring in s["nccl_rings"]] == list(range(8))
    assert [ring[8] for ring in s["nccl_rings"]] == list(range(8, 16))
    assert s["transfers"] == 16 * 2 * 16 * 15
    # each NIC direction carries 2 channels x 2(n-1)/n x M/16 at 25 GB/s: 60/256 M / 25
    plain = run_json("synth", "dgx-a100:2", "-c", "allreduce", "-a", "ring")
    assert Fraction(plain["bandwidth_factor"]) == 4 * Fraction(s["bandwidth_factor"])


def test_nccl_tree_allreduce_on_dgx_a100_2():
    s = run_json("synth", "dgx-a100:2", "-c", "allreduce", "-a", "nccl-tree")
    parents = s["nccl_tree_parents"]
    assert len(parents) == s["nccl_channels"] == 16
    # channel 0 runs tree 1 (box 0 on top), channel 8 its mirror (box 1 on top)
    assert (parents[0][0], parents[0][8], parents[8][8], parents[8][0]) == (None, 0, None, 8)
