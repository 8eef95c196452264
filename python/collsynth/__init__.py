"""collsynth: verified, provably fast collective-communication schedules for any cluster network.

The heavy lifting is in the Rust core (``collsynth._core``); this package is the user surface:
the Python API, the ``collsynth`` command line and plots.
"""

from collsynth import msccl, mscclpp
from collsynth._core import BadInput, Infeasible, InternalError, __version__
from collsynth.schedule import Schedule, algorithms, bound, synthesize, time_only
from collsynth.topology import Link, Node, Topology, TopologyWarning, families

__all__ = [
    "BadInput",
    "Infeasible",
    "InternalError",
    "Link",
    "Node",
    "Schedule",
    "Topology",
    "TopologyWarning",
    "__version__",
    "algorithms",
    "bound",
    "families",
    "msccl",
    "mscclpp",
    "synthesize",
    "time_only",
]
