"""What the hostile-input tests share: a real `collsynth` subprocess, the files a run left, and
the check that a table of bad inputs each exit 2 with one stderr line and leave nothing."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CLI = [sys.executable, "-m", "collsynth.cli"]


def run(argv, cwd: Path, umask: int | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *argv], cwd=cwd, capture_output=True, timeout=300, umask=umask or -1)


def files(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*")}


def refusal_problems(bad, inputs: Path, tmp_path: Path, workers: int, one_prefix: bool) -> list[str]:
    """Every (argv, fragment) of `bad` ("{d}" stands for `inputs`), run in a directory of its
    own: what is wrong with its refusal (exit 2, one stderr line with `fragment`, with
    `one_prefix` one `error:`, no file left); empty when every case is right."""

    def case(i_and_bad):
        i, (argv, fragment) = i_and_bad
        cwd = tmp_path / f"case{i}"
        cwd.mkdir()
        argv = [a.replace("{d}", str(inputs)) if isinstance(a, str) else a for a in argv]
        proc = run(argv, cwd)
        err = proc.stderr.decode("utf-8", "replace")
        problems = []
        if proc.returncode != 2:
            problems.append(f"exit {proc.returncode}")
        if len(err.splitlines()) != 1 or not err.endswith("\n"):
            problems.append(f"stderr is not one line: {err!r}")
        if fragment not in err:
            problems.append(f"stderr lacks {fragment!r}: {err!r}")
        if one_prefix and err.count("error:") != 1:
            problems.append(f"not one error prefix: {err!r}")
        if files(cwd):
            problems.append(f"left {files(cwd)}")
        return [f"{argv!r}: {p}" for p in problems]

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [p for ps in pool.map(case, enumerate(bad)) for p in ps]
