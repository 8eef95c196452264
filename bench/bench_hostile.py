"""The hostile-input campaign: about 2,500 real `collsynth` subprocesses fed inputs meant
to break them, each classified by how it ended. `python bench/run.py hostile`; writes
bench/results/hostile.json (counts per category and per family, and every failure with its
argv, exit status and the tail of its stderr).

Every run is `python -m collsynth.cli ARGV` in a fresh temporary directory of its own (its cwd),
under an address-space limit of 8 GiB and a timeout (60 s; 120 s for `run` and `bench-mpi`),
at most two at a time and niced, so the machine stays usable. The instances are generated from
a fixed seed, so a rerun makes the same calls; they vary the families of tests/test_hostile_*.py
(other numbers, other commands, other topologies, other spellings) rather than repeat them:

- sizes: huge, negative, odd, empty and overflowing values of --size, --sizes, --size-range and
  -b/-e/-f, in every unit and spelling, across synth, compare, export, simulate, run, verify;
- zoo: deep expressions, malformed specs, bandwidth and latency extremes, one-rank and huge
  topologies, across topo show, bound, synth (each algorithm and auto) and compare;
- allocation: huge pipelines, TACOS restarts and chunks, rank ranges, tree and block counts,
  circulant check ranges, MPI repetitions and memory budgets;
- files: unbounded and special inputs (/dev/zero, a FIFO with no writer, directories, a huge
  sparse file), binary garbage, truncated and deeply nested JSON and XML, XML with undefined
  entities, NUL bytes, duplicate attributes and bus ids;
- outputs: -o/--plot at a private /dev/null and /dev/full, a FIFO without reader, links (to a
  file, dangling, to a device, looping), directories, names too long, a path under a regular
  file, an existing file, a socket; afterwards each special file must still be what it was;
- signals: long commands sent SIGINT or SIGTERM after 0.5 to 3 s, which must end within 2 s
  with 130 / 143 (or 2) and one line, leaving no temporary file;
- valid: odd inputs that must work (lat=1e308, many decimals, sizes of 1, 3, 1023 and 8G,
  mixed units).

Categories: `refused` (exit 2, one stderr line, no traceback), `ok` (exit 0 on an input that is
valid or may be), `interrupted` (a signal answered as it should), `long` (still working at the
timeout, but it answered Ctrl-C within 1 s with 130 and one line, and run again on a terminal it
showed a progress bar); failures: `panic`, `abort` (killed by a signal, negative status), `hang`
(no exit within 1 s of Ctrl-C at the timeout, no progress shown on a terminal, or no exit within
2 s of a signal trial's signal),
`traceback`, `exit1` (any nonzero status other than 2), `multiline` (exit 2, not one line),
`accepted_invalid`, `rejected_valid`, `destroyed` (a device, FIFO, link or file the run was
pointed at is no longer what it was) and `left_files` (a refused or interrupted run left files).
The failures are listed per family in the JSON, under each family's record.

Environment knobs (for measuring a sample): HOSTILE_SAMPLE=K runs every K-th instance,
HOSTILE_FAMILIES=a,b only those families, HOSTILE_BUDGET_S stops starting runs after that many
seconds (default 3300), HOSTILE_WORKERS (default 2)."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import random
import resource
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable
CLI = [PYTHON, "-m", "collsynth.cli"]
NCCL_DATA = ROOT / "tests" / "data" / "nccl-topo"
A100_XML = str(NCCL_DATA / "hgx-a100-8gpu-simai.xml")

# HOSTILE_SEED draws other instances of the same kinds of input
SEED = int(os.environ.get("HOSTILE_SEED", "20261129"))
MEMORY_LIMIT = 8 << 30
TIMEOUT_S = 60.0
LONG_TIMEOUT_S = 120.0  # run and bench-mpi start mpiexec
SIGNAL_GRACE_S = 2.0
CTRL_C_GRACE_S = 1.0  # a run still going at its timeout gets Ctrl-C and this long to answer
TERMINAL_LOOK_S = 5.0  # how long a run on a terminal is watched for a progress bar
STDERR_TAIL = 300

SUCCESS = ["ok", "refused", "interrupted", "long"]
FAILURES = [
    "panic",
    "abort",
    "hang",
    "traceback",
    "exit1",
    "multiline",
    "accepted_invalid",
    "rejected_valid",
    "destroyed",
    "left_files",
]
FAMILIES = ["sizes", "zoo", "allocation", "files", "outputs", "signals", "valid"]

# An output target is made in the run's cwd before the run: (kind, name[, link target]).
Setup = tuple


class Case(NamedTuple):
    family: str
    argv: list  # str or bytes; "{in}" stands for the inputs directory
    expect: str  # "valid", "invalid" or "either"
    setup: tuple = ()  # output targets made in the cwd first (the outputs family)
    sig: tuple | None = None  # (signal number, seconds after start)


def timeout_of(argv: list) -> float:
    return LONG_TIMEOUT_S if argv and argv[0] in ("run", "bench-mpi") else TIMEOUT_S


# ---------------------------------------------------------------------------------------------
# Inputs shared by the runs (made once, in the campaign's directory, never written by a run)


# The "billion laughs": ten entities of ten references each, nine levels deep.
BOMB = (
    '<?xml version="1.0"?><!DOCTYPE system [<!ENTITY l0 "ha">'
    + "".join(f'<!ENTITY l{i} "' + f"&l{i - 1};" * 10 + '">' for i in range(1, 10))
    + "]>\n"
)


def make_inputs(d: Path) -> None:
    """Good files and hostile files made from them."""
    import collsynth
    from collsynth import msccl, mscclpp

    rng = random.Random(SEED)
    d.mkdir(parents=True)
    sched = collsynth.synthesize("ring:4", "allgather", "ring")
    good = sched.to_json()
    (d / "good.json").write_text(good)
    orbit = collsynth.synthesize("torus:3x3", "allreduce", "forestcoll").to_json()
    (d / "orbit.json").write_text(orbit)
    xml = msccl.export(sched)["xml"]
    (d / "good.xml").write_text(xml)
    plan = mscclpp.export(sched)["json"]
    (d / "plan.json").write_text(plan)
    topo = collsynth.Topology.from_spec("biring:5").to_json()
    (d / "topo.json").write_text(topo)
    a100 = Path(A100_XML).read_text()
    (d / "a100.xml").write_text(a100)
    # truncated copies, at offsets drawn from the seed
    for name, text in [
        ("good.json", good),
        ("orbit.json", orbit),
        ("good.xml", xml),
        ("plan.json", plan),
        ("topo.json", topo),
        ("a100.xml", a100),
    ]:
        stem, ext = name.rsplit(".", 1)
        data = text.encode()
        for k, cut in enumerate(sorted(rng.sample(range(1, len(data) - 1), 5)) + [len(data) // 2]):
            (d / f"cut_{stem}_{k}.{ext}").write_bytes(data[:cut])
    # deep nesting in JSON
    for depth in (65, 999, 20_000, 1_000_000):
        (d / f"deep_list_{depth}.json").write_text("[" * depth + "]" * depth)
        (d / f"deep_obj_{depth}.json").write_text('{"a":' * depth + "1" + "}" * depth)
        (d / f"deep_open_{depth}.json").write_text('{"nodes":' + "[" * depth)
    # JSON oddities made from the good files
    s = json.loads(good)
    t = json.loads(topo)
    variants = {
        "dupkey_sched.json": good.replace('"format":', '"format": "x", "format":', 1),
        "dupkey_topo.json": topo.replace('"name":', '"nodes": [], "name":', 1),
        "nan_bw.json": json.dumps({**t, "links": [{**t["links"][0], "bandwidth": float("nan")}]}),
        "inf_lat.json": json.dumps({**t, "links": [{**t["links"][0], "latency": float("inf")}]}),
        "e400_bw.json": topo.replace('"bandwidth": 100', '"bandwidth": 1e400', 1),
        "neg0_bw.json": topo.replace('"bandwidth": 100', '"bandwidth": -0.0', 1),
        "big_int_bw.json": topo.replace('"bandwidth": 100', '"bandwidth": ' + "9" * 400, 1),
        "str_bw.json": topo.replace('"bandwidth": 100', '"bandwidth": "100"', 1),
        "null_nodes.json": json.dumps({**t, "nodes": None}),
        "self_link.json": json.dumps(
            {**t, "links": [*t["links"], {**t["links"][0], "dst": t["links"][0]["src"]}]}
        ),
        "unknown_node.json": json.dumps({**t, "links": [*t["links"], {**t["links"][0], "dst": "nowhere"}]}),
        "dup_node.json": json.dumps({**t, "nodes": [*t["nodes"], t["nodes"][0]]}),
        "long_name.json": json.dumps({**t, "name": "n" * 200_000}),
        "surrogate.json": topo.replace('"name": "biring:5"', '"name": "\\ud800\\udfff\\ud800"', 1),
        "step_neg.json": json.dumps(
            {**s, "transfers": [{**s["transfers"][0], "step": -3}, *s["transfers"][1:]]}
        ),
        "step_float.json": json.dumps(
            {**s, "transfers": [{**s["transfers"][0], "step": 0.5}, *s["transfers"][1:]]}
        ),
        "step_2p64.json": json.dumps(
            {**s, "transfers": [{**s["transfers"][0], "step": 2**64}, *s["transfers"][1:]]}
        ),
        "nranks_huge.json": json.dumps({**s, "n_ranks": 10**15}),
        "nranks_zero.json": json.dumps({**s, "n_ranks": 0}),
        "shards_zero.json": json.dumps({**s, "shards": ["0/1"] * 4}),
        "shards_div0.json": json.dumps({**s, "shards": ["1/0"] * 4}),
        "shards_huge.json": json.dumps({**s, "shards": ["1/" + "9" * 60] * 4}),
        "no_transfers.json": json.dumps({**s, "transfers": []}),
        "format9.json": json.dumps({**s, "format": "collsynth-schedule/9"}),
        "root_huge.json": json.dumps({**s, "root": 2**70}),
        "collective_x.json": json.dumps({**s, "collective": "alltoall"}),
        "empty_obj.json": "{}",
        "empty_list.json": "[]",
        "null.json": "null",
        "empty.json": "",
        "spaces.json": " \n\t \n",
        "bom.json": "\ufeff" + good,
        "nan_literal.json": good.replace('"root": 0', '"root": NaN', 1),
        "trailing_comma.json": good.rstrip().rstrip("}") + ",}",
        "two_docs.json": good + good,
    }
    for name, text in variants.items():
        (d / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    (d / "utf16.json").write_bytes(good.encode("utf-16"))
    (d / "latin1.json").write_bytes(topo.replace("biring:5", "caf\xe9").encode("latin-1"))
    # binary garbage, seeded
    for n in (1, 7, 4096, 1 << 20):
        blob = rng.randbytes(n)
        for ext in ("json", "xml"):
            (d / f"garbage_{n}.{ext}").write_bytes(blob)
    # NCCL topology XML made worse, other ways than the tests
    busids = [line.split('busid="')[1].split('"')[0] for line in a100.splitlines() if "<pci busid=" in line]
    nccl_variants = {
        "nccl_undef_entity": a100.replace('<gpu dev="1"', '<gpu dev="&one;"', 1),
        "nccl_lt_entity": a100.replace('sm="80"', 'sm="&lt;80"', 1),
        "nccl_numeric_ref": a100.replace('sm="80"', 'sm="&#56;&#48;"', 1),
        "nccl_nul_name": a100.replace("<nvlink ", "<nv\0link ", 1),
        "nccl_nul_text": a100.replace("</system>", "\0</system>", 1),
        "nccl_dup_nvlink_attr": a100.replace('count="2"', 'count="2" count="4"', 1),
        "nccl_dup_net_attr": a100.replace('speed="200000"', 'speed="200000" speed="100"', 1),
        "nccl_dup_busid_last": a100.replace(f'busid="{busids[-1]}"', f'busid="{busids[0]}"', 1),
        "nccl_dup_busid_case": a100.replace(f'busid="{busids[3]}"', f'busid="{busids[2].upper()}"', 1),
        "nccl_doctype_bomb": BOMB + a100.replace('sm="80"', 'sm="&l9;"', 1),
        "nccl_cdata": a100.replace("<nic>", "<nic><![CDATA[<gpu dev='9'/>]]>", 1),
        "nccl_comment": a100.replace("<nic>", "<nic><!-- <gpu dev='9'/> -->", 1),
        "nccl_pi": '<?xml version="1.0" encoding="UTF-16"?>\n' + a100,
        "nccl_unclosed": a100.replace("</system>", "", 1),
        "nccl_mismatch": a100.replace("</nic>", "</nac>", 1),
        "nccl_unquoted": a100.replace('sm="80"', "sm=80", 1),
        "nccl_newline_attr": a100.replace('sm="80"', 'sm="8\n0"', 1),
        "nccl_count_neg": a100.replace('count="2"', 'count="-2"', 1),
        "nccl_count_zero": a100.replace('count="2"', 'count="0"', 1),
        "nccl_count_2p63": a100.replace('count="2"', 'count="9223372036854775808"', 1),
        "nccl_speed_zero": a100.replace('speed="200000"', 'speed="0"', 1),
        "nccl_speed_huge": a100.replace('speed="200000"', 'speed="1e308"', 1),
        "nccl_dev_neg": a100.replace('<gpu dev="0"', '<gpu dev="-1"', 1),
        "nccl_rank_huge": a100.replace('rank="0"', 'rank="4294967296"', 1),
        "nccl_nvlink_self": a100.replace('target="0000:c3:00.0"', f'target="{busids[0]}"', 1),
        "nccl_nvlink_nowhere": a100.replace('target="0000:c3:00.0"', 'target="ffff:ff:ff.f"', 1),
        "nccl_no_gpus": "\n".join(
            line for line in a100.splitlines() if "gpu" not in line and "nvlink" not in line
        ),
        "nccl_version_2": a100.replace('<system version="1">', '<system version="2">', 1),
        "nccl_deep_66": "<system version='1'>" + "<pci>" * 66 + "</pci>" * 66 + "</system>",
        "nccl_deep_1000": "<system version='1'>" + "<cpu>" * 1000,
        "nccl_many_attrs": a100.replace(
            "<nic>", "<nic " + " ".join(f'a{i}="{i}"' for i in range(20000)) + ">", 1
        ),
        "nccl_empty": "",
        "nccl_bom": "\ufeff" + a100,
        "nccl_crlf": a100.replace("\n", "\r\n"),
        "nccl_only_decl": '<?xml version="1.0"?>',
        "nccl_two_roots": a100 + a100,
    }
    for name, text in nccl_variants.items():
        assert name in ("nccl_empty", "nccl_only_decl") or text != a100, name
        (d / f"{name}.xml").write_text(text)
    (d / "nccl_utf16.xml").write_bytes(a100.encode("utf-16"))
    # MSCCL XML made worse
    msccl_variants = {
        "msccl_undef_entity": xml.replace('proto="Simple"', 'proto="&proto;"', 1),
        "msccl_dup_attr": xml.replace('<tb id="0"', '<tb id="0" id="1"', 1),
        "msccl_nul": xml.replace('<step s="0"', '<step\0 s="0"', 1),
        "msccl_srcoff_neg": xml.replace('srcoff="0"', 'srcoff="-5"', 1),
        "msccl_cnt_zero": xml.replace('cnt="1"', 'cnt="0"', 1),
        "msccl_cnt_huge": xml.replace('cnt="1"', 'cnt="4294967297"', 1),
        "msccl_depid_far": xml.replace('depid="4"', 'depid="99999"', 1),
        "msccl_deps_neg": xml.replace('deps="0"', 'deps="-7"', 1),
        "msccl_ngpus_zero": xml.replace('ngpus="4"', 'ngpus="0"', 1),
        "msccl_ngpus_neg": xml.replace('ngpus="4"', 'ngpus="-4"', 1),
        "msccl_nchunks_zero": xml.replace('nchunksperloop="4"', 'nchunksperloop="0"', 1),
        "msccl_proto_ll256": xml.replace('proto="Simple"', 'proto="LL256"', 1),
        "msccl_coll_alltoall": xml.replace('coll="allgather"', 'coll="alltoall"', 1),
        "msccl_inplace_2": xml.replace('inplace="1"', 'inplace="2"', 1),
        "msccl_nchannels_huge": xml.replace('nchannels="4"', 'nchannels="100000"', 1),
        "msccl_maxbytes_neg": xml.replace('maxBytes="1099511627776"', 'maxBytes="-1"', 1),
        "msccl_minbytes_above": xml.replace('minBytes="0"', 'minBytes="99999999999999999999"', 1),
        "msccl_chan_huge": xml.replace('chan="0"', 'chan="2147483648"', 1),
        "msccl_send_self": xml.replace('send="1" recv="-1"', 'send="0" recv="-1"', 1),
        "msccl_type_x": xml.replace('type="s"', 'type="xyz"', 1),
        "msccl_gpu_dup": xml.replace('<gpu id="1"', '<gpu id="0"', 1),
        "msccl_no_gpus": xml.split("<gpu")[0] + "</algo>\n",
        "msccl_hex_cnt": xml.replace('cnt="1"', 'cnt="0x1"', 1),
        "msccl_space_cnt": xml.replace('cnt="1"', 'cnt=" 1"', 1),
        "msccl_step_gap": xml.replace('<step s="0" type="cpy"', '<step s="7" type="cpy"', 1),
        "msccl_deep": xml.replace("</algo>", "<x>" * 5000 + "</x>" * 5000 + "</algo>", 1),
    }
    for name, text in msccl_variants.items():
        assert text != xml, name
        (d / f"{name}.xml").write_text(text)
    # MSCCL++ plans made worse
    p = json.loads(plan)
    for name, mutate in [
        ("plan_gpus_empty", lambda q: q.update(gpus=[])),
        ("plan_collective_x", lambda q: q.update(collective="alltoall")),
        ("plan_neg_chunks", lambda q: q["gpus"][0].update(output_chunks=-1)),
        ("plan_float_id", lambda q: q["gpus"][0].update(id=0.5)),
        ("plan_big_align", lambda q: q.update(buffer_alignment=2**64)),
        ("plan_zero_align", lambda q: q.update(buffer_alignment=0)),
        ("plan_conn_neg", lambda q: q["gpus"][0]["channels"][0].update(connected_to=[-1])),
        ("plan_no_tbs", lambda q: [g.update(threadblocks=[]) for g in q["gpus"]]),
    ]:
        bad = json.loads(json.dumps(p))
        mutate(bad)
        (d / f"{name}.json").write_text(json.dumps(bad))
    # files that are no regular files of bounded size
    (d / "adir.json").mkdir()
    (d / "adir.xml").mkdir()
    for name in ("sparse.json", "sparse.xml", "sparse_topo.json"):
        with open(d / name, "wb") as f:
            f.truncate(64 << 30)  # 64 GiB of holes
    with open(d / "sparse_prefix.json", "wb") as f:
        f.write(good.encode())
        f.truncate(16 << 30)
    for name, target in [
        ("urandom.json", "/dev/urandom"),
        ("zero.plan.json", "/dev/zero"),
        ("zero.XML", "/dev/zero"),
        ("full_dev.json", "/dev/full"),
        ("null_dev.json", "/dev/null"),
        ("dangling.json", "nowhere.json"),
        ("loop.json", "loop.json"),
        ("to_dir.json", "adir.json"),
    ]:
        (d / name).symlink_to(target)
    (d / "afile").write_text("a regular file\n")
    # valid files under odd names
    (d / "line\nbreak.json").write_text(good)
    (d / "ümlaut ☃.json").write_text(good)
    (d / "-dash.json").write_text(good)
    (d / "sp ace.xml").write_text(xml)
    (d / "UPPER.XML").write_text(xml)


# ---------------------------------------------------------------------------------------------
# The instances, family by family


SYNTH_OK = [  # (topology, algorithm, collective) that succeed at ordinary sizes
    ("ring:4", "ring", "allgather"),
    ("ring:6", "direct", "reduce-scatter"),
    ("torus:3x3", "auto", "allreduce"),
    ("switch:8", "ring", "broadcast"),
    ("dgx-a100:1", "forestcoll", "allgather"),
    ("complete:6", "circulant", "allgather"),
    ("hypercube:3", "rhd", "allreduce"),
    ("biring:5", "bfb", "allgather"),
    ("ring:7", "dbt", "reduce"),
    ("mesh:2x3", "auto", "reduce-scatter"),
]
COMPARE_TOPOS = [("ring:4", "allgather"), ("switch:4", "reduce-scatter"), ("complete:3", "allreduce")]

# Sizes: every spelling is (text, verdict), verdict valid / invalid / either.
SIZES_VALID = [
    "1",
    "3",
    "7",
    "1023",
    "1025",
    "4095",
    "1K",
    "3KiB",
    "1KB",
    "2M",
    "64MiB",
    "1MB",
    "1G",
    "8G",
    "2GiB",
    "1T",
    "1e3",
    "1e6",
    "4096B",
    "1000000",
    "9223372036854775807",
    "8388608TiB",
    "1E3",
]
SIZES_INVALID = [
    "-1",
    "-16K",
    "-0.5",
    "-1e3",
    "9223372036854775810",
    "18446744073709551616",
    "8796093022209G",
    "8388608.5TiB",
    "1e19",
    "1e24",
    "2e22KiB",
    "1e308",
    "1e309",
    "1e99999",
    "NaN",
    "nan",
    "inf",
    "Infinity",
    "-inf",
    "0x10",
    "0b101",
    "0o17",
    "1_024",
    "KiB",
    "K",
    "G",
    "iB",
    "1KiBKiB",
    "1KK",
    "1Ki",
    "1 K i B",
    "\u0661\u0662\u0663",  # Arabic-Indic digits
    "\uff11\uff12\uff13",  # fullwidth digits
    "\u00b2",
    "\U0001d7d3",  # mathematical bold digit five
    "\u216b",  # roman numeral twelve
    "1e",
    "e3",
    ".",
    "..5",
    "1..5",
    "--5",
    "5-",
    "1e3.5",
    "1/0",
    "0/0",
    "1/-2",
    "\t",
    " ",
    "5\n",
    "\u200b5",
    "1PiB",
    "1EiB",
    "1ZB",
    "9" * 400,
    "1" + "0" * 30 + "B",
]
SIZES_EITHER = [
    "5\u00a0KiB",  # a no-break space: whitespace, as "5 KiB" is
    "0",
    "-0",
    "+5",
    "1.5",
    "2.5K",
    "1/3",
    "5 KiB",
    " 5",
    "5 ",
    "0.5KiB",
    "1e-400",
    "00012",
    "1kB",
    "1kib",
    "7/2",
    "1e-9",
]


def all_sizes() -> list[tuple[str, str]]:
    return (
        [(s, "valid") for s in SIZES_VALID]
        + [(s, "invalid") for s in SIZES_INVALID]
        + [(s, "either") for s in SIZES_EITHER]
    )


def small_valid(s: str) -> bool:
    """A valid size that a whole-sweep or an MPI run can afford."""
    return s in SIZES_VALID and s not in ("9223372036854775807", "8388608TiB", "1T", "8G", "2GiB", "1G")


def sizes_family(rng: random.Random) -> list[Case]:
    cases = []

    def add(argv, verdict):
        cases.append(Case("sizes", argv, verdict))

    contexts = [
        "synth",
        "simulate",
        "verify",
        "compare",
        "compare-list",
        "b",
        "e",
        "range-export",
        "range-synth",
    ]
    for s, verdict in all_sizes():
        for ctx in rng.sample(contexts, 4):
            if ctx == "synth":
                topo, alg, coll = rng.choice(SYNTH_OK)
                add(["synth", topo, "-c", coll, "-a", alg, "--size", s], verdict)
            elif ctx == "simulate":
                add(["simulate", "{in}/" + rng.choice(["good.json", "orbit.json"]), "--size", s], verdict)
            elif ctx == "verify":
                add(
                    [
                        "verify",
                        "{in}/good.xml",
                        "--topology",
                        rng.choice(["ring:4", "biring:4"]),
                        "--size",
                        s,
                    ],
                    verdict,
                )
            elif ctx == "compare":
                topo, coll = rng.choice(COMPARE_TOPOS)
                add(["compare", topo, "-c", coll, "--sizes", s], verdict)
            elif ctx == "compare-list":
                topo, coll = rng.choice(COMPARE_TOPOS)
                other = rng.choice(["1KiB", "3", "8G", "1MB"])
                items = [other, s] if rng.random() < 0.5 else [s, other]
                add(["compare", topo, "-c", coll, "--sizes", ",".join(items)], verdict)
            elif ctx == "b":
                # -b S -e S: one size, read the nccl-tests way; 0 is below nccl-tests' minimum
                v = "invalid" if s in ("0", "-0", "1e-400", "1e-9") else verdict
                add(["compare", "ring:5", "-c", "allgather", "-b", s, "-e", s], v)
            elif ctx == "e":
                v = verdict if verdict != "valid" or small_valid(s) or s == "8G" else "either"
                if s in ("0", "-0", "1e-400", "1e-9"):
                    v = "invalid"  # below -b 1
                add(["compare", "ring:3", "-c", "reduce-scatter", "-b", "1", "-e", s], v)
            elif ctx == "range-export":
                lo = rng.choice(["0", "1", "1KiB"])
                v = verdict if verdict == "invalid" else "either"
                add(
                    [
                        "export",
                        "{in}/good.json",
                        "--format",
                        "msccl-xml",
                        "--size-range",
                        f"{lo}-{s}",
                        "-o",
                        "x.xml",
                    ],
                    v,
                )
            else:
                v = verdict if verdict == "invalid" else "either"
                topo, alg, coll = SYNTH_OK[0]
                argv = ["synth", topo, "-c", coll, "-a", alg, "--format", "msccl-xml", "-o", "out"]
                add([*argv, "--size-range", f"{s}-{s}"], v)
    # run and other commands: only inputs refused before anything starts
    for s, verdict in all_sizes():
        if verdict != "invalid":
            continue
        ctx = rng.choice(["run-size", "run-b", "run-e", "draw", "alltoall", "bench", "find"])
        if ctx == "run-size":
            add(["run", "{in}/good.json", "--np", "4", "--size", s, "--reps", "1"], "invalid")
        elif ctx == "run-b":
            add(["run", "{in}/good.json", "--np", "4", "-b", s, "-e", "1M"], "invalid")
        elif ctx == "run-e":
            add(["run", "{in}/good.json", "--np", "4", "-b", "4", "-e", s], "invalid")
        elif ctx == "draw":
            add(["draw", "{in}/good.json", "-o", "d.svg", "--size", s], "invalid")
        elif ctx == "alltoall":
            add(["topo", "show", "ring:4", "--alltoall", "--size", s], "invalid")
        elif ctx == "bench":
            add(["bench-mpi", "--np", "2", "--sizes", f"1,{s}"], "invalid")
        else:
            add(["find", "--nodes", "8", "--degree", "2", "--size", s], "invalid")
    # -f, the sweep factor, spelled many ways
    for f, verdict in [
        ("0", "invalid"),
        ("1", "invalid"),
        ("-2", "invalid"),
        ("2.5", "invalid"),
        ("x", "invalid"),
        ("1e3", "invalid"),
        ("0x2", "invalid"),
        (" 2", "either"),
        ("99999999999999999999", "invalid"),
        ("9223372036854775807", "valid"),
        ("3", "valid"),
        ("1024", "valid"),
        ("\u0662", "invalid"),
    ]:
        add(["compare", "ring:4", "-c", "allgather", "-b", "1K", "-e", "1M", "-f", f], verdict)
        if verdict == "invalid":
            add(["run", "{in}/good.json", "--np", "4", "-b", "8", "-e", "64", "-f", f], "invalid")
    # size ranges spelled wrong
    for r in [
        "1K-",
        "-1K",
        "1K--2K",
        "1K-2K-3K",
        "1K_2K",
        "1K:2K",
        "1K..2K",
        "2K-1K",
        "-",
        "--",
        "1K-2K,3K-4K",
    ]:
        add(
            ["export", "{in}/good.json", "--format", "msccl-xml", "--size-range", r, "-o", "x.xml"], "invalid"
        )
    # the sweep in compare and run with both forms
    add(["compare", "ring:4", "-c", "allgather", "--sizes", "1K", "-e", "1M"], "invalid")
    add(["compare", "ring:4", "-c", "allgather", "--sizes", "1K", "-f", "2"], "invalid")
    add(["run", "{in}/good.json", "--np", "4", "--size", "1K", "-e", "1M"], "invalid")
    return cases


ALGORITHMS = [
    "forestcoll",
    "tacos",
    "circulant",
    "bfb",
    "ring",
    "direct",
    "rhd",
    "dbt",
    "nccl-ring",
    "nccl-tree",
]
COLLECTIVES = ["allgather", "reduce-scatter", "allreduce", "broadcast", "reduce"]


# One argument may hold at most 128 KiB (MAX_ARG_STRLEN): deeper nestings are cut to fit.
MAX_ARG = 128 * 1024 - 1


def nest(opening: str, inner: str, depth: int) -> tuple[str, str]:
    """`opening` `depth` times around `inner` (as deep as one argument holds), refused."""
    depth = min(depth, (MAX_ARG - len(inner)) // (len(opening) + 1))
    return opening * depth + inner + ")" * depth, "invalid"


def zoo_family(rng: random.Random) -> list[Case]:
    cases = []

    def commands(spec: str, k: int) -> list[list[str]]:
        coll = rng.choice(COLLECTIVES)
        pool = [
            ["topo", "show", spec],
            ["topo", "show", spec, "--json"],
            ["topo", "export", spec, "-o", "t.json"],
            ["bound", spec, "-c", coll],
            ["synth", spec, "-c", coll, "-a", rng.choice(ALGORITHMS)],
            ["synth", spec, "-c", coll, "-a", "auto"],
            ["compare", spec, "-c", coll, "--sizes", "1MiB"],
        ]
        return rng.sample(pool, k)

    # deep expressions, other depths and other nestings than the tests
    nests = []
    for depth in (63, 64):
        nests.append(("bi(" * depth + "ring:5" + ")" * depth, "valid"))
        nests.append(("line(" * depth + "ring:6" + ")" * depth, "valid"))
    for depth in (65, 66, 200, 4096, 30_000):
        nests.append(nest("bi(", "ring:3", depth))
        nests.append(nest("line(", "biring:3", depth))
    for depth in (65, 300, 20_000):
        mixed = "".join(rng.choice(["bi(", "line(", "line^1("]) for _ in range(depth))
        mixed = mixed[: MAX_ARG - 20]
        mixed = mixed[: mixed.rindex("(") + 1]
        nests.append((mixed + "ring:4" + ")" * mixed.count("("), "invalid"))
        nests.append(nest("product(ring:2; ", "ring:2", depth))
        nests.append(nest("power^1(", "ring:3", depth))
        nests.append(nest("degree*1(", "ring:3", depth))
    nests += [
        ("bi(" * 30 + "ring:4" + ")" * 29, "invalid"),  # unbalanced
        ("bi(ring:4))", "invalid"),
        ("bi(ring:4", "invalid"),
        ("bi()", "invalid"),
        ("bi(,)", "invalid"),
        ("bi( ring:4 )", "either"),
        ("product(ring:2;)", "invalid"),
        ("product(;)", "invalid"),
        ("product(ring:2; ring:3", "invalid"),
        ("product(ring:2)", "either"),
        ("line^0(ring:4)", "either"),
        ("line^-1(ring:4)", "invalid"),
        ("line^99999999999999999999(ring:4)", "invalid"),
        ("line^12(ring:5)", "valid"),
        ("line^6(complete:5)", "either"),
        ("line^4(torus:8x8)", "either"),
        ("power^0(ring:3)", "either"),
        ("power^40(ring:2)", "invalid"),
        ("power^3(complete:40)", "either"),
        ("degree*0(ring:4)", "either"),
        ("degree*1000000(ring:4)", "either"),
        ("degree*99999999999999999999(ring:4)", "invalid"),
        ("product(ring:100; ring:100; ring:100)", "either"),
        ("product(complete:100; complete:100)", "either"),
        ("bi(line(bi(line(complete:3))))", "valid"),
        ("foo(ring:4)", "invalid"),
        ("BI(ring:4)", "invalid"),
        ("bi[ring:4]", "invalid"),
    ]
    for spec, verdict in nests:
        k = 3 if verdict != "either" else 2
        for argv in commands(spec, k):
            v = verdict
            if verdict == "valid" and argv[0] == "synth" and argv[5] != "auto":
                v = "either"  # the algorithm drawn may not apply to this topology
            cases.append(Case("zoo", argv, v))
    # malformed specs, other spellings than the tests
    malformed = [
        "torus::4x4",
        "torus:4x",
        "torus:x4",
        "torus:4xx4",
        "mesh:0x4",
        "mesh:4x0",
        "ring:",
        "ring",
        ":4",
        ":",
        "ring:4,,bw=1",
        "ring:4,bw=",
        "ring:4,bw=1,",
        "ring:4,lat=1,lat=2",
        "ring:4,d=2,d=2",
        "circulant:16:3,,4",
        "circulant:16:,3",
        "circulant:16:",
        "circulant:16:0",
        "circulant:16:16",
        "kautz:2:",
        "kautz::8",
        "dgx-a100:2,bw=300/",
        "dgx-a100:2,bw=/25",
        "dgx-a100:2,bw=300//25",
        "torus:4x4,bw=1/2/3",
        "RING:4",
        "ring:4.0",
        "ring:0x4",
        "ring:\u0664",
        "ring:4e0",
        "ring:-4",
        "ring:99999999999999999999999",
        "ring:4294967300",
        "hypercube:0",
        "hamming:0,3",
        "hamming:3,0",
        "fat-tree:3",
        "fat-tree:0",
        "fat-tree:-4",
        "dragonfly:4,4",
        "dragonfly:0,5",
        "traff:1",
        "traff:0",
        "drg:nosuch",
        "drg:",
        "diamond:3",
        "dgx1:2",
        "nccl:",
        "nccl:*2",
        "nccl:{in}/a100.xml*0",
        "nccl:{in}/a100.xml*-1",
        "nccl:{in}/a100.xml*99999999999999999999",
        "nccl:{in}/a100.xml*2,fabric=mesh",
        "nccl:{in}/a100.xml*2,fabric=fat-tree,k=3",
        "mi250:2,gcds=0",
        "mi250:2,gcds=17",
        "mi250:2,gcds=-1",
        "rfs:0,4,8",
        "switch2d:0,4",
        "bipartite:0,4",
        "twisted-torus:3x4",
        "dbjmod:1:3",
        "debruijn:0:8",
        "ring:4;ring:4",
        "ring:4)",
        "ring:4\x1b[31m",
        "ring:4,bw=1e400",
        "ring:4,=",
        "ring:4,bw",
        "ring:4,bw==1",
        "ring:4,BW=1",
        "x" * 100_000,
        "ring:" + "4" * 5000,
    ]
    for spec in malformed:
        for argv in commands(spec, 2):
            cases.append(Case("zoo", argv, "invalid"))
    # lenient spellings the grammar may take (whitespace is trimmed, zoo.md; lat= may carry a unit)
    for spec in [
        "torus:4X4",
        "ring:4 ",
        " ring:4",
        "ring :4",
        "ring:+4",
        "ring:4,lat=1us",
        "ring:4,bw=100Gbps",
    ]:
        for argv in commands(spec, 2):
            cases.append(Case("zoo", argv, "either"))
    # specs that are no UTF-8
    for raw in [b"ring:\xc3", b"torus:4x4,bw=\xff", b"bi(ring:4\xfe)", b"\xef\xbb\xbfring:4"]:
        cases.append(Case("zoo", ["topo", "show", raw], "invalid"))
        cases.append(Case("zoo", ["synth", raw, "-c", "allgather", "-a", "auto"], "invalid"))
    # bandwidth and latency extremes (the contract: a latency is any finite f64, a bandwidth is
    # exact with numerator and denominator at most 2^80)
    extremes = [
        ("lat=1e308", "valid"),
        ("lat=1e-308", "valid"),
        ("lat=4.9e-324", "valid"),
        ("lat=1.7976931348623157e308", "valid"),
        ("lat=0", "valid"),
        ("lat=-0", "either"),
        ("lat=1e-400", "either"),
        ("lat=nan", "invalid"),
        ("lat=NaN", "invalid"),
        ("lat=inf", "invalid"),
        ("lat=-inf", "invalid"),
        ("lat=-1", "invalid"),
        ("lat=1e309", "invalid"),
        ("lat=0x10", "invalid"),
        ("bw=1e308", "invalid"),
        ("bw=1e-308", "invalid"),
        ("bw=nan", "invalid"),
        ("bw=inf", "invalid"),
        ("bw=-inf", "invalid"),
        ("bw=-0", "invalid"),
        ("bw=-1", "invalid"),
        ("bw=0.0", "invalid"),
        ("bw=1e24", "valid"),
        ("bw=1e25", "invalid"),
        ("bw=1.5", "valid"),
        ("bw=0.125", "valid"),
        ("bw=123.456789012345", "valid"),
        ("bw=0.1234567890123456789", "valid"),
        ("bw=1.23456789012345678901234567", "invalid"),
        ("bw=1/3", "either"),
        ("bw=00100", "either"),
        ("bw=+100", "either"),
        ("bw=1e2", "either"),
    ]
    for option, verdict in extremes:
        for base in rng.sample(["ring:4", "torus:3x3", "switch:5", "complete:4", "dgx-a100:1"], 2):
            spec = f"{base},{option}"
            coll = rng.choice(["allgather", "allreduce", "reduce-scatter"])
            pool = [
                ["topo", "show", spec, "--json"],
                ["bound", spec, "-c", coll, "--json"],
                ["synth", spec, "-c", coll, "-a", rng.choice(["ring", "auto", "direct"]), "--json"],
                ["compare", spec, "-c", coll, "--sizes", "1,1GiB", "--json"],
            ]
            for argv in rng.sample(pool, 3):
                cases.append(Case("zoo", argv, verdict))
    # one rank, in every command and every algorithm
    for spec in [
        "mesh:1x1x1",
        "torus:1x1",
        "ring:1",
        "biring:1",
        "complete:1",
        "switch:1",
        "hypercube:0",
        "hamming:1,1",
    ]:
        for argv in commands(spec, 3):
            cases.append(Case("zoo", argv, "invalid"))
        coll = rng.choice(COLLECTIVES)
        for alg in [*ALGORITHMS, "auto"]:
            cases.append(Case("zoo", ["synth", spec, "-c", coll, "-a", alg], "invalid"))
    for spec in [
        "bi(torus:1)",
        "line(mesh:1x1)",
        "product(ring:1; torus:1)",
        "power^3(mesh:1x1)",
        "switch2d:1,1",
    ]:
        for argv in commands(spec, 2):
            cases.append(Case("zoo", argv, "invalid"))
    # huge topologies: refused, or shown, but never a crash (a few commands each: some are slow)
    huge = [
        ("ring:1000000", ["topo-show", "bound-ag", "synth-ring"]),
        ("biring:1048576", ["topo-show"]),
        ("ring:1048577", ["topo-show", "bound-ag"]),
        ("torus:2000x2000", ["topo-show", "synth-auto"]),
        ("mesh:2048x2048", ["bound-ag"]),
        ("complete:5000", ["topo-show", "bound-ag", "synth-auto", "compare"]),
        ("complete:4097", ["synth-direct", "topo-show"]),
        ("dgx-a100:100000", ["topo-show", "bound-ag", "synth-ring", "compare"]),
        ("dgx-a100:4097", ["topo-show", "synth-auto"]),
        ("hgx-h100:5000", ["topo-show", "compare"]),
        ("mi250:100000", ["bound-ag"]),
        ("switch:1000000", ["topo-show", "synth-ring"]),
        ("fat-tree:200", ["topo-show", "bound-ag"]),
        ("kautz:2:2000000", ["topo-show"]),
        ("circulant:2000000:1,7", ["topo-show"]),
        ("hypercube:21", ["topo-show", "bound-ag"]),
        ("hamming:3,200", ["topo-show"]),
        ("traff:100000000", ["topo-show", "synth-circ"]),
        ("torus:65536x65536", ["topo-show", "bound-ag"]),
        ("torus:2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2", ["topo-show"]),
        ("bipartite:100000,100000", ["topo-show"]),
    ]
    for spec, which in huge:
        for w in which:
            argv = {
                "topo-show": ["topo", "show", spec, "--json"],
                "bound-ag": ["bound", spec, "-c", "allgather"],
                "synth-ring": ["synth", spec, "-c", "allgather", "-a", "ring"],
                "synth-auto": ["synth", spec, "-c", "allreduce", "-a", "auto"],
                "synth-direct": ["synth", spec, "-c", "allgather", "-a", "direct"],
                "synth-circ": ["synth", spec, "-c", "broadcast", "-a", "circulant"],
                "compare": ["compare", spec, "-c", "allgather", "--sizes", "1MiB"],
            }[w]
            cases.append(Case("zoo", argv, "either"))
    return cases


def allocation_family(rng: random.Random) -> list[Case]:
    cases = []

    def add(argv, verdict):
        cases.append(Case("allocation", argv, verdict))

    big = ["2147483648", "4294967297", "1000000000000000", "9223372036854775807"]
    beyond = ["9223372036854775808", "99999999999999999999999", "1e9", "0x100000", "-5", "0", "", "many"]
    # --pipeline
    for k in big + beyond:
        verdict = "invalid"
        for argv in rng.sample(
            [
                ["synth", "ring:5", "-c", "reduce-scatter", "-a", "ring", "--pipeline", k],
                ["synth", "torus:2x2", "-c", "allreduce", "-a", "direct", "--pipeline", k],
                ["compare", "switch:4", "-c", "broadcast", "--sizes", "1MiB", "--pipeline", k],
                ["simulate", "{in}/orbit.json", "--pipeline", k],
                ["export", "{in}/good.json", "--format", "msccl-xml", "--pipeline", k, "-o", "x.xml"],
                ["run", "{in}/good.json", "--np", "4", "--pipeline", k],
                ["draw", "{in}/good.json", "-o", "d.svg", "--pipeline", k],
            ],
            4,
        ):
            add(argv, verdict)
    for k in ["1", "64", "4096"]:
        add(["simulate", "{in}/good.json", "--pipeline", k], "valid")
        add(["synth", "ring:5", "-c", "allgather", "-a", "ring", "--pipeline", k], "valid")
    # TACOS: restarts, chunks, ranks
    tacos = ["synth", "ring:6", "-c", "allgather", "-a", "tacos"]
    for v in ["0", "-1", "1.5", "x", "", "9223372036854775808", "99999999999999999999999"]:
        add([*tacos, "--restarts", v], "invalid")
    for v in ["65537", "1048576", "4294967296", "0", "-1", "2.0", "1e3", "99999999999999999999999"]:
        add([*tacos, "--chunks-per-npu", v], "invalid")
    for v in ["2", "16", "256"]:
        add([*tacos, "--chunks-per-npu", v], "valid")
    add([*tacos, "--restarts", "3"], "valid")
    # restarts beyond reason: refused up front, or answered by the timeout (they answer Ctrl-C)
    add(
        ["synth", "ring:4", "-c", "reduce-scatter", "-a", "tacos", "--restarts", "9223372036854775807"],
        "either",
    )
    add(["synth", "switch:6", "-c", "allgather", "-a", "tacos", "--restarts", "4294967296"], "either")
    for v in [
        "0-18446744073709551615",
        "0-18446744073709551616",
        "5-3",
        "0-0",
        "0,0,0",
        "-1",
        "0-",
        "-",
        "0-3,",
        ",0-3",
        "a-b",
        "0-4294967296",
        "3-99999999999999999999999",
        "6",
        "0-6",
        "0..3",
        "0-1,1-2,2-3,3-4,4-5,5-6",
        "\u0660-\u0663",
        "0-3,4-99999999999",
    ]:
        add([*tacos, "--ranks", v], "invalid")
    for v in ["0-5", "0,2,4", "1-3", "0-1,3-5", "0-3 "]:
        add([*tacos, "--ranks", v], "either")
    for v in ["1", "32", "1024"]:
        add(["synth", "ring:6", "-c", "allgather", "-a", "forestcoll", "--max-trees", v], "valid")
    for v in ["1025", "2147483648", "18446744073709551616", "1e3", "0x10", "-0", " 4", "4.0"]:
        add(
            ["synth", "torus:3x3", "-c", rng.choice(COLLECTIVES), "-a", "forestcoll", "--max-trees", v],
            "invalid",
        )
    # --blocks of the circulant schedules
    for v in ["1048576", "2147483648", "9223372036854775807", "0", "-1", "1e6", "x"]:
        coll = rng.choice(["broadcast", "allgather", "reduce"])
        add(
            ["synth", "traff:17", "-c", coll, "-a", "circulant", "--blocks", v],
            "invalid" if v in ("0", "-1", "1e6", "x") else "either",
        )
    for v in ["1", "7", "64"]:
        add(["synth", "traff:12", "-c", "broadcast", "-a", "circulant", "--blocks", v], "valid")
    # allgatherv counts
    for v, verdict in [
        ("1,2,3", "invalid"),
        (",".join(["1"] * 12), "valid"),
        (",".join(["1"] * 13), "invalid"),
        ("-1," + ",".join(["1"] * 11), "invalid"),
        ("9" * 30 + "," + ",".join(["0"] * 11), "invalid"),
        (",".join(["9223372036854775807"] * 12), "either"),
        (",".join(["0"] * 11 + ["5"]), "either"),
        (",".join(["0"] * 12), "either"),
        (",".join(["1.5"] * 12), "invalid"),
    ]:
        add(["synth", "traff:12", "-c", "allgatherv", "-a", "circulant", "--counts", v], verdict)
    # circulant check
    for argv, verdict in [
        (["--max-p", "0"], "either"),
        (["--max-p", "1"], "either"),
        (["--max-p", "2"], "valid"),
        (["--max-p", "300"], "valid"),
        (["--max-p", "9223372036854775808"], "invalid"),
        (["--max-p", "-3"], "invalid"),
        (["--max-p", "1e12"], "invalid"),
        (["--max-p", "5", "--random", "2000000"], "invalid"),
        (["--max-p", "5", "--random", "3", "--random-max", "99999999999999999999999"], "invalid"),
        (["--max-p", "5", "--random", "3", "--random-max", "0"], "either"),
        (["--max-p", "5", "--random", "3", "--random-max", "1"], "either"),
        (["--max-p", "5", "--threads", "1025"], "invalid"),
        (["--max-p", "5", "--threads", "1024"], "valid"),
        (["--max-p", "5", "--seed", "-1"], "invalid"),
        (["--max-p", "5", "--seed", "18446744073709551616"], "invalid"),
        (["--max-p", "9223372036854775807"], "either"),
    ]:
        add(["circulant", "check", *argv], verdict)
    # MPI repetitions and processes
    for v in ["10001", "18446744073709551616", "0", "-3", "1e4", "x"]:
        add(["run", "{in}/good.json", "--np", "4", "--reps", v], "invalid")
    for v in ["65537", "0", "4294967296", "3"]:
        add(["run", "{in}/good.json", "--np", v], "invalid")
    for v in ["0", "1e9", "99999999999999999999"]:
        add(["bench-mpi", "--np", "2", "--reps", v], "invalid")
    add(["bench-mpi", "--np", "65537"], "invalid")
    add(["bench-mpi", "--np", "2", "--timeout", "nan"], "invalid")
    add(["bench-mpi", "--np", "2", "--timeout", "inf"], "invalid")
    add(["bench-mpi", "--np", "2", "--ops", "alltoall"], "invalid")
    # find: counts beyond reason
    for argv in [
        ["--nodes", "1", "--degree", "2"],
        ["--nodes", "8", "--degree", "0"],
        ["--nodes", "8", "--degree", "99999999999"],
        ["--nodes", "4294967297", "--degree", "2"],
        ["--sweep", "99999999999999", "--degrees", "2"],
        ["--sweep", "8", "--degrees", "0"],
        ["--nodes", "8", "--degree", "2", "--alpha", "nan"],
        ["--nodes", "8", "--degree", "2", "--alpha", "-1us"],
        ["--nodes", "8", "--degree", "2", "--node-bw", "0Gbps"],
        ["--nodes", "8", "--degree", "2", "--node-bw", "1e400Gbps"],
    ]:
        add(["find", *argv], "invalid")
    # --memory-budget: tiny, huge, garbage, on several commands
    budgets = [
        ("0", "invalid"),
        ("1", "invalid"),
        ("1048575", "invalid"),
        ("1023KiB", "invalid"),
        ("1MiB", "either"),
        ("1048576", "either"),
        ("1e30", "either"),
        ("8EiB", "invalid"),
        ("9223372036854775807", "either"),
        ("9223372036854775808", "either"),
        ("99999999999999999999TiB", "invalid"),
        ("-1", "invalid"),
        ("-1GiB", "invalid"),
        ("lots", "invalid"),
        ("1.5MiB", "either"),
        ("1/2", "invalid"),
        (" ", "invalid"),
        ("", "invalid"),
        ("nan", "invalid"),
        ("inf", "invalid"),
        ("4GiB", "valid"),
        ("64MiB", "valid"),
        ("\uff14GiB", "invalid"),
    ]
    targets = [
        ["topo", "show", "torus:4x4"],
        ["synth", "ring:8", "-c", "allgather", "-a", "tacos"],
        ["compare", "ring:4", "-c", "allgather", "--sizes", "1MiB"],
        ["verify", "{in}/good.json"],
        ["simulate", "{in}/good.json", "--size", "1MiB"],
        ["bound", "complete:6", "-c", "allreduce"],
        ["export", "{in}/good.json", "--format", "msccl-xml", "-o", "x.xml"],
    ]
    for budget, verdict in budgets:
        for argv in rng.sample(targets, 3):
            add([*argv, "--memory-budget", budget], verdict)
    # a small budget against work that needs more than it: refused before allocating
    for argv in [
        ["synth", "torus:16x16", "-c", "allgather", "-a", "bfb", "--memory-budget", "2MiB"],
        ["simulate", "{in}/good.json", "--pipeline", "200000", "--memory-budget", "8MiB"],
        [
            "export",
            "{in}/orbit.json",
            "--format",
            "msccl-xml",
            "--pipeline",
            "100000",
            "--memory-budget",
            "4MiB",
        ],
        ["topo", "show", "ring:1000000", "--memory-budget", "1MiB"],
        ["compare", "torus:8x8", "-c", "allgather", "--memory-budget", "1MiB"],
    ]:
        add(argv, "either")
    return cases


def files_family(rng: random.Random) -> list[Case]:
    cases = []

    def add(argv, verdict="invalid", setup=()):
        cases.append(Case("files", argv, verdict, setup))

    def schedule_commands(path: str) -> list[list[str]]:
        return [
            ["verify", path],
            ["simulate", path, "--size", "1MiB"],
            ["export", path, "--format", "msccl-xml", "-o", "x.xml"],
            ["export", path, "--format", "mscclpp-json", "-o", "p.json"],
            ["draw", path, "-o", "d.svg"],
            ["run", path, "--np", "4"],
        ]

    def topology_commands(path: str) -> list[list[str]]:
        return [
            ["topo", "show", path],
            ["topo", "export", path, "-o", "t.json"],
            ["bound", path, "-c", "allgather"],
            ["synth", path, "-c", "allreduce", "-a", "auto"],
            ["compare", path, "-c", "allgather", "--sizes", "1MiB"],
        ]

    def xml_commands(path: str) -> list[list[str]]:
        return [
            ["verify", path],
            ["verify", path, "--topology", "ring:4", "--size", "1MiB"],
            ["run", path, "--np", "4"],
        ]

    def nccl_commands(path: str) -> list[list[str]]:
        return [
            ["topo", "import", path, "-o", "t.json"],
            ["topo", "import", path, "-o", "t.json", "--boxes", "2"],
            ["topo", "show", f"nccl:{path}*2"],
            ["bound", f"nccl:{path}", "-c", "allgather"],
        ]

    d = "{in}/"
    # unbounded and special inputs
    for path in [
        "/dev/zero",
        "/dev/urandom",
        "/dev/full",
        "/dev/null",
        d + "urandom.json",
        d + "zero.plan.json",
    ]:
        pool = schedule_commands(path) + [["topo", "import", path, "-o", "t.json"], ["topo", "show", path]]
        for argv in rng.sample(pool, 3):
            add(argv)
    for path in [d + "zero.XML", d + "full_dev.json", d + "null_dev.json"]:
        for argv in rng.sample(xml_commands(path) + schedule_commands(path), 2):
            add(argv)
    # a FIFO that no one writes: each run makes its own, and must not wait forever
    for name in ["fifo.json", "fifo.xml", "fifo_topo.json", "fifo_nccl.xml"]:
        if name == "fifo.xml":
            pool = xml_commands(name)
        elif name == "fifo_topo.json":
            pool = topology_commands(name)
        elif name == "fifo_nccl.xml":
            pool = nccl_commands(name)
        else:
            pool = schedule_commands(name)
        for argv in rng.sample(pool, min(3, len(pool))):
            add(argv, "invalid", (("fifo", name),))
    # directories, links, huge sparse files
    for path in [d + "adir.json", d + "adir.xml", d + "to_dir.json", d, d + "dangling.json", d + "loop.json"]:
        for argv in rng.sample(schedule_commands(path) + topology_commands(path), 3):
            add(argv)
    for path in [d + "sparse.json", d + "sparse_prefix.json"]:
        for argv in rng.sample(schedule_commands(path), 2):
            add(argv)
    add(["verify", d + "sparse.xml"])
    add(["topo", "import", d + "sparse.xml", "-o", "t.json"])
    add(["topo", "show", d + "sparse_topo.json"])
    add(["synth", d + "sparse_topo.json", "-c", "allgather", "-a", "ring"])
    # missing files, names too long, paths through a regular file
    for path in [d + "missing.json", d + "afile/x.json", "x" * 5000 + ".json", d + "a" * 300 + ".xml", "-"]:
        for argv in rng.sample(schedule_commands(path), 2):
            add(argv)
    # truncated files
    for k in range(6):
        for stem in ["good", "orbit", "plan"]:
            path = f"{d}cut_{stem}_{k}.json"
            for argv in rng.sample(schedule_commands(path), 2):
                add(argv)
        for argv in rng.sample(topology_commands(f"{d}cut_topo_{k}.json"), 2):
            add(argv)
        for argv in rng.sample(xml_commands(f"{d}cut_good_{k}.xml"), 2):
            add(argv)
        for argv in rng.sample(nccl_commands(f"{d}cut_a100_{k}.xml"), 2):
            add(argv)
    # deep JSON
    for depth in (65, 999, 20_000, 1_000_000):
        for kind in ("list", "obj", "open"):
            path = f"{d}deep_{kind}_{depth}.json"
            add(rng.choice(schedule_commands(path)))
            add(rng.choice(topology_commands(path)))
    # JSON oddities
    schedule_like = [
        "step_neg",
        "step_float",
        "step_2p64",
        "nranks_huge",
        "nranks_zero",
        "shards_zero",
        "shards_div0",
        "shards_huge",
        "no_transfers",
        "format9",
        "root_huge",
        "collective_x",
        "nan_literal",
        "trailing_comma",
        "two_docs",
        "utf16",
    ]
    topology_like = [
        "nan_bw",
        "inf_lat",
        "e400_bw",
        "neg0_bw",
        "big_int_bw",
        "null_nodes",
        "unknown_node",
        "dup_node",
        "latin1",
    ]
    both = ["empty_obj", "empty_list", "null", "empty", "spaces"]
    for name in schedule_like + both:
        for argv in rng.sample(schedule_commands(f"{d}{name}.json"), 3):
            add(argv)
    for name in topology_like + both:
        for argv in rng.sample(topology_commands(f"{d}{name}.json"), 3):
            add(argv)
    for name in ["long_name", "str_bw", "surrogate", "self_link", "dupkey_topo"]:
        for argv in rng.sample(topology_commands(f"{d}{name}.json"), 2):
            add(argv, "either")
    for argv in rng.sample(schedule_commands(d + "dupkey_sched.json"), 2):
        add(argv, "either")
    for argv in rng.sample(schedule_commands(d + "bom.json"), 2):
        add(argv, "either")
    # binary garbage
    for n in (1, 7, 4096, 1 << 20):
        for argv in rng.sample(schedule_commands(f"{d}garbage_{n}.json"), 2):
            add(argv)
        add(rng.choice(topology_commands(f"{d}garbage_{n}.json")))
        for argv in rng.sample(xml_commands(f"{d}garbage_{n}.xml") + nccl_commands(f"{d}garbage_{n}.xml"), 3):
            add(argv)
    # NCCL topology XML
    # read as NCCL's own reader reads them (with a warning where it assumes something): either is fine
    either_nccl = set(
        "nccl_numeric_ref nccl_lt_entity nccl_comment nccl_cdata nccl_bom nccl_crlf nccl_pi nccl_count_zero"
        " nccl_speed_huge nccl_rank_huge nccl_dup_busid_case nccl_nvlink_nowhere nccl_nvlink_self"
        " nccl_no_gpus nccl_deep_66 nccl_many_attrs nccl_version_2 nccl_speed_zero".split()
    )
    for name in [
        "nccl_undef_entity",
        "nccl_lt_entity",
        "nccl_numeric_ref",
        "nccl_nul_name",
        "nccl_nul_text",
        "nccl_dup_nvlink_attr",
        "nccl_dup_net_attr",
        "nccl_dup_busid_last",
        "nccl_dup_busid_case",
        "nccl_doctype_bomb",
        "nccl_cdata",
        "nccl_comment",
        "nccl_pi",
        "nccl_unclosed",
        "nccl_mismatch",
        "nccl_unquoted",
        "nccl_newline_attr",
        "nccl_count_neg",
        "nccl_count_zero",
        "nccl_count_2p63",
        "nccl_speed_zero",
        "nccl_speed_huge",
        "nccl_dev_neg",
        "nccl_rank_huge",
        "nccl_nvlink_self",
        "nccl_nvlink_nowhere",
        "nccl_no_gpus",
        "nccl_version_2",
        "nccl_deep_66",
        "nccl_deep_1000",
        "nccl_many_attrs",
        "nccl_empty",
        "nccl_bom",
        "nccl_crlf",
        "nccl_only_decl",
        "nccl_two_roots",
        "nccl_utf16",
    ]:
        verdict = "either" if name in either_nccl else "invalid"
        for argv in rng.sample(nccl_commands(f"{d}{name}.xml"), 2):
            add(argv, verdict)
    # MSCCL XML
    either_msccl = {"msccl_hex_cnt", "msccl_space_cnt", "msccl_maxbytes_neg", "msccl_minbytes_above"}
    either_msccl |= {"msccl_nchannels_huge", "msccl_chan_huge", "msccl_inplace_2", "msccl_step_gap"}
    either_msccl |= {"msccl_depid_far", "msccl_deps_neg", "msccl_cnt_huge", "msccl_deep", "msccl_dup_attr"}
    for name in [
        "msccl_undef_entity",
        "msccl_dup_attr",
        "msccl_nul",
        "msccl_srcoff_neg",
        "msccl_cnt_zero",
        "msccl_cnt_huge",
        "msccl_depid_far",
        "msccl_deps_neg",
        "msccl_ngpus_zero",
        "msccl_ngpus_neg",
        "msccl_nchunks_zero",
        "msccl_proto_ll256",
        "msccl_coll_alltoall",
        "msccl_inplace_2",
        "msccl_nchannels_huge",
        "msccl_maxbytes_neg",
        "msccl_minbytes_above",
        "msccl_chan_huge",
        "msccl_send_self",
        "msccl_type_x",
        "msccl_gpu_dup",
        "msccl_no_gpus",
        "msccl_hex_cnt",
        "msccl_space_cnt",
        "msccl_step_gap",
        "msccl_deep",
    ]:
        verdict = "either" if name in either_msccl else "invalid"
        pool = xml_commands(f"{d}{name}.xml")
        for argv in rng.sample(pool, 2):
            # `run` starts mpiexec on what it accepts: only for files it must refuse
            add(argv, verdict if argv[0] != "run" or verdict == "invalid" else "either")
    # MSCCL++ plans
    for name in [
        "plan_gpus_empty",
        "plan_collective_x",
        "plan_neg_chunks",
        "plan_float_id",
        "plan_big_align",
        "plan_zero_align",
        "plan_conn_neg",
        "plan_no_tbs",
    ]:
        add(["verify", f"{d}{name}.json"])
        add(["verify", f"{d}{name}.json", "--json"])
    # a schedule where a topology belongs and the other way round
    add(["topo", "show", d + "good.json"], "either")
    add(["topo", "import", d + "good.xml", "-o", "t.json"])
    add(["topo", "import", d + "topo.json", "-o", "t.json"])
    add(["verify", d + "topo.json"])
    add(["simulate", d + "plan.json"])
    add(["export", d + "good.xml", "--format", "msccl-xml", "-o", "x.xml"])
    add(["draw", d + "plan.json", "-o", "d.svg"])
    add(["run", d + "a100.xml", "--np", "8"])
    add(["run", d + "plan.json", "--np", "4"])
    # valid files under odd names must still be read
    add(["verify", d + "line\nbreak.json"], "valid")
    add(["simulate", d + "ümlaut ☃.json", "--size", "3"], "valid")
    add(["verify", d + "-dash.json"], "valid")
    add(["verify", d + "sp ace.xml"], "valid")
    add(["verify", d + "UPPER.XML"], "valid")
    add(["export", d + "ümlaut ☃.json", "--format", "msccl-xml", "-o", "ü ☃.xml"], "valid")
    return cases


OUTPUT_WRITERS = {
    # name: (argv with {o}, suffix, kind: "file" | "image" | "dir")
    "topo-export": (["topo", "export", "ring:4", "-o", "{o}"], ".json", "file"),
    "topo-import": (["topo", "import", A100_XML, "-o", "{o}"], ".json", "file"),
    "export-xml": (["export", "{in}/good.json", "--format", "msccl-xml", "-o", "{o}"], ".xml", "file"),
    "export-plan": (["export", "{in}/good.json", "--format", "mscclpp-json", "-o", "{o}"], ".json", "file"),
    "topo-draw": (["topo", "draw", "ring:5", "-o", "{o}"], ".svg", "image"),
    "draw": (["draw", "{in}/good.json", "-o", "{o}"], ".png", "image"),
    "compare-plot": (
        ["compare", "ring:4", "-c", "allgather", "--sizes", "1KiB,1MiB", "--plot", "{o}"],
        ".png",
        "image",
    ),
    "synth": (["synth", "ring:4", "-c", "allgather", "-a", "ring", "-o", "{o}"], "", "dir"),
    "synth-formats": (
        [
            "synth",
            "biring:4",
            "-c",
            "allreduce",
            "-a",
            "ring",
            "--format",
            "json,msccl-xml,mscclpp-json",
            "-o",
            "{o}",
        ],
        "",
        "dir",
    ),
}

# target kind: (what is made, verdict for a file writer, for an image writer, for a dir writer)
OUTPUT_TARGETS = {
    "null": ("null", "valid", "either", "invalid"),
    "full": ("full", "invalid", "invalid", "invalid"),
    "fifo": ("fifo", "invalid", "invalid", "invalid"),
    "socket": ("socket", "invalid", "invalid", "invalid"),
    "link-file": ("link-file", "valid", "valid", "invalid"),
    "dangling": ("dangling", "valid", "valid", "either"),
    "link-null": ("link-null", "valid", "either", "invalid"),
    "link-full": ("link-full", "invalid", "invalid", "invalid"),
    "link-fifo": ("link-fifo", "invalid", "invalid", "invalid"),
    "link-loop": ("link-loop", "invalid", "invalid", "invalid"),
    "link-dir": ("link-dir", "invalid", "invalid", "valid"),
    "dir": ("dir", "invalid", "invalid", "valid"),
    "file": ("file", "valid", "valid", "invalid"),
    "long-name": ("none", "invalid", "invalid", "invalid"),
    "deep-path": ("none", "invalid", "invalid", "invalid"),
    "under-file": ("under-file", "invalid", "invalid", "invalid"),
    "dot": ("none", "invalid", "invalid", "valid"),
    "trailing-slash": ("none", "either", "either", "either"),
    "no-parent": ("none", "either", "either", "either"),
}


def output_setup(target: str, name: str) -> tuple[tuple, str]:
    """(the entries to make in the cwd, the -o value) of a target kind."""
    made = OUTPUT_TARGETS[target][0]
    if made == "null":
        return (("null", name),), name
    if made == "full":
        return (("full", name),), name
    if made == "fifo":
        return (("fifo", name),), name
    if made == "socket":
        return (("socket", name),), name
    if made == "link-file":
        return (("file", "precious.txt"), ("link", name, "precious.txt")), name
    if made == "dangling":
        return (("link", name, "made-by-the-run"),), name
    if made == "link-null":
        return (("null", "devnull"), ("link", name, "devnull")), name
    if made == "link-full":
        return (("full", "devfull"), ("link", name, "devfull")), name
    if made == "link-fifo":
        return (("fifo", "pipe"), ("link", name, "pipe")), name
    if made == "link-loop":
        return (("link", name, name),), name
    if made == "link-dir":
        return (("dir", "realdir"), ("link", name, "realdir")), name
    if made == "dir":
        return (("dir", name),), name
    if made == "file":
        return (("file", name),), name
    if made == "under-file":
        return (("file", "plain"),), f"plain/{name}"
    if target == "long-name":
        return (), "L" * 260 + name
    if target == "deep-path":
        return (), "/".join(["p" * 250] * 20) + "/" + name
    if target == "dot":
        return (), "."
    if target == "trailing-slash":
        return (), name + "/"
    return (), "no/such/parent/" + name


def outputs_family(rng: random.Random) -> list[Case]:
    cases = []
    for argv, suffix, kind in OUTPUT_WRITERS.values():
        for target, verdicts in OUTPUT_TARGETS.items():
            verdict = verdicts[{"file": 1, "image": 2, "dir": 3}[kind]]
            for variant in range(2):
                # the second time under a name with a space and a non-ASCII letter
                name = ("out" if variant == 0 else "o u\u0308t") + suffix
                setup, o = output_setup(target, name)
                cases.append(Case("outputs", [a.replace("{o}", o) for a in argv], verdict, setup))
    # a directory for `synth -o` whose file names are taken by special files
    for special in ["fifo", "full", "null", "dir", "socket", "link-full", "link-dir"]:
        for fname in ["schedule.json", "schedule.xml", "schedule.mscclpp.json"]:
            entries: tuple = (("dir", "out"),)
            inner = f"out/{fname}"
            if special.startswith("link-"):
                target = {"link-full": "full", "link-dir": "dir"}[special]
                entries += ((target, "thing"), ("link", inner, "../thing"))
            else:
                entries += ((special, inner),)
            fmt = {
                "schedule.json": "json",
                "schedule.xml": "msccl-xml",
                "schedule.mscclpp.json": "mscclpp-json",
            }[fname]
            argv = [
                "synth",
                "ring:4",
                "-c",
                "allgather",
                "-a",
                "ring",
                "--format",
                f"json,{fmt}",
                "-o",
                "out",
            ]
            if fmt == "json":
                argv[8] = "json,msccl-xml"
            verdict = "either" if special == "null" else "invalid"
            cases.append(Case("outputs", argv, verdict, entries))
    # bench-mpi --plot at a device nothing can be written to: refused, or the run ends and the
    # plot fails; the device must stay
    for target in ["full", "fifo", "dir"]:
        setup, o = output_setup(target, "plot.png")
        argv = ["bench-mpi", "--np", "2", "--sizes", "1,64", "--reps", "1", "--ops", "bcast", "--plot", o]
        cases.append(Case("outputs", argv, "invalid", setup))
    # a refused run never touches its -o target, whatever it is
    for target in ["file", "link-file", "null", "full", "fifo"]:
        for argv in [
            ["synth", "ring:1", "-c", "allgather", "-a", "ring", "--format", "msccl-xml", "-o", "{o}"],
            ["export", "{in}/step_neg.json", "--format", "msccl-xml", "-o", "{o}"],
            ["topo", "export", "ring:4,bw=nan", "-o", "{o}"],
            ["draw", "{in}/good.json", "-o", "{o}", "--size", "-1"],
        ]:
            name = "o.svg" if argv[0] == "draw" else "o.json"
            setup, o = output_setup(target, name)
            cases.append(Case("outputs", [a.replace("{o}", o) for a in argv], "invalid", setup))
    return cases


LONG_COMMANDS = [
    ["synth", "torus:32x32", "-c", "allgather", "-a", "tacos", "--restarts", "1000"],
    [
        "synth",
        "torus:32x32",
        "-c",
        "allgather",
        "-a",
        "tacos",
        "--restarts",
        "1000",
        "--format",
        "json,msccl-xml",
        "-o",
        "out",
    ],
    ["synth", "ring:16", "-c", "allreduce", "-a", "tacos", "--restarts", "100000000"],
    ["synth", "ring:8", "-c", "allgather", "-a", "tacos", "--chunks-per-npu", "65536", "-o", "out"],
    ["compare", "torus:16x16", "-c", "allgather", "--plot", "p.png"],
    ["compare", "torus:12x12", "-c", "allreduce", "--json"],
    ["circulant", "check", "--max-p", "100000000"],
    ["bound", "ring:1000000", "-c", "allreduce"],
    ["synth", "ring:1000000", "-c", "allgather", "-a", "ring", "-o", "big"],
    ["topo", "show", "torus:2000x2000"],
    ["topo", "export", "ring:1000000", "-o", "big.json"],
    ["synth", "complete:4096", "-c", "allgather", "-a", "direct"],
]


def signals_family(rng: random.Random) -> list[Case]:
    cases = []
    delays = [0.5, 0.8, 1.2, 1.7, 2.3, 3.0]
    for argv in LONG_COMMANDS:
        for sig in (signal.SIGINT, signal.SIGTERM):
            for delay in rng.sample(delays, 4):
                cases.append(Case("signals", argv, "either", (), (int(sig), delay)))
    return cases


def valid_family(rng: random.Random) -> list[Case]:
    cases = []

    def add(argv, verdict="valid"):
        cases.append(Case("valid", argv, verdict))

    for spec in [
        "ring:4,lat=1e308",
        "torus:3x3,lat=1e308",
        "switch:6,lat=1e308",
        "ring:5,lat=1e-308",
        "complete:4,lat=5e-324",
        "biring:6,lat=0",
        "ring:4,bw=1.000000000001",
        "torus:2x3,bw=1.5/2.25",
        "switch:5,bw=99.99999999",
        "complete:5,bw=0.001",
        "ring:3,bw=123456789.123",
        "dgx-a100:1,bw=299.999999/24.5",
        "mesh:2x2,bw=0.333333333333,lat=0.000001",
        "ring:2",
        "biring:3",
        "complete:2",
        "mesh:2x1",
        "line(" * 64 + "ring:5" + ")" * 64,
        "bi(" * 64 + "biring:4" + ")" * 64,
    ]:
        coll = rng.choice(["allgather", "reduce-scatter", "allreduce"])
        add(["topo", "show", spec, "--json"])
        add(["bound", spec, "-c", coll, "--json"])
        add(["synth", spec, "-c", coll, "-a", "auto", "--json"])
        add(["synth", spec, "-c", coll, "-a", "ring", "--size", rng.choice(["1", "3", "1023", "8G"])])
        add(["compare", spec, "-c", coll, "--sizes", "1,3,1023,8G", "--json"])
    for spec, coll in [("ring:4", "allgather"), ("switch:4", "allreduce"), ("dgx-a100:1", "reduce-scatter")]:
        for sweep in [
            ["-e", "8G"],
            ["-b", "8G", "-e", "8G"],
            ["-b", "1", "-e", "1023", "-f", "3"],
            ["-b", "3", "-e", "3"],
            ["-b", "1023", "-e", "1025"],
            ["-b", "1", "-e", "8388608TiB", "-f", "1024"],
            ["--sizes", "1,1K,1KiB,1KB,1e3,2MB,1MiB,1M"],
            ["--sizes", "8G,1,3"],
            ["--sizes", "1 , 2"],
            ["--sizes", "9223372036854775807"],
        ]:
            add(["compare", spec, "-c", coll, *sweep])
    for size in ["1", "3", "1023", "8G", "1e3", "1KB", "9223372036854775807", "8388608TiB"]:
        add(["synth", "ring:4", "-c", "allreduce", "-a", "ring", "--size", size, "--json"])
        add(["simulate", "{in}/orbit.json", "--size", size, "--json"])
        add(["verify", "{in}/good.xml", "--topology", "ring:4", "--size", size])
    for rng_text in ["1-1", "1K-1K", "0-9223372036854775807", "1KB-1KiB", "3-1023"]:
        add(["export", "{in}/good.json", "--format", "msccl-xml", "--size-range", rng_text, "-o", "x.xml"])
    add(["run", "{in}/good.json", "--np", "4", "--size", "1K", "--reps", "1"])
    add(
        [
            "run",
            "{in}/good.json",
            "--np",
            "4",
            "-b",
            "3",
            "-e",
            "12",
            "-f",
            "2",
            "--reps",
            "1",
            "--dtype",
            "int32",
        ],
        "either",
    )
    add(["run", "{in}/good.xml", "--np", "4", "--size", "1023", "--reps", "1"], "either")
    add(["bench-mpi", "--np", "2", "--sizes", "1,3,1023", "--reps", "1", "--ops", "bcast"])
    add(["find", "--nodes", "8", "--degree", "2", "--size", "3"])
    add(["circulant", "check", "--max-p", "3", "--json"])
    return cases


GENERATORS = {
    "sizes": sizes_family,
    "zoo": zoo_family,
    "allocation": allocation_family,
    "files": files_family,
    "outputs": outputs_family,
    "signals": signals_family,
    "valid": valid_family,
}


def generate() -> list[Case]:
    cases = []
    for i, gen in enumerate(GENERATORS.values()):
        cases += gen(random.Random(SEED + i))
    return cases


# ---------------------------------------------------------------------------------------------
# Running and classifying


def make_entries(cwd: Path, entries: tuple) -> None:
    for entry in entries:
        kind, name = entry[0], entry[1]
        path = cwd / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "null":
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        elif kind == "full":
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "socket":
            with socket.socket(socket.AF_UNIX) as s:
                s.bind(str(path))
        elif kind == "file":
            path.write_text("precious: must survive a refused run\n")
        elif kind == "dir":
            path.mkdir(exist_ok=True)
        elif kind == "link":
            path.symlink_to(entry[2])
        else:
            raise ValueError(kind)


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under root, not following links: (type, rdev, link target, content hash)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            try:
                st = os.lstat(p)
            except OSError:
                continue
            link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else None
            digest = None
            if stat.S_ISREG(st.st_mode) and st.st_size <= 1 << 20:
                try:
                    digest = hashlib.sha256(p.read_bytes()).hexdigest()
                except OSError:
                    digest = "unreadable"
            out[str(p.relative_to(root))] = (stat.S_IFMT(st.st_mode), st.st_rdev, link, digest)
    return out


def destroyed(before: dict, after: dict, failed: bool) -> list[str]:
    """What the run did to the entries it was given: type or device changed, a link retargeted,
    anything removed, or (when it failed) a file's content changed."""
    problems = []
    for rel, (kind, rdev, link, digest) in before.items():
        now = after.get(rel)
        if now is None:
            problems.append(f"{rel}: removed")
        elif now[0] != kind:
            problems.append(f"{rel}: type {stat.filemode(kind)[0]!r} became {stat.filemode(now[0])[0]!r}")
        elif now[1] != rdev:
            problems.append(
                f"{rel}: device {os.major(rdev)},{os.minor(rdev)} "
                f"became {os.major(now[1])},{os.minor(now[1])}"
            )
        elif now[2] != link:
            problems.append(f"{rel}: link to {link!r} now to {now[2]!r}")
        elif failed and digest is not None and now[3] != digest:
            problems.append(f"{rel}: content changed by a run that failed")
    return problems


def temporary_looking(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.startswith(".") or "tmp" in name.lower()


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    # as in a terminal: a campaign started in the background would hand down an ignored SIGINT
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if os.nice(0) < 10:
        os.nice(10 - os.nice(0))


def printable(arg) -> str:
    text = os.fsdecode(arg) if isinstance(arg, bytes) else arg
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text if len(text) <= 240 else f"{text[:200]}...({len(text)} chars)"


class Running:
    """A run under way. (No dataclass: bench/run.py loads this file outside sys.modules.)"""

    def __init__(
        self,
        index: int,
        case: Case,
        proc: subprocess.Popen,
        cwd: Path,
        tmp: Path,
        err_path: Path,
        err_file,
        before: dict,
    ):
        self.index, self.case, self.proc, self.cwd, self.tmp = index, case, proc, cwd, tmp
        self.err_path, self.err_file, self.before = err_path, err_file, before
        self.started = time.monotonic()
        self.signalled_at: float | None = None
        self.ctrl_c_at: float | None = None  # Ctrl-C sent at the timeout
        self.timed_out: str | None = None


def _exited(pid: int) -> bool:
    """Whether the child has ended, without reaping it (so its process group is still ours)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _ctrl_c(pid: int) -> None:
    """SIGINT to the run's process group, as a terminal's Ctrl-C."""
    try:
        os.killpg(pid, signal.SIGINT)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def spawn(case: Case, inputs: Path, cwd: Path, tmp: Path, stderr) -> subprocess.Popen:
    """`case` as a real `collsynth` process in `cwd`, its own session, under the limits, its
    stderr to `stderr` (a file or a terminal), TMPDIR `tmp`."""
    argv = [a.replace("{in}", str(inputs)) if isinstance(a, str) else a for a in case.argv]
    return subprocess.Popen(
        [*CLI, *argv],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        env={**os.environ, "TMPDIR": str(tmp), "COLUMNS": "120"},
        preexec_fn=_limits,
        start_new_session=True,
    )


def start(index: int, case: Case, base: Path, inputs: Path) -> Running:
    cwd = base / "runs" / f"r{index:05d}"
    tmp = base / "tmp" / f"t{index:05d}"
    cwd.mkdir(parents=True)
    tmp.mkdir(parents=True)
    make_entries(cwd, case.setup)
    before = snapshot(cwd)
    err_path = base / "logs" / f"e{index:05d}.txt"
    err_file = open(err_path, "wb")  # closed by collect()
    proc = spawn(case, inputs, cwd, tmp, err_file)
    return Running(index, case, proc, cwd, tmp, err_path, err_file, before)


def classify(r: Running, rc: int, seconds: float) -> dict:
    err = r.err_path.read_bytes().decode("utf-8", "replace")
    case = r.case
    after = snapshot(r.cwd)
    new = sorted(set(after) - set(r.before))
    in_tmp = sorted(str(p.relative_to(r.tmp)) for p in r.tmp.rglob("*"))
    one_line = err.count("\n") == 1 and err.endswith("\n")
    detail = ""
    broken = destroyed(r.before, after, failed=rc != 0)
    if r.timed_out:
        category, detail = "hang", r.timed_out
    elif r.ctrl_c_at is not None:
        # long but answering Ctrl-C; whether it shows progress is looked at on a terminal later
        timeout = timeout_of(case.argv)
        if rc != 130 or not one_line or [f for f in new if temporary_looking(f)] or in_tmp:
            category, detail = "hang", f"at {timeout:g} s Ctrl-C gave exit {rc} and {err[-120:]!r}"
        else:
            category, detail = "long", f"answered Ctrl-C at {timeout:g} s"
    elif "panicked" in err or "PanicException" in err:
        category = "panic"
    elif rc < 0 or rc in (128 + signal.SIGABRT, 128 + signal.SIGSEGV, 128 + signal.SIGKILL):
        category, detail = "abort", f"killed by signal {-rc if rc < 0 else rc - 128}"
    elif broken:
        category, detail = "destroyed", "; ".join(broken)
    elif "Traceback" in err:
        category = "traceback"
    elif case.sig is not None and r.signalled_at is not None and rc != 0:
        expected = {int(signal.SIGINT): 130, int(signal.SIGTERM): 143}[case.sig[0]]
        if rc not in (expected, 2):
            category, detail = "exit1", f"exit {rc} after signal {case.sig[0]}"
        elif not one_line:
            category = "multiline"
        elif [f for f in new if temporary_looking(f)] or in_tmp:
            category, detail = "left_files", f"left {[f for f in new if temporary_looking(f)] + in_tmp}"
        else:
            category = "interrupted"
    elif rc == 0:
        category = "accepted_invalid" if case.expect == "invalid" else "ok"
    elif rc == 2:
        if not one_line:
            category = "multiline"
        elif case.expect == "valid":
            category = "rejected_valid"
        elif new or in_tmp:
            category, detail = "left_files", f"left {new + ['$TMPDIR/' + f for f in in_tmp]}"
        else:
            category = "refused"
    else:
        category = "exit1"
    record = {
        "index": r.index,
        "family": case.family,
        "category": category,
        "expect": case.expect,
        "rc": rc,
        "seconds": round(seconds, 3),
    }
    if category in FAILURES or category == "long":
        record.update(
            argv=[printable(a) for a in case.argv],
            setup=[list(e) for e in case.setup],
            signal=list(case.sig) if case.sig else None,
            detail=detail,
            stderr_tail=err[-STDERR_TAIL:],
        )
    return record


def collect(r: Running) -> dict:
    """Reap a finished (or killed) run, classify it, remove its directories."""
    _kill_group(r.proc.pid)  # what it started (mpiexec) goes with it
    rc = r.proc.wait()
    seconds = time.monotonic() - r.started
    r.err_file.close()
    try:
        return classify(r, rc, seconds)
    finally:
        for d in (r.cwd, r.tmp):
            shutil.rmtree(d, ignore_errors=True)
        r.err_path.unlink(missing_ok=True)


def run_all(cases: list[Case], base: Path, inputs: Path, workers: int, budget_s: float) -> tuple[list, int]:
    pending = list(enumerate(cases))
    running: list[Running] = []
    records = []
    t0 = time.monotonic()
    skipped = 0
    next_report = 0
    while pending or running:
        while pending and len(running) < workers:
            if time.monotonic() - t0 > budget_s:
                skipped = len(pending)
                pending = []
                break
            index, case = pending.pop(0)
            running.append(start(index, case, base, inputs))
        still = []
        for r in running:
            now = time.monotonic()
            if _exited(r.proc.pid):
                records.append(collect(r))
                continue
            sig = r.case.sig
            if sig is not None and r.signalled_at is None and now - r.started >= sig[1]:
                if sig[0] == signal.SIGINT:
                    _ctrl_c(r.proc.pid)
                else:
                    try:
                        r.proc.send_signal(sig[0])
                    except ProcessLookupError:
                        pass
                r.signalled_at = now
            elif r.signalled_at is not None and now - r.signalled_at > SIGNAL_GRACE_S:
                r.timed_out = f"still running {SIGNAL_GRACE_S:g} s after signal {sig[0]}"
                records.append(collect(r))
                continue
            elif r.ctrl_c_at is not None and now - r.ctrl_c_at > CTRL_C_GRACE_S:
                at = timeout_of(r.case.argv)
                r.timed_out = f"no exit within {CTRL_C_GRACE_S:g} s of Ctrl-C at {at:g} s"
                records.append(collect(r))
                continue
            elif r.ctrl_c_at is None and r.signalled_at is None and now - r.started > timeout_of(r.case.argv):
                _ctrl_c(r.proc.pid)
                r.ctrl_c_at = now
            still.append(r)
        running = still
        if len(records) >= next_report:
            bad = sum(1 for rec in records if rec["category"] in FAILURES)
            print(
                f"hostile: {len(records)}/{len(cases)} runs, {bad} failures, {time.monotonic() - t0:.0f} s",
                file=sys.stderr,
                flush=True,
            )
            next_report += 100
        time.sleep(0.02)
    return records, skipped


# What a progress bar or spinner writes on a terminal: cursor control, bar and spinner glyphs.
PROGRESS_MARKS = (b"\x1b[", "\u2501".encode(), "\u280b".encode(), "\u2839".encode())


def on_terminal(index: int, case: Case, base: Path, inputs: Path) -> str:
    """Run `case` with stderr on a terminal for TERMINAL_LOOK_S, then Ctrl-C it: empty when it
    showed progress and answered within CTRL_C_GRACE_S with 130, else what went wrong."""
    master, follower = pty.openpty()
    cwd = base / "runs" / f"tty{index:05d}"
    cwd.mkdir(parents=True)
    proc = spawn(case, inputs, cwd, cwd, follower)
    os.close(follower)
    shown = b""

    def read_until(deadline: float) -> None:
        nonlocal shown
        while time.monotonic() < deadline and proc.poll() is None:
            if select.select([master], [], [], 0.05)[0]:
                try:
                    shown += os.read(master, 1 << 16)
                except OSError:  # the run closed its end: wait for it, up to the deadline
                    try:
                        proc.wait(max(0.0, deadline - time.monotonic()))
                    except subprocess.TimeoutExpired:
                        pass
                    return

    try:
        read_until(time.monotonic() + TERMINAL_LOOK_S)
        if proc.poll() is not None:
            return ""  # done within the look on this attempt: not a hang
        _ctrl_c(proc.pid)
        read_until(time.monotonic() + CTRL_C_GRACE_S)
        rc = proc.poll()
        if rc is None:
            return f"on a terminal, no exit within {CTRL_C_GRACE_S:g} s of Ctrl-C"
        if rc != 130:
            return f"on a terminal, exit {rc} after Ctrl-C"
        if not any(mark in shown for mark in PROGRESS_MARKS):
            return f"on a terminal, no progress shown in {TERMINAL_LOOK_S:g} s"
        return ""
    finally:
        _kill_group(proc.pid)
        proc.wait()
        os.close(master)
        shutil.rmtree(cwd, ignore_errors=True)


def look_on_terminal(records: list[dict], cases: list[Case], base: Path, inputs: Path) -> None:
    """Every `long` run must show progress on a terminal, else it is a hang."""
    for rec in records:
        if rec["category"] == "long":
            problem = on_terminal(rec["index"], cases[rec["index"]], base, inputs)
            if problem:
                rec.update(category="hang", detail=problem)


def summarise(records: list[dict], families: list[str], wall: float, skipped: int) -> list[dict]:
    rows = []
    for family in [*families, "total"]:
        mine = [r for r in records if family == "total" or r["family"] == family]
        counts = Counter(r["category"] for r in mine)
        row = {"spec": family, "runs": len(mine)}
        row.update({c: counts[c] for c in SUCCESS + FAILURES})
        row["failures_total"] = sum(counts[c] for c in FAILURES)
        row["run_seconds"] = round(sum(r["seconds"] for r in mine), 1)
        if family == "total":
            row["wall_seconds"] = round(wall, 1)
            row["skipped_over_budget"] = skipped
            row["seed"] = SEED
            row["failures"] = []  # listed under each family
            row["long"] = []
        else:
            row["wall_seconds"] = 0.0
            row["skipped_over_budget"] = 0
            row["seed"] = SEED
            row["failures"] = [r for r in mine if r["category"] in FAILURES]
            row["long"] = [r for r in mine if r["category"] == "long"]
        rows.append(row)
    return rows


def bench_hostile() -> list[dict]:
    sample = int(os.environ.get("HOSTILE_SAMPLE", "1"))
    wanted = [f for f in os.environ.get("HOSTILE_FAMILIES", ",".join(FAMILIES)).split(",") if f]
    budget_s = float(os.environ.get("HOSTILE_BUDGET_S", "3300"))
    workers = int(os.environ.get("HOSTILE_WORKERS", "2"))
    cases = [c for c in generate() if c.family in wanted][::sample]
    # spread the slow families over the run: a seeded shuffle
    order = list(range(len(cases)))
    random.Random(SEED).shuffle(order)
    cases = [cases[i] for i in order]
    base = Path(tempfile.mkdtemp(prefix="collsynth-hostile-"))
    try:
        (base / "logs").mkdir()
        inputs = base / "inputs"
        make_inputs(inputs)
        inputs_before = snapshot(inputs)
        print(f"hostile: {len(cases)} runs in {base}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        records, skipped = run_all(cases, base, inputs, workers, budget_s)
        look_on_terminal(records, cases, base, inputs)
        wall = time.monotonic() - t0
        changed = destroyed(inputs_before, snapshot(inputs), failed=True)
        extra = sorted(set(snapshot(inputs)) - set(inputs_before))
        if changed or extra:
            print(f"hostile: the shared inputs changed: {changed} {extra}", file=sys.stderr)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    records.sort(key=lambda r: r["index"])
    rows = summarise(records, [f for f in FAMILIES if f in wanted], wall, skipped)
    failures = [r for row in rows for r in row["failures"]]
    by_kind = Counter(r["category"] for r in failures)
    for kind, n in by_kind.most_common():
        first = next(r for r in failures if r["category"] == kind)
        print(f"{kind}: {n}, e.g. {' '.join(first['argv'])[:160]!r}", file=sys.stderr)
    return rows


BENCHMARKS = {"hostile": bench_hostile}
