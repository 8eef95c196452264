"""Run under ``mpiexec -n P python -m mpi4py tests/mpi/check_collectives.py``: many cases of
collsynth.mpi's collectives against the MPI library's own, in one launch. Rank 0 prints every
rank's failures and ``ok: P ranks`` if there were none; the exit status is 1 on failure."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from mpi_report import finish  # noqa: E402

from collsynth import BadInput, mpi  # noqa: E402
from collsynth.mpi import MPI  # noqa: E402

comm = mpi.comm_world()
P, RANK = comm.Get_size(), comm.Get_rank()
Q = (P - 1).bit_length()
BLOCKS = [None, *sorted({1, 2, 3, Q + 1, 2 * Q + 3, 64})]
failures: list[str] = []


def same_bytes(ours: np.ndarray, lib: np.ndarray, what: str) -> None:
    a, b = ours.reshape(-1).view(np.uint8), lib.reshape(-1).view(np.uint8)
    if a.shape != b.shape or not np.array_equal(a, b):
        bad = np.flatnonzero(a != b)[:5] if a.shape == b.shape else "shape"
        failures.append(f"rank {RANK}: {what}: differs from the library at bytes {bad}")


def random(rng, dtype, count) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(count).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=count, endpoint=True, dtype=dtype)


def check_bcast(c, label: str) -> None:
    p, rank = c.Get_size(), c.Get_rank()
    for dtype, count in [(np.uint8, 0), (np.uint8, 1), (np.int32, 5), (np.uint8, 17), (np.float64, 100),
                         (np.int16, 1001), (np.uint8, 3001)]:  # fmt: skip
        for root in range(p):
            for blocks in BLOCKS:
                rng = np.random.default_rng([count, root, 1])
                data = random(rng, dtype, count)
                ours = data.copy()
                if rank != root:
                    ours.view(np.uint8)[:] = 0x5A  # garbage that the broadcast must overwrite
                lib = data.copy() if rank == root else np.zeros(count, dtype=dtype)
                mpi.bcast(ours, root, c, blocks=blocks)
                c.Bcast(lib, root)
                same_bytes(
                    ours, lib, f"{label} bcast {count} x {np.dtype(dtype)} root {root} blocks {blocks}"
                )


def check_bcast_2d() -> None:
    data = np.arange(7 * 3, dtype=np.float32).reshape(7, 3) * (1.5 if RANK == P - 1 else 0)
    lib = data.copy()
    mpi.bcast(data, P - 1, comm, blocks=4)
    comm.Bcast(lib, P - 1)
    same_bytes(data, lib, "bcast 2-d float32")


def check_allgather() -> None:
    for dtype, count in [(np.uint8, 0), (np.int64, 1), (np.uint8, 7), (np.float64, 100)]:
        rng = np.random.default_rng([count, RANK, 2])
        mine = random(rng, dtype, count)
        ours = np.zeros(count * P, dtype=dtype)
        lib = np.zeros(count * P, dtype=dtype)
        mpi.allgather(mine, ours, comm)
        comm.Allgather(mine, lib)
        same_bytes(ours, lib, f"allgather {count} x {np.dtype(dtype)}")
    inplace = np.zeros(3 * P, dtype=np.int32)
    inplace[3 * RANK : 3 * RANK + 3] = RANK + 1
    expect = np.repeat(np.arange(1, P + 1, dtype=np.int32), 3)
    mpi.allgather(MPI.IN_PLACE, inplace, comm)
    same_bytes(inplace, expect, "allgather IN_PLACE")


def counts_patterns(rng) -> list[list[int]]:
    return [
        [0] * P,
        [5 if r == P - 1 else 0 for r in range(P)],
        [int(c) for c in rng.integers(0, 20, P)],
        [(r % 3) * 7 for r in range(P)],  # the paper's irregular pattern, with zeros
        [int(c) for c in rng.integers(200, 600, P)],
    ]


def check_allgatherv() -> None:
    rng = np.random.default_rng(3)  # same counts on every rank
    for ci, counts in enumerate(counts_patterns(rng)):
        for dtype in (np.uint8, np.float64):
            for blocks in BLOCKS:
                total = sum(counts)
                mine = random(np.random.default_rng([RANK, ci, 4]), dtype, counts[RANK])
                ours = np.zeros(total, dtype=dtype)
                lib = np.zeros(total, dtype=dtype)
                mpi.allgatherv(mine, ours, counts, comm, blocks=blocks)
                comm.Allgatherv(mine, [lib, counts])
                same_bytes(ours, lib, f"allgatherv counts {counts} {np.dtype(dtype)} blocks {blocks}")
    # explicit displacements with gaps, in reverse rank order; and IN_PLACE
    counts = [r + 1 for r in range(P)]
    displs = [sum(counts[r + 1 :]) + 2 * (P - 1 - r) for r in range(P)]
    size = max(d + c for d, c in zip(displs, counts, strict=True))
    mine = np.full(counts[RANK], RANK + 10, dtype=np.int32)
    ours = np.full(size, -1, dtype=np.int32)
    lib = np.full(size, -1, dtype=np.int32)
    mpi.allgatherv(mine, ours, counts, comm, displs=displs, blocks=3)
    comm.Allgatherv(mine, [lib, counts, displs, MPI.INT32_T])
    same_bytes(ours, lib, "allgatherv with displs")
    inplace = lib.copy()
    inplace[:] = -1
    inplace[displs[RANK] : displs[RANK] + counts[RANK]] = RANK + 10
    mpi.allgatherv(MPI.IN_PLACE, inplace, counts, comm, displs=displs)
    same_bytes(inplace, lib, "allgatherv IN_PLACE")


def check_allreduce() -> None:
    cases = [(np.int64, MPI.SUM), (np.int32, MPI.MAX), (np.int16, MPI.MIN), (np.uint8, MPI.BXOR),
             (np.int64, MPI.BOR), (np.int32, MPI.PROD)]  # fmt: skip
    for count in (0, 1, 10, 1000):
        for dtype, op in cases:
            rng = np.random.default_rng([RANK, count, 5])
            x = rng.integers(-3, 4, count).astype(dtype) if op == MPI.PROD else random(rng, dtype, count)
            ours, lib = np.zeros_like(x), np.zeros_like(x)
            mpi.allreduce(x, ours, op, comm)
            comm.Allreduce(x, lib, op)
            same_bytes(ours, lib, f"allreduce {count} x {np.dtype(dtype)} {op}")
        for dtype in (np.float64, np.float32):
            x = random(np.random.default_rng([RANK, count, 6]), dtype, count)
            ours, lib = np.zeros_like(x), np.zeros_like(x)
            mpi.allreduce(x, ours, MPI.SUM, comm)
            comm.Allreduce(x, lib, MPI.SUM)
            if not np.allclose(ours, lib, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5):
                failures.append(f"rank {RANK}: allreduce {count} x {np.dtype(dtype)} SUM not close")
    y = np.full(4, RANK + 1, dtype=np.int64)
    mpi.allreduce(MPI.IN_PLACE, y, MPI.SUM, comm)
    same_bytes(y, np.full(4, P * (P + 1) // 2, dtype=np.int64), "allreduce IN_PLACE")


def check_bad_input() -> None:
    def expect_bad(what, fn):
        try:
            fn()
        except BadInput:
            return
        except Exception as e:  # noqa: BLE001
            failures.append(f"rank {RANK}: {what}: raised {type(e).__name__}: {e}, not BadInput")
            return
        failures.append(f"rank {RANK}: {what}: no BadInput")

    a = np.zeros(4, dtype=np.int32)
    expect_bad("allgather recvbuf too small", lambda: mpi.allgather(a, np.zeros(4 * P + 1, np.int32), comm))
    expect_bad("allgather dtype mismatch", lambda: mpi.allgather(a, np.zeros(4 * P, np.int64), comm))
    expect_bad(
        "allgatherv counts length", lambda: mpi.allgatherv(a, np.zeros(4, np.int32), [4] * (P + 1), comm)
    )
    expect_bad("allgatherv sendbuf size", lambda: mpi.allgatherv(a, np.zeros(5 * P, np.int32), [5] * P, comm))
    expect_bad(
        "allgatherv recvbuf size", lambda: mpi.allgatherv(a, np.zeros(4 * P + 1, np.int32), [4] * P, comm)
    )
    expect_bad("allgatherv negative count", lambda: mpi.allgatherv(a, a, [-1] * P, comm))
    expect_bad("allreduce size mismatch", lambda: mpi.allreduce(a, np.zeros(5, np.int32), MPI.SUM, comm))
    expect_bad("allreduce not an op", lambda: mpi.allreduce(a, a.copy(), "sum", comm))
    expect_bad("bcast root out of range", lambda: mpi.bcast(a, P, comm))
    expect_bad("bcast non-contiguous", lambda: mpi.bcast(np.zeros((4, 4))[:, 0], 0, comm))
    expect_bad("bcast list", lambda: mpi.bcast([1, 2], 0, comm))
    expect_bad("bcast blocks=0", lambda: mpi.bcast(np.zeros(8), 0, comm, blocks=0))
    expect_bad("set_model alpha<=0", lambda: mpi.set_model(comm, 0, 1e-3))


def check_model_and_isolation() -> None:
    first = mpi.model(comm)
    if mpi.model(comm) != first or first["alpha_us"] <= 0 or first["beta_us_per_byte"] <= 0:
        failures.append(f"rank {RANK}: model not cached or not positive: {first}")
    everyone = comm.allgather(first)
    if any(m != first for m in everyone):
        failures.append(f"rank {RANK}: ranks disagree on the model: {everyone}")
    if P > 1:  # a user message pending on comm must not be taken by our collective
        req = comm.Isend(np.array([42], dtype=np.int64), 1, 7) if RANK == 0 else None
        buf = np.arange(10, dtype=np.int64) if RANK == 0 else np.zeros(10, dtype=np.int64)
        mpi.bcast(buf, 0, comm, blocks=2)
        same_bytes(buf, np.arange(10, dtype=np.int64), "bcast with a user message pending")
        if RANK == 1:
            got = np.zeros(1, dtype=np.int64)
            comm.Recv(got, 0, 7)
            if got[0] != 42:
                failures.append(f"rank {RANK}: user message corrupted: {got}")
        if req is not None:
            req.Wait()


def main() -> int:
    check_model_and_isolation()
    check_bcast(comm, "world")
    sub = comm.Split(RANK % 2, -RANK)  # reversed order inside each half
    check_bcast(sub, f"split({RANK % 2})")
    sub.Free()
    check_bcast_2d()
    check_allgather()
    check_allgatherv()
    check_allreduce()
    check_bad_input()
    return finish(comm, failures)


sys.exit(main())
