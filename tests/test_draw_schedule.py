"""`collsynth draw --shard K / --step K`: the transfers the core selects for one shard (its
trees) or one step, drawn as arrows along their routes next to the link-load view."""

from __future__ import annotations

import re

import pytest

import collsynth
from conftest import run_cli

ARROW = re.compile(rb'<g id="transfer-(\d+)-hop-(\d+)">')


def arrows(svg: bytes) -> list[tuple[int, int]]:
    return sorted((int(t), int(h)) for t, h in ARROW.findall(svg))


def test_ring_allgather_shard_0_is_the_chain_0_1_2_3(tmp_path):
    # ring:4 is the one-way ring i -> i+1: shard 0 leaves rank 0 and is forwarded 1 -> 2 -> 3.
    sched = collsynth.synthesize("ring:4", "allgather", "ring")
    picked = sched.transfers(shard=0, size="1KiB")
    assert [(t["src"], t["dst"], t["op"], t["level"]) for t in picked] == [
        (0, 1, "copy", 0),
        (1, 2, "copy", 1),
        (2, 3, "copy", 2),
    ]
    assert [t["hops"] for t in picked] == [[("n0", "n1")], [("n1", "n2")], [("n2", "n3")]]
    assert all(t["bytes"] == 256 and t["shard"] == 0 for t in picked)
    sched.draw(tmp_path / "s.svg", shard=0)
    svg = (tmp_path / "s.svg").read_bytes()
    assert arrows(svg) == [(t["transfer"], 0) for t in picked]  # one arrow per hop, no more


def test_ring_allreduce_shard_0_reduces_into_its_owner_then_broadcasts():
    sched = collsynth.synthesize("ring:4", "allreduce", "ring")
    picked = sorted(sched.transfers(shard=0), key=lambda t: t["level"])
    assert [(t["src"], t["dst"], t["op"]) for t in picked] == [
        (1, 2, "reduce"),
        (2, 3, "reduce"),
        (3, 0, "reduce"),
        (0, 1, "copy"),
        (1, 2, "copy"),
        (2, 3, "copy"),
    ]
    assert [t["level"] for t in picked] == [0, 1, 2, 3, 4, 5]


def test_step_1_of_the_ring_forwards_each_left_neighbours_shard(tmp_path):
    sched = collsynth.synthesize("ring:4", "allgather", "ring")
    picked = sched.transfers(step=1)
    assert sorted((t["src"], t["dst"], t["shard"]) for t in picked) == [
        (0, 1, 3),
        (1, 2, 0),
        (2, 3, 1),
        (3, 0, 2),
    ]
    sched.save(tmp_path / "s.json")
    run_cli("draw", str(tmp_path / "s.json"), "-o", str(tmp_path / "s.svg"), "--step", "1")
    assert len(arrows((tmp_path / "s.svg").read_bytes())) == 4


def test_trees_through_a_switch_are_drawn_hop_by_hop(tmp_path):
    # ForestColl on one switch: every tree edge goes rank -> switch -> rank, two arrows.
    sched = collsynth.synthesize("switch:4", "allgather", "forestcoll")
    picked = sched.transfers(shard=2)
    pieces = {t["piece"] for t in picked}
    assert len(picked) == 3 * len(pieces)  # every tree reaches the 3 other ranks
    for p in pieces:
        assert sorted(t["dst"] for t in picked if t["piece"] == p) == [0, 1, 3]
    assert all(len(t["hops"]) == 2 and t["hops"][0][1] == t["hops"][1][0] for t in picked)
    sched.save(tmp_path / "s.json")
    run_cli("draw", str(tmp_path / "s.json"), "-o", str(tmp_path / "s.svg"), "--shard", "2")
    first = (tmp_path / "s.svg").read_bytes()
    assert arrows(first) == sorted((t["transfer"], h) for t in picked for h in (0, 1))
    run_cli("draw", str(tmp_path / "s.json"), "-o", str(tmp_path / "s.svg"), "--shard", "2")
    assert (tmp_path / "s.svg").read_bytes() == first  # same input, same bytes
    # the load view is still there: without --shard the same file has no transfer arrows
    run_cli("draw", str(tmp_path / "s.json"), "-o", str(tmp_path / "t.svg"))
    assert arrows((tmp_path / "t.svg").read_bytes()) == []
    assert b"MB over the link" in first
    run_cli("draw", str(tmp_path / "s.json"), "-o", str(tmp_path / "s.png"), "--step", "0")
    assert (tmp_path / "s.png").read_bytes().startswith(b"\x89PNG")


def test_shards_and_steps_each_cover_every_transfer_once():
    sched = collsynth.synthesize("dgx-a100:1", "allreduce", "forestcoll")
    for kind, n in [("shard", sched.n_ranks), ("step", sched.steps)]:
        seen = [t["transfer"] for k in range(n) for t in sched.transfers(**{kind: k})]
        assert sorted(seen) == list(range(sched.n_transfers)), kind
    with pytest.raises(collsynth.BadInput, match="the schedule has 8 shards"):
        sched.transfers(shard=8)


@pytest.mark.parametrize("dump", ["rccl-mi300x-8gpu.xml", "pcie-rtx3090-8gpu-2socket.xml"])
def test_imported_boxes_have_distinct_labels_that_do_not_overlap(dump):
    """Two imported boxes: every switch's label is its own (a PCI bridge by its bus id, not
    "0"; each NIC half by NIC and direction), and no two labels overlap on the drawing."""
    from pathlib import Path

    from collsynth import draw

    xml = Path(__file__).resolve().parent / "data" / "nccl-topo" / dump
    topo = collsynth.Topology.load_nccl_xml(xml, boxes=2, fabric="rails")
    labels = [(n.group, draw._switch_label(n)) for n in topo.nodes if n.type == "switch"]
    assert len(set(labels)) == len(labels), labels
    assert not any(text in ("0", "tx", "rx") for _, text in labels), labels
    fig = draw._figure(topo, None)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_text() and t.get_fontsize() <= 7]
    assert len(boxes) >= len(labels)
    overlapping = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if a.overlaps(b)]
    import matplotlib.pyplot as plt

    plt.close(fig)
    assert overlapping == []
