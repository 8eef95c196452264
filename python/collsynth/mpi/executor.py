"""Run an MSCCL program (the dict that collsynth lowers any schedule to, or parses from an XML
file) on real numpy data over mpi4py point-to-point, the way the MSCCL interpreter runs it on GPUs.

    from collsynth import mpi
    from collsynth.mpi.executor import check_program, run_collective
    check_program(program)                            # the whole program (no MPI needed)
    mpi.execute(program, sendbuf, recvbuf, comm)      # this rank's thread blocks, e.g. in place
                                                      # of ncclAllReduce(sendbuf, recvbuf, ...)
    run_collective(program, nbytes, "float32", comm)  # random data, checked against numpy, timed

Model (DESIGN.md "MSCCL XML", research/msccl-xml.md 3.3-3.5):
- Buffers have nccl semantics. M = the full buffer (allgather output, reduce-scatter input, the
  allreduce / broadcast / reduce buffer) is cut into `nchunksperloop` chunks of C = M /
  nchunksperloop elements; the input has nchunksperloop / ngpus chunks for allgather, the output
  nchunksperloop / ngpus for reduce-scatter, scratch has `s_chunks`. The declared `i_chunks` and
  `o_chunks` are ignored (in-place XMLs declare 0): the logical sizes are used.
- In place, the one buffer (`recvbuf`, M elements for every collective) holds both: allgather input
  chunk j is output chunk rank * in_chunks + j, reduce-scatter output chunk j is input chunk
  rank * out_chunks + j, otherwise input chunk j is output chunk j.
- The runtime repeats the program over slices of each chunk when the buffer is larger than one
  loop; every step is element-wise, so one iteration over whole chunks computes the same result,
  and that is what runs here (M must be a multiple of nchunksperloop).
- All thread blocks of a rank are concurrent: one event loop advances each while its head step's
  dependency (thread block `depid` has completed its step `deps`) holds. A send step posts an
  Isend of a copy of its data and completes at once (sends never block: the runtime's finite
  connection buffers are not modelled); a receive step posts its Irecv as soon as its thread block
  reaches it and completes once the message is in. Messages travel on a private duplicate of the
  communicator with tag = epoch * 1024 + chan; one thread block owns each (peer, direction, chan),
  so MPI's non-overtaking order gives each connection's FIFO order.
- Reductions are sums (np.add). No progress for `timeout` seconds raises RuntimeError naming the
  stuck steps; a local deadlock (nothing in flight) raises at once.
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

import numpy as np
from mpi4py import MPI

from collsynth._core import BadInput
from collsynth.mpi.collectives import flat_view

COLLECTIVES = ("allgather", "reduce-scatter", "allreduce", "broadcast", "reduce")
TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop")
RECEIVES = frozenset({"r", "rcs", "rrs", "rrc", "rrcs"})
SENDS = frozenset({"s", "rcs", "rrs", "rrcs"})
READS_SRC = frozenset({"s", "rrs", "rrc", "rrcs", "cpy", "re"})
WRITES_DST = frozenset({"r", "rcs", "rrc", "rrcs", "cpy", "re"})
BUFFERS = ("i", "o", "s")
TAG_SPACE = 1024  # channels per execution epoch (tags of different executions never meet)
STEP_KEYS = ("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep")


class Step(NamedTuple):
    s: int
    op: str
    src: tuple[str, int, int] | None  # (buffer, first chunk, chunks) where the step reads
    dst: tuple[str, int, int] | None  # where it writes
    cnt: int
    dep: tuple[int, int] | None  # (tb, step)


class ThreadBlock(NamedTuple):
    id: int
    send: int
    recv: int
    chan: int
    steps: tuple[Step, ...]


class Header(NamedTuple):
    name: str
    collective: str
    ngpus: int
    nchunks: int
    nchannels: int
    in_chunks: int  # logical chunk counts
    out_chunks: int
    inplace: bool
    outofplace: bool
    root: int = 0  # broadcast / reduce (the lowering's "root" key; 0 when absent)


class Plan(NamedTuple):
    """One rank's part of a checked program."""

    header: Header
    rank: int
    s_chunks: int
    tbs: tuple[ThreadBlock, ...]


# ---------------------------------------------------------------------------------------------
# Checking and compiling the program


def _int(d: dict, key: str, where: str, lo: int | None = None) -> int:
    v = d.get(key) if isinstance(d, dict) else None
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadInput(f"{where}: {key!r} must be an integer, got {v!r}")
    if lo is not None and v < lo:
        raise BadInput(f"{where}: {key!r} must be at least {lo}, got {v}")
    return v


def _flag(d: dict, key: str) -> bool:
    v = d.get(key)
    if v in (0, 1):  # XML 0/1 as well as JSON booleans
        return bool(v)
    raise BadInput(f"program: {key!r} must be true or false, got {v!r}")


def header(program: dict) -> Header:
    """The program's <algo> attributes with the logical input/output chunk counts; BadInput if any
    is missing or inconsistent."""
    if not isinstance(program, dict):
        raise BadInput(f"the program must be a dict (a JSON object), got {type(program).__name__}")
    coll = program.get("collective")
    if coll not in COLLECTIVES:
        raise BadInput(f"program: 'collective' must be one of {', '.join(COLLECTIVES)}; got {coll!r}")
    ngpus = _int(program, "ngpus", "program", 1)
    nchunks = _int(program, "nchunksperloop", "program", 1)
    nchannels = _int(program, "nchannels", "program", 1)
    if nchannels > TAG_SPACE:
        raise BadInput(f"program: at most {TAG_SPACE} channels are supported, got {nchannels}")
    split = coll in ("allgather", "reduce-scatter")
    if split and nchunks % ngpus:
        raise BadInput(f"program: {coll} needs nchunksperloop ({nchunks}) divisible by ngpus ({ngpus})")
    in_chunks = nchunks // ngpus if coll == "allgather" else nchunks
    out_chunks = nchunks // ngpus if coll == "reduce-scatter" else nchunks
    inplace, outofplace = _flag(program, "inplace"), _flag(program, "outofplace")
    name = str(program.get("name", ""))
    root = program.get("root", 0)
    if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < ngpus:
        raise BadInput(f"program: 'root' must be a rank below ngpus, got {root!r}")
    return Header(name, coll, ngpus, nchunks, nchannels, in_chunks, out_chunks, inplace, outofplace, root)


def _side(st: dict, which: str, sizes: dict[str, int], where: str) -> tuple[str, int, int]:
    buf, off, cnt = st.get(f"{which}buf"), _int(st, f"{which}off", where), _int(st, "cnt", where, 0)
    if buf not in BUFFERS:
        raise BadInput(f"{where}: {which}buf must be one of i, o, s; got {buf!r}")
    if off < 0 or off + cnt > sizes[buf]:
        raise BadInput(
            f"{where}: {which}buf {buf} chunks [{off}, {off + cnt}) outside the buffer's {sizes[buf]} chunks"
        )
    return buf, off, cnt


def _step(st: dict, k: int, sizes: dict[str, int], where: str) -> Step:
    where = f"{where} step {k}"
    if not isinstance(st, dict):
        raise BadInput(f"{where}: must be an object, got {st!r}")
    missing = [key for key in STEP_KEYS if key not in st]
    if missing:
        raise BadInput(f"{where}: missing {', '.join(missing)}")
    if _int(st, "s", where) != k:
        raise BadInput(f"{where}: 's' is {st['s']}, steps must be numbered 0, 1, 2, ... in order")
    op = st["type"]
    if op not in TYPES:
        raise BadInput(f"{where}: unknown type {op!r} (known: {' '.join(TYPES)})")
    depid, deps = _int(st, "depid", where, -1), _int(st, "deps", where, -1)
    if (depid < 0) != (deps < 0):
        raise BadInput(f"{where}: depid {depid} and deps {deps} must both be -1 or both set")
    src = _side(st, "src", sizes, where) if op in READS_SRC else None
    dst = _side(st, "dst", sizes, where) if op in WRITES_DST else None
    cnt = 0 if op == "nop" else _int(st, "cnt", where, 0)
    return Step(k, op, src, dst, cnt, None if depid < 0 else (depid, deps))


def _thread_block(tb: dict, t: int, rank: int, h: Header, sizes: dict[str, int]) -> ThreadBlock:
    where = f"gpu {rank} tb {t}"
    if _int(tb, "id", where) != t:
        raise BadInput(f"{where}: 'id' is {tb['id']}; thread blocks must be numbered 0, 1, 2, ... in order")
    send, recv, chan = _int(tb, "send", where, -1), _int(tb, "recv", where, -1), _int(tb, "chan", where, 0)
    for key, peer in (("send", send), ("recv", recv)):
        if peer == rank or peer >= h.ngpus:
            raise BadInput(f"{where}: {key} peer {peer} is not another rank of the {h.ngpus}")
    if chan >= h.nchannels:
        raise BadInput(f"{where}: channel {chan} but nchannels is {h.nchannels}")
    raw = tb.get("steps")
    if not isinstance(raw, list):
        raise BadInput(f"{where}: 'steps' must be a list")
    steps = tuple(_step(st, k, sizes, where) for k, st in enumerate(raw))
    for st in steps:
        if st.op in SENDS and send < 0:
            raise BadInput(f"{where} step {st.s}: {st.op} sends but the thread block has no send peer")
        if st.op in RECEIVES and recv < 0:
            raise BadInput(f"{where} step {st.s}: {st.op} receives but the thread block has no recv peer")
    return ThreadBlock(t, send, recv, chan, steps)


def _check_deps(rank: int, tbs: tuple[ThreadBlock, ...], raw: list) -> None:
    """Every dependency names an existing step of this rank, a later-or-same step of its own thread
    block never, and its target has hasdep=1 (else the runtime waits forever)."""
    for tb in tbs:
        for st in tb.steps:
            if st.dep is None:
                continue
            t, k = st.dep
            where = f"gpu {rank} tb {tb.id} step {st.s}"
            if t >= len(tbs) or k >= len(tbs[t].steps):
                raise BadInput(f"{where}: depends on tb {t} step {k}, which does not exist")
            if t == tb.id and k >= st.s:
                raise BadInput(f"{where}: depends on its own thread block's step {k}, which comes later")
            if t != tb.id and raw[t]["steps"][k].get("hasdep") not in (1, True):
                raise BadInput(f"{where}: depends on tb {t} step {k}, which has hasdep=0")


def _check_owners(rank: int, tbs: tuple[ThreadBlock, ...]) -> None:
    owner: dict[tuple[str, int, int], int] = {}
    for tb in tbs:
        for direction, peer in (("send", tb.send), ("recv", tb.recv)):
            if peer < 0:
                continue
            key = (direction, peer, tb.chan)
            if key in owner:
                raise BadInput(
                    f"gpu {rank}: tb {owner[key]} and tb {tb.id} both {direction} "
                    f"{'to' if direction == 'send' else 'from'} rank {peer} on channel {tb.chan}"
                )
            owner[key] = tb.id


def compile_gpu(program: dict, rank: int, h: Header | None = None) -> Plan:
    """Rank `rank`'s thread blocks, checked on their own (ids, steps, buffer bounds, peers, channel
    owners, dependencies); BadInput naming the first problem."""
    h = h or header(program)
    gpus = program.get("gpus")
    if not isinstance(gpus, list) or len(gpus) != h.ngpus:
        raise BadInput(f"program: 'gpus' must list the {h.ngpus} ranks")
    gpu = gpus[rank]
    where = f"gpu {rank}"
    if _int(gpu, "id", where) != rank:
        raise BadInput(f"{where}: 'id' is {gpu['id']}; gpus must be listed in rank order")
    s_chunks = _int(gpu, "s_chunks", where, 0)
    sizes = {"i": h.in_chunks, "o": h.out_chunks, "s": s_chunks}
    raw = gpu.get("tbs")
    if not isinstance(raw, list):
        raise BadInput(f"{where}: 'tbs' must be a list")
    tbs = tuple(_thread_block(tb, t, rank, h, sizes) for t, tb in enumerate(raw))
    _check_deps(rank, tbs, raw)
    _check_owners(rank, tbs)
    return Plan(h, rank, s_chunks, tbs)


def _connections(plan: Plan) -> dict[tuple[str, int, int, int], list[tuple[int, int, int]]]:
    """("send" | "recv", sender, receiver, chan) -> [(tb, step, cnt)] of this rank's sends and
    receives, in program order."""
    conns: dict[tuple[str, int, int, int], list[tuple[int, int, int]]] = {}
    for tb in plan.tbs:
        for st in tb.steps:
            if st.op in SENDS:
                conns.setdefault(("send", plan.rank, tb.send, tb.chan), []).append((tb.id, st.s, st.cnt))
            if st.op in RECEIVES:
                conns.setdefault(("recv", tb.recv, plan.rank, tb.chan), []).append((tb.id, st.s, st.cnt))
    return conns


def check_program(program: dict) -> Header:
    """Every rank's part as in compile_gpu, and every connection's sends match the peer's receives
    one for one (count and chunk count), so a checked program cannot fail to match messages."""
    h = header(program)
    sends: dict = {}
    recvs: dict = {}
    for rank in range(h.ngpus):
        for (kind, *conn), ops in _connections(compile_gpu(program, rank, h)).items():
            (sends if kind == "send" else recvs)[tuple(conn)] = ops
    for conn in sorted(set(sends) | set(recvs)):
        a, b, chan = conn
        out, inn = sends.get(conn, []), recvs.get(conn, [])
        if len(out) != len(inn):
            raise BadInput(
                f"rank {a} sends {len(out)} messages to rank {b} on channel {chan}, "
                f"but rank {b} receives {len(inn)}"
            )
        for (ts, ks, cs), (tr, kr, cr) in zip(out, inn, strict=True):
            if cs != cr:
                raise BadInput(
                    f"gpu {a} tb {ts} step {ks} sends {cs} chunks to rank {b} on channel {chan}, "
                    f"but the matching receive, gpu {b} tb {tr} step {kr}, takes {cr}"
                )
    return h


# ---------------------------------------------------------------------------------------------
# Buffers


def total_elements(h: Header, in_size: int, out_size: int) -> int:
    """M, the elements of the full buffer, from the input and output sizes (BadInput if they do not
    fit the collective or M is not a multiple of nchunksperloop)."""
    p = h.ngpus
    want = {"allgather": (in_size * p, out_size), "reduce-scatter": (in_size, out_size * p)}
    m_in, m_out = want.get(h.collective, (in_size, out_size))
    if m_in != m_out:
        raise BadInput(
            f"{h.collective} on {p} ranks: input of {in_size} and output of {out_size} elements do not fit"
        )
    if m_out % h.nchunks:
        raise BadInput(
            f"the buffer has {m_out} elements, not a multiple of the program's {h.nchunks} chunks per loop"
        )
    return m_out


def check_mode(h: Header, inplace: bool) -> None:
    """BadInput unless the program declares itself valid for this mode."""
    if inplace and not h.inplace:
        raise BadInput(f"program {h.name!r} is out-of-place only (inplace=0)")
    if not inplace and not h.outofplace:
        raise BadInput(f"program {h.name!r} is in-place only (outofplace=0)")


def buffers(plan: Plan, sendbuf, recvbuf, inplace: bool) -> tuple[dict[str, np.ndarray], int]:
    """({"i", "o", "s"} flat arrays, chunk elements C) with the in-place aliasing of the module
    docstring; BadInput for unusable buffers or a mode the program does not declare."""
    h = plan.header
    check_mode(h, inplace)
    out = flat_view(recvbuf, "recvbuf", writable=True)
    if inplace:
        if sendbuf is not None and sendbuf is not MPI.IN_PLACE and sendbuf is not recvbuf:
            raise BadInput("in place, pass the one buffer as recvbuf and None or MPI.IN_PLACE as sendbuf")
        m = _inplace_total(h, out.size)
        c = m // h.nchunks
        r = plan.rank
        if h.collective == "allgather":
            bufs = {"o": out, "i": out[r * h.in_chunks * c : (r + 1) * h.in_chunks * c]}
        elif h.collective == "reduce-scatter":
            bufs = {"i": out, "o": out[r * h.out_chunks * c : (r + 1) * h.out_chunks * c]}
        else:
            bufs = {"i": out, "o": out}
    else:
        inp = flat_view(sendbuf, "sendbuf", writable=False)
        if inp.dtype != out.dtype:
            raise BadInput(f"sendbuf is {inp.dtype} but recvbuf is {out.dtype}")
        if np.may_share_memory(inp, out):
            raise BadInput("out of place, sendbuf and recvbuf must not overlap (use inplace=True)")
        m = total_elements(h, inp.size, out.size)
        c = m // h.nchunks
        bufs = {"i": inp, "o": out}
    bufs["s"] = np.empty(plan.s_chunks * c, dtype=out.dtype)
    return bufs, c


def _inplace_total(h: Header, size: int) -> int:
    if size % h.nchunks:
        raise BadInput(
            f"the buffer has {size} elements, not a multiple of the program's {h.nchunks} chunks per loop"
        )
    return size


# ---------------------------------------------------------------------------------------------
# Running


_KEYVAL: int | None = None


def _private(comm: MPI.Comm) -> dict:
    """{"comm": a private duplicate of `comm`, "epoch": executions so far, "slots": epochs before the
    tags wrap}, cached on `comm`. The first call on a communicator is collective."""
    global _KEYVAL
    if not isinstance(comm, MPI.Comm) or comm == MPI.COMM_NULL or comm.Is_inter():
        raise BadInput(f"comm must be an mpi4py intracommunicator, got {comm!r}")
    if _KEYVAL is None:
        _KEYVAL = MPI.Comm.Create_keyval()
    st = comm.Get_attr(_KEYVAL)
    if st is None:
        dup = comm.Dup()
        st = {"comm": dup, "epoch": 0, "slots": max(1, int(dup.Get_attr(MPI.TAG_UB)) // TAG_SPACE)}
        comm.Set_attr(_KEYVAL, st)
    return st


def _next_tag_base(comm: MPI.Comm) -> tuple[MPI.Comm, int]:
    """The private communicator and this execution's first tag (every rank counts executions)."""
    st = _private(comm)
    base = (st["epoch"] % st["slots"]) * TAG_SPACE
    st["epoch"] += 1
    return st["comm"], base


class _Engine:
    """One execution of one rank's thread blocks (see the module docstring)."""

    def __init__(self, plan: Plan, bufs: dict, chunk: int, comm: MPI.Comm, tag: int, timeout: float):
        self.plan, self.bufs, self.chunk = plan, bufs, chunk
        self.comm, self.tag, self.timeout = comm, tag, timeout
        n = len(plan.tbs)
        self.done = [0] * n  # steps completed per thread block
        self.rreq: list[MPI.Request | None] = [None] * n
        self.rbuf: list[np.ndarray | None] = [None] * n
        self.arrived = [False] * n
        self.sends: list[tuple[MPI.Request, np.ndarray, str]] = []
        self.active = [tb for tb in plan.tbs if tb.steps]
        self.left = sum(len(tb.steps) for tb in plan.tbs)

    def view(self, side: tuple[str, int, int]) -> np.ndarray:
        buf, off, cnt = side
        return self.bufs[buf][off * self.chunk : (off + cnt) * self.chunk]

    def post_send(self, tb: ThreadBlock, st: Step, data: np.ndarray) -> None:
        req = self.comm.Isend([data, MPI.BYTE], tb.send, self.tag + tb.chan)
        self.sends.append(
            (req, data, f"tb {tb.id} step {st.s} ({st.op} to rank {tb.send}, channel {tb.chan})")
        )

    def post_recv(self, tb: ThreadBlock, st: Step) -> None:
        buf = np.empty(st.cnt * self.chunk, dtype=self.bufs["o"].dtype)
        self.rbuf[tb.id] = buf
        self.rreq[tb.id] = self.comm.Irecv([buf, MPI.BYTE], tb.recv, self.tag + tb.chan)
        self.arrived[tb.id] = False

    def apply(self, tb: ThreadBlock, st: Step, got: np.ndarray | None) -> None:
        """The step's effect, its received data (if any) being `got`."""
        op = st.op
        if op == "nop":
            return
        src = self.view(st.src) if st.src else None
        dst = self.view(st.dst) if st.dst else None
        if op == "s":
            self.post_send(tb, st, src.copy())
        elif op == "r":
            dst[...] = got
        elif op == "rcs":
            dst[...] = got
            self.post_send(tb, st, got)
        elif op == "rrs":
            np.add(got, src, out=got)
            self.post_send(tb, st, got)
        elif op == "rrc":
            np.add(got, src, out=dst)
        elif op == "rrcs":
            np.add(got, src, out=got)
            dst[...] = got
            self.post_send(tb, st, got)
        elif op == "cpy":
            dst[...] = src
        else:  # re
            np.add(dst, src, out=dst)

    def advance(self, tb: ThreadBlock) -> bool:
        """Run tb's steps while they can run; True if at least one completed."""
        t, done, moved = tb.id, self.done, False
        while done[t] < len(tb.steps):
            st = tb.steps[done[t]]
            receives = st.op in RECEIVES
            if receives and self.rreq[t] is None:
                self.post_recv(tb, st)
            if st.dep is not None and done[st.dep[0]] <= st.dep[1]:
                break
            got = None
            if receives:
                if not self.arrived[t] and not self.rreq[t].Test():
                    break
                got, self.rreq[t], self.rbuf[t], self.arrived[t] = self.rbuf[t], None, None, False
            self.apply(tb, st, got)
            done[t] += 1
            self.left -= 1
            moved = True
        return moved

    def stuck(self) -> str:
        parts = []
        for tb in self.active:
            k = self.done[tb.id]
            if k == len(tb.steps):
                continue
            st = tb.steps[k]
            if st.dep is not None and self.done[st.dep[0]] <= st.dep[1]:
                why = f"waits for tb {st.dep[0]} step {st.dep[1]}"
            else:
                why = f"waits for a message from rank {tb.recv} on channel {tb.chan}"
            parts.append(f"tb {tb.id} step {k} ({st.op}) {why}")
        return "; ".join(parts)

    def wait_any(self, since: float) -> None:
        """Block (politely) until a pending receive completes; RuntimeError after the timeout or
        at once if no receive is pending (a local deadlock)."""
        pending = [t for t, r in enumerate(self.rreq) if r is not None and not self.arrived[t]]
        if not pending:
            raise RuntimeError(f"rank {self.plan.rank}: deadlock (no message in flight): {self.stuck()}")
        reqs = [self.rreq[t] for t in pending]
        while True:
            idx = MPI.Request.Testsome(reqs)
            if idx:
                for i in idx:
                    self.arrived[pending[i]] = True
                return
            self.pause(since, self.stuck)

    def pause(self, since: float, what) -> None:
        waited = time.perf_counter() - since
        if waited > self.timeout:
            raise RuntimeError(f"rank {self.plan.rank}: no progress for {self.timeout:g} s: {what()}")
        if waited < 2e-3:
            os.sched_yield()
        else:
            time.sleep(min(5e-4, waited / 20))

    def drain_sends(self) -> None:
        since = time.perf_counter()
        reqs = [r for r, _, _ in self.sends]
        while not MPI.Request.Testall(reqs):
            self.pause(
                since,
                lambda: "sends never received: " + "; ".join(w for r, _, w in self.sends if not r.Test()),
            )
        self.sends.clear()

    def cancel(self) -> None:
        for t, r in enumerate(self.rreq):
            if r is not None and not self.arrived[t]:
                r.Cancel()
                r.Wait()

    def run(self) -> None:
        try:
            since = time.perf_counter()
            while True:
                moved = False
                for tb in self.active:
                    moved |= self.advance(tb)
                if not self.left:
                    break
                if moved:
                    since = time.perf_counter()
                else:
                    self.wait_any(since)
            self.drain_sends()
        except BaseException:
            self.cancel()
            raise


def run_plan(plan: Plan, sendbuf, recvbuf, comm: MPI.Comm, inplace: bool, timeout: float) -> None:
    """execute() for an already compiled plan (no checks of the whole program)."""
    private, tag = _next_tag_base(comm)  # first: every rank counts this execution, even if it fails
    bufs, chunk = buffers(plan, sendbuf, recvbuf, inplace)
    _Engine(plan, bufs, chunk, private, tag, timeout).run()


def execute(program: dict, sendbuf, recvbuf, comm: MPI.Comm, inplace: bool = False, *, timeout: float = 30.0):
    """Run this rank's thread blocks of `program` on `sendbuf` -> `recvbuf` (nccl semantics, see
    the module docstring; in place `recvbuf` is the one M-element buffer and `sendbuf` is None or
    MPI.IN_PLACE). Collective over `comm`, whose size must be the program's ngpus. Checks the whole
    program first (BadInput, a ValueError, before any communication); RuntimeError if it
    deadlocks (no progress for `timeout` seconds)."""
    h = check_program(program)
    if comm.Get_size() != h.ngpus:
        raise BadInput(f"the program is for {h.ngpus} ranks but the communicator has {comm.Get_size()}")
    plan = compile_gpu(program, comm.Get_rank(), h)
    run_plan(plan, sendbuf, recvbuf, comm, inplace, timeout)


# ---------------------------------------------------------------------------------------------
# Checked, timed runs on random data

LIBRARY = {
    "allreduce": "MPI_Allreduce",
    "reduce-scatter": "MPI_Reduce_scatter_block",
    "allgather": "MPI_Allgather",
    "broadcast": "MPI_Bcast",
    "reduce": "MPI_Reduce",
}
GARBAGE = 0x5A  # every byte of an output before a run: values far outside the test data's range


def sample_input(h: Header, m: int, rank: int, dtype: np.dtype, seed: int) -> np.ndarray:
    """Rank `rank`'s input: integers in [-8, 8] as `dtype`, so that float sums of up to 2^20 of them
    are exact whatever the order. Deterministic in (seed, rank)."""
    n = m // h.ngpus if h.collective == "allgather" else m
    return np.random.default_rng([seed, rank]).integers(-8, 9, n).astype(dtype)


def expected_output(h: Header, m: int, rank: int, dtype: np.dtype, seed: int) -> np.ndarray | None:
    """What `rank`'s output must hold (None: unspecified, reduce on a non-root). The inputs of all
    ranks are regenerated from the seed (the same numbers an allgather would bring, in O(M) memory)."""
    p = h.ngpus
    if h.collective == "allgather":
        return np.concatenate([sample_input(h, m, q, dtype, seed) for q in range(p)])
    if h.collective == "broadcast":
        return sample_input(h, m, h.root, dtype, seed)
    if h.collective == "reduce" and rank != h.root:
        return None
    total = np.zeros(m, dtype=dtype)
    for q in range(p):
        np.add(total, sample_input(h, m, q, dtype, seed), out=total)
    if h.collective == "reduce-scatter":
        return total[rank * (m // p) : (rank + 1) * (m // p)]
    return total


def first_wrong(got: np.ndarray, want: np.ndarray) -> str | None:
    """None if `got` equals `want` byte for byte, else the first differing element and the count."""
    a = got.reshape(-1).view(np.uint8).reshape(-1, got.itemsize)
    b = want.reshape(-1).view(np.uint8).reshape(-1, want.itemsize)
    bad = np.flatnonzero((a != b).any(axis=1))
    if not bad.size:
        return None
    i = int(bad[0])
    return (
        f"output element {i} is {got[i].item()!r}, expected {want[i].item()!r} "
        f"({bad.size} of {got.size} elements wrong)"
    )


class _Case:
    """The buffers of one checked collective on one rank, and how to reset and check them."""

    def __init__(self, h: Header, m: int, rank: int, dtype: np.dtype, seed: int, inplace: bool):
        self.h, self.m, self.rank, self.inplace = h, m, rank, inplace
        self.x = sample_input(h, m, rank, dtype, seed)
        self.want = expected_output(h, m, rank, dtype, seed)
        n_out = m // h.ngpus if h.collective == "reduce-scatter" else m
        self.sendbuf = None if inplace else np.empty(self.x.size, dtype=dtype)
        self.recvbuf = np.empty(m if inplace else n_out, dtype=dtype)

    def reset(self) -> None:
        self.recvbuf.view(np.uint8)[:] = GARBAGE
        if not self.inplace:
            self.sendbuf[:] = self.x
        elif self.h.collective == "allgather":
            n = self.x.size
            self.recvbuf[self.rank * n : (self.rank + 1) * n] = self.x
        else:
            self.recvbuf[:] = self.x

    def output(self) -> np.ndarray:
        if self.inplace and self.h.collective == "reduce-scatter":
            n = self.m // self.h.ngpus
            return self.recvbuf[self.rank * n : (self.rank + 1) * n]
        return self.recvbuf

    def check(self) -> str | None:
        if self.want is None:
            return None
        wrong = first_wrong(self.output(), self.want)
        return None if wrong is None else f"rank {self.rank}: {self.h.collective}: {wrong}"

    def library(self, comm: MPI.Comm) -> None:
        """The MPI library's own collective on the same buffers."""
        coll, send, recv = self.h.collective, self.sendbuf, self.recvbuf
        send = MPI.IN_PLACE if self.inplace else send
        if coll == "allreduce":
            comm.Allreduce(send, recv)
        elif coll == "reduce-scatter":
            comm.Reduce_scatter_block(send, recv)
        elif coll == "allgather":
            comm.Allgather(send, recv)
        elif coll == "broadcast":
            comm.Bcast(recv, self.h.root)
        elif self.rank == self.h.root or not self.inplace:
            comm.Reduce(send, recv, root=self.h.root)
        else:
            comm.Reduce(recv, None, root=self.h.root)


def _attempt(fn) -> str | None:
    """fn()'s failure as a message (deadlocks and MPI errors), None if it succeeded."""
    try:
        fn()
    except (RuntimeError, MPI.Exception) as e:
        return str(e)
    return None


def _agree(comm: MPI.Comm, error: str | None) -> str | None:
    """The first failing rank's message (with how many failed), the same on every rank."""
    errors = [e for e in comm.allgather(error) if e is not None]
    if not errors:
        return None
    others = len(errors) - 1
    more = f" (and {others} more rank{'s' if others > 1 else ''} failed)" if others else ""
    return errors[0] + more


def _timed(comm: MPI.Comm, reset, fn, reps: int) -> tuple[float, str | None]:
    """(min over reps of the slowest rank's time of fn() in microseconds, this rank's failure).
    Every rank runs the same collectives; all stop after a run in which any rank failed."""
    best = float("inf")
    for _ in range(reps):
        reset()
        comm.Barrier()
        t0 = time.perf_counter()
        error = _attempt(fn)
        dt = time.perf_counter() - t0
        slowest = comm.allreduce(float("inf") if error else dt, op=MPI.MAX)
        if error or slowest == float("inf"):
            return best * 1e6, error
        best = min(best, slowest)
    return best * 1e6, None


def run_collective(
    program: dict,
    nbytes: int,
    dtype,
    comm: MPI.Comm,
    inplace: bool = False,
    seed: int = 0,
    *,
    reps: int = 5,
    timeout: float = 30.0,
) -> dict:
    """Run `program` on `nbytes` bytes (the full buffer M, nccl-tests' size) of random `dtype` data:
    one checked warm-up, then `reps` timed runs (min over runs of the slowest rank, after a barrier;
    the last result checked again), then the MPI library's collective timed the same way.
    Collective; the result is the same dict on every rank:
    {"ok", "error" (first failing rank's message or None), "time_us", "mpi_time_us", "np", ...}.
    BadInput (raised on every rank alike) for an invalid program, size or mode."""
    h = check_program(program)
    p, rank = comm.Get_size(), comm.Get_rank()
    if p != h.ngpus:
        raise BadInput(f"the program is for {h.ngpus} ranks but the communicator has {p}")
    dtype = np.dtype(dtype)
    if reps < 1:
        raise BadInput(f"reps must be at least 1, got {reps}")
    if nbytes < 0 or nbytes % dtype.itemsize:
        raise BadInput(f"{nbytes} bytes is not a whole number of {dtype} elements")
    m = nbytes // dtype.itemsize
    if m % h.nchunks:
        k = h.nchunks * dtype.itemsize
        raise BadInput(
            f"{nbytes} bytes of {dtype} do not split into the program's {h.nchunks} chunks per loop: "
            f"use a multiple of {k} bytes (e.g. {max(k, nbytes // k * k)})"
        )
    check_mode(h, inplace)
    plan = compile_gpu(program, rank, h)
    case = _Case(h, m, rank, dtype, seed, inplace)
    ours = lambda: run_plan(plan, case.sendbuf, case.recvbuf, comm, inplace, timeout)  # noqa: E731
    result = {
        "ok": False, "error": None, "time_us": None, "mpi_time_us": None, "np": p, "name": h.name,
        "collective": h.collective, "size_bytes": nbytes, "dtype": str(dtype), "inplace": inplace,
        "chunk_elements": m // h.nchunks, "reps": reps, "library": LIBRARY[h.collective],
    }  # fmt: skip
    case.reset()
    result["error"] = _agree(comm, _attempt(ours) or case.check())
    if result["error"]:
        return result
    ours_us, error = _timed(comm, case.reset, ours, reps)
    result["error"] = _agree(comm, error or case.check())
    if result["error"]:
        return result
    lib_us, error = _timed(comm, case.reset, lambda: case.library(comm), reps)
    lib_error = _agree(comm, error)
    result.update(ok=True, time_us=ours_us, mpi_time_us=None if lib_error else lib_us)
    return result
