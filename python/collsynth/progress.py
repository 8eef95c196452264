"""Progress bars for long calls into the core (which releases the GIL while it works)."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable


def run_with_progress(
    fn: Callable, label: str, poll: Callable[[], tuple[int, int]] | None = None, delay: float = 2.0
):
    """Run ``fn()``; if it takes longer than ``delay`` seconds, show a bar (from ``poll()`` =
    (done, total), or a spinner when there is no total) until it returns."""
    worker, out = _start(fn)
    worker.join(delay)
    if worker.is_alive():
        from rich.markup import escape
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn()]
        shown = bar_console()
        with Progress(*columns, console=shown, transient=True, disable=not shown.is_terminal) as bar:
            task = bar.add_task(escape(label), total=None)
            while worker.is_alive():
                if poll is not None:
                    done, total = poll()
                    bar.update(task, completed=done, total=total or None)
                time.sleep(0.1)
    return _result(worker, out)


def in_worker(fn: Callable):
    """``fn()`` on a worker thread while the caller waits, so that Ctrl-C reaches the caller at
    once (a core call on the main thread answers it only at its next poll)."""
    return _result(*_start(fn))


def _start(fn: Callable) -> tuple[threading.Thread, dict]:
    # A plain thread (not concurrent.futures, whose import pulls in logging) and rich only
    # when a bar is due: most calls end before `delay`, and start-up is every command's cost
    # (README, "Start-up").
    out: dict = {}

    def call() -> None:
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            out["error"] = e

    # A daemon: when Ctrl-C or SIGTERM unwinds the caller (exit 130 / 143), the interpreter
    # must not wait at exit for the core call to finish (it cannot be interrupted).
    worker = threading.Thread(target=call, name="collsynth-call", daemon=True)
    worker.start()
    return worker, out


def _result(worker: threading.Thread, out: dict):
    worker.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


@functools.cache
def bar_console():
    """The console every progress bar draws on: stderr, so that output on stdout (tables,
    `--json`) stays clean, and a bar shows whenever stderr is a terminal. Off a terminal
    bars are disabled (an enabled Progress would still end with a stray newline)."""
    from rich.console import Console

    return Console(stderr=True)
