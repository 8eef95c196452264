"""Progress bars for long calls into the core (which releases the GIL while it works)."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

# Bars go to stderr so that `--json` output on stdout stays clean.
_stderr = Console(stderr=True)


def run_with_progress(
    fn: Callable, label: str, poll: Callable[[], tuple[int, int]] | None = None, delay: float = 2.0
):
    """Run ``fn()``; if it takes longer than ``delay`` seconds, show a bar (from ``poll()`` =
    (done, total), or a spinner when there is no total) until it returns."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(fn)
        try:
            return future.result(timeout=delay)
        except FutureTimeout:
            pass
        columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn()]
        # off a terminal there is no bar to draw (an enabled Progress would still end with a
        # stray newline on stderr, before the error line)
        with Progress(*columns, console=_stderr, transient=True, disable=not _stderr.is_terminal) as bar:
            task = bar.add_task(escape(label), total=None)
            while not future.done():
                if poll is not None:
                    done, total = poll()
                    bar.update(task, completed=done, total=total or None)
                time.sleep(0.1)
        return future.result()
