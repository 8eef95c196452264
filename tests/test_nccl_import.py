"""NCCL / RCCL topology XML import from the CLI and the API (the rules are tested in the core:
crates/collsynth-core/src/import/tests; here the surfaces, with values worked out by hand)."""

import json
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import pytest

import collsynth
from collsynth import BadInput, Topology

DATA = Path(__file__).resolve().parent / "data" / "nccl-topo"
A100 = DATA / "hgx-a100-8gpu-simai.xml"
CLI = [sys.executable, "-m", "collsynth.cli"]


def cli(*argv, cwd):
    return subprocess.run([*CLI, *map(str, argv)], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_one_box_by_the_api():
    t = Topology.load_nccl_xml(A100)
    assert t.name == "hgx-a100-8gpu-simai"
    assert t.n_ranks == 8
    bw = {(lk.src, lk.dst): lk.bandwidth for lk in t.links}
    # 6 NVSwitch rows x 2 links x 20 GB/s (sm 80); the GPUs talk over NVLink only (NCCL's
    # path), so no PCIe switch, CPU or NIC is left in one box
    assert bw[("gpu0", "nvswitch")] == 240
    assert not any(n.name.startswith(("cpu", "pci", "nic")) for n in t.nodes)
    # one GPU receives 7 shards over its 240: 7/240
    assert collsynth.bound(t, "allgather")["inv_throughput"] == "7/240"


def test_cli_import_two_boxes_on_rails(tmp_path):
    out = tmp_path / "cluster.json"
    proc = cli("topo", "import", A100, "--boxes", 2, "--fabric", "rails", "-o", out, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    m = json.loads(proc.stdout)
    assert (m["N"], m["output"]) == (16, str(out))
    t = Topology.load(out)
    rails = [n.name for n in t.nodes if n.name.startswith("rail")]
    # mlx5_bond_0 sits on the CPU and is no GPU's local NIC: 4 rails
    assert rails == [f"rail{i}" for i in range(4)]
    # box 0 receives 8 shards over its 4 NIC uplinks of PCIe Gen4 x16 = 24: 8/96 = 1/12
    assert collsynth.bound(t, "allgather")["inv_throughput"] == "1/12"
    # same input, same bytes
    again = tmp_path / "again.json"
    assert cli("topo", "import", A100, "--boxes", 2, "-o", again, cwd=tmp_path).returncode == 0
    assert again.read_bytes() == out.read_bytes()


def test_cli_overrides_and_the_zoo_agree(tmp_path):
    out = tmp_path / "c.json"
    args = ["--boxes", 2, "--fabric", "switch", "--fabric-bandwidth", "100Gbps", "--fabric-latency", "2us"]
    proc = cli("topo", "import", A100, *args, "--latency", "500ns", "-o", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    t = Topology.load(out)
    hub = {lk.dst: lk for lk in t.links if lk.src == "fabric"}
    assert len(hub) == 8 and {lk.bandwidth for lk in hub.values()} == {Fraction(25, 2)}
    assert {lk.latency for lk in hub.values()} == {2.0}
    assert {lk.latency for lk in t.links if lk.src == "box0.gpu0"} == {0.5}
    z = Topology.from_spec(f"nccl:{A100}*2,fabric=switch,bw=100Gbps,lat=500ns/2us")
    assert [(lk.src, lk.dst, lk.bandwidth, lk.latency) for lk in z.links] == [
        (lk.src, lk.dst, lk.bandwidth, lk.latency) for lk in t.links
    ]
    # box 0 receives over 4 switch ports of 12.5: 8 / 50 = 4/25
    assert collsynth.bound(z, "allgather")["inv_throughput"] == "4/25"


def test_fat_tree_from_the_cli(tmp_path):
    out = tmp_path / "ft.json"
    f = DATA / "perlmutter-a100-4gpu-mesh.xml"
    proc = cli("topo", "import", f, "--boxes", 4, "--fabric", "fat-tree:4", "-o", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    t = Topology.load(out)
    m = t.metrics()
    assert (m["N"], m["switches"]) == (16, 4 * 8 + 20)  # per box 4 NICs x (tx, rx); k=4: 20
    assert collsynth.bound(t, "allgather")["inv_throughput"] == "1/8"


def test_rccl_files_and_warnings(tmp_path):
    t = Topology.load_nccl_xml(DATA / "rccl-mi300x-8gpu.xml")
    assert t.n_ranks == 8
    # gfx942 xGMI 48 per link, 7 peers (PCIe carries no GPU-to-GPU traffic): 7 / 336 = 1/48
    assert collsynth.bound(t, "allgather")["inv_throughput"] == "1/48"
    text = (DATA / "pcie-rtx3090-8gpu-2socket.xml").read_text().replace(' rank="7"', "")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = Topology.from_nccl_xml(text, source="x.xml")
    assert t.n_ranks == 7
    assert any("not in the communicator" in str(x.message) for x in w)


def test_partial_file_is_one_line_exit_2(tmp_path):
    proc = cli("topo", "import", DATA / "azure-ndv4-a100-partial.xml", "-o", "x.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1
    assert "partial topology" in proc.stderr and "NCCL_TOPO_DUMP_FILE" in proc.stderr
    assert not (tmp_path / "x.json").exists()
    with pytest.raises(BadInput, match="no <gpu> element"):
        Topology.load_nccl_xml(DATA / "azure-ndv4-a100-partial.xml")


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"boxes": 0}, "boxes"),
        ({"boxes": 10**30}, "boxes"),
        ({"boxes": 1.5}, "boxes"),
        ({"boxes": 2, "fabric": "torus"}, "unknown fabric"),
        ({"boxes": 2}, "needs a fabric"),
        ({"boxes": 2, "fabric": "rails", "fabric_bandwidth": -1}, "positive"),
        ({"boxes": 2, "fabric": "rails", "fabric_latency": float("nan")}, "latency"),
        ({"latency": "fast"}, "--latency"),
    ],
)
def test_api_bad_options(kwargs, fragment):
    with pytest.raises(BadInput, match=fragment):
        Topology.load_nccl_xml(A100, **kwargs)
