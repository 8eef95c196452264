"""Plots from result rows (matplotlib, written atomically)."""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from collsynth._core import BadInput  # noqa: E402
from collsynth.fileio import atomic_write  # noqa: E402


def plot_compare(rows: list[dict], output: str, title: str) -> None:
    """Time vs size (log-log): one curve per algorithm by the calibrated runtime model
    (`runtime_time_us`), with the time bound (`time_bound_us`, the same model's effective
    links) and the raw bandwidth bound (size / bound algbw)."""
    suffix = Path(output).suffix.lower()
    if suffix not in (".png", ".svg"):
        raise BadInput(f"{output}: plots are written as .png or .svg")
    by_alg: dict[str, list[tuple[float, float]]] = defaultdict(list)
    bound: dict[float, float] = {}
    time_bound: dict[float, float] = {}
    for r in rows:
        by_alg[r["algorithm"]].append((r["size_bytes"], r["runtime_time_us"]))
        # the bandwidth bound on the bytes the times are for (nccl-tests' trim, contracts.md)
        bound[r["size_bytes"]] = r["size_moved_bytes"] / r["bound_algbw_GBps"] / 1e3
        time_bound[r["size_bytes"]] = r["time_bound_us"]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for alg, pts in sorted(by_alg.items()):
        pts.sort()
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker="o", label=alg)
    xs = sorted(bound)
    ax.loglog(xs, [time_bound[x] for x in xs], "k-", linewidth=2.5, label="time bound")
    ax.loglog(xs, [bound[x] for x in xs], "k--", label="bandwidth bound (raw links)")
    ax.set_xlabel("size M (bytes)")
    ax.set_ylabel("time (us, runtime model)")
    ax.set_title(title, parse_math=False)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=suffix[1:], dpi=120)
    plt.close(fig)
    atomic_write(output, buf.getvalue())
