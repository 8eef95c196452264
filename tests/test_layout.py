"""The README's "What is here" table matches the tree: it names every top-level
entry of the repository and of the core's `src/`, and every path it names exists."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "crates" / "collsynth-core" / "src"


def _table() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## What is here", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and not set(cells[0]) <= {"-", " "}:
            rows.append((cells[0], cells[1]))
    return rows[1:]  # the header


def _tracked_top_level() -> set[str]:
    # what a clean clone holds: tracked files only (no .venv, target, caches)
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {f.split("/", 1)[0] for f in files} - {".gitignore", "README.md"}


def test_every_top_level_entry_is_in_the_table():
    named = {p for cell, _ in _table() for p in re.findall(r"`([^`]+)`", cell)}
    named = {p.rstrip("/").split("/", 1)[0] for p in named}
    missing = _tracked_top_level() - named
    assert not missing, f"README 'What is here' does not name: {sorted(missing)}"


def test_every_named_path_exists():
    for cell, _ in _table():
        for p in re.findall(r"`([^`]+)`", cell):
            assert (ROOT / p).exists(), f"README names {p}, which is not in the tree"


def test_core_row_names_every_module_and_only_real_ones():
    core = next(what for cell, what in _table() if cell == "`crates/collsynth-core`")
    named = set(re.findall(r"`([a-z_]+(?:/|\.rs))`", core))
    # lib.rs is the crate root, tests.rs / testing.rs hold tests only
    top = {p.name + "/" if p.is_dir() else p.name for p in SRC.iterdir()}
    top -= {"lib.rs", "tests.rs", "testing.rs", "testing/"}
    # a module with both m.rs and m/ (its children or tests) is named once
    top = {t for t in top if not (t.endswith("/") and (SRC / (t[:-1] + ".rs")).exists())}
    assert top <= named, f"README core row does not name: {sorted(top - named)}"
    every = {p.name + ("/" if p.is_dir() else "") for p in SRC.rglob("*")}
    assert named <= every, f"README core row names what is not in src/: {sorted(named - every)}"


def test_no_algorithm_is_named_outside_its_folder():
    """Adding an algorithm touches its folder and one registry line: the API, the binding and
    the CLI loop over the registry and never name one. Exempt: the demo (it tells
    ForestColl's story), the `circulant` command and the MPI runtime (Träff's tools, which
    run the circulant schedules themselves)."""
    from collsynth import algorithms

    names = [a["name"] for a in algorithms()]
    exempt = {"cli/demo.py", "cli/circulant.py"}
    places = [
        p
        for p in (ROOT / "python" / "collsynth").rglob("*.py")
        if "mpi" not in p.parts and str(p.relative_to(ROOT / "python" / "collsynth")) not in exempt
    ]
    places += list((ROOT / "crates" / "collsynth-py" / "src").glob("*.rs"))
    places += [SRC / "api.rs"]
    found = [
        f"{p.relative_to(ROOT)}: {n}"
        for p in places
        for n in names
        if re.search(rf"""["']{re.escape(n)}["']""", p.read_text())
    ]
    assert not found, "\n".join(found)
