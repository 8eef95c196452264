"""Schedules: synthesize (always verified), evaluate, save and load."""

from __future__ import annotations

import os

from collsynth import _args, _core
from collsynth._core import BadInput
from collsynth.fileio import atomic_write, read_text
from collsynth.topology import Topology, parse_file_text


def _size(size: int | str) -> str:
    return _args.text("size", size)


def _selection(shard: int | None, step: int | None) -> tuple[str | None, int]:
    """("shard", K), ("step", K) or (None, 0); both given is BadInput."""
    if shard is not None and step is not None:
        raise BadInput("give shard or step, not both")
    if shard is not None:
        return "shard", _args.whole("shard", shard)
    if step is not None:
        return "step", _args.whole("step", step)
    return None, 0


def as_topology(topo: Topology | str) -> Topology:
    """A topology, or a spec / file name resolved to one."""
    return topo if isinstance(topo, Topology) else Topology.resolve(topo)


def option_texts(options: dict) -> dict[str, str]:
    """Keyword algorithm options as the core takes them: ``max_trees=4`` is ``--max-trees 4``."""
    return {
        k.replace("_", "-"): _args.text(k, v) if isinstance(v, str) else str(v) for k, v in options.items()
    }


class Schedule:
    """A verified schedule for one collective on one topology (the topology is embedded)."""

    def __init__(self, core: _core.Schedule, synthesis_seconds: float | None = None, verified: bool = True):
        self._core = core
        self.synthesis_seconds = synthesis_seconds
        # What the core synthesized it verified; a schedule read from text is verified before
        # anything costs, draws or exports it (the simulators trust a valid schedule).
        self._verified = verified

    @property
    def checked(self) -> _core.Schedule:
        """The core's schedule, verified first if it was read from text (BadInput if not valid)."""
        if not self._verified:
            self.verify()
        return self._core

    @classmethod
    def loads(cls, text: str, source: str = "<string>") -> Schedule:
        """Parse a schedule file's text (structure only; call :meth:`verify`)."""
        return cls(
            parse_file_text(_core.Schedule.from_json, _args.text("text", text), source), verified=False
        )

    @classmethod
    def load(cls, path: str | os.PathLike) -> Schedule:
        return cls.loads(read_text(path, "schedule JSON"), source=str(path))

    def save(self, path: str | os.PathLike) -> None:
        """Write the schedule file, atomically: format collsynth-schedule/1 for a flat schedule,
        collsynth-schedule/2 for one stated per orbit (:attr:`compact`) or holding range transfers
        (:attr:`range_transfers`); the core streams the
        text into the temporary file (never one string of the whole file)."""
        atomic_write(path, self.writer())

    def writer(self):
        """What :func:`collsynth.fileio.atomic_write_all` takes to write the schedule file with
        other outputs, all or none."""
        return self._core.write_json

    def to_json(self) -> str:
        return self._core.to_json()

    def verify(self) -> dict:
        """Symbolic execution; raises :class:`BadInput` naming the first violation."""
        report = self._core.verify()
        self._verified = True
        return report

    def evaluate(self, size: int | str = "1GiB", pipeline: int = 1) -> dict:
        """Bounds, analytic model and simulator at ``size`` (nccl-tests size), JSON keys."""
        return self.checked.evaluate(_size(size), _args.whole("pipeline", pipeline, lo=1))

    def simulate(self, size: int | str = "1GiB", pipeline: int = 1) -> dict:
        """The event simulator alone: ``time_us``, chunk transfers, busiest link."""
        return self.checked.simulate(_size(size), _args.whole("pipeline", pipeline, lo=1))

    def runtime(self, size: int | str = "1GiB", protocol: str | None = None) -> dict:
        """The runtime-faithful model alone (docs/simulator.md): ``runtime_time_us``, the
        protocol (``LL``, ``LL128``, ``Simple``; default: the one NCCL's tuner would pick)."""
        if protocol is not None and not isinstance(protocol, str):
            raise BadInput(f"protocol must be LL, LL128, Simple or None, got {protocol!r}")
        return self.checked.runtime(
            _size(size), None if protocol is None else _args.text("protocol", protocol)
        )

    def cost(self, size: int | str = "1GiB") -> dict:
        """The analytic alpha-beta model: total, latency (T_L) and bandwidth (T_B) terms."""
        return self.checked.alpha_beta(_size(size))

    def link_loads(self, size: int | str = "1GiB") -> list[dict]:
        """Bytes each link carries over the whole schedule at ``size`` (the core's exact loads),
        ``{"src", "dst", "bytes"}`` in the topology's link order."""
        return [{"src": a, "dst": b, "bytes": x} for a, b, x in self.checked.link_loads(_size(size))]

    def transfers(
        self, *, shard: int | None = None, step: int | None = None, size: int | str = "1GiB"
    ) -> list[dict]:
        """The transfers of shard ``shard`` or of step ``step`` (give one), as the core selects
        them, in schedule order: ``transfer`` (index), ``piece``, ``shard``, ``src`` and ``dst``
        (ranks), ``op`` (``copy`` / ``reduce``), ``step`` (a step schedule's step, else the
        level), ``level`` (depth in the DAG, 0 with no dependency), ``bytes`` at ``size`` and
        ``hops``, the (src, dst) node names of each link of its route (through switches)."""
        kind, k = _selection(shard, step)
        if kind is None:
            raise BadInput("transfers: give shard= or step=")
        rows = self.checked.select(kind, k, _size(size))
        keys = ("transfer", "piece", "shard", "src", "dst", "op", "step", "level", "bytes", "hops")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def draw(
        self,
        path: str | os.PathLike,
        size: int | str = "1GiB",
        *,
        shard: int | None = None,
        step: int | None = None,
    ) -> None:
        """Draw the schedule over its topology to ``path`` (.png or .svg), atomically: each link
        direction's load at ``size`` as colour and width (``collsynth draw``). With ``shard`` or
        ``step``, a second panel draws that shard's transfers (its trees) or that step's as
        arrows along their routes (``--shard`` / ``--step``)."""
        from collsynth.draw import draw_schedule  # matplotlib only when drawing

        kind, k = _selection(shard, step)
        self.checked  # noqa: B018 - verified before drawing
        draw_schedule(self, str(path), _size(size), None if kind is None else (kind, k))

    def to_msccl_xml(self, **options) -> str:
        """MSCCL XML for a runtime (options of :func:`collsynth.msccl.export`: ``runtime``,
        ``protocol``, ``channels``, ``unfused``, ``pipeline``, ``size_range``), validated."""
        from collsynth import msccl

        return msccl.export(self, **options)["xml"]

    def to_mscclpp_json(self, threadblocks: int | None = None) -> str:
        """An MSCCL++ execution plan (allgather, reduce-scatter, allreduce), judged by the
        interpreter before it is returned (:func:`collsynth.mscclpp.export`)."""
        from collsynth import mscclpp

        return mscclpp.export(self, threadblocks)["json"]

    collective = property(lambda self: self._core.collective)
    algorithm = property(lambda self: self._core.algorithm)
    n_ranks = property(lambda self: self._core.n_ranks)
    root = property(lambda self: self._core.root)
    steps = property(lambda self: self._core.steps)
    n_transfers = property(lambda self: self._core.n_transfers)
    n_pieces = property(lambda self: self._core.n_pieces)
    #: Transfers stored when some move a run of pieces at once (range transfers,
    #: docs/schedule-format.md); None otherwise. ``n_transfers`` counts single-piece transfers.
    range_transfers = property(lambda self: self._core.range_transfers)
    options = property(lambda self: dict(self._core.options))

    def flat(self) -> Schedule:
        """The same schedule stated flat, one transfer per (piece, link) and no group (what a
        tool that reads only collsynth-schedule/1 needs): the expansion of a compact schedule,
        verified flat, or the schedule itself when it is flat already."""
        if self._core.compact is None:
            return self
        flat = Schedule(self.checked.flat_form(), self.synthesis_seconds)
        flat.verify()
        return flat

    @property
    def compact(self) -> dict | None:
        """A schedule stated per orbit of a symmetry group (docs/schedule-format.md):
        ``{"group", "order", "representatives"}`` (``n_transfers`` counts the flat transfers);
        None for a flat schedule."""
        c = self._core.compact
        return None if c is None else {"group": c[0], "order": c[1], "representatives": c[2]}

    @property
    def details(self) -> dict:
        """Facts the synthesizer reports about its result (e.g. ForestColl's ``k`` and ``trees``)."""
        return self._core.details

    @property
    def topology(self) -> Topology:
        return Topology(self._core.topology)

    def __repr__(self) -> str:
        return (
            f"Schedule({self.algorithm} {self.collective} on {self.topology.name!r}, "
            f"{self.n_transfers} transfers, {self.steps} steps)"
        )


def synthesize(
    topo: Topology | str,
    collective: str,
    algorithm: str = "auto",
    *,
    root: int = 0,
    size: int | str = "1GiB",
    evaluate_pipeline: int | None = None,
    msccl: dict | None = None,
    **options,
) -> Schedule:
    """Synthesize and verify. ``options`` are algorithm options (``max_trees=4`` is
    ``--max-trees 4``); an option that does not apply raises :class:`BadInput`. With
    ``evaluate_pipeline``, the schedule is also evaluated at ``size`` with that pipeline
    depth while the verifier checks it: ``Schedule.evaluate(size, evaluate_pipeline)`` then
    answers at once (the same dict). With ``msccl`` (keyword arguments of
    :func:`collsynth.msccl.export`) and ``auto``: the candidate whose exported MSCCL program
    the runtime model times fastest, in its thread blocks and within the runtime's limits, at
    the bytes nccl-tests moves for ``size`` (or ``msccl["size"]``); ``details["auto_ranking"]``
    is then ``"exported"``."""
    topo = as_topology(topo)
    opts = option_texts(options)
    root = _args.whole("root", root)
    if evaluate_pipeline is not None:
        evaluate_pipeline = _args.whole("evaluate_pipeline", evaluate_pipeline, lo=1)
    export = None
    if msccl is not None:
        from collsynth.msccl import EXPORT_ARGS, export_args

        given = _args.instance("msccl", msccl, dict)
        unknown = sorted(set(given) - set(EXPORT_ARGS))
        if unknown:
            raise BadInput(f"msccl: {unknown[0]!r} is not an argument of msccl.export")
        export = export_args(**given)
    core, seconds = _core.synthesize(
        topo._core,
        _args.text("collective", collective),
        _args.text("algorithm", algorithm),
        root,
        opts,
        _size(size),
        evaluate_pipeline,
        export,
    )
    return Schedule(core, seconds)


def bound(topo: Topology | str, collective: str, root: int = 0) -> dict:
    """Exact bounds: ``inv_throughput`` ("p/q"), ``bound_algbw_GBps``, ``bottleneck_cut``,
    and the latency bounds ``diameter``, ``moore_steps``, ``one_ported_rounds``."""
    topo = as_topology(topo)
    return _core.bounds(topo._core, _args.text("collective", collective), _args.whole("root", root))


def time_only(
    topo: Topology | str,
    collective: str,
    algorithm: str,
    *,
    root: int = 0,
    size: int | str = "1GiB",
    **options,
) -> dict:
    """An algorithm's own account of the collective's time at ``size`` without building the
    schedule (``synth --time-only``; algorithms with ``time_only`` in :func:`algorithms`):
    ``time_us``, ``time_model``, ``algbw_GBps``, ``synthesis_seconds`` and its own keys."""
    topo = as_topology(topo)
    opts = option_texts(options)
    return _core.time_only(
        topo._core,
        _args.text("collective", collective),
        _args.text("algorithm", algorithm),
        _args.whole("root", root),
        opts,
        _size(size),
    )


def algorithms() -> list[dict]:
    """The registered algorithms: ``name``, ``help``, ``collectives``, ``options``,
    ``time_only`` (whether :func:`time_only` applies) and ``sized`` (whether its schedule
    depends on the ``size`` it is synthesized for)."""
    return [
        {"name": n, "help": h, "collectives": c, "options": o, "time_only": t, "sized": z}
        for n, h, c, o, t, z in _core.algorithms()
    ]
