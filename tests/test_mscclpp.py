"""MSCCL++ execution plans from the CLI and the API: export, verify (format detected), the
real plans of microsoft/mscclpp with their verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import collsynth
from collsynth import BadInput, mscclpp

CLI = [sys.executable, "-m", "collsynth.cli"]
REAL = Path(__file__).parent / "data" / "mscclpp-plans"


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter", "allreduce"])
def test_synth_writes_a_plan_that_verify_accepts(tmp_path, collective):
    r = cli(
        "synth",
        "dgx-a100:2",
        "-c",
        collective,
        "-a",
        "ring",
        "--format",
        "json,mscclpp-json",
        "-o",
        str(tmp_path),
        "--json",
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    plan = tmp_path / "schedule.mscclpp.json"
    assert str(plan) in out["files"]
    m = out["mscclpp"]
    assert m["ranks"] == 16 and m["group"] == 4 and m["port_channels"] > 0 and m["memory_channels"] > 0
    assert m["max_ops"] <= 64
    v = cli("verify", str(plan), "--json")
    assert v.returncode == 0, v.stderr
    report = json.loads(v.stdout)
    assert report["ok"] and report["format"] == "mscclpp-json"
    assert report["collective"] == collective.replace("-", "")
    text = cli("verify", str(plan))
    assert "valid MSCCL++" in text.stdout and "no deadlock" in text.stdout


def test_api_export_is_deterministic_and_judged():
    s = collsynth.synthesize("hgx-h100:1", "allreduce", "ring")
    a, b = mscclpp.export(s), mscclpp.export(s)
    assert a["json"] == b["json"] == s.to_mscclpp_json()
    assert a["collective"] == "allreduce" and a["port_channels"] == 0
    assert mscclpp.validate(a["json"])["ok"]
    one = mscclpp.export(s, threadblocks=1)
    assert one["group"] == 1 and one["thread_blocks"] < a["thread_blocks"]
    with pytest.raises(BadInput, match="1 to 64"):
        mscclpp.export(s, threadblocks=0)


@pytest.mark.parametrize(
    ("name", "ok", "why"),
    [
        ("allreduce.json", True, None),
        ("reduce.json", True, None),
        ("transfer_pack_tbg.json", True, None),
        (
            "reduce_nvls_pipeline.json",
            False,
            "rank 0 can finish before rank 1 thread block 0 writes its output chunk 1",
        ),
        ("legacy-allreduce_packet.json", False, "a legacy plan"),
    ],
)
def test_real_plans_verdicts(name, ok, why):
    v = mscclpp.validate((REAL / name).read_text())
    assert v["ok"] is ok
    if why:
        assert v["refusal"].startswith(why)
    r = cli("verify", str(REAL / name))
    assert r.returncode == (0 if ok else 2)
    if not ok:
        assert len(r.stderr.strip().splitlines()) == 1 and "not a valid MSCCL++ plan" in r.stderr


def test_a_dropped_signal_is_refused_from_the_cli(tmp_path):
    plan = json.loads(
        mscclpp.export(collsynth.synthesize("ring:4", "allgather", "ring"), threadblocks=1)["json"]
    )
    ops = plan["gpus"][0]["threadblocks"][0]["ops"]
    ops.remove(next(o for o in ops if o["name"] == "signal"))
    (tmp_path / "p.json").write_text(json.dumps(plan))
    r = cli("verify", str(tmp_path / "p.json"))
    assert r.returncode == 2 and "deadlock" in r.stderr


def test_export_command_writes_the_same_plan(tmp_path):
    r = cli(
        "synth",
        "ring:4",
        "-c",
        "allreduce",
        "-a",
        "ring",
        "--format",
        "json,mscclpp-json",
        "-o",
        str(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    e = cli(
        "export", str(tmp_path / "schedule.json"), "--format", "mscclpp-json", "-o", str(tmp_path / "p.json")
    )
    assert e.returncode == 0, e.stderr
    assert (tmp_path / "p.json").read_bytes() == (tmp_path / "schedule.mscclpp.json").read_bytes()
    bad = cli("export", str(tmp_path / "schedule.json"), "--format", "mscclpp-json", "--channels", "2")
    assert bad.returncode == 2 and "--channels applies to --format msccl-xml only" in bad.stderr


def test_streamed_exports_pass_the_checked_text_in_pieces(tmp_path):
    """`text=False`: no text, but a path writer and a `write(str)` streamer that both give the
    bytes `text=True` checked, the streamer in pieces; an exception of the callable stops it
    and is raised; stdout of `export` (no -o) is the same bytes as the -o file."""
    s = collsynth.synthesize("ring:16", "allreduce", "ring")
    assert len(mscclpp.export(s)["json"]) > 4 * 65536  # several pieces
    for make, key in [
        (lambda text: mscclpp.export(s, text=text), "json"),
        (lambda text: collsynth.msccl.export(s, text=text), "xml"),
    ]:
        whole, streamed = make(True), make(False)
        assert streamed[key] is None and whole[key]
        pieces: list[str] = []
        streamed["stream"](pieces.append)
        assert "".join(pieces) == whole[key]
        assert len(pieces) >= len(whole[key]) // 65536 and max(map(len, pieces)) < 2 * 65536
        (tmp_path / key).write_text("longer than nothing")  # made by atomic_write, then filled
        streamed["write"](str(tmp_path / key))
        assert (tmp_path / key).read_text() == whole[key]

        def refuses(piece):
            raise OSError(28, "No space left on device")

        with pytest.raises(OSError, match="No space left"):
            streamed["stream"](refuses)
    s.save(tmp_path / "s.json")
    for fmt in ["mscclpp-json", "msccl-xml"]:
        out = tmp_path / f"out.{fmt}"
        assert cli("export", str(tmp_path / "s.json"), "--format", fmt, "-o", str(out)).returncode == 0
        r = cli("export", str(tmp_path / "s.json"), "--format", fmt)
        assert r.returncode == 0 and r.stdout == out.read_text(), r.stderr
