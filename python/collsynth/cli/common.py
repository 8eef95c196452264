"""Shared CLI plumbing: one-line errors, JSON output, tables."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import TYPE_CHECKING

import collsynth

if TYPE_CHECKING:
    from rich.console import Console, JustifyMethod
    from rich.table import Table


@functools.cache
def rich_console() -> Console:
    # rich is imported on first use: commands that print JSON or write files never pay for it
    # (README, "Start-up"). Piped output keeps wide tables whole instead of folding them
    # to 80 columns. No markup: every string printed holds user text (topology names, paths),
    # which must print as it is.
    from rich.console import Console

    return Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else 160)


class _LazyConsole:
    """The CLI's rich Console, made when first used."""

    def __getattr__(self, name: str):
        return getattr(rich_console(), name)

    def __setattr__(self, name: str, value) -> None:
        setattr(rich_console(), name, value)


console: Console = _LazyConsole()  # type: ignore[assignment]


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line and exits with status 2."""

    def error(self, message: str):
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        sys.exit(2)

    def _get_values(self, action, arg_strings):
        # An empty value (`-o ''`, `--sizes ''`) is refused, never read as "not given": no
        # option or argument of ours means anything when empty.
        if "" in arg_strings and not isinstance(action, argparse._SubParsersAction):
            name = "/".join(action.option_strings) or action.metavar or action.dest
            self.error(f"argument {name}: empty value")
        return super()._get_values(action, arg_strings)


def comma_items(option: str, text: str) -> list[str]:
    """The items of a comma-separated option value, without the spaces around them (a line
    break or other white space stays, for the item's own reader to refuse); an empty item
    (`--format ,`, `--sizes 1KiB,,2KiB`) is BadInput, never skipped."""
    items = [item.strip(" ") for item in text.split(",")]
    if "" in items:
        raise collsynth.BadInput(f"{option} {text!r}: an empty item (separate items by one comma)")
    return items


def fail(message: str, status: int) -> int:
    # one prefix, even when the message relays an error line that already had one
    for prefix in ("collsynth: error: ", "error: "):
        message = message.removeprefix(prefix)
    message = message.replace("\r", "\\r").replace("\n", "\\n")  # a newline from the input stays one line
    print(f"collsynth: error: {message}", file=sys.stderr)
    return status


def emit_json(obj) -> None:
    """Print one JSON document (what `--json` promises) to stdout: strict JSON (a NaN or an
    infinity is a bug of ours, never printed as the non-JSON `NaN` / `Infinity`)."""
    print(json.dumps(obj, indent=2, allow_nan=False))


def with_version(topology_name: str, fields: dict) -> dict:
    """The keys every `--json` object carries first."""
    return {"collsynth_version": collsynth.__version__, "topology": topology_name, **fields}


# rich's column alignments by name (a KeyError names a misspelt one).
JUSTIFY: dict[str, JustifyMethod] = {j: j for j in ("default", "left", "center", "right", "full")}


def table(title: str | None, columns: list[tuple[str, str]], rows: list[list]) -> Table:
    """A rich table; columns are (header, justify)."""
    from rich.table import Table

    t = Table(title=title, title_justify="left", header_style="bold")
    for header, justify in columns:
        t.add_column(header, justify=JUSTIFY[justify])
    for row in rows:
        t.add_row(*[str(x) for x in row])
    return t


def resolve_topology(arg: str) -> collsynth.Topology:
    """The topology argument, built beside a bar: a zoo spec of millions of nodes takes seconds,
    and Ctrl-C must not wait for it."""
    from collsynth.progress import run_with_progress

    return run_with_progress(lambda: collsynth.Topology.resolve(arg), "building the topology")
