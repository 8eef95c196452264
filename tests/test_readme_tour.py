"""The README's tour is real: every `collsynth` line of its shell blocks parses with the CLI's
own parser (no stale command or flag), and the Python tour runs as written."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from collsynth.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return [part.split("```", 1)[0] for part in README.split(f"```{lang}\n")[1:]]


def _commands() -> list[list[str]]:
    out = []
    for block in _blocks("sh"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "collsynth":
                out.append(words[1:])
    return out


def test_the_tour_names_the_new_commands():
    firsts = {" ".join(w[:2]) for w in _commands()}
    for cmd in [
        "draw out/schedule.json",
        "topo import",
        "compare dgx-a100:2",
        "verify pp/schedule.mscclpp.json",
    ]:
        assert cmd in firsts, cmd
    assert any("--shard" in w for w in _commands()) and any("--step" in w for w in _commands())
    assert any("mscclpp-json" in w for w in _commands()) and any("-b" in w and "-f" in w for w in _commands())


@pytest.mark.parametrize("argv", _commands(), ids=lambda a: " ".join(a)[:60])
def test_every_tour_command_parses(argv):
    try:
        build_parser().parse_args(argv)
    except SystemExit as e:  # the one-line usage error, exit 2
        pytest.fail(f"collsynth {' '.join(argv)}: usage error ({e.code})")


def test_the_python_tour_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = _blocks("python")[0]
    assert "s.draw(" in code and "to_mscclpp_json()" in code and "nccl_tests.sweep" in code
    exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - the README's own example
    assert {p.name for p in tmp_path.iterdir()} == {"ring.json", "tree.svg"}
    assert os.path.getsize("tree.svg") > 0
