"""collsynth.mpi.executor and ``python -m collsynth.run``: hand-written MSCCL programs (complete
XML files in the runtime's format, rings, a line with cross-thread-block dependencies, scratch and nop carriers,
chains, two channels) run under ``mpiexec -n N`` for N = 2, 3, 4: one launch of
tests/mpi/check_executor.py per N (every program, both modes, three dtypes; programs the core
refuses; plans tampered with to give a wrong result and to hang, in the same launch) and one of
collsynth.run per N. Without MPI: the executor accepts exactly what ``collsynth verify`` accepts,
with the same message, on the cases where the old Python checks disagreed with the core."""

# ruff: noqa: E501 (the XML examples are kept verbatim, one element per line)

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

import collsynth
from collsynth import msccl
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


# A complete MSCCL XML program, kept verbatim: a 3-GPU fused ring allreduce.
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

LINE_XML = (Path(__file__).parent / "data" / "ag_line3.xml").read_text()


def to_xml(program: dict) -> str:
    """The XML of a program dict, one element per line as the runtimes' parser wants it."""
    coll = {"reduce-scatter": "reducescatter"}.get(program["collective"], program["collective"])

    def attrs(d: dict, skip: tuple = ()) -> str:
        pairs = {k: int(v) if isinstance(v, bool) else v for k, v in d.items() if k not in skip}
        return " ".join(f'{k}="{v}"' for k, v in pairs.items())

    lines = [f"<algo {attrs({**program, 'coll': coll}, ('gpus', 'collective', 'root'))}>"]
    for g in program["gpus"]:
        lines.append(f"  <gpu {attrs(g, ('tbs',))}>")
        for t in g["tbs"]:
            lines.append(f"    <tb {attrs(t, ('steps',))}>")
            lines += [f"      <step {attrs(st)}/>" for st in t["steps"]]
            lines.append("    </tb>")
        lines.append("  </gpu>")
    return "\n".join([*lines, "</algo>", ""])


def programs(n: int) -> tuple[list, list[dict]]:
    """(correct programs: dicts and XML texts, programs the core refuses) for n ranks."""
    good = [ring_allreduce(n), bidirectional_ring_allreduce(n), ring_reduce_scatter(n), ring_allgather(n),
            line_allgather(n), broadcast_chain(n), reduce_chain(n)]  # fmt: skip
    refused = [ring_allreduce(n, skip_reduce_on=1), dependency_cycle(n)]
    if n == 2:
        good += [reduce_scatter_pair(), reduce_scatter_scratch_nop()]
        refused.append(mutual_wait())
    if n == 3:
        good += [RING_XML, LINE_XML]
    return good + [census_allreduce(n)], refused


def census_allreduce(n: int) -> dict:
    """Träff's census (Algorithm 8) as exported: scratch chunks for its partial sum and
    receive buffer, local `cpy`/`re` steps on a block without peers."""
    sched = collsynth.synthesize(f"complete:{n}", "allreduce", "circulant", size="1KiB", variant="census")
    prog = collsynth.msccl.export(sched)["program"]
    assert any(st["type"] == "re" for g in prog["gpus"] for tb in g["tbs"] for st in tb["steps"])
    return {**prog, "name": f"census_allreduce_{n}"}


def name_of(program: dict | str) -> str:
    return program["name"] if isinstance(program, dict) else msccl.program(program)["name"]


def save(tmp: Path, progs: list) -> list[str]:
    """Files of the programs: XML texts as .xml, dicts as .json."""
    paths = []
    for p in progs:
        xml = isinstance(p, str)
        path = tmp / f"{name_of(p)}.{'xml' if xml else 'json'}"
        path.write_text(p if xml else json.dumps(p))
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


def refusal(program: dict | str) -> str:
    """The core's refusal of a program through the executor's path (BadInput's message)."""
    with pytest.raises(collsynth.BadInput) as e:
        msccl.exec_plan(program, inplace=not program["outofplace"] if isinstance(program, dict) else True)
    return str(e.value)


def verify_says(program: dict) -> str:
    """What `collsynth verify` says of the program's XML ("" if it accepts it)."""
    v = msccl.validate(to_xml(program))
    return "" if v["ok"] else f"not a valid MSCCL program: {v['refusal']}"


def with_step(program: dict, rank: int, tb: int, k: int, **change) -> dict:
    p = copy.deepcopy(program)
    p["gpus"][rank]["tbs"][tb]["steps"][k].update(change)
    return p


def disagreements() -> list[tuple[str, dict, dict, str]]:
    """(case, a program the old Python checks accepted and the core refuses, the same fixed, what
    the refusal says) for the four rules the two used to judge differently."""
    ring = ring_allreduce(2)
    own = with_step(ring, 0, 0, 1, depid=0, deps=0)
    other = copy.deepcopy(ring)
    other["gpus"][0]["tbs"].append(tb(-1, -1, [("nop", ("i", -1), ("o", -1), 0, (0, 0))]))
    other["gpus"][0]["tbs"][-1]["id"] = 1
    other["gpus"][0]["tbs"][0]["steps"][0]["hasdep"] = 1
    on_nop = copy.deepcopy(other)
    on_nop["gpus"][0]["tbs"].append(tb(-1, -1, [("nop", ("i", -1), ("o", -1), 0, (1, 0))]))
    on_nop["gpus"][0]["tbs"][-1]["id"] = 2
    on_nop["gpus"][0]["tbs"][1]["steps"][0]["hasdep"] = 1
    declared = ring_reduce_scatter(2)
    for g in declared["gpus"]:
        g["o_chunks"] = 0  # the steps write o: the runtime's bounds are the declared counts
    channels = copy.deepcopy(ring)
    channels["nchannels"] = 129
    return [
        ("dependency on its own thread block", own, ring, "names its own thread block"),
        ("dependency on a nop", on_nop, other, "a nop: the runtime drops nops"),
        ("declared o_chunks", declared, ring_reduce_scatter(2), 'outside buffer o (o_chunks="0")'),
        ("channel limit", channels, bidirectional_ring_allreduce(2), 'nchannels="129" is outside 1..=32'),
    ]


@pytest.mark.parametrize("case", range(4), ids=[d[0] for d in disagreements()])
def test_the_executor_accepts_exactly_what_verify_accepts(case, cli, tmp_path):
    what, bad, fixed, says = disagreements()[case]
    message = refusal(bad)
    assert says in message and message == verify_says(bad), (message, verify_says(bad))
    assert refusal(to_xml(bad)) == message
    path = tmp_path / "bad.xml"
    path.write_text(to_xml(bad))
    proc = cli("verify", str(path), check_status=2)
    assert proc.stderr.strip().endswith(message), proc.stderr
    assert verify_says(fixed) == ""
    for inplace in (False, True):
        plan = msccl.exec_plan(fixed, inplace)
        assert len(plan["ranks"]) == 2 and all(r["ops"] for r in plan["ranks"])


MALFORMED = [
    ("unknown type", lambda p: p["gpus"][0]["tbs"][0]["steps"][0].update(type="xx")),
    ("offset out of range", lambda p: p["gpus"][0]["tbs"][0]["steps"][0].update(srcoff=p["nchunksperloop"])),
    ("step numbering", lambda p: p["gpus"][0]["tbs"][0]["steps"][0].update(s=5)),
    ("bad collective", lambda p: p.update(collective="alltoall")),
    ("send/recv mismatch", lambda p: p["gpus"][0]["tbs"][0]["steps"][0].update(cnt=2, srcoff=0)),
    ("missing message", lambda p: p["gpus"][0]["tbs"][0]["steps"][0].update(type="nop")),
    ("dependency on a later own step", lambda p: p["gpus"][0]["tbs"][0]["steps"][0].update(depid=0, deps=2)),
    ("channel", lambda p: p["gpus"][0]["tbs"][0].update(chan=1)),
    ("peer", lambda p: p["gpus"][0]["tbs"][0].update(send=0)),
]


@pytest.mark.parametrize("change", [c for _, c in MALFORMED], ids=[w for w, _ in MALFORMED])
def test_malformed_programs_are_refused_as_verify_refuses_them(change):
    program = copy.deepcopy(ring_allreduce(3))
    change(program)
    message, verdict = refusal(program), verify_says(program)
    assert verdict.startswith("not a valid MSCCL program: ")
    # Parser problems are located by line in XML and by place in JSON; the rest is the same.
    head, _, rest = verdict.partition("line ")
    if rest and rest.split(":")[0].isdigit():
        assert message.startswith(head) and message.endswith(rest.split(": ", 1)[1]), (message, verdict)
    else:
        assert message == verdict


def test_every_hand_written_program_is_accepted_in_the_modes_it_claims():
    for n in (2, 3, 4):
        good, refused = programs(n)
        for p in good:
            meta = p if isinstance(p, dict) else msccl.program(p)
            for inplace in [m for m, key in ((True, "inplace"), (False, "outofplace")) if meta[key]]:
                assert msccl.exec_plan(p, inplace)["ngpus"] == n
        for p in refused:
            assert refusal(p) == verify_says(p) != ""


@pytest.mark.parametrize("n", [2, 3, 4])
def test_executor_under_mpiexec(n, tmp_path):
    good, refused = programs(n)
    argv = [sys.executable, "-m", "mpi4py", str(CHECK), *save(tmp_path, good)]
    for path in save(tmp_path, refused):
        argv += ["--refused", path]
    ring = str(tmp_path / f"ring_allreduce_{n}.json")
    argv += ["--api", ring, "--tamper", ring]
    proc = mpirun(n, argv)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    for p in good:
        assert f"OK {name_of(p)}:" in proc.stdout, proc.stdout
    for p in refused:
        assert f"OK {p['name']}: refused: {verify_says(p)}" in proc.stdout, proc.stdout
    assert "OK tampered: wrong result detected: rank " in proc.stdout, proc.stdout
    assert "OK tampered: hang detected: rank " in proc.stdout, proc.stdout
    assert "OK #wrong: 0, then 3 after corrupting 3 elements" in proc.stdout, proc.stdout
    assert f"ok: {n} ranks" in proc.stdout, proc.stdout


def run_entry(n: int, path: Path, *args: str) -> subprocess.CompletedProcess:
    return mpirun(n, [sys.executable, "-m", "collsynth.run", str(path), *args])


@pytest.mark.parametrize("n", [2, 3, 4])
def test_run_entry_point(n, tmp_path):
    """One launch per N: N=3 a correct in-place run of an XML file (--json), N=4 a program the core
    refuses (exit 2, verify's message), N=2 a 3-rank program (exit 2)."""
    if n == 3:
        path = Path(save(tmp_path, [RING_XML])[0])
        proc = run_entry(
            3, path, "--size", "3KiB", "--dtype", "float64", "--inplace", "--json", "--reps", "2"
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["ok"] and doc["np"] == 3 and doc["time_us"] > 0 and doc["mpi_time_us"] > 0
        assert doc["collective"] == "allreduce" and doc["size_bytes"] == 3072 and doc["error"] is None
        # nccl-tests' busbw for allreduce on 3 ranks: algbw * 2(n-1)/n = algbw * 4/3
        assert doc["wrong_elements"] == 0 and doc["in_place"] is None
        assert doc["busbw_GBps"] == pytest.approx(doc["algbw_GBps"] * 4 / 3, rel=1e-12)
    elif n == 4:
        wrong = ring_allreduce(4, skip_reduce_on=1)
        path = Path(save(tmp_path, [wrong])[0])
        proc = run_entry(4, path, "--size", "64", "--dtype", "int32")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stderr.strip() == f"collsynth: error: {path}: {verify_says(wrong)}", proc.stderr
    else:
        path = Path(save(tmp_path, [ring_allreduce(3)])[0])
        proc = run_entry(2, path, "--size", "1KiB")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "the program is for 3 ranks but the communicator has 2" in proc.stderr
        assert proc.stderr.count("error:") == 1 and "Traceback" not in proc.stderr


def test_run_entry_point_missing_file(tmp_path):
    proc = run_entry(1, tmp_path / "missing.json")
    assert proc.returncode == 2 and "missing.json: cannot read file" in proc.stderr, proc.stderr


@pytest.mark.parametrize("module", ["collsynth.mpi.run", "collsynth.run"])
def test_mpi_entry_point_and_its_alias_start(module):
    """`collsynth run` starts `python -m collsynth.mpi.run`; the first documented name
    `python -m collsynth.run` stays the same entry point."""
    proc = subprocess.run(
        [sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "--size SIZE" in proc.stdout and "program" in proc.stdout
