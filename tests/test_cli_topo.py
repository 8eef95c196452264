"""`collsynth topo ...` and `collsynth demo` as a user runs them."""

import json

import pytest

from conftest import run_cli, run_json


def test_topo_list_names_every_family():
    out = run_cli("topo", "list").stdout
    for name in ["torus:AxBx..", "dgx-a100", "kautz", "drg", "hgx-h100", "rfs"]:
        assert name in out
    fams = run_json("topo", "list")
    assert {"name", "args", "help", "options"} <= set(fams[0])


def test_topo_show_json_keys_and_values():
    m = run_json("topo", "show", "torus:4x4x2,bw=50/50/25")
    assert m["collsynth_version"] and m["topology"] == "torus:4x4x2,bw=50/50/25"
    assert (m["N"], m["switches"], m["links"], m["diameter"]) == (32, 0, 32 * 5, 5)
    assert (m["min_degree"], m["max_degree"], m["bidirectional"]) == (5, 5, True)
    assert m["max_egress_GBps"] == 225.0


def test_export_then_show_file(tmp_path):
    out = tmp_path / "deep" / "t.json"
    run_cli("topo", "export", "dgx-a100:2", "-o", str(out))
    assert json.loads(out.read_text())["name"] == "dgx-a100:2"
    assert run_json("topo", "show", str(out))["N"] == 16
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temp file left


@pytest.mark.parametrize(
    "args, message",
    [
        (["topo", "show", "nosuch:4"], "unknown topology family 'nosuch'"),
        (["topo", "show", "torus:4x0"], "each dimension must be between"),
        (["topo", "show", "ring:8,speed=3"], "unknown option 'speed'"),
        (["topo", "show", "missing.json"], "missing.json: cannot read file"),
        (["topo", "show"], "required: TOPO"),
        (["topo", "draw", "ring:4", "-o", "x.pdf"], "draw writes .svg or .png"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, message):
    proc = run_cli(*args, check_status=2)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_topology_file_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"nodes": [{"name": "a", "type": "compute"}, {"name": "b", "type": "compute"}],'
        ' "links": [{"src": "a", "dst": "b", "bandwidth": 0, "bidirectional": true}]}'
    )
    proc = run_cli("topo", "show", str(bad), check_status=2)
    assert proc.stderr.strip() == f"collsynth: error: {bad}: links[0]: bandwidth must be positive, got 0"


def test_unknown_key_warns_on_stderr(tmp_path):
    f = tmp_path / "w.json"
    nodes = '[{"name": "a", "type": "compute"}, {"name": "b", "type": "compute"}]'
    links = '[{"src": "a", "dst": "b", "bandwidth": 1, "bidirectional": true}]'
    f.write_text(f'{{"name": "w", "extra": 1, "nodes": {nodes}, "links": {links}}}')
    proc = run_cli("topo", "show", str(f), "--json")
    assert "warning" in proc.stderr and "unknown key 'extra'" in proc.stderr
    assert json.loads(proc.stdout)["N"] == 2


@pytest.mark.parametrize(
    "spec, suffix",
    [
        ("dgx-a100:2", "png"),
        ("torus:4x4", "svg"),
        ("ring:6", "png"),
        ("fat-tree:4", "png"),
        ("mesh:20x20", "png"),
    ],
)
def test_draw_writes_a_picture(tmp_path, spec, suffix):
    out = tmp_path / f"t.{suffix}"
    run_cli("topo", "draw", spec, "-o", str(out))
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") if suffix == "png" else b"<svg" in data[:2000]
    assert len(data) > 5000


def test_demo_runs():
    out = run_cli("demo").stdout
    assert "dgx-a100:2" in out and "compute nodes (N)" in out and "16" in out
    flat = " ".join(out.split())  # rich wraps long lines at the terminal width
    assert (
        "fits and is accepted by msccl-nccl, rccl, msccl-legacy" in flat and "connections: correct." in flat
    )
    assert "In its thread blocks the runtime model gives" in flat


def test_output_into_a_closed_pipe_is_not_an_error():
    """`collsynth ... | head -1` when the reader has left: no traceback, no 'internal error'."""
    import os
    import subprocess
    import sys

    r, w = os.pipe()
    os.close(r)  # every write to w now fails with EPIPE
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "collsynth.cli", "topo", "show", "ring:4", "--json"],
            stdout=w,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(w)
    assert proc.returncode == 141 and proc.stderr == "", proc.stderr
