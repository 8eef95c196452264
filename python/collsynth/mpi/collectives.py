"""bcast, allgather, allgatherv and allreduce over mpi4py point-to-point (one ``Sendrecv`` per
round) with Träff's round-optimal circulant schedules. Same semantics as the MPI calls, on
contiguous numpy buffers; every rank must pass the same `root`, `counts`, `op` and `blocks`."""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from collsynth._core import BadInput
from collsynth.mpi import plan
from collsynth.mpi.costmodel import model, state

TAG = 7


def comm_world() -> MPI.Comm:
    """``MPI.COMM_WORLD`` (so that callers need not import mpi4py themselves)."""
    return MPI.COMM_WORLD


def _comm(comm) -> MPI.Comm:
    return MPI.COMM_WORLD if comm is None else comm


def _bytes(buf, name: str, writable: bool) -> np.ndarray:
    """A flat uint8 view of a C-contiguous numpy array (no copy)."""
    return flat_view(buf, name, writable).view(np.uint8)


def flat_view(buf, name: str, writable: bool) -> np.ndarray:
    """A flat view of a C-contiguous numeric numpy array (no copy); BadInput naming `name` else."""
    if not isinstance(buf, np.ndarray):
        raise BadInput(f"{name} must be a numpy array, got {type(buf).__name__}")
    if not buf.flags.c_contiguous:
        raise BadInput(f"{name} must be C-contiguous (use np.ascontiguousarray)")
    if writable and not buf.flags.writeable:
        raise BadInput(f"{name} is read-only")
    if buf.dtype.hasobject:
        raise BadInput(f"{name} has dtype object: only plain numeric data can be sent")
    return buf.reshape(-1)


def _blocks(blocks, comm: MPI.Comm, p: int, nbytes: int) -> int:
    if blocks is not None:
        return plan.check_blocks(blocks)
    ab = model(comm)
    return plan.choose_blocks(p, nbytes, ab["alpha_us"], ab["beta_us_per_byte"])


def bcast(buf: np.ndarray, root: int = 0, comm: MPI.Comm | None = None, *, blocks: int | None = None):
    """MPI_Bcast of `buf` from `root`, pipelined in `blocks` blocks (default: the alpha-beta
    optimum of Theorem 2 for this communicator) in blocks - 1 + ceil(log2 p) rounds."""
    comm = _comm(comm)
    st = state(comm)
    c = st["comm"]
    p, rank = c.Get_size(), c.Get_rank()
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or not 0 <= root < p:
        raise BadInput(f"root must be a rank in [0, {p}), got {root!r}")
    data = _bytes(buf, "buf", writable=rank != root)
    if blocks is not None:
        plan.check_blocks(blocks)
    m = data.nbytes
    if p == 1 or m == 0:
        return buf
    n = _blocks(blocks, comm, p, m)
    bounds = plan.block_bounds(m, n)
    scratch = None
    for t, sb, f, rb in plan.bcast_rounds(p, rank, int(root), n):
        send = data[bounds[sb] : bounds[sb + 1]] if sb >= 0 else None
        if rb < 0:
            recv = None
        elif rb == sb:  # block n - 1 again (capped) while sending it: MPI forbids aliasing
            if scratch is None:
                scratch = np.empty(bounds[n] - bounds[n - 1], dtype=np.uint8)
            recv = scratch
        else:
            recv = data[bounds[rb] : bounds[rb + 1]]
        c.Sendrecv(send, t if sb >= 0 else MPI.PROC_NULL, TAG, recv, f if rb >= 0 else MPI.PROC_NULL, TAG)
    return buf


def allgather(sendbuf, recvbuf: np.ndarray, comm: MPI.Comm | None = None):
    """MPI_Allgather (Algorithm 7): ceil(log2 p) rounds, (p - 1) m / p bytes received per rank.
    `sendbuf` may be ``MPI.IN_PLACE`` (this rank's part is already in `recvbuf`)."""
    comm = _comm(comm)
    c = state(comm)["comm"]
    p, rank = c.Get_size(), c.Get_rank()
    out = _bytes(recvbuf, "recvbuf", writable=True)
    if recvbuf.size % p:
        raise BadInput(f"recvbuf has {recvbuf.size} elements, not a multiple of the {p} ranks")
    blk = out.nbytes // p
    if sendbuf is MPI.IN_PLACE:
        own = out[rank * blk : (rank + 1) * blk].copy()
    else:
        own = _bytes(sendbuf, "sendbuf", writable=False)
        if sendbuf.dtype != recvbuf.dtype or sendbuf.size * p != recvbuf.size:
            raise BadInput(
                f"recvbuf must hold p = {p} times sendbuf: sendbuf has {sendbuf.size} x {sendbuf.dtype},"
                f" recvbuf {recvbuf.size} x {recvbuf.dtype}"
            )
    if p == 1 or blk == 0:
        out[:] = own
        return recvbuf
    s = plan.schedule(p, rank, 0)
    skips = s["skips"]
    tmp = np.empty(p * blk, dtype=np.uint8)  # tmp[j] holds the part of rank (rank + j) mod p
    tmp[:blk] = own
    for k in range(s["q"]):
        width = skips[k + 1] - skips[k]  # <= skips[k] (Lemma 1): only blocks already held are sent
        c.Sendrecv(
            tmp[: width * blk],
            s["recv_from"][k],
            TAG,
            tmp[skips[k] * blk : skips[k + 1] * blk],
            s["send_to"][k],
            TAG,
        )
    split = (p - rank) * blk
    out[rank * blk :] = tmp[:split]
    out[: rank * blk] = tmp[split:]
    return recvbuf


def allgatherv(
    sendbuf,
    recvbuf: np.ndarray,
    counts,
    comm: MPI.Comm | None = None,
    *,
    displs=None,
    blocks: int | None = None,
):
    """MPI_Allgatherv (Algorithm 9 with the x-adjustment): rank j's `counts[j]` elements land at
    element `displs[j]` of `recvbuf` (default: packed in rank order). All p broadcasts run at once
    in blocks - 1 + ceil(log2 p) rounds; one round packs one block of every buffer.
    `sendbuf` may be ``MPI.IN_PLACE``."""
    comm = _comm(comm)
    c = state(comm)["comm"]
    p, rank = c.Get_size(), c.Get_rank()
    out = _bytes(recvbuf, "recvbuf", writable=True)
    try:
        counts = np.array(counts, dtype=np.int64).reshape(-1)
        displs = None if displs is None else np.array(displs, dtype=np.int64).reshape(-1)
    except (TypeError, ValueError, OverflowError) as e:
        raise BadInput(f"counts and displs must be sequences of integers ({e})") from None
    if counts.size != p or (counts < 0).any():
        raise BadInput(f"counts must be {p} non-negative integers, got {counts.tolist()}")
    if displs is None:
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        if recvbuf.size != counts.sum():
            raise BadInput(f"recvbuf has {recvbuf.size} elements, sum(counts) = {counts.sum()}")
    else:
        if displs.size != p or (displs < 0).any():
            raise BadInput(f"displs must be {p} non-negative integers, got {displs.tolist()}")
        if (displs + counts).max() > recvbuf.size:
            raise BadInput(
                f"recvbuf has {recvbuf.size} elements, displs + counts need {(displs + counts).max()}"
            )
    item = recvbuf.itemsize
    offs, sizes = displs * item, counts * item
    mine = out[offs[rank] : offs[rank] + sizes[rank]]
    if sendbuf is not MPI.IN_PLACE:
        own = _bytes(sendbuf, "sendbuf", writable=False)
        if sendbuf.dtype != recvbuf.dtype or sendbuf.size != counts[rank]:
            raise BadInput(
                f"sendbuf has {sendbuf.size} x {sendbuf.dtype}, counts[{rank}] = {counts[rank]}"
                f" x {recvbuf.dtype}"
            )
        mine[:] = own
    if blocks is not None:
        plan.check_blocks(blocks)
    total = int(sizes.sum())
    if p == 1 or total == 0:
        return recvbuf
    n = _blocks(blocks, comm, p, total)
    # bounds[j, b]: absolute byte offset in recvbuf of block b of rank j's part
    bounds = offs[:, None] + (np.arange(n + 1, dtype=np.int64)[None, :] * sizes[:, None]) // n
    for t, sb, f, rb in plan.allgatherv_rounds(p, rank, n):
        sj = np.flatnonzero(sb >= 0)
        rj = np.flatnonzero(rb >= 0)
        if sj.size:
            lo, hi = bounds[sj, sb[sj]], bounds[sj, sb[sj] + 1]
            send = np.concatenate([out[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])
        if rj.size:
            rlo, rhi = bounds[rj, rb[rj]], bounds[rj, rb[rj] + 1]
            recv = np.empty(int((rhi - rlo).sum()), dtype=np.uint8)
        c.Sendrecv(
            send if sj.size else None,
            t if sj.size else MPI.PROC_NULL,
            TAG,
            recv if rj.size else None,
            f if rj.size else MPI.PROC_NULL,
            TAG,
        )
        if rj.size:
            pos = 0
            for a, b in zip(rlo.tolist(), rhi.tolist(), strict=True):
                out[a:b] = recv[pos : pos + b - a]
                pos += b - a
    return recvbuf


def allreduce(sendbuf, recvbuf: np.ndarray, op=None, comm: MPI.Comm | None = None):
    """MPI_Allreduce by census (Algorithm 8, line 3 with k): ceil(log2 p) rounds of the full
    vector; `op` (default ``MPI.SUM``) must be commutative. Every rank combines in its own order,
    so floating-point results agree with the library's only to rounding.
    `sendbuf` may be ``MPI.IN_PLACE``."""
    comm = _comm(comm)
    op = MPI.SUM if op is None else op
    if not isinstance(op, MPI.Op) or op == MPI.OP_NULL:
        raise BadInput(f"op must be an mpi4py MPI.Op, got {op!r}")
    if not op.is_commutative:
        raise BadInput("the census allreduce needs a commutative op")
    c = state(comm)["comm"]
    p, rank = c.Get_size(), c.Get_rank()
    _bytes(recvbuf, "recvbuf", writable=True)
    if sendbuf is MPI.IN_PLACE:
        x = recvbuf.reshape(-1).copy()
    else:
        _bytes(sendbuf, "sendbuf", writable=False)
        if sendbuf.dtype != recvbuf.dtype or sendbuf.size != recvbuf.size:
            raise BadInput(
                f"sendbuf has {sendbuf.size} x {sendbuf.dtype}, recvbuf {recvbuf.size} x {recvbuf.dtype}"
            )
        x = sendbuf.reshape(-1).copy()
    result = recvbuf.reshape(-1)
    if p == 1 or x.size == 0:
        result[:] = x
        return recvbuf
    skips = plan.schedule(p, rank, 0)["skips"]
    acc = None  # S: the combination of the next skips[k+1] - 1 ranks' values, excluding x
    got = np.empty_like(x)
    for k in range(len(skips) - 1):
        if 2 * skips[k] > skips[k + 1]:  # skips[k+1] odd: pass S one rank closer
            t, f = (rank - skips[k] + 1) % p, (rank + skips[k] - 1) % p
            outgoing = acc
        else:
            t, f = (rank - skips[k]) % p, (rank + skips[k]) % p
            outgoing = x.copy()
            if acc is not None:
                op.Reduce_local(acc, outgoing)
        c.Sendrecv(outgoing, t, TAG, got, f, TAG)
        if acc is None:
            acc = got.copy()
        else:
            op.Reduce_local(got, acc)
    op.Reduce_local(x, acc)
    result[:] = acc
    return recvbuf
