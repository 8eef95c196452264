"""A slow, obviously-correct pure-Python reference of the circulant-schedule functions that
``collsynth._core`` exposes (Träff 2022, with the corrections docs/circulant.md lists).

Test oracle only: the package always calls the Rust functions, and a missing Rust function
fails the tests (nothing here stands in for the core).
"""

from __future__ import annotations

import math


def skips(p: int) -> list[int]:
    """Algorithm 1: skips[k] = ceil(p / 2^(q-k)), k = 0..q."""
    q = (p - 1).bit_length()
    return [-(-p // (1 << (q - k))) for k in range(q + 1)]


def baseblock(p: int, r: int) -> int:
    """Algorithm 2 (0 < r < p)."""
    s = skips(p)
    k = len(s) - 1
    while r != s[k]:
        k -= 1
        if s[k] < r:
            r -= s[k]
    return k


def rangeblocks(p: int, a: int, b: int) -> set[int]:
    """Brute-force reference semantics (§4.3): baseblocks of the cyclic range [a, b], root excluded."""
    return {baseblock(p, j % p) for j in range(a, b + 1) if j % p != 0}


def recvsched(p: int, r: int) -> list[int]:
    """Algorithm 4 with errata 3-5: B starts as {baseblock(r)}, entries 0..q-1, max tie-break."""
    s = skips(p)
    q = len(s) - 1
    bb = baseblock(p, r) if r > 0 else None
    have = {bb} if r > 0 else set()
    out = []
    for i in range(q):
        if s[i] <= r < s[i + 1]:
            out.append(bb)
            continue
        if i == 0:
            b = baseblock(p, (r - 1 + p) % p)
        elif i < q - 1:
            new = rangeblocks(p, r - s[i + 1] + 1, r - s[i]) - have
            if not new:
                new = rangeblocks(p, r - sum(s[: i + 1]), r - s[i + 1]) - have
            b = max(new)
        else:
            (b,) = set(range(q)) - have
        have.add(b)
        out.append(b - q)
    return out


def sendsched(p: int, r: int) -> list[int]:
    """Algorithm 5 (erratum 6: the to-processor mod p)."""
    s = skips(p)
    return [recvsched(p, (r + s[i]) % p)[i] for i in range(len(s) - 1)]


def circulant_schedule(p: int, rank: int, root: int = 0) -> dict:
    s = skips(p)
    q = len(s) - 1
    v = (rank - root) % p
    return {
        "q": q,
        "skips": s,
        "recv_blocks": recvsched(p, v) if p > 1 else [],
        "send_blocks": sendsched(p, v) if p > 1 else [],
        "recv_from": [(rank - s[k]) % p for k in range(q)],
        "send_to": [(rank + s[k]) % p for k in range(q)],
    }


def circulant_rounds(p: int, n: int) -> int:
    """n - 1 + ceil(log2 p); 0 for p = 1 (nothing to do)."""
    return 0 if p == 1 else n - 1 + (p - 1).bit_length()


def circulant_blocks(p: int, size_bytes: int, alpha_us: float, beta_us_per_byte: float) -> int:
    """Theorem 2: n* = sqrt((q - 1) beta m / alpha), rounded, clamped to [1, max(1, m)]."""
    q = (p - 1).bit_length()
    if q <= 1 or size_bytes <= 0 or alpha_us <= 0:
        return 1
    n = round(math.sqrt((q - 1) * beta_us_per_byte * size_bytes / alpha_us))
    return max(1, min(n, size_bytes))
