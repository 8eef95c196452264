"""nccl-tests' conventions: the size sweep `-b MIN -e MAX -f FACTOR` (K, M, G are powers of 1024
there) and its result lines (size, count, type, redop, root, then time, algbw, busbw, #wrong for
out-of-place and in-place). The rules (sizes, count, busbw factor) are the core's; this module
only lays them out as nccl-tests prints them (nccl-tests src/util.cu `writeBenchmarkLine*`)."""

from __future__ import annotations

import math

from collsynth import _core

# numpy dtype name -> (nccl-tests' type name, element bytes)
TYPES = {"float32": ("float", 4), "float64": ("double", 8), "int32": ("int32", 4)}
# nccl-tests' defaults for -b and -e (src/common.cu); our -f defaults to 2 (nccl-tests' 1 means
# "step by -i bytes", which we do not offer)
DEFAULT_BYTES = "32M"


def sweep(minbytes: str | None, maxbytes: str | None, factor: int) -> list[int]:
    """The sizes of `-b minbytes -e maxbytes -f factor`, in bytes (BadInput naming the problem)."""
    from collsynth import _args

    lo = DEFAULT_BYTES if minbytes is None else _args.text("minbytes", minbytes)
    hi = DEFAULT_BYTES if maxbytes is None else _args.text("maxbytes", maxbytes)
    return _core.nccl_tests_sizes(lo, hi, _args.whole("factor", factor, hi=2**64 - 1))


def redop(collective: str) -> str:
    return "sum" if collective in ("allreduce", "reduce-scatter", "reduce") else "none"


def float_str(value: float | None, width: int) -> str:
    """A number in `width` characters, with as many decimals as fit (nccl-tests' getFloatStr)."""
    if value is None or not math.isfinite(value):
        return f"{'N/A':>{width}}"
    power = 0
    val = 1
    while value >= val:
        power += 1
        val *= 10
    if power < width - 2:
        return f"{value:{width}.2f}"
    if power < width - 1:
        return f"{value:{width}.1f}"
    if power < width + 1:
        return f"{value:{width}.0f}"
    return f"{value:{width}.1e}"


_HEADER = (
    f"# {'':>10}  {'':>12}  {'':>8}  {'':>6}  {'':>6}           out-of-place                       in-place\n"
    f"# {'size':>10}  {'count':>12}  {'type':>8}  {'redop':>6}  {'root':>6}"
    + f"  {'time':>7}  {'algbw':>6}  {'busbw':>6}  {'#wrong':>6}" * 2
    + "\n"
    + f"# {'(B)':>10}  {'(elements)':>12}  {'':>8}  {'':>6}  {'':>6}"
    + f"  {'(us)':>7}  {'(GB/s)':>6}  {'(GB/s)':>6}  {'':>6}" * 2
)
HEADER = "\n".join(h.rstrip() for h in _HEADER.splitlines())


def half(time_us: float | None, algbw: float | None, busbw: float | None, wrong: int | None) -> str:
    """One of the two halves of a line: time, algbw, busbw, #wrong (N/A when not measured)."""
    w = f"{'N/A':>6}" if wrong is None else f"{wrong:>6}"
    return f"  {float_str(time_us, 7)}  {float_str(algbw, 6)}  {float_str(busbw, 6)}  {w}"


def line(collective: str, n: int, size: int, dtype: str, root: int | None, out: str, inp: str) -> str:
    """A result line: the size that ran, the count as nccl-tests derives it, then both halves."""
    name, elt = TYPES[dtype]
    count = _core.nccl_tests_count(collective, size, elt, n)[1]
    r = -1 if root is None else root
    return f"{size:>12}  {count:>12}  {name:>8}  {redop(collective):>6}  {r:>6}{out}{inp}"
