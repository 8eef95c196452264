"""Drawing a topology with matplotlib: groups (boxes, clusters) as framed regions, switches
as squares, link bandwidth as colour (with a legend) and, on small graphs, as labels. A schedule
is drawn over its topology: every link direction that carries bytes as an arrow whose colour and
width grow with its load (the core's exact link loads), idle links thin and grey; with a shard
or a step chosen, a second panel draws the transfers the core selects for it as arrows along
their routes (through switches), one colour per piece (a shard's trees) or per shard (a step),
reductions dashed, each transfer labelled with its level in the DAG."""

from __future__ import annotations

import io
import math
import re
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

from collsynth._core import BadInput  # noqa: E402
from collsynth.fileio import atomic_write  # noqa: E402

GRID = re.compile(r"^(torus|mesh|twisted-torus):(\d+)x(\d+)(,|$)")


def _circle(names: list[str], cx: float, cy: float, r: float) -> dict[str, tuple[float, float]]:
    n = max(len(names), 1)
    return {
        name: (
            cx + r * math.cos(2 * math.pi * i / n + math.pi / 2),
            cy + r * math.sin(2 * math.pi * i / n + math.pi / 2),
        )
        for i, name in enumerate(names)
    }


def _layout(
    topo,
) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float, float, float]]]:
    """Node positions and group frames (x, y, w, h)."""
    nodes = topo.nodes
    grid = GRID.match(topo.name)
    if grid:
        w = int(grid.group(2))
        return {n.name: (n.rank % w, -(n.rank // w)) for n in nodes}, {}
    groups: dict[str | None, list] = defaultdict(list)
    for n in nodes:
        groups[n.group].append(n)
    boxed = [g for g in groups if g is not None]
    pos: dict[str, tuple[float, float]] = {}
    frames: dict[str, tuple[float, float, float, float]] = {}
    if not boxed:
        compute = [n.name for n in nodes if n.type == "compute"]
        switches = [n.name for n in nodes if n.type == "switch"]
        pos.update(_circle(compute, 0, 0, max(2.0, len(compute) / 4)))
        pos.update(_circle(switches, 0, 0, 0 if len(switches) == 1 else max(1.0, len(compute) / 8)))
        return pos, frames
    # The ranks a switch links to, either way: a NIC's halves (nicI.tx from its GPU, nicI.rx to it)
    # belong to one rank each.
    owners: dict[str, set[str]] = defaultdict(set)
    compute_names = {n.name for n in nodes if n.type == "compute"}
    for lk in topo.links:
        if lk.src in compute_names:
            owners[lk.dst].add(lk.src)
        if lk.dst in compute_names:
            owners[lk.src].add(lk.dst)
    per_row = min(len(boxed), 4)
    for i, g in enumerate(boxed):
        cx, cy = (i % per_row) * 7.5, -(i // per_row) * 7.5
        members = groups[g]
        compute = [n.name for n in members if n.type == "compute"]
        pos.update(_circle(compute, cx, cy, 2.0))
        # Switches serving one rank of the box (a NIC's halves) sit just outside that rank, side
        # by side; the others (NVSwitch, CPUs, PCIe switches) go to the centre.
        central = []
        beside: dict[str, list[str]] = defaultdict(list)
        for n in members:
            if n.type != "switch":
                continue
            ranks = owners.get(n.name, set()) & set(compute)
            if len(ranks) == 1:
                beside[next(iter(ranks))].append(n.name)
            else:
                central.append(n.name)
        for rank, names in beside.items():
            x, y = pos[rank]
            angle = math.atan2(y - cy, x - cx)
            for j, name in enumerate(names):
                a = angle + (j - (len(names) - 1) / 2) * 0.32
                pos[name] = (cx + 2.6 * math.cos(a), cy + 2.6 * math.sin(a))
        pos.update(_circle(central, cx, cy, 0 if len(central) == 1 else 0.9))
        frames[g] = (cx - 3.4, cy - 3.4, 6.8, 6.8)
    glob = groups.get(None, [])
    top = 4.6
    width = (per_row - 1) * 7.5
    for j, n in enumerate(glob):
        pos[n.name] = (width * (j + 1) / (len(glob) + 1) if len(glob) > 1 else width / 2, top)
    return pos, frames


def _switch_label(n) -> str:
    """A switch's name within its box, short and distinct: ``nic3 tx``, ``cpu1``, ``pci 0c:00.0``
    (a PCI bus id without the usual domain 0000)."""
    name = n.name.removeprefix(f"{n.group}.") if n.group else n.name
    if name.startswith("pci-"):
        name = "pci " + name[4:].removeprefix("0000:")
    return name.replace(".", " ") if name.startswith("nic") else name


def _suffix(output: str) -> str:
    suffix = Path(output).suffix.lower()
    if suffix not in (".svg", ".png"):
        raise BadInput(f"{output}: draw writes .svg or .png files")
    return suffix


def _save(fig, output: str, suffix: str) -> None:
    """Write the figure atomically; no date and a fixed id salt, so the same input gives the
    same bytes."""
    buf = io.BytesIO()
    metadata = {"Date": None} if suffix == ".svg" else {}
    with matplotlib.rc_context({"svg.hashsalt": "collsynth"}):
        fig.savefig(buf, format=suffix[1:], dpi=120, metadata=metadata)
    plt.close(fig)
    atomic_write(output, buf.getvalue())


def draw_topology(topo, output: str) -> None:
    """Render ``topo`` to ``output`` (.svg or .png), atomically."""
    suffix = _suffix(output)
    fig = _figure(topo, None)
    _save(fig, output, suffix)


def draw_schedule(sched, output: str, size: str = "1GiB", selection: tuple[str, int] | None = None) -> None:
    """Render ``sched`` over its topology to ``output`` (.svg or .png), atomically: link load at
    ``size`` as colour and width; with ``selection`` (("shard" | "step", K)), a second panel
    with the transfers of that shard or step."""
    suffix = _suffix(output)
    # the core checks K before anything is drawn
    picked = [] if selection is None else sched.transfers(**{selection[0]: selection[1]}, size=size)
    loads = {(x["src"], x["dst"]): x["bytes"] for x in sched.link_loads(size) if x["bytes"] > 0}
    topo = sched.topology
    fig, axes = _axes(topo, 1 if selection is None else 2)
    _draw(axes[0], topo, loads)
    axes[0].set_title(
        f"{sched.algorithm} {sched.collective} on {topo.name} (N={sched.n_ranks}), "
        f"{sched.steps} steps: bytes per link at {size}",
        parse_math=False,
    )
    if selection is not None:
        _draw(axes[1], topo, {})
        _selected_transfers(axes[1], _layout(topo)[0], picked, by=selection[0])
        axes[1].set_title(_selection_title(selection, picked), parse_math=False)
    fig.tight_layout()
    _save(fig, output, suffix)


def _selection_title(selection: tuple[str, int], picked: list[dict]) -> str:
    """What the selection panel shows, in one line."""
    kind, k = selection
    hops = sum(len(t["hops"]) for t in picked)
    levels = sorted({t["level"] for t in picked})
    span = f"levels {levels[0]}..{levels[-1]}" if levels else "no transfer"
    colour = "piece" if kind == "shard" else "shard"
    return (
        f"{kind} {k}: {len(picked)} transfers, {hops} link hops, {span} (colour per {colour}, reduce dashed)"
    )


def _selected_transfers(ax, pos, picked: list[dict], by: str) -> None:
    """Each hop of each picked transfer as an arrow (SVG id ``transfer-T-hop-H``): colour per
    piece (a shard's trees) or per shard (a step), width by bytes, reductions dashed, the
    transfer's level written on its last hop; repeated uses of one link bend further apart."""
    if not picked:
        return
    key = "piece" if by == "shard" else "shard"
    groups = sorted({t[key] for t in picked})
    cmap = plt.get_cmap("tab10")
    colour = {g: cmap(i % 10) for i, g in enumerate(groups)}
    top = max(t["bytes"] for t in picked) or 1.0
    uses: dict[tuple[str, str], int] = defaultdict(int)
    label = len(picked) <= 64
    for t in picked:
        for h, (src, dst) in enumerate(t["hops"]):
            j = uses[(src, dst)]
            uses[(src, dst)] += 1
            (x1, y1), (x2, y2) = pos[src], pos[dst]
            arrow = ax.annotate(
                "",
                xy=(x2, y2),
                xytext=(x1, y1),
                arrowprops=dict(
                    arrowstyle="-|>",
                    color=colour[t[key]],
                    lw=1.0 + 2.5 * t["bytes"] / top,
                    linestyle="--" if t["op"] == "reduce" else "-",
                    shrinkA=7,
                    shrinkB=7,
                    connectionstyle=f"arc3,rad={0.12 + 0.1 * j:.2f}",
                ),
                zorder=2,
            )
            arrow.arrow_patch.set_gid(f"transfer-{t['transfer']}-hop-{h}")
            if label and h == len(t["hops"]) - 1:
                ax.text(
                    x1 + 0.62 * (x2 - x1),
                    y1 + 0.62 * (y2 - y1),
                    str(t["level"]),
                    fontsize=7,
                    ha="center",
                    va="center",
                    color=colour[t[key]],
                    bbox=dict(fc="white", ec="none", alpha=0.8, pad=0.4),
                    zorder=5,
                )
    for g in groups[:10]:
        ax.plot([], [], color=colour[g], lw=2, label=f"{key} {g}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, framealpha=0.9)


def _load_links(ax, pos, loads: dict) -> None:
    """Each loaded link direction as a curved arrow (the two directions bend apart), colour and
    width by its share of the busiest link's load, with a colour bar in MB."""
    top = max(loads.values())
    cmap = plt.get_cmap("plasma_r")
    norm = matplotlib.colors.Normalize(vmin=0, vmax=top / 1e6)
    for (src, dst), load in sorted(loads.items()):
        (x1, y1), (x2, y2) = pos[src], pos[dst]
        ax.annotate(
            "",
            xy=(x2, y2),
            xytext=(x1, y1),
            arrowprops=dict(
                arrowstyle="-|>",
                color=cmap(norm(load / 1e6)),
                lw=0.8 + 4.0 * load / top,
                shrinkA=7,
                shrinkB=7,
                connectionstyle="arc3,rad=0.18",
            ),
            zorder=2,
        )
    mappable = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
    bar = plt.colorbar(mappable, ax=ax, location="bottom", shrink=0.5, pad=0.02)
    bar.set_label("MB over the link (whole collective)")


def _figure(topo, loads: dict | None):
    """The topology drawing alone; with ``loads`` ((src, dst) -> bytes), links drawn by load."""
    fig, (ax,) = _axes(topo, 1)
    _draw(ax, topo, loads)
    fig.tight_layout()
    return fig


def _axes(topo, panels: int):
    """A figure of ``panels`` drawings side by side."""
    w, h = (10, 8) if len(topo.nodes) <= 150 else (14, 12)
    fig, axes = plt.subplots(1, panels, figsize=(w * panels, h), squeeze=False)
    return fig, list(axes[0])


def _draw(ax, topo, loads: dict | None) -> None:
    """The topology drawing on ``ax``; with ``loads`` ((src, dst) -> bytes), links are drawn by
    load (idle ones thin and grey; ``{}``: every link thin and grey)."""
    pos, frames = _layout(topo)
    centres = {g: (x + w / 2, y + h / 2) for g, (x, y, w, h) in frames.items()}
    grid = GRID.match(topo.name) is not None
    nodes = topo.nodes
    big = len(nodes) > 150
    for g, (x, y, w, h) in frames.items():
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.1", fc="#f4f6fb", ec="#9aa6c0"))
        ax.text(x + 0.1, y + h - 0.1, g, fontsize=9, va="top", color="#44506a", parse_math=False)
    links = topo.links
    pairs = {(lk.src, lk.dst) for lk in links}
    bws = sorted({lk.bandwidth for lk in links})
    cmap = plt.get_cmap("viridis", max(len(bws), 2))
    colour = {bw: cmap(i) for i, bw in enumerate(bws)}
    widths = {bw: 0.8 + 2.2 * i / max(len(bws) - 1, 1) for i, bw in enumerate(bws)}
    label_links = len(links) <= 48
    if loads:
        _load_links(ax, pos, loads)
    for lk in links:
        both = (lk.dst, lk.src) in pairs
        if both and lk.src > lk.dst:
            continue
        (x1, y1), (x2, y2) = pos[lk.src], pos[lk.dst]
        style = "-" if both else "-|>"
        # Grid wrap-around links would hide behind the row: draw them as arcs.
        wrap = grid and abs(x1 - x2) + abs(y1 - y2) > 1
        ax.annotate(
            "",
            xy=(x2, y2),
            xytext=(x1, y1),
            arrowprops=dict(
                arrowstyle=style,
                color="#c8c8c8" if loads is not None else colour[lk.bandwidth],
                lw=0.6 if loads is not None else widths[lk.bandwidth],
                shrinkA=6,
                shrinkB=6,
                alpha=0.8,
                connectionstyle="arc3,rad=0.25" if wrap else "arc3",
            ),
        )
        if label_links and loads is None:
            ax.text(
                (x1 + x2) / 2,
                (y1 + y2) / 2,
                f"{float(lk.bandwidth):g}",
                fontsize=7,
                ha="center",
                va="center",
                bbox=dict(fc="white", ec="none", alpha=0.7, pad=0.5),
            )
    for n in nodes:
        x, y = pos[n.name]
        compute = n.type == "compute"
        ax.scatter(
            [x],
            [y],
            s=20 if big else 260,
            marker="o" if compute else "s",
            c="#e8743b" if compute else "#5b6b8c",
            zorder=3,
            edgecolors="black",
            linewidths=0.5,
        )
        if big:
            continue
        if compute:
            ax.text(
                x,
                y,
                str(n.rank),
                fontsize=7,
                ha="center",
                va="center",
                color="white",
                zorder=4,
                parse_math=False,
            )
        else:
            # Beside the square, away from its box's centre (or above a node outside any box): a
            # name longer than the square is wide never covers it or a neighbour's.
            cx, cy = centres.get(n.group, (x, y - 1.0))
            dx, dy = x - cx, y - cy
            norm = math.hypot(dx, dy) or 1.0
            dx, dy = (0.0, -1.0) if (dx, dy) == (0.0, 0.0) else (dx / norm, dy / norm)
            ax.text(
                x + 0.3 * dx,
                y + 0.3 * dy,
                _switch_label(n),
                fontsize=6,
                ha="left" if dx > 0.3 else "right" if dx < -0.3 else "center",
                va="bottom" if dy > 0.3 else "top" if dy < -0.3 else "center",
                color="#1f2a44",
                zorder=5,
                parse_math=False,
                bbox=dict(fc="white", ec="none", alpha=0.75, pad=0.3),
            )
    for bw in bws if loads is None else []:
        ax.plot([], [], color=colour[bw], lw=widths[bw], label=f"{float(bw):g} GB/s")
    ax.scatter([], [], marker="o", c="#e8743b", label="compute (rank)")
    ax.scatter([], [], marker="s", c="#5b6b8c", label="switch")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, framealpha=0.9)
    m = topo.metrics()
    ax.set_title(
        f"{topo.name}: N={m['N']}, switches={m['switches']}, diameter={m['diameter']}", parse_math=False
    )
    ax.margins(0.12)
    ax.set_aspect("equal")
    ax.axis("off")
