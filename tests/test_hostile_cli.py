"""The hostile-input campaign, kept: every input below is a real `collsynth`
subprocess that must exit 2 with exactly one line on stderr and leave no file behind (or, for
the valid odd inputs, exit 0). The subprocesses are cheap and run a few at a time."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from hostile import CLI, files, refusal_problems, run

import collsynth
from collsynth import BadInput, msccl

NCCL_DATA = Path(__file__).resolve().parent / "data" / "nccl-topo"
CORPUS = str(Path(__file__).resolve().parent / "data" / "realparse" / "cases")
A100_XML = str(NCCL_DATA / "hgx-a100-8gpu-simai.xml")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Hostile files made from good ones: a schedule whose step is 10^12, MSCCL XML with huge
    counts and ids, topology files with a bad version."""
    d = tmp_path_factory.mktemp("inputs")
    sched = collsynth.synthesize("ring:4", "allgather", "ring")
    good = json.loads(sched.to_json())
    (d / "good.json").write_text(sched.to_json())
    for name, step in [("step_1e12.json", 10**12), ("step_beyond.json", sched.n_transfers + 1)]:
        bad = json.loads(json.dumps(good))
        bad["transfers"][-1]["step"] = step
        (d / name).write_text(json.dumps(bad))
    xml = msccl.export(sched)["xml"]
    for name, old, new in [
        ("ngpus.xml", 'ngpus="4"', 'ngpus="1000000000"'),
        ("s_chunks.xml", 's_chunks="0"', 's_chunks="2000000000"'),
        ("s_chunks_long.xml", 's_chunks="0"', 's_chunks="1000000000000"'),
        ("tb_id.xml", '<tb id="0"', '<tb id="2000000000"'),
        ("nchunks.xml", 'nchunksperloop="4"', 'nchunksperloop="100000000"'),
    ]:
        assert old in xml
        (d / name).write_text(xml.replace(old, new, 1))
    topo = json.loads(collsynth.Topology.from_spec("ring:3").to_json())
    for name, version in [("v2.json", 2), ("vabc.json", "abc")]:
        (d / name).write_text(json.dumps({**topo, "version": version}))
    (d / "good.xml").write_text(xml)
    (d / "afile").write_text("not a directory")
    for name in ("zero.xml", "zero.json"):
        (d / name).symlink_to("/dev/zero")
    # NCCL topology XML: deep nesting, garbage, a huge NVLink count, a NIC speed that is no number
    a100 = (NCCL_DATA / "hgx-a100-8gpu-simai.xml").read_text()
    (d / "deep.xml").write_text("<system version='1'>" + "<pci>" * 100000)
    (d / "garbage.xml").write_bytes(b"\x00\xff<<<>>>")
    (d / "count.xml").write_text(a100.replace('count="2"', 'count="99999999999999999999"', 1))
    (d / "speed.xml").write_text(a100.replace('speed="200000"', 'speed="-x"', 1))
    plan = json.loads(collsynth.mscclpp.export(sched)["json"])
    for name, mutate in [
        ("plan_huge.json", lambda p: p["gpus"][0].update(input_chunks=10**12)),
        ("plan_id.json", lambda p: p["gpus"][1].update(id=7)),
        ("plan_type.json", lambda p: p["gpus"][0].update(input_chunks="4")),
        ("plan_op.json", lambda p: p["gpus"][0]["threadblocks"][0]["ops"][0].update(name="send")),
        ("plan_cells.json", lambda p: [g.update(scratch_chunks=2**24) for g in p["gpus"]]),
        ("plan_chan.json", lambda p: p["gpus"][0]["channels"][0].update(connected_to=[2**40])),
        (
            "plan_blocks.json",
            lambda p: p["gpus"][0].update(
                threadblocks=[{"id": k, "ops": [{"name": "nop"}], "channels": []} for k in range(5000)]
            ),
        ),
    ]:
        bad = json.loads(json.dumps(plan))
        mutate(bad)
        (d / name).write_text(json.dumps(bad))
    # A schedule stated per orbit (collsynth-schedule/2) with a broken symmetry.
    orbit = json.loads(collsynth.synthesize("torus:3x3", "allgather", "forestcoll").to_json())
    nodes = len(orbit["topology"]["nodes"])
    for name, mutate in [
        ("orb_neg.json", lambda o: sym_of(o)["generators"][0].__setitem__(0, -1)),
        ("orb_huge.json", lambda o: sym_of(o)["generators"][0].__setitem__(0, 10**30)),
        ("orb_text.json", lambda o: sym_of(o).update(generators="x")),
        ("orb_many.json", lambda o: sym_of(o).update(generators=[list(range(nodes))] * 65)),
        ("orb_order.json", lambda o: sym_of(o).update(order=10**40)),
        ("orb_short.json", lambda o: sym_of(o)["generators"][0].pop()),
        ("orb_swap.json", lambda o: sym_of(o).update(generators=[[1, 0, *range(2, nodes)]])),
        ("orb_one.json", lambda o: sym_of(o).update(generators=[list(range(nodes))])),
        ("orb_after.json", lambda o: o["transfers"][0].update(after=[10**15])),
        ("orb_v1.json", lambda o: o.update(format="collsynth-schedule/1")),
        ("orb_links.json", lambda o: sym_of(o).update(links="some")),
        (
            "orb_used.json",
            lambda o: sym_of(o).update(links="used", order=2, generators=[[1, 0, *range(2, nodes)]]),
        ),
    ]:
        bad = json.loads(json.dumps(orbit))
        mutate(bad)
        (d / name).write_text(json.dumps(bad))
    # Range transfers (a count on a transfer, collsynth-schedule/2): BFB's from 64 ranks.
    ranged = json.loads(collsynth.synthesize("torus:8x8", "allgather", "bfb").to_json())
    run_at = next(i for i, t in enumerate(ranged["transfers"]) if t.get("count", 1) > 1 and t["after"])
    for name, mutate in [
        ("rng_zero.json", lambda o: o["transfers"][run_at].update(count=0)),
        ("rng_past.json", lambda o: o["transfers"][run_at].update(count=10**6)),
        ("rng_huge.json", lambda o: o["transfers"][run_at].update(count=10**12)),
        ("rng_max.json", lambda o: o["transfers"][run_at].update(count=2**32 - 1)),
        ("rng_text.json", lambda o: o["transfers"][run_at].update(count="3")),
        ("rng_after.json", lambda o: o["transfers"][run_at].update(after=[64 * 252 - 1])),
        ("rng_v1.json", lambda o: o.update(format="collsynth-schedule/1")),
    ]:
        bad = json.loads(json.dumps(ranged))
        mutate(bad)
        (d / name).write_text(json.dumps(bad))
    return d


def sym_of(schedule: dict) -> dict:
    return schedule["symmetry"]


# (argv, a fragment the one stderr line must contain); paths are relative to the inputs.
BAD = [
    (["synth", "ring:8", "-c", "allreduce", "-a", "ring", "--pipeline", "1000000000"], "chunk transfers"),
    (["simulate", "{d}/step_1e12.json"], "too large"),
    (["synth", "dgx-a100:1", "-c", "allgather", "-a", "forestcoll", "--tree-shape", "tall"], "--tree-shape"),
    (["synth", "dgx-a100:1", "-c", "allgather", "-a", "ring", "--tree-shape", "shallow"], "tree-shape"),
    (
        ["synth", "dgx-a100:1", "-c", "allgather", "-a", "forestcoll", "--tree-shape", "SHALLOW-ALL"],
        "'SHALLOW-ALL' is not one of budget, shallow, shallow-all",
    ),
    (
        ["synth", "dgx-a100:1", "-c", "allgather", "-a", "forestcoll", "--tree-shape", ""],
        "--tree-shape: empty",
    ),
    (
        ["synth", "dgx-a100:1", "-c", "allreduce", "-a", "forestcoll", "--tree-shape", "shallow-all,shallow"],
        "is not one of",
    ),
    (
        ["synth", "dgx-a100:1", "-c", "reduce-scatter", "-a", "nccl-ring", "--tree-shape", "shallow-all"],
        "does not apply to algorithm 'nccl-ring'",
    ),
    (
        ["synth", "torus:4x4", "-c", "allgather", "-a", "forestcoll", "--tree-shape", "boxes"],
        "needs identical boxes of direct links on one switch",
    ),
    (
        ["synth", "mi250:2,gcds=4", "-c", "broadcast", "-a", "forestcoll", "--tree-shape", "boxes"],
        "applies to allgather, reduce-scatter and allreduce",
    ),
    (
        [
            "synth",
            "dgx-a100:2",
            "-c",
            "reduce-scatter",
            "-a",
            "forestcoll",
            "--tree-shape",
            "boxes-staggered",
        ],
        "--tree-shape boxes-staggered needs identical boxes of direct links on one switch",
    ),
    (
        ["synth", "mi250:2,gcds=4", "-c", "reduce", "-a", "forestcoll", "--tree-shape", "boxes-staggered"],
        "boxes-staggered applies to allgather, reduce-scatter and allreduce",
    ),
    (
        [
            "synth",
            "mi250:2,gcds=4",
            "-c",
            "reduce-scatter",
            "-a",
            "forestcoll",
            "--tree-shape",
            "Boxes-Staggered",
        ],
        "is not one of budget, shallow, shallow-all, boxes, boxes-staggered, boxes-weighted, boxes-direct",
    ),
    *[
        (
            ["synth", "mi250:2,gcds=4", "-c", "allgather", "-a", "forestcoll", "--tree-shape", shape]
            + ["--max-trees", "0"],
            "--max-trees must be in 1..=1024, got 0",
        )
        for shape in ["boxes", "boxes-staggered", "boxes-weighted", "boxes-direct"]
    ],
    *[
        (
            [
                "synth",
                "mi250:2,gcds=4",
                "-c",
                "allgather",
                "-a",
                "forestcoll",
                "--tree-shape",
                shape,
            ]
            + [f"--max-trees={value}"],
            message,
        )
        for shape in ["boxes-weighted", "boxes-direct"]
        for value, message in [
            ("-1", "--max-trees: '-1' is not a whole number"),
            ("1025", "--max-trees must be in 1..=1024, got 1025"),
            ("99999999999999999999999", "is not a whole number"),
            ("2.5", "--max-trees: '2.5' is not a whole number"),
        ]
    ],
    (
        ["synth", "mi250:2,gcds=4", "-c", "allgather", "-a", "forestcoll", "--tree-shape", "Boxes-Weighted"],
        "'Boxes-Weighted' is not one of budget, shallow, shallow-all, boxes, boxes-staggered, boxes-weighted",
    ),
    (
        ["synth", "dgx-a100:2", "-c", "reduce-scatter", "-a", "forestcoll", "--tree-shape", "boxes-direct"],
        "--tree-shape boxes-direct needs identical boxes of direct links on one switch",
    ),
    (
        ["synth", "mi250:2,gcds=4", "-c", "broadcast", "-a", "forestcoll", "--tree-shape", "boxes-direct"],
        "--tree-shape boxes-direct applies to allgather, reduce-scatter and allreduce",
    ),
    (
        ["synth", "dgx-a100:2", "-c", "allgather", "-a", "forestcoll", "--tree-shape", "boxes-weighted"],
        "--tree-shape boxes-weighted needs identical boxes of direct links on one switch",
    ),
    (
        ["synth", "hgx-h100:2", "-c", "allgather", "-a", "nccl-ring", "--crossing", "RAIL"],
        "'RAIL' is not one of pxn, rail",
    ),
    (
        ["synth", "hgx-h100:2", "-c", "allgather", "-a", "nccl-ring", "--crossing", ""],
        "argument --crossing: empty value",
    ),
    (["synth", "hgx-h100:2", "-c", "allgather", "-a", "forestcoll", "--crossing", "rail"], "crossing"),
    (["synth", "ring:5", "-c", "allgather", "-a", "ring", "--size", "-16"], "is negative"),
    (["simulate", "{d}/step_beyond.json"], "beyond the number of transfers"),
    (["verify", "{d}/step_beyond.json"], "beyond the number of transfers"),
    (["verify", "{d}/ngpus.xml"], "<gpu> element(s)"),
    # verify FILE.xml --topology T --size S: the time of the program as written.
    (["verify", "{d}/good.xml", "--size", "1MiB"], "--size applies with --topology"),
    (["verify", "{d}/good.json", "--size", "1MiB"], "--size applies to MSCCL XML files with --topology"),
    (["verify", "{d}/good.xml", "--topology", "ring:4", "--size", "-1"], "is negative"),
    (
        ["verify", "{d}/good.xml", "--topology", "ring:4", "--size", "99999999999999999999999TiB"],
        "2^63 bytes",
    ),
    (["verify", "{d}/good.xml", "--topology", "ring:4", "--size", "1e300"], "cannot read size"),
    (["verify", "{d}/good.xml", "--topology", "ring:4", "--size", "x\ny"], "cannot read size"),
    (["verify", "{d}/good.xml", "--topology", "ring:4", "--size", ""], "empty value"),
    (["verify", "{d}/good.xml", "--topology", "ring:5", "--size", "1MiB"], "--topology has 5 ranks"),
    (["verify", "{d}/plan_huge.json"], "above the largest value read here"),
    (["verify", "{d}/plan_id.json"], "GPU rank does not match"),
    (["verify", "{d}/plan_type.json"], "expected a whole number"),
    (["verify", "{d}/plan_op.json"], "Invalid operation type: send"),
    (["verify", "{d}/plan_cells.json"], "cells the interpreter holds"),
    (["verify", "{d}/plan_chan.json"], "above the largest value read here"),
    (["verify", "{d}/orb_neg.json"], "symmetry.generators[0]: expected a whole number"),
    (["simulate", "{d}/orb_huge.json"], "symmetry.generators[0]: expected a whole number"),
    (["verify", "{d}/orb_text.json"], "symmetry.generators: expected a list"),
    (["verify", "{d}/orb_many.json"], "expected 1 to 64 generators"),
    (["verify", "{d}/orb_order.json"], "symmetry.order: expected a whole number"),
    (["verify", "{d}/orb_short.json"], "must permute the topology's 9 nodes"),
    (["simulate", "{d}/orb_swap.json"], "which is no link"),
    (["verify", "{d}/orb_one.json"], "group of order 1"),
    (["verify", "{d}/orb_after.json"], "beyond the 72 of the flat schedule"),
    (["export", "{d}/orb_v1.json", "--format", "msccl-xml", "-o", "x"], "only a collsynth-schedule/2 file"),
    (["verify", "{d}/orb_links.json"], 'symmetry.links: expected "used"'),
    (["simulate", "{d}/orb_used.json"], "which the schedule uses, to no link"),
    (["verify", "{d}/plan_blocks.json"], "thread blocks: beyond the 4096"),
    (["verify", "{d}/rng_zero.json"], "count 0: a transfer moves at least one piece"),
    (["simulate", "{d}/rng_past.json"], "runs past the schedule's"),
    (["verify", "{d}/rng_huge.json"], "count: 1000000000000 is too large"),
    (["export", "{d}/rng_max.json", "--format", "msccl-xml", "-o", "x"], "more than the 268435456"),
    (["verify", "{d}/rng_text.json"], "count: expected a whole number"),
    (["verify", "{d}/rng_after.json"], "beyond the 16128 transfers"),
    (["simulate", "{d}/rng_v1.json"], "only a collsynth-schedule/2 file holds range transfers"),
    (["verify", "{d}/plan_id.json", "--topology", "ring:4"], "--topology applies"),
    (
        ["synth", "ring:4", "-c", "allgather", "-a", "ring", "--threadblocks", "2"],
        "--format mscclpp-json only",
    ),
    (
        [
            "synth",
            "ring:4",
            "-c",
            "allgather",
            "-a",
            "ring",
            "--format",
            "mscclpp-json",
            "--threadblocks",
            "0",
        ],
        "1 to 64",
    ),
    (
        [
            "synth",
            "ring:4",
            "-c",
            "allgather",
            "-a",
            "ring",
            "--format",
            "mscclpp-json",
            "--threadblocks",
            "99999999999999999999",
        ],
        "1 to 64",
    ),
    (
        ["synth", "ring:4", "-c", "broadcast", "-a", "ring", "--format", "mscclpp-json"],
        "allgather, reduce-scatter and allreduce",
    ),
    (["verify", "{d}/s_chunks.xml"], "chunks over all ranks"),
    (
        ["verify", "{d}/s_chunks_long.xml"],
        "is read as -727379968 by msccl-nccl (strtol base 0: int holds it)",
    ),
    # Packed for msccl-nccl (120 thread blocks per rank): RCCL holds 64.
    (
        ["verify", CORPUS + "/ours-dgx-a100x2-allreduce-forestcoll-msccl-nccl.xml", "--runtime", "rccl"],
        "rccl allows at most 64",
    ),
    (["verify", "{d}/s_chunks.xml", "--runtime", "cuda"], "invalid choice"),
    *(
        (["synth", "dgx-a100:1", "-c", "allreduce", "-a", alg, "--max-channels", v], "--max-channels")
        for alg in ("nccl-ring", "nccl-tree")
        for v in ("0", "-1", "99999999999999999999", "2.5", "x")
    ),
    (["synth", "ring:4", "-c", "allgather", "-a", "ring", "--max-channels", "2"], "max-channels"),
    (
        [
            "run",
            CORPUS + "/ours-dgx-a100x2-allreduce-forestcoll-msccl-nccl.xml",
            "--np",
            "16",
            "--runtime",
            "rccl",
        ],
        "rccl does not load it as written",
    ),
    (["verify", "{d}/nchunks.xml"], "chunks over all ranks"),
    (["verify", "{d}/tb_id.xml"], "tb 2000000000: id is not"),
    (["run", "{d}/ngpus.xml", "--np", "4"], "<gpu> element(s)"),
    (["run", "{d}/missing [/x] $a$.xml", "--np", "2"], "cannot read file"),
    (["run", "{d}/ngpus.xml", "--np", "99999999999999999999"], "--np"),
    (["synth", "ring:8", "-c", "broadcast", "-a", "ring", "--root", "99999999999999999999"], "--root"),
    (["synth", "ring:8", "-c", "broadcast", "-a", "ring", "--root", "-1"], "--root"),
    (["bound", "ring:8", "-c", "broadcast", "--root", "-1"], "--root"),
    (["synth", "ring:8", "-c", "allreduce", "-a", "auto", "--root", "8"], "--root 8 is not a rank"),
    (["synth", "ring:8", "-c", "allreduce", "-a", "auto", "--root", "99999999999999999999"], "--root"),
    (["synth", "ring:8", "-c", "allreduce", "-a", "auto", "--root", "-1"], "--root"),
    (["circulant", "check", "--max-p", "5", "--threads", "-1"], "--threads"),
    (["circulant", "check", "--max-p", "5", "--random", "99999999999"], "--random"),
    (
        [
            "synth",
            "ring:4",
            "-c",
            "allgather",
            "-a",
            "ring",
            "--format",
            "msccl-xml",
            "--size-range",
            "1-1e24",
        ],
        "--size-range",
    ),
    (
        [
            "synth",
            "ring:4",
            "-c",
            "allgather",
            "-a",
            "auto",
            "--format",
            "msccl-xml",
            "--size-windows",
            "1-99999999999999999999999",
        ],
        "--size-windows",
    ),
    (
        [
            "synth",
            "ring:4",
            "-c",
            "allgather",
            "-a",
            "auto",
            "--format",
            "msccl-xml",
            "--size-windows",
            "abc",
        ],
        "--size-windows 'abc'",
    ),
    (
        ["synth", "ring:4", "-c", "allgather", "-a", "auto", "--format", "msccl-xml", "--size-windows=-5-10"],
        "--size-windows '-5-10'",
    ),
    (
        [
            "synth",
            "ring:4",
            "-c",
            "allgather",
            "-a",
            "auto",
            "--format",
            "msccl-xml",
            "--size-windows",
            "0-0",
        ],
        "1 <= MIN",
    ),
    (
        [
            "synth",
            "ring:4",
            "-c",
            "allgather",
            "-a",
            "auto",
            "--format",
            "msccl-xml",
            "--size-windows",
            "2KiB-1KiB",
        ],
        "MIN is above MAX",
    ),
    (
        [
            "synth",
            "ring:4",
            "-c",
            "allgather",
            "-a",
            "auto",
            "--format",
            "msccl-xml",
            "--size-windows",
            "1KiB-1GiB",
            "-o",
            "{d}/afile",
        ],
        "not a directory",
    ),
    (["synth", "ring:4", "-c", "allgather", "-a", "ring", "--time-only"], "--time-only applies"),
    (["synth", "ring:4", "-c", "allgather", "-a", "nosuch", "--time-only"], "unknown algorithm"),
    (["synth", "ring:4", "-c", "allgather", "-a", "ring", "--form", "compact"], "invalid choice: 'compact'"),
    (["synth", "ring:4", "-c", "allgather", "-a", "bfb", "--time-only", "--form", "flat"], "drop --form"),
    (
        ["synth", "ring:4", "-c", "allgather", "-a", "auto", "--format", "msccl-xml"]
        + ["--size-windows", "1KiB-1GiB", "--form", "flat"],
        "drop --form",
    ),
    (["synth", "ring:4", "-c", "allgather", "-a", "ring", "-o", "{d}/afile"], "not a directory"),
    (["synth", "ring:4", "-c", "allgather", "-a", "ring", "-o", "{d}/afile/sub"], "not a directory"),
    (["export", "{d}/step_beyond.json", "--format", "msccl-xml", "-o", "{d}/afile/x.xml"], ""),
    (["topo", "export", "ring:4", "-o", "{d}/afile/t.json"], "not a directory"),
    (["bench-mpi", "--np", "2", "--timeout", "-1"], "--timeout"),
    (["bench-mpi", "--np", "99999999999999999999"], "--np"),
    (["bench-mpi", "--np", "2", "--sizes", "4Kb"], "unknown size unit 'Kb'"),
    (["run", "{d}/ngpus.xml", "--np", "-3"], "--np"),
    (["synth", "torus:1x1", "-c", "allreduce", "-a", "ring", "--json"], "at least 2"),
    (["bound", "torus:1x1", "-c", "allgather", "--json"], "at least 2"),
    (["synth", "torus:1x1", "-c", "allgather", "-a", "bfb", "--time-only"], "at least 2"),
    (["topo", "show", "{d}/v2.json"], "version"),
    (["topo", "show", "{d}/vabc.json"], "version"),
    (["find", "--nodes", "-5", "--degree", "2"], "-5"),
    (["find", "--nodes", "99999999999999999999999", "--degree", "2"], "--nodes"),
    (["compare", "ring:4", "-c", "allgather", "--sizes", "abc"], "--sizes"),
    (["compare", "ring:4", "-c", "allgather", "-b", "0", "-e", "8"], "minbytes must be at least 1"),
    (["compare", "ring:4", "-c", "allgather", "-b", "8", "-e", "64", "-f", "1"], "at least 2"),
    (["compare", "ring:4", "-c", "allgather", "-b", "8G", "-e", "8"], "more than maxbytes"),
    (["compare", "ring:4", "-c", "allgather", "-b", "8X"], "8X"),
    (["compare", "ring:4", "-c", "allgather", "-e", "99999999999G"], "2^63"),
    (["compare", "ring:4", "-c", "allgather", "-f", "-2"], "--stepfactor"),
    (["compare", "ring:4", "-c", "allgather", "--sizes", "1KiB", "-b", "8"], "one or the other"),
    (["draw", "{d}/missing.json", "-o", "x.png"], "cannot read file"),
    (["draw", "{d}/step_beyond.json", "-o", "x.png"], "beyond the number of transfers"),
    (["draw", "{d}/good.json", "-o", "x.jpg"], ".svg or .png"),
    (["draw", "{d}/good.json", "-o", "x.png", "--size", "4X"], "unknown size unit"),
    (["draw", "{d}/good.json", "-o", "{d}/afile/x.svg"], "not a directory"),
    (["draw", "{d}/good.json"], "--output"),
    (["draw", "{d}/good.json", "-o", "x.svg", "--shard", "4"], "shard 4: the schedule has 4 shards (0..3)"),
    (["draw", "{d}/good.json", "-o", "x.svg", "--step", "3"], "step 3: the schedule has 3 steps (0..2)"),
    (["draw", "{d}/good.json", "-o", "x.svg", "--step", "99999999999999999999"], "--step"),
    (["draw", "{d}/good.json", "-o", "x.svg", "--shard", "-1"], "--shard"),
    (["draw", "{d}/good.json", "-o", "x.svg", "--shard", "one"], "--shard"),
    (["draw", "{d}/good.json", "-o", "x.svg", "--shard", "0", "--step", "0"], "not allowed with"),
    (["draw", "{d}/good.json", "-o", "x.gif", "--shard", "0"], ".svg or .png"),
    (
        ["synth", "ring:8", "-c", "allgather", "-a", "forestcoll", "--max-trees", "1000000000000"],
        "--max-trees",
    ),
    (["synth", "traff:8", "-c", "broadcast", "-a", "circulant", "--blocks", "1000000000"], "--blocks"),
    (["synth", "ring:8", "-c", "allgather", "-a", "tacos", "--chunks-per-npu", "1000000000"], "chunks"),
    (["synth", "switch:8", "-c", "allgather", "-a", "tacos", "--sampler", "fast"], "--sampler"),
    (["synth", "switch:8", "-c", "allgather", "-a", "tacos", "--sampler", "sets"], "--sampler sets"),
    (["synth", "switch:8", "-c", "allgather", "-a", "ring", "--sampler", "direct"], "sampler"),
    (["topo", "show", "ring:100000000"], "N must be"),
    (["topo", "show", "torus:100000x100000"], "too many nodes"),
    (["topo", "show", "line^30(complete:8)"], "at most"),
    (["topo", "show", "product(ring:1000;ring:1000;ring:1000)"], "at most"),
    (["topo", "show", "dgx-a100:100000000"], "between"),
    (["synth", "ring:4", "-c", "allgather", "-a", "ring", b"\xff\xfe"], "UTF-8"),
    ([b"topo", b"show", b"ring:\xff"], "UTF-8"),
    (["topo", "import", "{d}/deep.xml", "-o", "x.json"], "nested deeper than 64"),
    (["topo", "import", "{d}/garbage.xml", "-o", "x.json"], "cannot read file"),
    (["topo", "import", "{d}/count.xml", "-o", "x.json"], "is not a whole number"),
    (["topo", "import", "{d}/speed.xml", "-o", "x.json"], "is not a speed"),
    (["topo", "import", "{d}/missing.xml", "-o", "x.json"], "cannot read file"),
    (["topo", "import", str(NCCL_DATA / "azure-ndv4-a100-partial.xml"), "-o", "x.json"], "partial topology"),
    (["topo", "import", A100_XML, "-o", "x.json", "--boxes", "0"], "boxes"),
    (["topo", "import", A100_XML, "-o", "x.json", "--boxes", "99999999999999999999"], "boxes"),
    (["topo", "import", A100_XML, "-o", "x.json", "--boxes", "two"], "--boxes"),
    (["topo", "import", A100_XML, "-o", "x.json", "--boxes", "2", "--fabric", "mesh"], "unknown fabric"),
    (["topo", "import", A100_XML, "-o", "x.json", "--fabric", "fat-tree:3"], "K must be an even"),
    (["topo", "import", A100_XML, "-o", "x.json", "--boxes", "200", "--fabric", "fat-tree:4"], "host ports"),
    (["topo", "import", A100_XML, "-o", "x.json", "--boxes", "2", "--fabric-bandwidth", "-5"], "positive"),
    (
        ["topo", "import", A100_XML, "-o", "x.json", "--boxes", "2", "--fabric-bandwidth", "x"],
        "--fabric-bandwidth",
    ),
    (
        ["topo", "import", A100_XML, "-o", "x.json", "--boxes", "2", "--fabric-latency", "-1"],
        "fabric latency",
    ),
    (["topo", "import", A100_XML, "-o", "x.json", "--latency", "nan"], "--latency"),
    (["topo", "import", A100_XML, "-o", "x.json", "--fabric-bandwidth", "10"], "need --fabric"),
    (["topo", "import", A100_XML, "-o", "{d}/afile/x.json"], "afile"),
    (["topo", "show", "nccl:{d}/deep.xml"], "nested deeper than 64"),
    (["topo", "show", "nccl:{d}/missing.xml*2"], "cannot read"),
    (["topo", "show", f"nccl:{A100_XML}*2,fabric=fat-tree"], "needs k=K"),
    # Empty values and empty list items: refused, never read as "not given".
    *(
        (argv, fragment)
        for argv, fragment in [
            (["compare", "ring:4", "-c", "allgather", "--sizes", ""], "argument --sizes: empty value"),
            (["compare", "ring:4", "-c", "allgather", "--sizes", ","], "--sizes ',': an empty item"),
            (["compare", "ring:4", "-c", "allgather", "--sizes", "1KiB,,2KiB"], "an empty item"),
            (["compare", "ring:4", "-c", "allgather", "-b", ""], "argument -b/--minbytes: empty value"),
            (["compare", "ring:4", "-c", "allgather", "-e="], "argument -e/--maxbytes: empty value"),
            (["compare", "ring:4", "-c", "allgather", "--plot", ""], "argument --plot: empty value"),
            (["compare", "ring:4", "-c", "allgather", "--plot="], "argument --plot: empty value"),
            (["synth", "ring:4", "-c", "allgather", "-a", "ring", "--format", ""], "--format: empty value"),
            (["synth", "ring:4", "-c", "allgather", "-a", "ring", "--format", ","], "--format ',': an empty"),
            (["synth", "ring:4", "-c", "allgather", "-a", "ring", "--format", "json,"], "an empty item"),
            (["synth", "ring:4", "-c", "allgather", "-a", "ring", "-o", ""], "-o/--output: empty value"),
            (["synth", "ring:4", "-c", "allgather", "-a", "ring", "--size", ""], "--size: empty value"),
            (["synth", "", "-c", "allgather", "-a", "ring"], "empty value"),
            (["export", "{d}/good.json", "--format", "msccl-xml", "-o", ""], "-o/--output: empty value"),
            (["topo", "export", "ring:4", "-o", ""], "empty value"),
            (["draw", "{d}/good.json", "-o", ""], "empty value"),
            (["verify", ""], "empty value"),
            (["simulate", "{d}/good.json", "--size", ""], "--size: empty value"),
            (["run", "{d}/good.json", "--np", "4", "-b", ""], "-b/--minbytes: empty value"),
            (["run", "{d}/good.json", "--np", "4", "--size", ""], "--size: empty value"),
            (["bench-mpi", "--np", "2", "--sizes", ""], "--sizes: empty value"),
            (["bench-mpi", "--np", "2", "--sizes", "1,"], "--sizes '1,': an empty item"),
            (["bench-mpi", "--np", "2", "--ops", ","], "--ops ',': an empty item"),
            (["bench-mpi", "--np", "2", "--plot", ""], "--plot: empty value"),
            (["find", "--sweep", "8", "--degrees", "2,,4"], "--degrees '2,,4': an empty item"),
            (["topo", "import", A100_XML, "-o", "x.json", "--name", ""], "--name: empty value"),
        ]
    ),
    # MPI runs that cannot fit, or cannot end in time: refused before mpiexec starts.
    (["run", "{d}/good.json", "--np", "4", "--size", "1TiB"], "more than the"),
    (["run", "{d}/good.json", "--np", "4", "--size", "1T"], "needs about 24 TiB (4 ranks x 6 TiB"),
    (["run", "{d}/good.json", "--np", "4", "-b", "1G", "-e", "1T"], "of memory available"),
    (["run", "{d}/good.json", "--np", "4", "--reps", "1000000000"], "must be a whole number from 1 to 10000"),
    (["run", "{d}/good.json", "--np", "4", "--size", "1KiB", "-b", "8"], "give one or the other"),
    (["run", "{d}/good.json", "--np", "4", "-b", "8", "-e", "64", "-f", "1"], "at least 2"),
    (["run", "{d}/good.json", "--np", "4", "-e", "8X"], "8X"),
    # the ranks' own error, relayed with one prefix (this one starts mpiexec: 4 tiny ranks)
    (["run", "{d}/good.json", "--np", "4", "--size", "6"], "6 bytes is not a whole number of float32"),
    (["bench-mpi", "--np", "2", "--timeout", "1e20"], "--timeout 1e+20: at most 86400 s"),
    (["bench-mpi", "--np", "2", "--reps", "1000000000"], "beyond the time limit of 600 s"),
    (["bench-mpi", "--np", "2", "--reps", "100000", "--timeout", "1"], "beyond the time limit of 1 s"),
    (["bench-mpi", "--np", "4", "--sizes", "1TiB"], "of memory available"),
    # Inputs of unbounded size: every reader stops past its kind's cap.
    *(
        ([*argv], f"/dev/zero: larger than the {cap} read for {kind} (stopped reading there)")
        for argv, cap, kind in [
            (["verify", "/dev/zero"], "1 GiB", "a schedule JSON"),
            (["simulate", "/dev/zero", "--size", "1MiB"], "1 GiB", "a schedule JSON"),
            (["export", "/dev/zero", "--format", "msccl-xml", "-o", "x.xml"], "1 GiB", "a schedule JSON"),
            (["draw", "/dev/zero", "-o", "x.png"], "1 GiB", "a schedule JSON"),
            (["run", "/dev/zero", "--np", "2"], "1 GiB", "a schedule JSON"),
            (["topo", "import", "/dev/zero", "-o", "x.json"], "4 MiB", "an NCCL topology XML"),
            (["topo", "show", "nccl:/dev/zero*2"], "4 MiB", "an NCCL topology XML"),
        ]
    ),
    (["simulate", "/dev/urandom", "--size", "1MiB"], "/dev/urandom: larger than the 1 GiB read"),
    (["topo", "import", "/dev/urandom", "-o", "x.json"], "/dev/urandom: larger than the 4 MiB read"),
    (["verify", "{d}/zero.xml"], "zero.xml: larger than the 256 MiB read for an MSCCL XML"),
    (["run", "{d}/zero.xml", "--np", "2"], "zero.xml: larger than the 256 MiB read for an MSCCL XML"),
    (["topo", "show", "{d}/zero.json"], "zero.json: larger than the 256 MiB read for a topology JSON"),
    (["synth", "{d}/zero.json", "-c", "allgather", "-a", "ring"], "larger than the 256 MiB read"),
    (["verify", "{d}"], "cannot read file: is a directory"),
    (["topo", "import", "{d}/garbage.xml", "-o", "x.json"], "not UTF-8 text"),
]


def test_hostile_inputs_exit_2_with_one_line_and_leave_nothing(inputs, tmp_path):
    before = files(inputs)
    problems = refusal_problems(BAD, inputs, tmp_path, workers=4, one_prefix=True)
    assert problems == []
    assert files(inputs) == before  # nothing written next to the inputs either


def test_odd_but_valid_inputs_succeed(tmp_path):
    """A 270-character nested spec; paths and names that look like rich markup or matplotlib
    math text; a topology file as Python's json writes it (exponents)."""
    deep = "line^1(" * 38 + "ring:3" + ")" * 38
    assert len(deep) > 270
    name = "$\\undefinedcmd$ [/x] [bold]"
    t = {
        "name": name,
        "nodes": [{"name": "a[/x]", "type": "compute"}, {"name": "b", "type": "compute"}],
        "links": [{"src": "a[/x]", "dst": "b", "bandwidth": 1e20, "latency": 1e-05, "bidirectional": True}],
    }
    text = json.dumps(t)
    assert "1e+20" in text and "1e-05" in text  # what Python writes
    (tmp_path / "t[").mkdir()
    (tmp_path / "t[" / "x].json").write_text(text)
    cases = [
        (["topo", "show", deep], "N"),
        (["topo", "show", "t[/x].json"], name),
        (["topo", "draw", "t[/x].json", "-o", "draw[/x].png"], "wrote draw[/x].png"),
        (
            ["synth", "t[/x].json", "-c", "allgather", "-a", "ring", "-o", "out[/x]"],
            "wrote out[/x]/schedule.json",
        ),
    ]
    for argv, fragment in cases:
        proc = run(argv, tmp_path)
        out = proc.stdout.decode()
        assert (proc.returncode, proc.stderr) == (0, b""), (argv, proc.stderr)
        assert fragment in out, (argv, out)
    assert (tmp_path / "draw[" / "x].png").stat().st_size > 0
    # zero bytes on zero-latency links take zero time: algbw 0, strict JSON (no Infinity)
    for extra in [[], ["-a", "bfb", "--time-only"]]:
        argv = ["synth", "ring:4,lat=0", "-c", "allgather", "-a", "ring", "--size", "0", "--json", *extra]
        proc = run(argv, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout, parse_constant=lambda c: pytest.fail(c))["algbw_GBps"] == 0
    back = collsynth.Schedule.load(tmp_path / "out[" / "x]" / "schedule.json")
    assert back.verify()["transfers"] == 2 and back.topology.name == name


def test_files_honour_the_umask(tmp_path):
    for mask, want in [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)]:
        d = tmp_path / f"u{mask:o}"
        d.mkdir()
        argv = ["synth", "ring:4", "-c", "allgather", "-a", "ring", "--format", "json,msccl-xml", "-o", "out"]
        assert run(argv, d, umask=mask).returncode == 0
        assert run(["topo", "export", "ring:4", "-o", "t.json"], d, umask=mask).returncode == 0
        written = [d / "out" / "schedule.json", d / "out" / "schedule.xml", d / "t.json"]
        assert [oct(stat.S_IMODE(p.stat().st_mode)) for p in written] == [oct(want)] * 3
        assert files(d) == {"out", "out/schedule.json", "out/schedule.xml", "t.json"}  # no temp files


# A run stopped while writing: os.replace (the last act of a write) delivers the signal to its
# own process first, so the signal lands exactly while the temporary file exists.
STOPPED = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job inherits SIG_IGN
real = os.replace
def replace(a, b):
    os.kill(os.getpid(), signal.{sig})
    time.sleep(30)
os.replace = replace
from collsynth.cli import main
sys.exit(main({argv!r}))
"""


@pytest.mark.parametrize(
    ("sig", "status", "word"), [("SIGTERM", 143, "terminated"), ("SIGINT", 130, "interrupted")]
)
def test_a_signal_while_writing_leaves_no_temporary_file(tmp_path, sig, status, word):
    argv = ["synth", "ring:4", "-c", "allgather", "-a", "ring", "-o", "out"]
    code = STOPPED.format(sig=sig, argv=argv)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert (proc.returncode, proc.stderr) == (status, f"collsynth: error: {word}\n")
    assert files(tmp_path) <= {"out"}  # the directory may exist; no file, hidden or not
    assert not list((tmp_path / "out").iterdir()) if (tmp_path / "out").exists() else True


def test_same_input_same_bytes_timings_only_in_json(tmp_path):
    """ForestColl reports `stage_seconds` (wall clock): in --json, never in the file."""
    outs = []
    for i in range(2):
        argv = ["synth", "ring:6", "-c", "allreduce", "-a", "forestcoll", "-o", f"o{i}", "--json"]
        proc = run(argv, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "stage_seconds" in json.loads(proc.stdout)
        outs.append((tmp_path / f"o{i}" / "schedule.json").read_bytes())
    assert outs[0] == outs[1]
    assert b"stage_seconds" not in outs[0]


def test_a_schedule_stated_per_orbit_is_the_same_bytes_twice(tmp_path):
    """The compact form (collsynth-schedule/2) and its MSCCL export: same input, same bytes."""
    outs = []
    for i in range(2):
        argv = ["synth", "torus:4x4", "-c", "allgather", "-a", "forestcoll", "-o", f"o{i}"]
        assert run(argv, tmp_path).returncode == 0
        argv = ["export", f"o{i}/schedule.json", "--format", "msccl-xml", "-o", f"x{i}.xml"]
        assert run(argv, tmp_path).returncode == 0, argv
        written = [tmp_path / f"o{i}" / "schedule.json", tmp_path / f"x{i}.xml"]
        outs.append([f.read_bytes() for f in written])
    assert b"collsynth-schedule/2" in outs[0][0]
    assert outs[0] == outs[1]


def test_size_windows_same_input_same_bytes(tmp_path):
    """Two runs of a sized export write byte-identical files (an odd but valid range: one
    byte wide)."""
    outs = []
    for i in range(2):
        argv = ["synth", "ring:4", "-c", "allreduce", "-a", "auto", "--format", "msccl-xml"]
        proc = run([*argv, "--size-windows", "1KiB-64MiB", "-o", f"w{i}"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        outs.append({p.name: p.read_bytes() for p in sorted((tmp_path / f"w{i}").iterdir())})
    assert outs[0] == outs[1] and len(outs[0]) >= 1
    one = run(
        [
            "synth",
            "ring:4",
            "-c",
            "allgather",
            "-a",
            "auto",
            "--format",
            "msccl-xml",
            "--size-windows",
            "4096-4096",
            "--json",
        ],
        tmp_path,
    )
    assert one.returncode == 0, one.stderr
    (w,) = json.loads(one.stdout)["msccl_windows"]
    assert (w["min_bytes"], w["max_bytes"]) == (4096, 4096)


def test_json_is_full_precision_with_exact_strings(tmp_path):
    proc = run(
        ["synth", "ring:7", "-c", "allreduce", "-a", "forestcoll", "--max-trees", "2", "--json"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    pairs = {
        "bound_algbw_GBps": "bound_algbw_exact",
        "rs_ag_algbw_GBps": "rs_ag_algbw_exact",
        "lp_algbw_GBps": "lp_algbw_exact",
        "forest_algbw_GBps": "forest_algbw_exact",
        "optimality": "optimality_exact",
        "size_bytes": "size_bytes_exact",
    }
    for key, exact in pairs.items():
        assert s[key] == float(Fraction(s[exact])), (key, s[key], s[exact])
    # 7 ranks: thirds and sevenths, which 3 decimals would have cut
    assert Fraction(s["forest_algbw_exact"]).denominator != 1
    assert s["forest_algbw_GBps"] != round(s["forest_algbw_GBps"], 3)
    assert [[k, float(Fraction(x))] for k, x in s["k_scan_exact"]] == s["k_scan"]


def test_no_stray_line_after_a_progress_bar(tmp_path):
    code = (
        "import time\nfrom collsynth.progress import run_with_progress\n"
        "def f():\n    time.sleep(0.5)\n    raise ValueError('x')\n"
        "try:\n    run_with_progress(f, 'label [/x]', delay=0.0)\nexcept ValueError:\n    pass\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    proc = run(["compare", "ring:4", "-c", "allgather", "--sizes", "1KiB,abc"], tmp_path)
    assert (proc.returncode, proc.stdout) == (2, b"")


def test_api_raises_bad_input_not_overflow():
    t = collsynth.Topology.from_spec("ring:4")
    s = collsynth.synthesize(t, "allgather", "ring")
    calls = [
        lambda: collsynth.synthesize(t, "broadcast", "ring", root=-1),
        lambda: collsynth.synthesize(t, "broadcast", "ring", root=10**20),
        lambda: collsynth.synthesize(t, "broadcast", "ring", root=1.5),
        lambda: collsynth.bound(t, "broadcast", root=2**64),
        lambda: s.evaluate("1MiB", pipeline=0),
        lambda: s.evaluate("1MiB", pipeline=10**30),
        lambda: s.simulate("1MiB", pipeline=-1),
        lambda: s.evaluate(10**40),
        lambda: msccl.export(s, size_range=(0, 10**24)),
        lambda: msccl.export(s, size_range="1-1e24"),
        lambda: msccl.export(s, channels=2**70),
        lambda: msccl.export(s, pipeline=-(2**70)),
        lambda: collsynth.Topology.resolve("x" * 5000),
        lambda: collsynth.Topology.from_spec("ring:\udcff"),
        lambda: collsynth.Topology.loads(json.dumps({"version": 2, "nodes": []})),
        lambda: s.transfers(shard=-1),
        lambda: s.transfers(step=2**64),
        lambda: s.transfers(shard=1.0),
        lambda: s.transfers(shard=0, step=0),
        lambda: s.transfers(),
        lambda: s.transfers(shard=4),
        lambda: s.draw("x.svg", step=3),
    ]
    for i, call in enumerate(calls):
        with pytest.raises(BadInput):
            call()
            pytest.fail(f"call {i} accepted")
    assert s.evaluate("1MiB", pipeline=1)["time_us"] > 0


def test_one_size_parser_for_every_command():
    """One rule: a bare K, M, G, T is a power of 1024 as in nccl-tests, KB/MB/GB powers of
    1000; only nccl-tests' own -b/-e read 8GB as nccl-tests does (8 GiB)."""
    from collsynth._core import size_bytes
    from collsynth.cli.bench_mpi import parse_sizes

    assert size_bytes("1MB") == "1000000" and size_bytes("1MiB") == str(1 << 20)
    assert parse_sizes("1MB,1MiB,1e+3") == [10**6, 1 << 20, 1000]
    for bare, bytes_ in [("4K", 4 << 10), ("1m", 1 << 20), ("2G", 2 << 30), ("8g", 8 << 30), ("1T", 1 << 40)]:
        assert parse_sizes(bare) == [bytes_]
        assert size_bytes(bare) == str(bytes_)
    for unknown in ["4Kb", "1Gib", "2X", "1KK"]:
        with pytest.raises(BadInput, match="unknown size unit"):
            size_bytes(unknown)
    from collsynth import nccl_tests

    assert nccl_tests.sweep("8GB", "8GB", 2) == [8 << 30]
    assert nccl_tests.sweep("1K", "4KiB", 2) == [1024, 2048, 4096]


def test_sizes_the_nccl_tests_way(tmp_path):
    """`--size 8G` is what `-e 8G` is, and -e 8GB is 8 GiB as nccl-tests reads it; every size
    option's --help says the rule."""
    out = {}
    for argv in [
        ["synth", "ring:4", "-c", "allreduce", "-a", "ring", "--size", "8G", "--json"],
        ["synth", "ring:4", "-c", "allreduce", "-a", "ring", "--size", "8GiB", "--json"],
        ["compare", "ring:4", "-c", "allreduce", "-b", "8GB", "-e", "8GB", "--json"],
        ["compare", "ring:4", "-c", "allreduce", "-e", "8G", "-b", "8G", "--json"],
    ]:
        proc = run(argv, tmp_path)
        assert proc.returncode == 0, (argv, proc.stderr)
        doc = json.loads(proc.stdout)
        out[" ".join(argv[5:8])] = {r["size_bytes"] for r in (doc if isinstance(doc, list) else [doc])}
    assert list(out.values()) == [{8 << 30}] * 4, out
    for command in ["synth", "simulate", "compare", "draw", "run", "bench-mpi", "find"]:
        text = run([command, "--help"], tmp_path).stdout.decode()
        assert "powers of 1024 (as in nccl-tests)" in " ".join(text.split()), command


def test_umask_of_the_api_writer(tmp_path):
    old = os.umask(0o027)
    try:
        collsynth.Topology.from_spec("ring:4").save(tmp_path / "t.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "t.json").stat().st_mode) == 0o640


def _one_line_exit_2(proc, fragment: str) -> None:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2 and err.count("\n") == 1 and err.endswith("\n"), (proc.args, err)
    assert fragment in err, err


def test_writers_never_destroy_what_they_do_not_own(tmp_path):
    """A private /dev/null and /dev/full (root makes them: CI runs as root), FIFOs, a socket
    and links: devices are written in place as `cp` does, a FIFO only when something reads it,
    a socket is refused; a link's target is written and the link kept. Each special file is
    still what it was afterwards."""
    import socket

    if os.geteuid() != 0:
        pytest.skip("device nodes need root")
    os.mknod(tmp_path / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.mknod(tmp_path / "full", stat.S_IFCHR | 0o666, os.makedev(1, 7))
    os.mkfifo(tmp_path / "fifo")
    os.mkfifo(tmp_path / "schedule.xml")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    (tmp_path / "dangling.json").symlink_to(tmp_path / "made.json")
    (tmp_path / "old.json").write_text("old")
    (tmp_path / "to_old.json").symlink_to("old.json")
    (tmp_path / "to_null").symlink_to(tmp_path / "null")
    (tmp_path / "to_fifo").symlink_to(tmp_path / "fifo")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    t = str(tmp_path)
    synth = ["synth", "ring:4", "-c", "allgather", "-a", "ring"]
    refused = [
        (["topo", "export", "ring:4", "-o", f"{t}/full"], "full: No space left on device"),
        (["topo", "export", "ring:4", "-o", f"{t}/fifo"], "fifo: it is a FIFO that nothing reads"),
        (["topo", "export", "ring:4", "-o", f"{t}/to_fifo"], "it is a FIFO that nothing reads"),
        (["topo", "export", "ring:4", "-o", f"{t}/sock"], "it is a socket (neither written nor replaced)"),
        (["topo", "export", "ring:4", "-o", f"{t}/loop"], "loop: Too many levels of symbolic links"),
        (["topo", "draw", "ring:4", "-o", f"{t}/full.png"], ""),
        ([*synth, "--format", "msccl-xml", "-o", t], "schedule.xml: it is a FIFO that nothing reads"),
        (["export", "{good}", "--format", "msccl-xml", "-o", f"{t}/full"], "No space left on device"),
        (["draw", "{good}", "-o", f"{t}/sock"], ".svg or .png"),
    ]
    good = tmp_path / "work" / "good.json"
    good.parent.mkdir()
    good.write_text(collsynth.synthesize("ring:4", "allgather", "ring").to_json())
    (tmp_path / "full.png").unlink(missing_ok=True)
    os.mknod(tmp_path / "full.png", stat.S_IFCHR | 0o666, os.makedev(1, 7))
    for argv, fragment in refused:
        argv = [a.replace("{good}", str(good)) for a in argv]
        _one_line_exit_2(run(argv, tmp_path / "work"), fragment)
    written = [
        (["topo", "export", "ring:4", "-o", f"{t}/null"], "null"),
        (["topo", "export", "ring:4", "-o", f"{t}/to_null"], "to_null"),
        (["topo", "export", "ring:4", "-o", f"{t}/dangling.json"], "dangling.json"),
        (["topo", "export", "ring:4", "-o", f"{t}/to_old.json"], "to_old.json"),
        (["export", str(good), "--format", "msccl-xml", "-o", f"{t}/null"], "null"),
    ]
    for argv, name in written:
        proc = run(argv, tmp_path / "work")
        assert (proc.returncode, proc.stderr) == (0, b""), (argv, proc.stderr)
        assert f"wrote {t}/{name}" in proc.stdout.decode()
    for name, is_kind in [
        ("null", stat.S_ISCHR),
        ("full", stat.S_ISCHR),
        ("full.png", stat.S_ISCHR),
        ("fifo", stat.S_ISFIFO),
        ("schedule.xml", stat.S_ISFIFO),
        ("sock", stat.S_ISSOCK),
        ("dangling.json", stat.S_ISLNK),
        ("to_old.json", stat.S_ISLNK),
        ("to_null", stat.S_ISLNK),
        ("to_fifo", stat.S_ISLNK),
    ]:
        assert is_kind(os.lstat(tmp_path / name).st_mode), name
    # the links' targets were written
    assert json.loads((tmp_path / "made.json").read_text())["name"] == "ring:4"
    assert json.loads((tmp_path / "old.json").read_text())["name"] == "ring:4"
    sock.close()
    made = {"made.json", "old.json", "work", "work/good.json"}
    specials = {"null", "full", "full.png", "fifo", "schedule.xml", "sock", "loop"}
    links = {"dangling.json", "to_old.json", "to_null", "to_fifo"}
    assert files(tmp_path) == made | specials | links  # no temporary file anywhere


def test_a_fifo_with_a_reader_is_written_in_place(tmp_path):
    import threading

    os.mkfifo(tmp_path / "out.json")
    got = []
    # The reader opens the FIFO first; the writer then finds it and never blocks on the open.
    opened = threading.Event()

    def reader():
        with open(tmp_path / "out.json", "rb") as f:
            opened.set()
            got.append(f.read())

    # Opening a FIFO for reading blocks until a writer comes: the writer's non-blocking open
    # sees no reader yet and refuses, so the CLI is retried until the reader is there.
    th = threading.Thread(target=reader, daemon=True)
    th.start()
    for _ in range(600):
        proc = run(["topo", "export", "ring:4", "-o", "out.json"], tmp_path)
        if proc.returncode == 0:
            break
        _one_line_exit_2(proc, "it is a FIFO that nothing reads")
    th.join(60)
    assert proc.returncode == 0 and json.loads(got[0])["name"] == "ring:4"
    assert stat.S_ISFIFO(os.lstat(tmp_path / "out.json").st_mode)
    assert files(tmp_path) == {"out.json"}


def test_a_fifo_input_is_read_only_while_something_writes_it(tmp_path):
    """An input FIFO that nothing writes is refused at once (as an output FIFO that nothing
    reads is), where a blocking open would wait forever and ignore Ctrl-C; one that a writer
    holds open is read to the writer's end."""
    os.mkfifo(tmp_path / "in.json")
    for argv in (["verify", "in.json"], ["topo", "show", "in.json"], ["simulate", "in.json"]):
        proc = run(argv, tmp_path)
        _one_line_exit_2(proc, "in.json: cannot read file: it is a FIFO that nothing writes (not read)")
    text = collsynth.synthesize("ring:4", "allgather", "ring").to_json().encode()
    assert len(text) < 60000  # within the pipe's buffer: written before the reader comes
    # Read-write: the open does not wait for a reader, and the data waits in the pipe.
    fd = os.open(tmp_path / "in.json", os.O_RDWR)
    try:
        os.write(fd, text)
        child = subprocess.Popen([*CLI, "verify", "in.json"], cwd=tmp_path, stdout=subprocess.PIPE)
        time.sleep(1.0)  # the reader has the bytes and waits for the writer's end
    finally:
        os.close(fd)
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0 and b"valid" in out.lower()
    assert files(tmp_path) == {"in.json"}


def test_no_partial_output_set(tmp_path):
    """synth -o DIR --format json,msccl-xml,mscclpp-json: when the last file cannot be
    written (its name is taken by a directory), none is, and no temporary file is left."""
    (tmp_path / "out" / "schedule.mscclpp.json").mkdir(parents=True)
    argv = ["synth", "ring:4", "-c", "allgather", "-a", "ring", "-o", "out"]
    proc = run([*argv, "--format", "json,msccl-xml,mscclpp-json"], tmp_path)
    _one_line_exit_2(proc, "schedule.mscclpp.json: is a directory")
    assert files(tmp_path) == {"out", "out/schedule.mscclpp.json"}
    # the same when the first one fails while the others could be written
    (tmp_path / "out" / "schedule.mscclpp.json").rmdir()
    (tmp_path / "out" / "schedule.json").mkdir()
    proc = run([*argv, "--format", "json,msccl-xml,mscclpp-json"], tmp_path)
    _one_line_exit_2(proc, "schedule.json: is a directory")
    assert files(tmp_path) == {"out", "out/schedule.json"}
    # the same when the last one is a full device (a private /dev/full): it fails as it is
    # written, before the regular files are renamed into place
    (tmp_path / "out" / "schedule.json").rmdir()
    os.mknod(tmp_path / "out" / "schedule.xml", stat.S_IFCHR | 0o666, os.makedev(1, 7))
    proc = run([*argv, "--format", "json,msccl-xml"], tmp_path)
    _one_line_exit_2(proc, "schedule.xml: No space left on device")
    assert files(tmp_path) == {"out", "out/schedule.xml"}
    assert stat.S_ISCHR(os.stat(tmp_path / "out" / "schedule.xml").st_mode)


def test_names_too_long_and_unwritable_places(tmp_path):
    long_name = "x" * 300 + ".json"
    deep = "/".join(["d" * 200] * 25) + "/t.json"  # beyond PATH_MAX
    cases = [
        (["topo", "export", "ring:4", "-o", long_name], "File name too long"),
        (["topo", "export", "ring:4", "-o", deep], "File name too long"),
        (["synth", "ring:4", "-c", "allgather", "-a", "ring", "-o", long_name], "File name too long"),
        (["topo", "export", "ring:4", "-o", "/proc/collsynth.json"], "cannot write /proc/collsynth.json"),
        (["topo", "export", "ring:4", "-o", "/proc/version"], "cannot write /proc/version"),
        (["topo", "draw", "ring:4", "-o", "/proc/x.png"], "cannot write /proc/x.png"),
        (["compare", "ring:4", "-c", "allgather", "--sizes", "1KiB", "--plot", "/proc/x.png"], "/proc/x.png"),
    ]
    for argv, fragment in cases:
        _one_line_exit_2(run(argv, tmp_path), fragment)
    assert files(tmp_path) == set()
    # a name the file system takes, though its temporary name would be longer still
    ok = "y" * 250 + ".json"
    proc = run(["topo", "export", "ring:4", "-o", ok], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert files(tmp_path) == {ok}


# A run stopped while the temporary file is being created: the name is known before the file
# exists, so it is removed whichever instant the signal lands.
STOPPED_AT_CREATE = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
real = os.open
def stopped_open(path, flags, *a, **k):
    fd = real(path, flags, *a, **k)
    if flags & os.O_EXCL:
        os.kill(os.getpid(), signal.{sig})
        import time; time.sleep(30)
    return fd
os.open = stopped_open
from collsynth.cli import main
sys.exit(main({argv!r}))
"""


@pytest.mark.parametrize(("sig", "status"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_while_the_temporary_file_is_made_leaves_none(tmp_path, sig, status):
    argv = ["synth", "ring:4", "-c", "allgather", "-a", "ring", "--format", "json,msccl-xml", "-o", "out"]
    code = STOPPED_AT_CREATE.format(sig=sig, argv=argv)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, timeout=120)
    assert proc.returncode == status, proc.stderr
    assert files(tmp_path) <= {"out"}
