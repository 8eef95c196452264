"""Round plans for the circulant collectives: which block goes to and comes from whom in each
round. Pure Python over the Rust schedules (``collsynth._core.circulant_schedule``); no MPI here,
so the plans can be simulated for every rank in one process (tests/test_mpi.py does).

The shifting is the paper's Algorithm 6 (lines 4-12 and 21-22), with our fixes
(the errata 9 and 10 of docs/circulant.md):

- x = (-(n - 1)) mod q empty first rounds; entry k starts at ``v - x + q`` if k < x else ``v - x``
  and grows by q each time round k of a phase comes around;
- a negative block is neither sent nor received; a block > n - 1 is block n - 1;
- the root of a broadcast receives nothing and nobody sends to it (both sides skip, so every send
  still meets its receive);
- allgatherv runs the p broadcasts (root j = every rank) at once on the same edges.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from collsynth import _core
from collsynth._core import BadInput


def n_rounds_per_phase(p: int) -> int:
    """q = ceil(log2 p); 0 for p = 1."""
    return (p - 1).bit_length()


@lru_cache(maxsize=4096)
def schedule(p: int, rank: int, root: int = 0) -> dict:
    """The Rust schedule of `rank` for a broadcast from `root` (cached; lists become tuples)."""
    s = _core.circulant_schedule(p, rank, root)
    return {key: tuple(v) if isinstance(v, list) else v for key, v in s.items()}


@lru_cache(maxsize=64)
def all_roots(p: int, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """(recv, send): arrays of shape (p, q), row j = `rank`'s relative blocks when j is the root."""
    q = n_rounds_per_phase(p)
    recv = np.empty((p, q), dtype=np.int64)
    send = np.empty((p, q), dtype=np.int64)
    for j in range(p):
        s = schedule(p, rank, j)
        recv[j] = s["recv_blocks"]
        send[j] = s["send_blocks"]
    recv.flags.writeable = False
    send.flags.writeable = False
    return recv, send


def clear_cache() -> None:
    """Forget computed schedules (the benchmark clears them so that timings include them)."""
    schedule.cache_clear()
    all_roots.cache_clear()


def choose_blocks(p: int, nbytes: int, alpha_us: float, beta_us_per_byte: float) -> int:
    """Theorem 2's block count from the Rust core, clamped to [1, max(1, nbytes)]."""
    if p <= 1 or nbytes <= 0:
        return 1
    n = int(_core.circulant_blocks(p, nbytes, alpha_us, beta_us_per_byte))
    return max(1, min(n, nbytes))


def check_blocks(blocks) -> int:
    if isinstance(blocks, bool) or not isinstance(blocks, (int, np.integer)) or blocks < 1:
        raise BadInput(f"blocks must be a positive integer, got {blocks!r}")
    return int(blocks)


def _shift(values, x: int, q: int) -> np.ndarray:
    v = np.asarray(values, dtype=np.int64) - x
    v[..., :x] += q
    return v


def bcast_rounds(p: int, rank: int, root: int, n: int) -> list[tuple[int, int, int, int]]:
    """The n - 1 + q rounds of an n-block broadcast for `rank`: (send_to, send_block, recv_from,
    recv_block) with absolute blocks in [0, n) or -1 for nothing."""
    if p <= 1:
        return []
    s = schedule(p, rank, root)
    q = s["q"]
    x = (-(n - 1)) % q
    recv = _shift(s["recv_blocks"], x, q)
    send = _shift(s["send_blocks"], x, q)
    rounds = []
    for i in range(x, x + n - 1 + q):
        k = i % q
        sb, rb = int(send[k]), int(recv[k])
        send[k] += q
        recv[k] += q
        t, f = s["send_to"][k], s["recv_from"][k]
        if t == root:
            sb = -1
        if rank == root:
            rb = -1
        rounds.append((t, min(sb, n - 1), f, min(rb, n - 1)))
    return rounds


def allgatherv_rounds(p: int, rank: int, n: int):
    """The n - 1 + q rounds of Algorithm 9 for `rank`: (send_to, send_blocks, recv_from,
    recv_blocks), the block arrays of length p indexed by buffer (root) j, -1 for nothing."""
    if p <= 1:
        return []
    q = n_rounds_per_phase(p)
    s0 = schedule(p, rank, 0)
    recv_all, send_all = all_roots(p, rank)
    x = (-(n - 1)) % q
    recv = _shift(recv_all, x, q)
    send = _shift(send_all, x, q)
    rounds = []
    for i in range(x, x + n - 1 + q):
        k = i % q
        sb = np.minimum(send[:, k], n - 1)
        rb = np.minimum(recv[:, k], n - 1)
        send[:, k] += q
        recv[:, k] += q
        t, f = s0["send_to"][k], s0["recv_from"][k]
        sb[t] = -1  # t is the root of its own buffer: it receives nothing into it
        rb[rank] = -1
        rounds.append((t, sb, f, rb))
    return rounds


def block_bounds(nbytes: int, n: int) -> np.ndarray:
    """Byte offsets of the n blocks of an nbytes buffer: block b is [bounds[b], bounds[b+1])."""
    return (np.arange(n + 1, dtype=np.int64) * nbytes) // n
