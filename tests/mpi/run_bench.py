"""``mpiexec -n P python tests/mpi/run_bench.py [bench args]``: collsynth.mpi.bench with the
test reference standing in for the Rust schedule functions where they are missing (a
development aid; the package and `collsynth bench-mpi` use only the Rust functions)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import circulant_ref  # noqa: E402

circulant_ref.install_if_missing()

from collsynth.mpi import bench  # noqa: E402

sys.exit(bench.main())
