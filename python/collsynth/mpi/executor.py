"""Run an MSCCL program (the dict collsynth lowers any schedule to, or an XML text) on real numpy
data over mpi4py point-to-point. This module only moves bytes: the Rust core judges the program
exactly as ``collsynth verify`` does (parsers, rules, symbolic execution) and compiles it into a
per-rank plan (``collsynth.msccl.exec_plan``, crates/collsynth-core/src/msccl/plan.rs).

    from collsynth import mpi
    from collsynth.mpi.executor import run_collective
    mpi.execute(program, sendbuf, recvbuf, comm)      # this rank's part, e.g. in place of
                                                      # ncclAllReduce(sendbuf, recvbuf, ...)
    run_collective(program, nbytes, "float32", comm)  # random data, checked against numpy, timed

What runs (docs/mpi.md, docs/msccl.md "Executing a program over MPI"):
- A rank's plan is its ops in order. Each op moves `cnt` chunks of C elements (C = the receive
  buffer's elements / its `recvbuf_chunks`): v = the message from `recv_from`, else the chunks at
  `first`; if `add`, v += the chunks at `add` (np.add: reductions are sums); if `store`, v is
  written there; if `send_to`, v is sent. Locations are (region, chunk) with regions 0 = sendbuf,
  1 = recvbuf, 2 = scratch; the core has resolved the mode's aliasing.
- Every receive is posted at the start (in plan order, so each connection's messages match in
  order), sends are posted and not waited for until the end: a plan run this way cannot deadlock
  (the core orders it so). Messages travel on a private duplicate of the communicator with tag =
  a per-execution base + channel.
- No progress for `timeout` seconds raises RuntimeError naming the waiting op.
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple, cast

import numpy as np
from mpi4py import MPI

from collsynth import msccl
from collsynth._core import BadInput, InternalError, busbw_factor
from collsynth.mpi.collectives import flat_view


class Op(NamedTuple):
    """One byte move (the core's `_core.msccl_exec_plan` tuple; -1 = absent)."""

    recv_from: int
    send_to: int
    chan: int
    first_region: int
    first_chunk: int
    add_region: int
    add_chunk: int
    store_region: int
    store_chunk: int
    cnt: int
    tb: int
    step: int
    type: str

    def label(self) -> str:
        return f"tb {self.tb} step {self.step} ({self.type})"


class Plan(NamedTuple):
    """One rank's part of a compiled program, with the program's header."""

    name: str
    collective: str
    ngpus: int
    nchunks: int  # nchunksperloop: chunks of the full buffer M
    nchannels: int
    root: int
    inplace: bool
    rank: int
    sendbuf_chunks: int | None  # None in place
    recvbuf_chunks: int
    scratch_chunks: int
    input: tuple[int, int, int]  # (region, first chunk, chunks) of this rank's input
    output: tuple[int, int, int]
    ops: tuple[Op, ...]


# ---------------------------------------------------------------------------------------------
# The plan (compiled by the core)


def compile_program(program: dict | str, inplace: bool = False) -> list[Plan]:
    """Every rank's Plan of `program` (dict or XML text) for the mode; BadInput as
    ``collsynth verify`` would refuse it. No MPI involved."""
    raw = msccl.exec_plan(program, inplace)
    if tuple(raw["op_fields"]) != Op._fields:
        raise InternalError(f"collsynth._core ops have fields {raw['op_fields']}, the executor {Op._fields}")
    return [
        Plan(
            raw["name"],
            raw["collective"],
            raw["ngpus"],
            raw["nchunksperloop"],
            raw["nchannels"],
            raw["root"],
            inplace,
            r["rank"],
            r["sendbuf_chunks"],
            r["recvbuf_chunks"],
            r["scratch_chunks"],
            tuple(r["input"]),
            tuple(r["output"]),
            tuple(Op(*o) for o in r["ops"]),
        )
        for r in raw["ranks"]
    ]


def compile_on(comm: MPI.Comm, program: dict | str | None, inplace: bool = False) -> Plan:
    """This rank's Plan: rank 0 compiles, the others receive their part (only rank 0's
    `program` is read). Collective; BadInput (raised on every rank alike) for a refused
    program or a communicator of the wrong size."""
    plans, error = None, None
    if comm.Get_rank() == 0:
        try:
            if program is None:
                raise BadInput("rank 0 was given no program")
            plans = compile_program(program, inplace)
        except BadInput as e:
            error = str(e)
    error, ngpus = comm.bcast((error, None if plans is None else len(plans)), root=0)
    if error:
        raise BadInput(error)
    if ngpus != comm.Get_size():
        raise BadInput(f"the program is for {ngpus} ranks but the communicator has {comm.Get_size()}")
    return comm.scatter(plans, root=0)


# ---------------------------------------------------------------------------------------------
# Buffers


def buffers(plan: Plan, sendbuf, recvbuf) -> tuple[tuple, int]:
    """((sendbuf, recvbuf, scratch) flat arrays, chunk elements C); BadInput for buffers that do not
    fit the plan."""
    out = flat_view(recvbuf, "recvbuf", writable=True)
    if plan.sendbuf_chunks is None:
        if sendbuf is not None and sendbuf is not MPI.IN_PLACE and sendbuf is not recvbuf:
            raise BadInput("in place, pass the one buffer as recvbuf and None or MPI.IN_PLACE as sendbuf")
        inp = None
    else:
        inp = flat_view(sendbuf, "sendbuf", writable=False)
        if inp.size * plan.recvbuf_chunks != out.size * plan.sendbuf_chunks:
            raise BadInput(
                f"{plan.collective} on {plan.ngpus} ranks: input of {inp.size} and output of {out.size} "
                f"elements do not fit (the program's {plan.sendbuf_chunks} and {plan.recvbuf_chunks} chunks)"
            )
        if inp.dtype != out.dtype:
            raise BadInput(f"sendbuf is {inp.dtype} but recvbuf is {out.dtype}")
        if np.may_share_memory(inp, out):
            raise BadInput("out of place, sendbuf and recvbuf must not overlap (use inplace=True)")
    if out.size % plan.recvbuf_chunks:
        raise BadInput(
            f"the buffer has {out.size} elements, "
            f"not a multiple of the program's {plan.recvbuf_chunks} chunks"
        )
    c = out.size // plan.recvbuf_chunks
    return (inp, out, np.empty(plan.scratch_chunks * c, dtype=out.dtype)), c


# ---------------------------------------------------------------------------------------------
# Running


_KEYVAL: int | None = None


def _next_tag_base(comm: MPI.Comm, channels: int) -> tuple[MPI.Comm, int]:
    """A private duplicate of `comm` (cached on it; the first call is collective) and this
    execution's first tag: executions take `channels` tags each, in turn (every rank counts them)."""
    global _KEYVAL
    if not isinstance(comm, MPI.Comm) or comm == MPI.COMM_NULL or comm.Is_inter():
        raise BadInput(f"comm must be an mpi4py intracommunicator, got {comm!r}")
    if _KEYVAL is None:
        _KEYVAL = MPI.Comm.Create_keyval()
    st = cast("dict | None", comm.Get_attr(_KEYVAL))  # only ever our dict, set below
    if st is None:
        dup = comm.Dup()
        tag_ub = cast(int, dup.Get_attr(MPI.TAG_UB))  # MPI sets TAG_UB on every communicator
        st = {"comm": dup, "next": 0, "top": int(tag_ub) + 1}
        comm.Set_attr(_KEYVAL, st)
    base = st["next"] if st["next"] + channels <= st["top"] else 0
    st["next"] = base + channels
    return st["comm"], base


class _Run:
    """One execution of one rank's plan (see the module docstring)."""

    def __init__(self, plan: Plan, regions: tuple, chunk: int, comm: MPI.Comm, tag: int, timeout: float):
        self.plan, self.regions, self.chunk = plan, regions, chunk
        self.comm, self.tag, self.timeout = comm, tag, timeout
        self.sends: list[tuple[MPI.Request, np.ndarray, Op]] = []
        self.recvs: list[tuple[MPI.Request, np.ndarray] | None] = []

    def view(self, region: int, first: int, cnt: int) -> np.ndarray:
        return self.regions[region][first * self.chunk : (first + cnt) * self.chunk]

    def post_receives(self) -> None:
        dtype = self.regions[1].dtype
        for op in self.plan.ops:
            if op.recv_from < 0:
                self.recvs.append(None)
                continue
            buf = np.empty(op.cnt * self.chunk, dtype=dtype)
            self.recvs.append((self.comm.Irecv([buf, MPI.BYTE], op.recv_from, self.tag + op.chan), buf))

    def received(self, k: int, op: Op) -> np.ndarray:
        posted = self.recvs[k]
        assert posted is not None, "received() is called only for ops that receive"
        req, buf = posted
        since = time.perf_counter()
        while not req.Test():
            self.pause(
                since,
                lambda: f"{op.label()} waits for a message from rank {op.recv_from} on channel {op.chan}",
            )
        self.recvs[k] = None
        return buf

    def apply(self, k: int, op: Op) -> None:
        if op.recv_from >= 0:
            v = self.received(k, op)
        else:
            v = self.view(op.first_region, op.first_chunk, op.cnt)
        if op.add_region >= 0:
            fresh = op.recv_from >= 0
            v = np.add(v, self.view(op.add_region, op.add_chunk, op.cnt), out=v if fresh else None)
        if op.store_region >= 0:
            self.view(op.store_region, op.store_chunk, op.cnt)[...] = v
        if op.send_to >= 0:
            data = v if op.recv_from >= 0 or op.add_region >= 0 else v.copy()  # v is not a view
            req = self.comm.Isend([data, MPI.BYTE], op.send_to, self.tag + op.chan)
            self.sends.append((req, data, op))

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
                lambda: (
                    "sends never received: "
                    + "; ".join(
                        f"{op.label()} to rank {op.send_to}" for r, _, op in self.sends if not r.Test()
                    )
                ),
            )
        self.sends.clear()

    def cancel(self) -> None:
        for pending in self.recvs:
            if pending is not None:
                pending[0].Cancel()
                pending[0].Wait()

    def run(self) -> None:
        try:
            self.post_receives()
            for k, op in enumerate(self.plan.ops):
                self.apply(k, op)
            self.drain_sends()
        except BaseException:
            self.cancel()
            raise


def run_plan(plan: Plan, sendbuf, recvbuf, comm: MPI.Comm, timeout: float = 30.0) -> None:
    """Run this rank's compiled `plan` on the buffers (collective over `comm`)."""
    private, tag = _next_tag_base(comm, plan.nchannels)  # first: every rank counts this execution
    regions, chunk = buffers(plan, sendbuf, recvbuf)
    _Run(plan, regions, chunk, private, tag, timeout).run()


def execute(
    program: dict | str, sendbuf, recvbuf, comm: MPI.Comm, inplace: bool = False, *, timeout: float = 30.0
):
    """Run this rank's part of `program` (dict or XML text) on `sendbuf` -> `recvbuf` (nccl
    semantics; in place `recvbuf` is the one M-element buffer and `sendbuf` is None or
    MPI.IN_PLACE). Collective over `comm`, whose size must be the program's ngpus. BadInput (a
    ValueError) before any data moves if the core refuses the program or the buffers do not fit;
    RuntimeError if no progress is made for `timeout` seconds."""
    run_plan(compile_on(comm, program, inplace), sendbuf, recvbuf, comm, timeout)


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


def sample_input(plan: Plan, m: int, rank: int, dtype: np.dtype, seed: int) -> np.ndarray:
    """Rank `rank`'s input of a buffer of `m` elements: integers in [-8, 8] as `dtype`, so that
    float sums of up to 2^20 of them are exact whatever the order. Deterministic in (seed, rank)."""
    n = plan.input[2] * (m // plan.nchunks)
    return np.random.default_rng([seed, rank]).integers(-8, 9, n).astype(dtype)


def expected_output(plan: Plan, m: int, rank: int, dtype: np.dtype, seed: int) -> np.ndarray | None:
    """What `rank`'s output must hold by the collective's definition (None: unspecified, reduce on
    a non-root). The inputs of all ranks are regenerated from the seed."""
    p, coll = plan.ngpus, plan.collective
    if coll == "allgather":
        return np.concatenate([sample_input(plan, m, q, dtype, seed) for q in range(p)])
    if coll == "broadcast":
        return sample_input(plan, m, plan.root, dtype, seed)
    if coll == "reduce" and rank != plan.root:
        return None
    total = np.zeros(m, dtype=dtype)
    for q in range(p):
        np.add(total, sample_input(plan, m, q, dtype, seed), out=total)
    if coll == "reduce-scatter":
        return total[rank * (m // p) : (rank + 1) * (m // p)]
    return total


def wrong_elements(got: np.ndarray, want: np.ndarray) -> int:
    """How many elements of `got` differ from `want` byte for byte (nccl-tests' #wrong)."""
    a = got.reshape(-1).view(np.uint8).reshape(-1, got.itemsize)
    b = want.reshape(-1).view(np.uint8).reshape(-1, want.itemsize)
    return int((a != b).any(axis=1).sum())


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

    def __init__(self, plan: Plan, m: int, dtype: np.dtype, seed: int):
        self.plan, self.rank, self.c = plan, plan.rank, m // plan.nchunks
        self.x = sample_input(plan, m, plan.rank, dtype, seed)
        self.want = expected_output(plan, m, plan.rank, dtype, seed)
        send = plan.sendbuf_chunks
        self.sendbuf = None if send is None else np.empty(send * self.c, dtype=dtype)
        self.recvbuf = np.empty(plan.recvbuf_chunks * self.c, dtype=dtype)

    def span(self, where: tuple[int, int, int]) -> np.ndarray:
        region, first, chunks = where
        buf = self.sendbuf if region == 0 else self.recvbuf
        assert buf is not None, "region 0 is named only by out-of-place plans"
        return buf[first * self.c : (first + chunks) * self.c]

    def reset(self) -> None:
        self.recvbuf.view(np.uint8)[:] = GARBAGE
        self.span(self.plan.input)[:] = self.x

    def check(self) -> str | None:
        if self.want is None:
            return None
        wrong = first_wrong(self.span(self.plan.output), self.want)
        return None if wrong is None else f"rank {self.rank}: {self.plan.collective}: {wrong}"

    def wrong(self, comm: MPI.Comm) -> int:
        """#wrong over all ranks: elements of the outputs that differ from the definition's."""
        mine = 0 if self.want is None else wrong_elements(self.span(self.plan.output), self.want)
        return comm.allreduce(mine, op=MPI.SUM)

    def library(self, comm: MPI.Comm) -> None:
        """The MPI library's own collective on the same buffers."""
        coll, root, recv = self.plan.collective, self.plan.root, self.recvbuf
        inplace = self.sendbuf is None
        send = MPI.IN_PLACE if inplace else self.sendbuf
        if coll == "allreduce":
            comm.Allreduce(send, recv)
        elif coll == "reduce-scatter":
            comm.Reduce_scatter_block(send, recv)
        elif coll == "allgather":
            comm.Allgather(send, recv)
        elif coll == "broadcast":
            comm.Bcast(recv, root)
        elif self.rank == root or not inplace:
            comm.Reduce(send, recv, root=root)
        else:
            comm.Reduce(recv, None, root=root)


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
    program: dict | str,
    nbytes: int,
    dtype,
    comm: MPI.Comm,
    inplace: bool = False,
    seed: int = 0,
    *,
    reps: int = 5,
    timeout: float = 30.0,
) -> dict:
    """Run `program` (dict or XML text) on `nbytes` bytes (the full buffer M, nccl-tests' size) of
    random `dtype` data: one checked warm-up, then `reps` timed runs (min over runs of the slowest
    rank, after a barrier; the last result checked again), then the MPI library's collective timed
    the same way. Collective; the result is the same dict on every rank:
    {"ok", "error" (first failing rank's message or None), "time_us", "mpi_time_us", "np", ...}.
    BadInput (raised on every rank alike) for a refused program, a size or a mode."""
    plan = compile_on(comm, program, inplace)
    return run_plan_collective(plan, nbytes, dtype, comm, seed, reps=reps, timeout=timeout)


def run_plan_collective(
    plan: Plan, nbytes: int, dtype, comm: MPI.Comm, seed: int = 0, *, reps: int = 5, timeout: float = 30.0
) -> dict:
    """run_collective() of this rank's compiled `plan`."""
    dtype = np.dtype(dtype)
    if reps < 1:
        raise BadInput(f"reps must be at least 1, got {reps}")
    if nbytes < 0 or nbytes % dtype.itemsize:
        raise BadInput(f"{nbytes} bytes is not a whole number of {dtype} elements")
    m = nbytes // dtype.itemsize
    if m % plan.nchunks:
        k = plan.nchunks * dtype.itemsize
        raise BadInput(
            f"{nbytes} bytes of {dtype} do not split into the program's {plan.nchunks} chunks per loop: "
            f"use a multiple of {k} bytes (e.g. {max(k, nbytes // k * k)})"
        )
    case = _Case(plan, m, dtype, seed)
    ours = lambda: run_plan(plan, case.sendbuf, case.recvbuf, comm, timeout)  # noqa: E731
    result = {
        "ok": False, "error": None, "time_us": None, "mpi_time_us": None, "np": plan.ngpus,
        "name": plan.name, "collective": plan.collective, "size_bytes": nbytes, "dtype": str(dtype),
        "inplace": plan.inplace, "chunk_elements": m // plan.nchunks, "reps": reps,
        "library": LIBRARY[plan.collective], "root": plan.root,
        "wrong_elements": None, "algbw_GBps": None, "busbw_GBps": None,
    }  # fmt: skip
    case.reset()
    failed = _attempt(ours)
    result["wrong_elements"] = case.wrong(comm)  # collective: every rank counts, failed or not
    result["error"] = _agree(comm, failed or case.check())
    if result["error"]:
        return result
    ours_us, error = _timed(comm, case.reset, ours, reps)
    result["wrong_elements"] = case.wrong(comm)
    result["error"] = _agree(comm, error or case.check())
    if result["error"]:
        return result
    if ours_us > 0:  # nccl-tests' algbw (the full buffer over the time) and busbw (the core's factor)
        result["algbw_GBps"] = nbytes / ours_us / 1e3
        result["busbw_GBps"] = result["algbw_GBps"] * busbw_factor(plan.collective, plan.ngpus)
    lib_us, error = _timed(comm, case.reset, lambda: case.library(comm), reps)
    lib_error = _agree(comm, error)
    result.update(ok=True, time_us=ours_us, mpi_time_us=None if lib_error else lib_us)
    return result
