"""Every script in examples/ runs as a user would run it (a subprocess, output in a temporary
directory) and leaves what it promises: files the core accepts, with the expected contents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import collsynth
from collsynth import msccl, mscclpp

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(*cmd: str, cwd: Path) -> str:
    # The shell example calls `collsynth`: the one installed next to this interpreter.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def test_every_example_has_a_test():
    assert sorted(p.name for p in EXAMPLES.iterdir()) == ["nccl_dump_to_xml.sh", "python_api.py"]


def test_nccl_dump_to_verified_xml(tmp_path):
    out = tmp_path / "out"
    stdout = run_example("bash", str(EXAMPLES / "nccl_dump_to_xml.sh"), "", str(out), cwd=tmp_path)
    names = sorted(p.name for p in out.iterdir())
    assert names == ["cluster.json", "schedule.json", "schedule.mscclpp.json", "schedule.xml"]
    # Two HGX A100 boxes on rails: 16 GPUs, each box's 8 GPUs on NVSwitch.
    cluster = collsynth.Topology.load(out / "cluster.json")
    assert cluster.n_ranks == 16
    sched = collsynth.Schedule.load(out / "schedule.json")
    assert (sched.collective, sched.algorithm, sched.n_ranks) == ("allgather", "forestcoll", 16)
    assert sched.topology == cluster
    sched.verify()
    v = msccl.validate((out / "schedule.xml").read_text(), cluster)
    assert v["ok"] and v["dialects"] == {"new": [], "old": []}, v
    assert 'ngpus="16" coll="allgather"' in (out / "schedule.xml").read_text()
    plan = mscclpp.validate((out / "schedule.mscclpp.json").read_text())
    assert plan["ok"] and plan["refusal"] is None, plan
    assert json.loads((out / "schedule.mscclpp.json").read_text())["collective"] == "allgather"
    assert "accepted" in stdout and f"MSCCL XML ready: {out}/schedule.xml" in stdout
    assert "valid MSCCL++ allgather plan (16 ranks" in stdout


def test_the_python_api_end_to_end(tmp_path):
    out = tmp_path / "out"
    stdout = run_example(sys.executable, str(EXAMPLES / "python_api.py"), str(out), cwd=tmp_path)
    names = sorted(p.name for p in out.iterdir())
    assert names == ["allgather.json", "allgather.xml", "dgx-a100x2.json"]
    topo = collsynth.Topology.from_spec("dgx-a100:2")
    assert collsynth.Topology.load(out / "dgx-a100x2.json") == topo
    sched = collsynth.Schedule.load(out / "allgather.json")
    assert (sched.collective, sched.algorithm, sched.n_ranks) == ("allgather", "forestcoll", 16)
    assert sched.verify()["transfers"] == sched.n_transfers
    assert msccl.validate((out / "allgather.xml").read_text())["ok"]
    # The bound the script prints is the core's exact one (1040/3 GB/s on dgx-a100:2).
    bound = collsynth.bound(topo, "allgather")
    assert bound["bound_algbw_exact"] == "1040/3"
    assert f"bound: {bound['bound_algbw_GBps']} GB/s" in stdout
    assert json.loads((out / "allgather.json").read_text())["collective"] == "allgather"
