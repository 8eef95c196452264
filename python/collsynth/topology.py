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
        return cls.loads(read_text(path), source=str(path))

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
