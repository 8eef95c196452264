"""Per-communicator state: a private duplicate (so our point-to-point traffic can never match a
user's messages) and the alpha-beta model, measured once and cached as an MPI attribute of the
user's communicator (it goes away with the communicator)."""

from __future__ import annotations

import time
from typing import cast

import numpy as np
from mpi4py import MPI

from collsynth._core import BadInput

_KEYVAL: int | None = None
# Ping-pong parameters of the one-time measurement between ranks 0 and 1.
SMALL_BYTES = 8
LARGE_BYTES = 1 << 20
REPEATS = 10


def _keyval() -> int:
    global _KEYVAL
    if _KEYVAL is None:
        _KEYVAL = MPI.Comm.Create_keyval()
    return _KEYVAL


def state(comm: MPI.Comm) -> dict:
    """{"comm": private duplicate, "alpha_us": ..., "beta_us_per_byte": ...} for `comm`.
    The first call on a communicator is collective (it duplicates it)."""
    if not isinstance(comm, MPI.Comm) or comm == MPI.COMM_NULL:
        raise BadInput(f"comm must be an mpi4py communicator, got {comm!r}")
    if comm.Is_inter():
        raise BadInput("intercommunicators are not supported")
    st = cast("dict | None", comm.Get_attr(_keyval()))  # only ever our dict, set below
    if st is None:
        st = {"comm": comm.Dup(), "alpha_us": None, "beta_us_per_byte": None}
        comm.Set_attr(_keyval(), st)
    return st


def _pingpong(comm: MPI.Comm, nbytes: int) -> float:
    """Best one-way time in microseconds between ranks 0 and 1 (others return 0)."""
    buf = np.zeros(nbytes, dtype=np.uint8)
    best = float("inf")
    rank = comm.Get_rank()
    for _ in range(REPEATS):
        if rank == 0:
            t0 = time.perf_counter()
            comm.Send(buf, 1, 0)
            comm.Recv(buf, 1, 0)
            best = min(best, (time.perf_counter() - t0) * 1e6 / 2)
        elif rank == 1:
            comm.Recv(buf, 0, 0)
            comm.Send(buf, 0, 0)
    return best if rank == 0 else 0.0


def measure(comm: MPI.Comm) -> tuple[float, float]:
    """Collective: ping-pong between ranks 0 and 1 with SMALL_BYTES and LARGE_BYTES messages;
    alpha = small one-way time, beta = the slope; rank 0's values are broadcast to all."""
    st = state(comm)
    dup = st["comm"]
    vals = np.array([1.0, 1e-3])
    if dup.Get_size() > 1:
        small = _pingpong(dup, SMALL_BYTES)
        large = _pingpong(dup, LARGE_BYTES)
        if dup.Get_rank() == 0:
            alpha = max(small, 1e-3)
            beta = max((large - small) / (LARGE_BYTES - SMALL_BYTES), 1e-9)
            vals = np.array([alpha, beta])
        dup.Bcast(vals, 0)
    return float(vals[0]), float(vals[1])


def model(comm: MPI.Comm) -> dict:
    """The cached alpha-beta model of `comm` (measured on first use: collective)."""
    st = state(comm)
    if st["alpha_us"] is None:
        st["alpha_us"], st["beta_us_per_byte"] = measure(comm)
    return {"alpha_us": st["alpha_us"], "beta_us_per_byte": st["beta_us_per_byte"]}


def set_model(comm: MPI.Comm, alpha_us: float, beta_us_per_byte: float) -> None:
    """Use these alpha (microseconds) and beta (microseconds per byte) for `comm` instead of
    measuring. Every rank must pass the same values (the block count must agree)."""
    for name, v in (("alpha_us", alpha_us), ("beta_us_per_byte", beta_us_per_byte)):
        if not isinstance(v, (int, float)) or not np.isfinite(v) or v <= 0:
            raise BadInput(f"{name} must be a positive number, got {v!r}")
    st = state(comm)
    st["alpha_us"], st["beta_us_per_byte"] = float(alpha_us), float(beta_us_per_byte)
