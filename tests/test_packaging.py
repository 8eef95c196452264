"""Packaging and first contact: one version everywhere, the licence, the package metadata, the
typed surface (the binding's stubs match the binding), and docs that cite only this repository."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import collsynth
from collsynth import _core
from conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "collsynth"


def _toml(name: str) -> dict:
    return tomllib.loads((ROOT / name).read_text())


def test_version_has_one_source_the_cargo_workspace():
    version = _toml("Cargo.toml")["workspace"]["package"]["version"]
    assert collsynth.__version__ == version
    proc = run_cli("--version")
    assert proc.stdout == f"collsynth {version}\n" and proc.stderr == ""
    assert f"## {version}" in (ROOT / "CHANGELOG.md").read_text()


def test_licence_file_matches_cargo_and_pyproject():
    assert _toml("Cargo.toml")["workspace"]["package"]["license"] == "MIT"
    project = _toml("pyproject.toml")["project"]
    assert (project["license"], project["license-files"]) == ("MIT", ["LICENSE"])
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_package_metadata_and_extras():
    project = _toml("pyproject.toml")["project"]
    assert project["readme"] == "README.md" and project["dynamic"] == ["version"]
    assert "Typing :: Typed" in project["classifiers"]
    extras = project["optional-dependencies"]
    # the MPI extra brings the MPI library the README relies on (the mpich wheel), not mpi4py alone
    assert [d.split(">")[0] for d in extras["mpi"]] == ["mpi4py", "mpich"]
    assert project["authors"] == [{"name": "collsynth developers"}]
    repository = project["urls"]["Repository"]
    assert repository.startswith("https://") and repository in (ROOT / "README.md").read_text()
    assert [d.split(">")[0] for d in extras["networkx"]] == ["networkx"]
    # Neither is a hard dependency.
    assert not any(d.startswith(("mpi4py", "networkx")) for d in project["dependencies"])


def _stub() -> ast.Module:
    return ast.parse((PACKAGE / "_core.pyi").read_text())


def _defined(body: list[ast.stmt]) -> set[str]:
    names = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_stubs_name_exactly_what_the_binding_has():
    assert (PACKAGE / "py.typed").is_file()
    stub = _stub()
    public = {n for n in dir(_core) if not n.startswith("_")} | {"__version__"}
    assert _defined(stub.body) == public
    for cls in (n for n in stub.body if isinstance(n, ast.ClassDef)):
        runtime = getattr(_core, cls.name)
        missing = {m for m in _defined(cls.body) if not hasattr(runtime, m)}
        assert not missing, f"{cls.name}: the stub names {missing}, which the binding lacks"
        if cls.name in ("Topology", "Schedule"):
            have = {m for m in dir(runtime) if not m.startswith("_")}
            assert have == _defined(cls.body), f"{cls.name}: stub and binding differ"


def test_stub_signatures_match_the_binding():
    """Parameter names as the binding declares them (pyo3 records each function's signature)."""
    for fn in (n for n in _stub().body if isinstance(n, ast.FunctionDef)):
        sig = getattr(_core, fn.name).__text_signature__
        assert sig is not None, fn.name
        names = re.findall(r"[(,]\s*\*?([A-Za-z_]+)", sig)
        assert names == [a.arg for a in fn.args.args], (fn.name, sig)


def test_docs_and_messages_cite_only_this_repository():
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").glob("*.md")]
    files += PACKAGE.rglob("*.py")
    files += [*(ROOT / "bench").glob("*.py"), *(ROOT / "examples").glob("*.[ps][yh]")]
    pattern = re.compile(r"\.\./shared|shared/(data|research)|DESIGN\.md|research notes|\bissue \d+", re.I)
    hits = [
        f"{f.relative_to(ROOT)}:{i}: {line.strip()}"
        for f in files
        for i, line in enumerate(f.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not hits, "\n".join(hits)
