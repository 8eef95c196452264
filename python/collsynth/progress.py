"""Progress bars for long calls into the core (which releases the GIL while it works)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def run_with_progress(
    fn: Callable, label: str, poll: Callable[[], tuple[int, int]] | None = None, delay: float = 2.0
):
    """Run ``fn()``; if it takes longer than ``delay`` seconds, show a bar (from ``poll()`` =
    (done, total), or a spinner when there is no total) until it returns."""
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
    worker.join(delay)
    if worker.is_alive():
        from rich.console import Console
        from rich.markup import escape
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        # Bars go to stderr so that `--json` output on stdout stays clean.
        _stderr = Console(stderr=True)
        columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn()]
        # off a terminal there is no bar to draw (an enabled Progress would still end with a
        # stray newline on stderr, before the error line)
        with Progress(*columns, console=_stderr, transient=True, disable=not _stderr.is_terminal) as bar:
            task = bar.add_task(escape(label), total=None)
            while worker.is_alive():
                if poll is not None:
                    done, total = poll()
                    bar.update(task, completed=done, total=total or None)
                time.sleep(0.1)
    worker.join()
    if "error" in out:
        raise out["error"]
    return out["value"]
