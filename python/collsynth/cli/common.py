"""Shared CLI plumbing: one-line errors, JSON output, tables."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console, JustifyMethod
from rich.table import Table

import collsynth

# Piped output keeps wide tables whole instead of folding them to 80 columns. No markup: every
# string printed holds user text (topology names, paths), which must print as it is.
console = Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else 160)


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line and exits with status 2."""

    def error(self, message: str):
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def fail(message: str, status: int) -> int:
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
    t = Table(title=title, title_justify="left", header_style="bold")
    for header, justify in columns:
        t.add_column(header, justify=JUSTIFY[justify])
    for row in rows:
        t.add_row(*[str(x) for x in row])
    return t
