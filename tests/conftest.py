import json
import subprocess
import sys

import pytest


def run_cli(*args: str, check_status: int | None = 0) -> subprocess.CompletedProcess:
    """Run the real `collsynth` entry point in a subprocess (exit status and stderr as users see them)."""
    proc = subprocess.run(
        [sys.executable, "-m", "collsynth.cli", *args], capture_output=True, text=True, timeout=300
    )
    if check_status is not None:
        assert proc.returncode == check_status, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def run_json(*args: str):
    return json.loads(run_cli(*args, "--json").stdout)


@pytest.fixture
def cli():
    return run_cli
