"""The Python face of the topology model (the model itself lives in the Rust core)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import NamedTuple

from collsynth import _core
from collsynth._args import text as _text
from collsynth._args import whole as _whole
from collsynth._core import BadInput
from collsynth.fileio import atomic_write, read_text


class TopologyWarning(UserWarning):
    """A topology file has something collsynth ignores (e.g. an unknown key)."""


def parse_file_text(from_json, text: str, source: str):
    """Run a core ``from_json`` parser: errors name ``source``, notes become warnings."""
    try:
        core, notes = from_json(text)
    except BadInput as e:
        raise BadInput(f"{source}: {e}") from None
    for note in notes:
        warnings.warn(f"{source}: {note}", TopologyWarning, stacklevel=3)
    return core


def _is_file(arg: str) -> bool:
    """True when ``arg`` names an existing file; a spec too long or odd to be a path (the OS
    says "File name too long") is simply not one."""
    try:
        return Path(arg).is_file()
    except (OSError, ValueError):
        return False


class Node(NamedTuple):
    name: str
    type: str  # "compute" or "switch"
    group: str | None
    rank: int | None  # None for switches


class Link(NamedTuple):
    src: str
    dst: str
    bandwidth: Fraction  # GB/s, exact
    latency: float  # microseconds


class Topology:
    """A validated cluster network: compute nodes (ranks 0..N-1 in file order), switches and
    directed links (parallel links merged). Build one with :meth:`from_spec`, :meth:`load`,
    :meth:`loads` or :meth:`resolve`; bad input raises :class:`collsynth.BadInput`."""

    def __init__(self, core: _core.Topology):
        self._core = core

    @classmethod
    def from_spec(cls, spec: str) -> Topology:
        """A zoo topology such as ``"torus:4x4x2,bw=50/50/25"`` or ``"dgx-a100:2"``."""
        return cls(_core.Topology.from_spec(_text("spec", spec)))

    @classmethod
    def loads(cls, text: str, source: str = "<string>") -> Topology:
        """Parse topology JSON v1 text; unknown keys give a :class:`TopologyWarning`."""
        return cls(parse_file_text(_core.Topology.from_json, _text("text", text), source))

    @classmethod
    def load(cls, path: str | os.PathLike) -> Topology:
        """Read a topology JSON file."""
        return cls.loads(read_text(path, "topology JSON"), source=str(path))

    @classmethod
    def from_nccl_xml(
        cls,
        text: str,
        name: str = "nccl",
        boxes: int = 1,
        fabric: str | None = None,
        latency: str | float | None = None,
        fabric_bandwidth: str | float | None = None,
        fabric_latency: str | float | None = None,
        source: str = "<string>",
    ) -> Topology:
        """NCCL / RCCL topology XML text (what ``NCCL_TOPO_DUMP_FILE`` writes): one box, or
        ``boxes`` copies joined by ``fabric`` (``"rails"``, ``"switch"``, ``"fat-tree:K"``).
        Bandwidths follow NCCL's rules (docs/topology-file.md); ``latency`` (every link in a
        box), ``fabric_bandwidth`` and ``fabric_latency`` override the defaults; things the
        reader leaves out give a :class:`TopologyWarning`."""
        boxes = _whole("boxes", boxes, 1, 1 << 16)
        opt = [
            None if v is None else _quantity(n, v)
            for n, v in (
                ("latency", latency),
                ("fabric_bandwidth", fabric_bandwidth),
                ("fabric_latency", fabric_latency),
            )
        ]
        fabric = None if fabric is None else _text("fabric", fabric)

        def parse(t):
            return _core.Topology.from_nccl_xml(t, _text("name", name), boxes, fabric, *opt)

        return cls(parse_file_text(parse, _text("text", text), source))

    @classmethod
    def load_nccl_xml(cls, path: str | os.PathLike, **options) -> Topology:
        """Read an NCCL / RCCL topology XML file (see :meth:`from_nccl_xml`); named after the file."""
        options.setdefault("name", Path(path).stem)
        return cls.from_nccl_xml(read_text(path, "NCCL topology XML"), source=str(path), **options)

    @classmethod
    def from_networkx(
        cls, graph, compute=None, bandwidth="capacity", latency=None, name: str | None = None
    ) -> Topology:
        """A topology from a networkx graph. Nodes are named ``str(node)``. The compute nodes
        (ranks, in the graph's node order) are ``compute`` as a set of nodes of the graph, as a
        node attribute name (truthy = compute), or with None the nodes' attribute ``type``:
        ``"compute"`` (or ``"gpu"``) or ``"switch"`` (a NIC, CPU or bridge only forwards), on
        every node or on none (then every node is a rank). ``bandwidth`` and
        ``latency`` are edge attribute names or one value for every edge (GB/s, us; numbers,
        Fractions or strings with units). With ``latency=None`` an edge's ``latency``
        attribute is used where present, else 0. An undirected graph gives links both ways;
        parallel edges add up. A node attribute ``group`` is kept. The core's JSON reader
        validates."""
        doc, edges = _networkx_doc(graph, compute, bandwidth, latency, name)
        try:
            return cls.loads(_json_text(doc), source="<networkx>")
        except BadInput as e:
            raise BadInput(_edge_names(str(e), edges)) from None

    def to_networkx(self):
        """A ``networkx.DiGraph``: nodes by name with ``type``, ``group`` and ``rank``; one edge
        per directed link with ``capacity`` (GB/s, exact Fraction) and ``latency`` (us)."""
        import networkx as nx

        g = nx.DiGraph(name=self.name)
        for n in self.nodes:
            g.add_node(n.name, type=n.type, group=n.group, rank=n.rank)
        for lk in self.links:
            g.add_edge(lk.src, lk.dst, capacity=lk.bandwidth, latency=lk.latency)
        return g

    @classmethod
    def from_matrix(cls, bandwidth, latency=None, name: str = "matrix") -> Topology:
        """A direct-connect topology of N compute nodes ``n0..`` from an N x N bandwidth matrix
        (GB/s; entry [i][j] > 0 is a link i -> j, 0 is none, the diagonal must be 0) and an
        optional latency matrix (us) of the same shape, numpy arrays or nested lists."""
        import numpy as np

        try:
            bw = np.asarray(bandwidth)
            lat = None if latency is None else np.asarray(latency)
        except (ValueError, TypeError) as e:  # a ragged list
            raise BadInput(f"from_matrix: not a matrix: {e}") from None
        if bw.ndim != 2 or bw.shape[0] != bw.shape[1] or bw.shape[0] == 0:
            raise BadInput(f"bandwidth matrix must be square N x N, got shape {bw.shape}")
        if lat is not None and lat.shape != bw.shape:
            raise BadInput(f"latency matrix shape {lat.shape} differs from the bandwidth matrix's {bw.shape}")
        n = bw.shape[0]
        nodes = [{"name": f"n{i}", "type": "compute"} for i in range(n)]
        links = []
        for i in range(n):
            for j in range(n):
                value = _scalar(bw[i, j])
                if value == 0:
                    continue
                link = {"src": f"n{i}", "dst": f"n{j}", "bandwidth": _json_number(value)}
                if lat is not None:
                    link["latency"] = _json_number(_scalar(lat[i, j]))
                links.append(link)
        return cls.loads(_json_text({"name": name, "nodes": nodes, "links": links}), source="<matrix>")

    @classmethod
    def resolve(cls, arg: str) -> Topology:
        """A CLI topology argument: a JSON file path if it looks like one, else a zoo spec."""
        arg = _text("topology", arg)
        if arg.endswith(".json") or _is_file(arg):
            return cls.load(arg)
        return cls.from_spec(arg)

    def save(self, path: str | os.PathLike) -> None:
        """Write canonical topology JSON (atomically)."""
        atomic_write(path, self.to_json())

    def to_json(self) -> str:
        return self._core.to_json()

    @property
    def name(self) -> str:
        return self._core.name

    @property
    def n_ranks(self) -> int:
        return self._core.n_ranks

    def __len__(self) -> int:
        return self.n_ranks

    @property
    def nodes(self) -> list[Node]:
        return [Node(*n) for n in self._core.nodes()]

    @property
    def links(self) -> list[Link]:
        return [Link(s, d, Fraction(bw), lat) for s, d, bw, lat in self._core.links()]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def metrics(self) -> dict:
        """N, switches, links, degrees, diameter, average distance, bidirectional, egress."""
        return self._core.metrics()

    def alltoall(self, size: int | str = "1MiB") -> dict:
        """Uniform all-to-all throughput: ``alltoall_rate_GBps`` per ordered pair of ranks,
        ``alltoall_us`` for every rank sending ``size`` bytes in total, ``alltoall_exact``
        (False above the LP's size limit, where the bandwidth-tax estimate stands in)."""
        return self._core.alltoall(_text("size", size))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Topology) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        m = self.metrics()
        return f"Topology({self.name!r}, N={m['N']}, switches={m['switches']}, links={m['links']})"


def families() -> list[dict]:
    """Every zoo family: name, args, help, options."""
    return [
        {"name": n, "args": a, "help": h, "options": ["bw", "lat", *opts]}
        for n, a, h, opts in _core.families()
    ]


def _quantity(name: str, value) -> str:
    """A bandwidth or latency for the core: a string with units, or a number as text."""
    if isinstance(value, str):
        return _text(name, value)
    return str(_json_number(value))


def _json_number(value):
    """A number as the topology JSON reader takes it exactly: ints as they are, Fractions as
    ``"p/q"``, floats by their shortest repr (``0.1`` is 1/10), anything else (NaN, a
    non-number) as text the reader rejects with a message naming the link."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()  # np.float64(1.5) -> 1.5: numpy 2's repr is not a number
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return value
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    if isinstance(value, float):
        return float.__repr__(value)
    return str(value)


def _scalar(x):
    """A numpy element as a Python number (object arrays already hold one)."""
    return x.item() if hasattr(x, "item") else x


def _json_text(doc: dict) -> str:
    import json

    return json.dumps(doc)


# A node's `type` in a networkx graph: a rank (`gpu` is an alias) or a node that only forwards.
COMPUTE_TYPES = ("compute", "gpu")
SWITCH_TYPES = ("switch",)


def _networkx_doc(graph, compute, bandwidth, latency, name) -> tuple[dict, list]:
    try:
        node_list = list(graph.nodes(data=True))
        edges = list(graph.edges(data=True))
        directed = graph.is_directed()
    except AttributeError:
        raise BadInput(f"from_networkx needs a networkx graph, got {type(graph).__name__}") from None

    if compute is not None and not isinstance(compute, str):
        try:
            compute = set(compute)
        except TypeError:
            raise BadInput(f"compute must be nodes, a node attribute name or None, got {compute!r}") from None
        if missing := compute - {node for node, _ in node_list}:
            shown = ", ".join(sorted(repr(m) for m in missing)[:5])
            raise BadInput(f"compute names {len(missing)} node(s) not in the graph: {shown}")
    # With compute=None the nodes' `type` decides; a graph typed in part would turn its
    # untyped nodes (a NIC, a CPU) into ranks, so either every node has a type or none.
    typed = [node for node, data in node_list if "type" in data]
    if compute is None and typed and len(typed) != len(node_list):
        untyped = next(node for node, data in node_list if "type" not in data)
        raise BadInput(
            f"node {untyped!r} has no type while {typed[0]!r} has one: give every node a type "
            f"({', '.join(COMPUTE_TYPES + SWITCH_TYPES)}) or pass compute="
        )

    def is_compute(node, data) -> bool:
        if compute is None:
            kind = data.get("type", "compute")
            if kind not in COMPUTE_TYPES + SWITCH_TYPES:
                raise BadInput(
                    f"node {node!r}: type {kind!r} is not one of {', '.join(COMPUTE_TYPES + SWITCH_TYPES)} "
                    "(a NIC, CPU or bridge only forwards: type='switch')"
                )
            return kind in COMPUTE_TYPES
        if isinstance(compute, str):
            return bool(data.get(compute))
        return node in compute

    nodes = []
    for node, data in node_list:
        entry = {"name": str(node), "type": "compute" if is_compute(node, data) else "switch"}
        if data.get("group") is not None:
            entry["group"] = str(data["group"])
        nodes.append(entry)

    def value(u, v, data, spec, what):
        if isinstance(spec, str):
            if spec not in data:
                raise BadInput(f"edge ({u!r}, {v!r}) has no {what} attribute {spec!r}")
            return _json_number(data[spec])
        return _json_number(spec)

    links = []
    for u, v, data in edges:
        link = {"src": str(u), "dst": str(v), "bandwidth": value(u, v, data, bandwidth, "bandwidth")}
        if latency is not None:
            link["latency"] = value(u, v, data, latency, "latency")
        elif "latency" in data:  # what to_networkx writes
            link["latency"] = _json_number(data["latency"])
        if not directed:
            link["bidirectional"] = True
        links.append(link)
    doc = {"name": name or str(graph.graph.get("name") or "networkx"), "nodes": nodes, "links": links}
    return doc, [(u, v) for u, v, _ in edges]


def _edge_names(message: str, edges: list) -> str:
    """The core names a link by its index (``links[3].bandwidth: ...``); a graph's user knows
    it as the edge (u, v)."""
    import re

    def edge(m: re.Match) -> str:
        i = int(m.group(1))
        return f"edge {edges[i]!r}" if i < len(edges) else m.group(0)

    return re.sub(r"links\[(\d+)\]", edge, message)
