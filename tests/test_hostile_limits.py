"""Limits before work: every input below is a real `collsynth` subprocess that must exit 2
with exactly one line on stderr, quickly and before it allocates, and leave no file behind:
sizes and bandwidths past what exact arithmetic holds, nesting past what the parser recurses
on, memory past the budget (`--memory-budget`), work past what finishes in reasonable time,
and the strict readers (NCCL topology XML, the zoo grammar, one-rank topologies). What cannot
be refused up front answers Ctrl-C instead: exit 130 and one line."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile import files, refusal_problems, run

import collsynth
from collsynth import BadInput, msccl

A100_XML = Path(__file__).resolve().parent / "data" / "nccl-topo" / "hgx-a100-8gpu-simai.xml"
PRIMES = [p for p in range(2, 200) if all(p % q for q in range(2, p))]


def ring_file(bandwidths: list[str], names: list[str] | None = None) -> str:
    """A unidirectional ring, one link per bandwidth."""
    n = len(bandwidths)
    names = names or [f"r{i}" for i in range(n)]
    nodes = [{"name": v, "type": "compute"} for v in names]
    links = [{"src": names[i], "dst": names[(i + 1) % n], "bandwidth": bw} for i, bw in enumerate(bandwidths)]
    return json.dumps({"name": "fractions", "nodes": nodes, "links": links})


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("limits")
    sched = collsynth.synthesize("ring:4", "allgather", "ring")
    (d / "good.json").write_text(sched.to_json())
    xml = msccl.export(sched)["xml"]
    assert 'srcoff="0"' in xml
    for name, value in [("srcoff_max", "9223372036854775807"), ("srcoff_near", "9223372036854775806")]:
        (d / f"{name}.xml").write_text(xml.replace('srcoff="0"', f'srcoff="{value}"', 1))
    # 46 links of bandwidth 1/p: their common denominator is far past 2^80
    (d / "fractions.json").write_text(ring_file([f"1/{p}" for p in PRIMES[:46]]))
    one = {"name": "one", "nodes": [{"name": "a", "type": "compute"}], "links": []}
    (d / "one.json").write_text(json.dumps(one))
    one_sched = json.loads(sched.to_json())
    one_sched["topology"] = one
    (d / "one_sched.json").write_text(json.dumps(one_sched))
    # NCCL topology XML made strictly worse
    a100 = A100_XML.read_text()
    busids = [line.split('busid="')[1].split('"')[0] for line in a100.splitlines() if "<pci busid=" in line]
    assert len(set(busids)) > 2
    for name, text in [
        ("dup_busid", a100.replace(f'busid="{busids[2]}"', f'busid="{busids[1]}"', 1)),
        ("dup_attr", a100.replace('<gpu dev="0"', '<gpu dev="0" dev="1"', 1)),
        ("nul_ref", a100.replace('<gpu dev="0"', '<gpu dev="&#0;"', 1)),
        ("big_ref", a100.replace('<gpu dev="0"', '<gpu dev="&#x110000;"', 1)),
        ("bogus_ref", a100.replace('<gpu dev="0"', '<gpu dev="&bogus;"', 1)),
        ("bare_amp", a100.replace('<gpu dev="0"', '<gpu dev="0&1"', 1)),
        ("amp_entity", a100.replace('<gpu dev="0"', '<gpu dev="&amp;"', 1)),
        ("nul_byte", a100.replace('<gpu dev="0"', '<gpu dev="0"\0', 1)),
        ("ctrl_value", a100.replace('<gpu dev="0"', '<gpu dev="0\x01"', 1)),
    ]:
        assert text != a100, name
        (d / f"{name}.xml").write_text(text)
    return d


DEEP_BI = "bi(" * 121 + "ring:4" + ")" * 121
DEEP_LINE = "line(" * 65 + "ring:4" + ")" * 65
DEEP_PRODUCT = "product(ring:2; " * 65 + "ring:2" + ")" * 65
SYNTH = ["synth", "ring:4", "-c", "allgather", "-a", "ring"]
XML = ["--format", "msccl-xml"]
TACOS = ["synth", "ring:8", "-c", "allgather", "-a", "tacos"]
EXPORT = ["export", "{d}/good.json", "--format", "msccl-xml", "-o", "x.xml"]
PAST_INT64 = "9223372036854775808"

# (argv, a fragment the one stderr line must contain); {d} is the inputs directory.
BAD = [
    # sizes past a buffer (2^63 bytes): refused, never an overflow
    ([*SYNTH, "--size", "99999999999999999999999999TiB"], "2^63 bytes"),
    ([*SYNTH, "--size", "9223372036854775809"], "2^63 bytes"),
    ([*SYNTH, "--size", "8388609TiB"], "2^63 bytes"),
    ([*SYNTH, "--size", "999999999999999999999999999999999999e30"], "cannot read size"),
    (["compare", "ring:4", "-c", "allreduce", "--sizes", "1e24TiB"], "2^63 bytes"),
    (["compare", "ring:4", "-c", "allreduce", "--sizes", "1KiB,10000000TB"], "2^63 bytes"),
    (["compare", "ring:4", "-c", "allreduce", "-b", "8", "-e", "9999999999G"], "2^63 bytes"),
    (["simulate", "{d}/good.json", "--size", "1e20TiB"], "2^63 bytes"),
    # a size range the runtimes' parsers cannot hold (strtoll into int64_t)
    ([*EXPORT, "--size-range", f"0-{PAST_INT64}"], "9223372036854775807"),
    ([*EXPORT, "--size-range", "0-18446744073709551615"], "2^63 bytes"),
    (
        [*SYNTH, *XML, "--size-range", f"{PAST_INT64}-{PAST_INT64}", "-o", "out"],
        "9223372036854775807",
    ),
    # deep expressions: refused at the parser, with the limit
    (["topo", "show", DEEP_BI], "deeper than 64 levels"),
    (["topo", "show", DEEP_LINE], "deeper than 64 levels"),
    (["bound", DEEP_PRODUCT, "-c", "allgather"], "deeper than 64 levels"),
    (["synth", DEEP_BI, "-c", "allgather", "-a", "ring"], "deeper than 64 levels"),
    # bandwidths exact arithmetic cannot hold: the reason, exit 2
    (["bound", "{d}/fractions.json", "-c", "allgather"], "above 2^80"),
    (["synth", "{d}/fractions.json", "-c", "allgather", "-a", "ring"], "above 2^80"),
    (["topo", "show", "ring:4,bw=0.0000000000000000000000001"], "above 2^80"),
    (["topo", "show", "ring:4,bw=2417851639229258349412353"], "above 2^80"),
    # offsets near i64::MAX in an XML: judged, never an overflow
    (["verify", "{d}/srcoff_max.xml"], "srcoff"),
    (["verify", "{d}/srcoff_near.xml"], "srcoff"),
    # memory: estimated before allocating, refused above the budget
    ([*TACOS, "--ranks", "0-1000000000000"], "--memory-budget"),
    ([*TACOS, "--ranks", "0-3,4-99999999999999"], "--memory-budget"),
    ([*EXPORT, "--pipeline", "22369621"], "--memory-budget"),
    ([*EXPORT, "--pipeline", "100000000"], "--memory-budget"),
    (["compare", "ring:4", "-c", "allgather", "--pipeline", "100000000"], "chunk transfers"),
    (["simulate", "{d}/good.json", "--pipeline", "22369621"], "--memory-budget"),
    ([*SYNTH, "--pipeline", "22369621"], "--memory-budget"),
    ([*SYNTH, "--pipeline", "100000", "--memory-budget", "16MiB"], "budget of 16.0 MiB"),
    # the fewest transfers any schedule needs (N(N-1)) refused before a synthesizer starts
    (["synth", "ring:65536", "-c", "allgather", "-a", "ring"], "(4294901760 transfers at least)"),
    (["synth", "ring:1048576", "-c", "allreduce", "-a", "auto"], "transfers at least"),
    (["compare", "ring:65536", "-c", "reduce-scatter"], "transfers at least"),
    # what no estimate foresees (routes, a synthesizer's own tables) is stopped at the budget
    (
        ["synth", "ring:2048", "-c", "allgather", "-a", "rhd", "--memory-budget", "64MiB"],
        "budget of 64.0 MiB",
    ),
    (
        ["synth", "ring:1024", "-c", "allgather", "-a", "tacos", "--memory-budget", "16MiB"],
        "budget of 16.0 MiB",
    ),
    (
        ["synth", "ring:1024", "-c", "allgather", "-a", "direct", "--memory-budget", "32MiB"],
        "budget of 32.0 MiB",
    ),
    # one token per size, ASCII digits per number, no empty list item
    (["synth", "ring:4", "-c", "allgather", "-a", "ring", "--size", "1KiBKiB"], "unknown size unit"),
    (["synth", "ring:4", "-c", "allgather", "-a", "ring", "--size", "5\u00a0KiB"], "white space"),
    (["compare", "ring:4", "-c", "allgather", "--sizes", "5\n,3"], "white space"),
    (["compare", "ring:4", "-c", "allgather", "-b", "5\n", "-e", "8"], "white space"),
    (["compare", "ring:4", "-c", "allgather", "-b", "1K", "-e", "1M", "-f", "\u0662"], "not a whole number"),
    (["topo", "show", "ring:+4"], "'+4' is not a whole number"),
    (["topo", "show", "torus:4x+4"], "bad dimension '+4'"),
    *[
        (["synth", "ring:6", "-c", "allgather", "-a", "tacos", "--ranks", r], "is not a rank or a range")
        for r in ["0-3,", ",0-3", "0-3 ", "+1,2"]
    ],
    # latencies near 1e308 us are valid, but the times they add up to are past a double
    (["synth", "ring:4,lat=1e308", "-c", "allgather", "-a", "tacos"], "past what its clock (a double) holds"),
    (["synth", "switch:5,lat=1e308", "-c", "allgather", "-a", "ring", "--json"], "past what a double holds"),
    (["synth", "ring:4,lat=1e308", "-c", "reduce-scatter", "-a", "auto"], "past what a double holds"),
    # a torus's links, counted before they are made: 22 dimensions of 2 on 2^22 nodes
    (["topo", "show", "torus:" + "x".join(["2"] * 22)], "links needs about"),
    (["topo", "show", "ring:4", "--memory-budget", "1000"], "below 1 MiB"),
    (["topo", "show", "ring:4", "--memory-budget", "1.5"], "--memory-budget"),
    (["topo", "show", "ring:4", "--memory-budget", "lots"], "lots"),
    # work that would not finish: refused with the limit
    (["topo", "show", "torus:1024x1024"], "above the limit of 2^32"),
    (["topo", "show", "line^10(complete:4)"], "above the limit of 2^32"),
    (["topo", "show", "mesh:1024x1024"], "above the limit of 2^32"),
    (["bound", "torus:1024x1024", "-c", "allgather"], "above the limit of 2^32"),
    # the zoo grammar, strictly
    (["topo", "show", "ring::4"], "empty argument"),
    (["topo", "show", "ring:4:"], "empty argument"),
    (["topo", "show", "ring:4,"], "empty argument"),
    (["topo", "show", "dgx1:"], "empty argument"),
    (["topo", "show", "circulant:16::3,4"], "empty argument"),
    (["topo", "show", "ring:4,bw=1,bw=2"], "bw= is given twice"),
    (["topo", "show", "torus:4x4,lat=1,lat=1"], "lat= is given twice"),
    (["topo", "show", "ring:4,=3"], "no name"),
    (["topo", "show", "ring:4\n"], "control character"),
    (["topo", "show", "ring:4\r"], "control character"),
    (["topo", "show", "ring:4\tx"], "control character"),
    (["bound", "line(ring:4\n)", "-c", "allgather"], "control character"),
    (["topo", "show", "ring:4,lat=1e309"], "latency"),
    (["run", "{d}/good.json", "--np", "4", "--reps", "100000000"], "from 1 to 10000"),
    (["topo", "show", "ring:4,lat=1e303s"], "largest finite"),
    # one rank: nothing to schedule, in every command
    (["topo", "show", "mesh:1x1"], "one compute node"),
    (["topo", "show", "torus:1"], "one compute node"),
    (["topo", "show", "{d}/one.json"], "one compute node"),
    (["topo", "export", "torus:1", "-o", "t.json"], "one compute node"),
    (["topo", "draw", "mesh:1x1", "-o", "t.svg"], "one compute node"),
    (["bound", "mesh:1x1", "-c", "allgather"], "one compute node"),
    (["synth", "torus:1", "-c", "allgather", "-a", "ring"], "one compute node"),
    (["synth", "{d}/one.json", "-c", "allreduce", "-a", "auto"], "one compute node"),
    (["compare", "mesh:1x1", "-c", "allgather"], "one compute node"),
    (["simulate", "{d}/one_sched.json"], "one compute node"),
    (["verify", "{d}/one_sched.json"], "one compute node"),
    (["export", "{d}/one_sched.json", *XML, "-o", "x.xml"], "one compute node"),
    (["draw", "{d}/one_sched.json", "-o", "x.svg"], "one compute node"),
    (["topo", "show", "product(torus:1; torus:1)"], "one compute node"),
    # NCCL topology XML: as strict as NCCL's own reader, or stricter
    (["topo", "import", "{d}/dup_busid.xml", "-o", "t.json"], "appears twice"),
    (["topo", "import", "{d}/dup_attr.xml", "-o", "t.json"], "given twice"),
    (["topo", "import", "{d}/nul_ref.xml", "-o", "t.json"], "'&'"),
    (["topo", "import", "{d}/big_ref.xml", "-o", "t.json"], "'&'"),
    (["topo", "import", "{d}/bogus_ref.xml", "-o", "t.json"], "'&'"),
    (["topo", "import", "{d}/bare_amp.xml", "-o", "t.json"], "'&'"),
    (["topo", "import", "{d}/amp_entity.xml", "-o", "t.json"], "'&'"),
    (["topo", "import", "{d}/nul_byte.xml", "-o", "t.json"], "NUL"),
    (["topo", "import", "{d}/ctrl_value.xml", "-o", "t.json"], "control character"),
    (["topo", "show", "nccl:{d}/dup_busid.xml*2"], "appears twice"),
]


def test_limits_exit_2_with_one_line_and_leave_nothing(inputs, tmp_path):
    before = files(inputs)
    problems = refusal_problems(BAD, inputs, tmp_path, workers=3, one_prefix=False)
    assert problems == []
    assert files(inputs) == before


def test_odd_but_valid_limits_succeed(tmp_path):
    """Finite latencies at both ends of the f64 range, a ring of a million ranks (one BFS
    stands for all: every rank is alike), the deepest nesting allowed, and a size of exactly
    2^63 bytes."""
    deep = "line(" * 64 + "ring:3" + ")" * 64
    cases = [
        (["topo", "show", "ring:4,lat=1e308", "--json"], '"N": 4'),
        (["topo", "show", "ring:4,lat=1e-308", "--json"], '"N": 4'),
        (["topo", "show", "ring:1048576", "--json"], '"diameter": 1048575'),
        (["topo", "show", deep, "--json"], '"N": 3'),
        # BFB mapped through 64 nested line graphs (names once doubled per level: 2^64 bytes)
        (["synth", deep, "-c", "allgather", "-a", "bfb", "--memory-budget", "16MiB", "--json"], "(x64)"),
        (["topo", "show", "ring:4", "--memory-budget", "1GiB"], "ring:4"),
        ([*SYNTH, "--size", "8388608TiB", "--json"], '"size_bytes": 9.223372036854776e+18'),
    ]
    for argv, fragment in cases:
        proc = run(argv, tmp_path)
        assert (proc.returncode, proc.stderr) == (0, b""), (argv, proc.stderr)
        assert fragment in proc.stdout.decode(), (argv, proc.stdout[:300])
    # the million-rank ring's average distance is exact: (N - 1) / 2 hops over ordered pairs
    proc = run(["topo", "show", "biring:1000", "--json"], tmp_path)
    assert json.loads(proc.stdout)["average_distance"] == pytest.approx(250.25025025025025)
    assert json.loads(proc.stdout)["diameter"] == 500
    assert files(tmp_path) == set()


def test_api_refuses_limits_with_bad_input():
    t = collsynth.Topology.from_spec("ring:4")
    s = collsynth.synthesize(t, "allgather", "ring")
    calls = [
        lambda: msccl.export(s, size_range=(0, 2**63)),
        lambda: msccl.export(s, pipeline=22369621),
        lambda: s.evaluate("1MiB", pipeline=22369621),
        lambda: s.simulate("1MiB", pipeline=22369621),
        lambda: collsynth.Topology.from_spec("mesh:1x1"),
        lambda: collsynth.Topology.from_spec("ring:4\n"),
        lambda: collsynth.Topology.from_spec(DEEP_BI),
        lambda: collsynth.Topology.from_spec("torus:1024x1024").metrics(),
        lambda: collsynth.synthesize(t, "allgather", "ring", size="1e24TiB"),
    ]
    for i, call in enumerate(calls):
        with pytest.raises(BadInput):
            call()
            pytest.fail(f"call {i} accepted")
    # a message quoting a line break stays one line
    with pytest.raises(BadInput) as e:
        collsynth.Topology.from_spec("ring:4\nx")
    assert "\n" not in str(e.value) and "\\n" in str(e.value)


# Long calls that cannot be refused up front (their work is not known before they run) answer
# Ctrl-C: the child says it is about to call main(), and gets SIGINT once it is inside.
INTERRUPTED = """
import sys
from collsynth.cli import main
print("ready", flush=True)
sys.exit(main({argv!r}))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["synth", "ring:8", "-c", "allgather", "-a", "tacos", "--chunks-per-npu", "65536"],
        ["synth", "ring:8", "-c", "allgather", "-a", "tacos", "--restarts", "1000000000"],
        ["circulant", "check", "--max-p", "1000000000"],
        ["compare", "ring:4", "-c", "allgather", "--pipeline", "22369621"],
        # ForestColl's max flows on a long ring, inside compare (which once called the core on
        # its main thread, answering Ctrl-C only when the flows were done)
        ["compare", "ring:30000", "-c", "broadcast", "--sizes", "1MiB"],
        # a million-node topology's JSON: made between polls, not in one call holding the GIL
        ["topo", "export", "ring:1000000", "-o", "big.json"],
        # max flows across a long ring: one phase per path length
        ["bound", "ring:262144", "-c", "allgather"],
    ],
)
def test_long_calls_answer_ctrl_c_with_exit_130_and_one_line(tmp_path, argv):
    code = INTERRUPTED.format(argv=argv)
    child = subprocess.Popen(
        [sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(1.0)  # inside the core call by now; the outcome does not depend on it
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
        child.wait()
    assert (child.returncode, err) == (130, "collsynth: error: interrupted\n")
    assert files(tmp_path) == set()


@pytest.mark.parametrize(
    "argv",
    [
        ["circulant", "check", "--max-p", "9223372036854775807", "--json"],
        ["compare", "ring:30000", "-c", "broadcast", "--sizes", "1MiB", "--json"],
    ],
)
def test_long_runs_show_a_bar_on_a_terminal_stderr(tmp_path, argv):
    """Progress goes to stderr whenever stderr is a terminal, even with stdout (and `--json`)
    elsewhere; Ctrl-C then ends the run at once."""
    master, follower = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "collsynth.cli", *argv],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
        start_new_session=True,
    )
    os.close(follower)
    shown = b""
    try:
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline and b"\xe2\x94\x81" not in shown:  # a bar's segment
            if select.select([master], [], [], 0.1)[0]:
                shown += os.read(master, 1 << 16)
        os.killpg(child.pid, signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    finally:
        child.kill()
        child.wait()
        os.close(master)
    assert b"\xe2\x94\x81" in shown, shown[-300:]
    assert (child.returncode, out) == (130, b"")
