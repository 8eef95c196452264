"""The ``collsynth`` command line.

Exit status: 0 success, 2 bad input or usage, 1 internal error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import warnings

from collsynth._core import BadInput, InternalError, __version__, size_bytes
from collsynth._core import set_memory_budget as _set_memory_budget
from collsynth.cli.common import OneLineParser, fail
from collsynth.fileio import Terminated, remove_temp_files_on_signals

# The commands, in the order `collsynth --help` lists them; each is the module cli/<name>.py
# (`-` as `_`). Names only, so that a command imports its own module alone. (`circulant` here is
# the command, whose module is exempt from the rule that no algorithm is named outside its
# folder: tests/test_layout.py.)
COMMANDS = "topo bound synth verify simulate export run compare draw find circulant bench-mpi demo".split()


def build_parser(argv: list[str] | None = None) -> OneLineParser:
    """The parser of every command, or, when ``argv`` names a command, of that one alone: a
    command imports only its own module (start-up is every command's cost, README
    "Start-up"); the top-level options take no values, so the first word that is not an
    option is the command."""
    parser = OneLineParser(
        prog="collsynth",
        description="Verified, provably fast collective schedules for any cluster network.",
    )
    # One source of truth: the workspace version in Cargo.toml, compiled into the core.
    parser.add_argument("--version", action="version", version=f"collsynth {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    named = next((a for a in argv or [] if not a.startswith("-")), None)
    for command in COMMANDS:
        if named not in COMMANDS or command == named:
            importlib.import_module(f"collsynth.cli.{command.replace('-', '_')}").register(sub)
    _add_memory_budget(parser)
    return parser


MEMORY_BUDGET_HELP = (
    "memory one request may take, e.g. 4GiB (default: half the physical memory, at most 8 GiB); "
    "a request whose estimate is above it is refused (exit 2) before it allocates"
)


def _add_memory_budget(parser: argparse.ArgumentParser) -> None:
    """Give every command (the leaves of the parser tree) ``--memory-budget``."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        parser.add_argument("--memory-budget", default=None, metavar="SIZE", help=MEMORY_BUDGET_HELP)
    for action in subs:
        for child in dict.fromkeys(action.choices.values()):
            _add_memory_budget(child)


def set_memory_budget(text: str | None) -> None:
    """Hand ``--memory-budget`` to the core (whole bytes, any size unit)."""
    if text is None:
        return
    exact = size_bytes(text)
    if "/" in exact:
        raise BadInput(f"--memory-budget {text!r}: not a whole number of bytes")
    _set_memory_budget(int(exact))


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"collsynth: warning: {message}", file=sys.stderr)


def not_utf8(argv: list[str]) -> str | None:
    """The first argument that is not valid UTF-8 (the OS hands such bytes to Python as lone
    surrogates), shown with its bad bytes escaped; None when all are fine."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return None


def main(argv: list[str] | None = None) -> int:
    warnings.showwarning = _one_line_warning
    remove_temp_files_on_signals()
    argv = sys.argv[1:] if argv is None else argv
    if (bad := not_utf8(argv)) is not None:
        return fail(f"argument '{bad}' is not valid UTF-8", 2)
    args = build_parser(argv).parse_args(argv)
    try:
        set_memory_budget(getattr(args, "memory_budget", None))
        return args.run(args) or 0
    except BadInput as e:
        return fail(str(e), 2)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except Terminated:
        return fail("terminated", 143)
    except BrokenPipeError:
        # The reader went away (`collsynth ... | head`): not an error of ours. Point stdout
        # at /dev/null so that the interpreter's final flush does not complain again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (InternalError, Exception) as e:  # noqa: BLE001 - last line of defence: one line, exit 1
        return fail(internal(e), 1)
    except BaseException as e:  # a Rust panic surfaces as pyo3's PanicException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return fail(internal(e), 1)


def internal(e: BaseException) -> str:
    """An internal error's line, prefixed once (the core's panics already say "internal error")."""
    text = " ".join(str(e).split())  # one line whatever the message holds
    if text.startswith("internal error"):
        return text
    return f"internal error: {type(e).__name__}: {text}"


def entry() -> None:
    """The `collsynth` command: :func:`main`, then the process ends at once with its status.
    Left to the interpreter's shutdown, a Ctrl-C arriving after main() has answered (while
    it joins threads) printed Python's "Exception ignored" traceback or killed the process by
    the signal, and a core call abandoned on Ctrl-C would be waited for."""
    code = 130
    try:
        code = main()
    except SystemExit as e:  # argparse: --help, --version, a usage error
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except KeyboardInterrupt:  # after main's own handler, before the end
        print("collsynth: error: interrupted", file=sys.stderr)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a reader gone (`| head`), a closed stream
                pass
        os._exit(code)


if __name__ == "__main__":
    entry()
