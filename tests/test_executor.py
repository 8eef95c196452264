"""collsynth.mpi.executor and ``python -m collsynth.run``: hand-written MSCCL programs (the research
notes' XML examples, rings, a line with cross-thread-block dependencies, scratch and nop carriers,
chains, two channels) run under ``mpiexec -n N`` for N = 2, 3, 4: one launch of
tests/mpi/check_executor.py per N (every program, both modes, three dtypes, a wrong program and
deadlocks in the same launch) and one of collsynth.run per N."""

# ruff: noqa: E501 (the research notes' XML examples are kept verbatim, one element per line)

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from collsynth.mpi import launch

CHECK = Path(__file__).parent / "mpi" / "check_executor.py"
TIMEOUT = 120

# ---------------------------------------------------------------------------------------------
# Building programs


def step(s, op, src=("i", -1), dst=("i", -1), cnt=1, dep=(-1, -1), hasdep=0) -> dict:
    return {
        "s": s, "type": op, "srcbuf": src[0], "srcoff": src[1], "dstbuf": dst[0], "dstoff": dst[1],
        "cnt": cnt, "depid": dep[0], "deps": dep[1], "hasdep": hasdep,
    }  # fmt: skip


def tb(send, recv, ops, chan=0) -> dict:
    """A thread block from (type, src, dst, cnt, dep) tuples (id set by program())."""
    steps = []
    for s, (op, src, dst, *rest) in enumerate(ops):
        cnt = rest[0] if rest else 1
        dep = rest[1] if len(rest) > 1 else (-1, -1)
        steps.append(step(s, op, src, dst, cnt, dep))
    return {"id": -1, "send": send, "recv": recv, "chan": chan, "steps": steps}


def program(name, coll, n, nchunks, per_rank, inplace=True, outofplace=True, s_chunks=0, nchannels=1):
    """A program from per_rank[r] = list of thread blocks; numbers the thread blocks and sets
    hasdep on every dependency target."""
    gpus = []
    for r, tbs in enumerate(per_rank):
        for t, block in enumerate(tbs):
            block["id"] = t
        for block in tbs:
            for st in block["steps"]:
                if st["depid"] >= 0:
                    tbs[st["depid"]]["steps"][st["deps"]]["hasdep"] = 1
        i_chunks = nchunks // n if coll == "allgather" else nchunks
        o_chunks = nchunks // n if coll == "reduce-scatter" else nchunks
        gpus.append({"id": r, "i_chunks": i_chunks, "o_chunks": o_chunks, "s_chunks": s_chunks, "tbs": tbs})
    return {
        "name": name, "proto": "Simple", "nchannels": nchannels, "nchunksperloop": nchunks, "ngpus": n,
        "collective": coll, "inplace": inplace, "outofplace": outofplace, "minBytes": 0,
        "maxBytes": 1 << 40, "gpus": gpus,
    }  # fmt: skip


def ring_tb(n, r, d=1, base=0, chan=0, skip_reduce_on=None):
    """Ring allreduce on chunks base..base+n-1 in direction d: reduce-scatter with rrs, rrcs, then
    allgather with rcs, r. `skip_reduce_on`: this rank's rrcs becomes rcs (a wrong program)."""
    chunk = [("i", base + (r - d * k) % n) for k in range(2 * n - 1)]
    out = [("o", c) for _, c in chunk]
    ops = [("s", chunk[0], chunk[0])]
    ops += [("rrs", chunk[k], chunk[k]) for k in range(1, n - 1)]
    ops.append(("rcs" if r == skip_reduce_on else "rrcs", chunk[n - 1], out[n - 1]))
    ops += [("rcs", out[k], out[k]) for k in range(n, 2 * n - 2)]
    ops.append(("r", out[2 * n - 2], out[2 * n - 2]))
    return tb((r + d) % n, (r - d) % n, ops, chan)


def ring_allreduce(n, skip_reduce_on=None):
    tbs = [[ring_tb(n, r, skip_reduce_on=skip_reduce_on)] for r in range(n)]
    name = "ring_allreduce" if skip_reduce_on is None else "wrong_ring_allreduce"
    return program(f"{name}_{n}", "allreduce", n, n, tbs)


def bidirectional_ring_allreduce(n):
    """Two rings on two channels: chunks 0..n-1 clockwise, n..2n-1 counter-clockwise."""
    tbs = [[ring_tb(n, r, 1, 0, 0), ring_tb(n, r, -1, n, 1)] for r in range(n)]
    return program(f"biring_allreduce_{n}", "allreduce", n, 2 * n, tbs, nchannels=2)


def ring_reduce_scatter(n):
    """Rank r ends with chunk r: step k handles chunk r - k - 1, the last step reduces into o."""
    tbs = []
    for r in range(n):
        c = [("i", (r - k - 1) % n) for k in range(n)]
        ops = [("s", c[0], c[0])] + [("rrs", c[k], c[k]) for k in range(1, n - 1)]
        ops.append(("rrc", c[n - 1], ("o", 0)))
        tbs.append([tb((r + 1) % n, (r - 1) % n, ops)])
    return program(f"ring_reduce_scatter_{n}", "reduce-scatter", n, n, tbs)


def ring_allgather(n):
    """Own chunk sent from i (aliasing o[r] in place) and copied by a local thread block."""
    tbs = []
    for r in range(n):
        c = [("o", (r - k) % n) for k in range(n)]
        ops = [("s", ("i", 0), ("i", 0))] + [("rcs", c[k], c[k]) for k in range(1, n - 1)]
        ops.append(("r", c[n - 1], c[n - 1]))
        tbs.append([tb((r + 1) % n, (r - 1) % n, ops), tb(-1, -1, [("cpy", ("i", 0), ("o", r))])])
    return program(f"ring_allgather_{n}", "allgather", n, n, tbs)


def line_allgather(n):
    """Line 0 - 1 - ... - n-1: separate receive and send thread blocks per direction, each relay
    send depending on the receive thread block's step (cross-TB dependencies)."""
    tbs = []
    for r in range(n):
        mine, blocks = ("i", 0), [tb(-1, -1, [("cpy", ("i", 0), ("o", r))])]
        for peer, chunks in ((r - 1, range(r - 1, -1, -1)), (r + 1, range(r + 1, n))):
            other = 2 * r - peer  # where this direction's chunks go next
            if not 0 <= peer < n:
                continue
            recv = tb(-1, peer, [("r", ("o", c), ("o", c)) for c in chunks])
            blocks.append(recv)
            if 0 <= other < n:
                t = len(blocks) - 1
                relay = [("s", ("o", c), ("o", c), 1, (t, k)) for k, c in enumerate(chunks)]
                blocks.append(tb(other, -1, [("s", mine, mine), *relay]))
        if r == 0 or r == n - 1:  # the ends also send their own chunk inward
            blocks.append(tb(1 if r == 0 else n - 2, -1, [("s", mine, mine)]))
        tbs.append(blocks)
    return program(f"line_allgather_{n}", "allgather", n, n, tbs)


def broadcast_chain(n, k=3):
    """Root 0 -> 1 -> ... -> n-1, k chunks pipelined; the root copies all k chunks with one cnt=k."""
    tbs = [
        [
            tb(1, -1, [("s", ("i", c), ("i", c)) for c in range(k)]),
            tb(-1, -1, [("cpy", ("i", 0), ("o", 0), k)]),
        ]
    ]
    for r in range(1, n):
        op = "rcs" if r < n - 1 else "r"
        tbs.append([tb(r + 1 if r < n - 1 else -1, r - 1, [(op, ("o", c), ("o", c)) for c in range(k)])])
    return program(f"broadcast_chain_{n}", "broadcast", n, k, tbs)


def reduce_chain(n, k=2):
    """n-1 -> ... -> 1 -> root 0 with rrs on the way and rrc at the root."""
    tbs = [[tb(-1, 1, [("rrc", ("i", c), ("o", c)) for c in range(k)])]]
    for r in range(1, n):
        if r < n - 1:
            tbs.append([tb(r - 1, r + 1, [("rrs", ("i", c), ("i", c)) for c in range(k)])])
        else:
            tbs.append([tb(r - 1, -1, [("s", ("i", c), ("i", c)) for c in range(k)])])
    return program(f"reduce_chain_{n}", "reduce", n, k, tbs)


def reduce_scatter_pair(cnt=2):
    """2 ranks, cnt chunks each: send the peer's half, rrc the own half (cnt > 1 per message)."""
    tbs = []
    for r in range(2):
        ops = [("s", ("i", cnt * (1 - r)), ("i", 0), cnt), ("rrc", ("i", cnt * r), ("o", 0), cnt)]
        tbs.append([tb(1 - r, 1 - r, ops)])
    return program("reduce_scatter_pair", "reduce-scatter", 2, 2 * cnt, tbs)


def reduce_scatter_scratch_nop():
    """2 ranks through scratch: the peer's chunk is received into s[0], the own chunk copied to s[1],
    added after a nop that carries the second dependency, copied out."""
    tbs = []
    for r in range(2):
        q = 1 - r
        local = tb(-1, -1, [
            ("cpy", ("i", r), ("s", 1)),
            ("nop", ("i", -1), ("o", -1), 0, (1, 0)),
            ("re", ("s", 0), ("s", 1), 1, (0, 0)),
            ("cpy", ("s", 1), ("o", 0)),
        ])  # fmt: skip
        tbs.append([tb(q, -1, [("s", ("i", q), ("i", q))]), tb(-1, q, [("r", ("s", 0), ("s", 0))]), local])
    return program("reduce_scatter_scratch_nop", "reduce-scatter", 2, 2, tbs, s_chunks=2)


def mutual_wait():
    """Both ranks receive before they send: a cross-rank deadlock that matches one for one."""
    tbs = [[tb(1 - r, 1 - r, [("rrc", ("i", 0), ("o", 0)), ("s", ("o", 0), ("o", 0))])] for r in range(2)]
    return program("mutual_wait", "allreduce", 2, 1, tbs)


def dependency_cycle(n):
    """Two thread blocks of every rank wait for each other: a local deadlock."""
    tbs = [[tb(-1, -1, [("nop", ("i", -1), ("o", -1), 0, (1, 0)), ("cpy", ("i", 0), ("o", 0))]),
            tb(-1, -1, [("nop", ("i", -1), ("o", -1), 0, (0, 0))])] for _ in range(n)]  # fmt: skip
    return program(f"dependency_cycle_{n}", "allreduce", n, 1, tbs)


# The two complete examples of research/msccl-xml.md 3.8, verbatim.
RING_XML = """<algo name="allreduce_ring_1channelsperring" proto="Simple" nchannels="1" nchunksperloop="3" ngpus="3" coll="allreduce" inplace="1" outofplace="0" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="3" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="2" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrs" srcbuf="i" srcoff="2" dstbuf="i" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="rrcs" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="rcs" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="4" type="r" srcbuf="i" srcoff="2" dstbuf="i" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="3" o_chunks="0" s_chunks="0">
    <tb id="0" send="2" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrs" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="rrcs" srcbuf="i" srcoff="2" dstbuf="i" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="rcs" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="4" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="2" i_chunks="3" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="2" dstbuf="i" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrs" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="rrcs" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="rcs" srcbuf="i" srcoff="2" dstbuf="i" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="4" type="r" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>"""

LINE_XML = """<algo name="ag_line3" proto="Simple" nchannels="1" nchunksperloop="3" ngpus="3" coll="allgather" inplace="1" outofplace="0" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="0" o_chunks="3" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="r" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="3" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="2" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="0" deps="0" hasdep="0"/>
    </tb>
    <tb id="2" send="-1" recv="2" chan="0">
      <step s="0" type="r" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="3" send="0" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="s" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="2" deps="0" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="2" i_chunks="0" o_chunks="3" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>"""

COLL = {"reduce_scatter": "reduce-scatter", "reducescatter": "reduce-scatter"}
ALGO_INTS = ("nchannels", "nchunksperloop", "ngpus", "minBytes", "maxBytes")


def from_xml(text: str) -> dict:
    """The program dict of an MSCCL XML (a minimal stand-in for the Rust parser)."""
    algo = ET.fromstring(text)
    a = algo.attrib
    ints = lambda e, skip=(): {k: v if k in skip else int(v) for k, v in e.attrib.items()}  # noqa: E731
    gpus = [
        {
            **ints(g),
            "tbs": [{**ints(t), "steps": [ints(s, ("type", "srcbuf", "dstbuf")) for s in t]} for t in g],
        }
        for g in algo
    ]
    return {
        "name": a["name"], "proto": a["proto"], **{k: int(a[k]) for k in ALGO_INTS},
        "collective": COLL.get(a["coll"], a["coll"]), "inplace": a["inplace"] == "1",
        "outofplace": a["outofplace"] == "1", "gpus": gpus,
    }  # fmt: skip


def programs(n: int) -> tuple[list[dict], list[dict], list[dict]]:
    """(correct programs, wrong ones, deadlocking ones) for n ranks."""
    good = [ring_allreduce(n), bidirectional_ring_allreduce(n), ring_reduce_scatter(n), ring_allgather(n),
            line_allgather(n), broadcast_chain(n), reduce_chain(n)]  # fmt: skip
    bad = [ring_allreduce(n, skip_reduce_on=1)]
    stuck = [dependency_cycle(n)]
    if n == 2:
        good += [reduce_scatter_pair(), reduce_scatter_scratch_nop()]
        stuck.append(mutual_wait())
    if n == 3:
        good += [from_xml(RING_XML), from_xml(LINE_XML)]
    return good + [census_allreduce(n)], bad, stuck


def census_allreduce(n: int) -> dict:
    """Träff's census (Algorithm 8) as exported: scratch chunks for its partial sum and
    receive buffer, local `cpy`/`re` steps on a block without peers."""
    import collsynth

    sched = collsynth.synthesize(f"complete:{n}", "allreduce", "circulant", size="1KiB", variant="census")
    prog = collsynth.msccl.export(sched)["program"]
    assert any(st["type"] == "re" for g in prog["gpus"] for tb in g["tbs"] for st in tb["steps"])
    return {**prog, "name": f"census_allreduce_{n}"}


def save(tmp: Path, progs: list[dict]) -> list[str]:
    paths = []
    for p in progs:
        path = tmp / f"{p['name']}.json"
        path.write_text(json.dumps(p))
        paths.append(str(path))
    return paths


def mpirun(n: int, argv: list[str]) -> subprocess.CompletedProcess:
    cmd = launch.command(n, argv)
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"mpiexec -n {n} timed out:\n{e.stdout}\n{e.stderr}")


# ---------------------------------------------------------------------------------------------
# Tests


def test_xml_examples_parse_to_programs():
    ring, line = from_xml(RING_XML), from_xml(LINE_XML)
    assert ring["collective"] == "allreduce" and ring["gpus"][2]["tbs"][0]["steps"][1]["type"] == "rrs"
    assert line["gpus"][1]["tbs"][3]["steps"][1]["depid"] == 2 and line["inplace"] and not line["outofplace"]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_executor_under_mpiexec(n, tmp_path):
    good, bad, stuck = programs(n)
    argv = [sys.executable, "-m", "mpi4py", str(CHECK), *save(tmp_path, good)]
    for path in save(tmp_path, bad):
        argv += ["--wrong", path]
    for path in save(tmp_path, stuck):
        argv += ["--deadlock", path]
    argv += ["--api", str(tmp_path / f"ring_allreduce_{n}.json")]
    proc = mpirun(n, argv)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    for p in good + bad + stuck:
        assert f"OK {p['name']}:" in proc.stdout, proc.stdout
    assert f"ok: {n} ranks" in proc.stdout, proc.stdout


def run_entry(n: int, path: Path, *args: str) -> subprocess.CompletedProcess:
    return mpirun(n, [sys.executable, "-m", "collsynth.run", str(path), *args])


@pytest.mark.parametrize("n", [2, 3, 4])
def test_run_entry_point(n, tmp_path):
    """One launch per N: N=3 a correct in-place run (--json), N=4 a wrong program (exit 1),
    N=2 a 3-rank program (exit 2)."""
    if n == 3:
        path = Path(save(tmp_path, [from_xml(RING_XML)])[0])
        proc = run_entry(
            3, path, "--size", "3KiB", "--dtype", "float64", "--inplace", "--json", "--reps", "2"
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["ok"] and doc["np"] == 3 and doc["time_us"] > 0 and doc["mpi_time_us"] > 0
        assert doc["collective"] == "allreduce" and doc["size_bytes"] == 3072 and doc["error"] is None
    elif n == 4:
        path = Path(save(tmp_path, [ring_allreduce(4, skip_reduce_on=1)])[0])
        proc = run_entry(4, path, "--size", "64", "--dtype", "int32")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert proc.stdout.startswith("failed: ") and "rank " in proc.stdout and "element " in proc.stdout
    else:
        path = Path(save(tmp_path, [ring_allreduce(3)])[0])
        proc = run_entry(2, path, "--size", "1KiB")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "the program is for 3 ranks but mpiexec started 2" in proc.stderr
        assert proc.stderr.count("error:") == 1 and "Traceback" not in proc.stderr


def test_run_entry_point_missing_file(tmp_path):
    proc = run_entry(1, tmp_path / "missing.json")
    assert proc.returncode == 2 and "missing.json: cannot read file" in proc.stderr, proc.stderr
