"""TACOS benchmarks (bench/run.py discovers `BENCHMARKS`): the two whole-command
targets with their results, synthesis time at scale, the
switch modes compared, the reference regression values, one mesh's stages, and a scaling series of the
`--time-only` mode with a log-log plot (bench/results/tacos_scaling.png)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

from collsynth import _core
from collsynth.topology import Topology

RESULTS = Path(__file__).parent / "results"
GIB = 1.073741824  # GiB/s in GB/s
RFS = "rfs:2,4,{n},bw=200/100/50,lat=0.5"


def _synth(spec: str, collective: str, size: str = "1GiB", **options) -> dict:
    topo = Topology.resolve(spec)
    opts = {k.replace("_", "-"): str(v) for k, v in options.items()}
    t0 = time.perf_counter()
    core, secs = _core.synthesize(topo._core, collective, "tacos", 0, opts, size)
    total = time.perf_counter() - t0
    return {
        "spec": spec,
        "N": topo.n_ranks,
        "collective": collective,
        "options": opts,
        "size": size,
        "synthesis_seconds": secs,
        "synthesis_and_verify_seconds": total,
        "transfers": core.n_transfers,
        "core": core,
    }


def _sim(rec: dict) -> dict:
    core = rec.pop("core")
    rec["time_us"] = core.simulate(rec["size"], 1)["time_us"]
    return rec


def bench_large() -> list[dict]:
    """Targets: 1K-NPU rfs allreduce <= 30 s; 4096-NPU mesh allgather (full IR) <= 15 s."""
    out = []
    for spec, coll, target in [(RFS.format(n=128), "allreduce", 30.0), ("mesh:64x64", "allgather", 15.0)]:
        r = _synth(spec, coll)
        r.pop("core")
        r["target_seconds"] = target
        out.append(r)
    return out


def bench_switch_modes() -> list[dict]:
    """ports vs unwind:d, by simulated allreduce time (ports stays the default: no mode wins
    everywhere, and multi-level fabrics cannot be unwound; docs/tacos.md has the table)."""
    out = []
    specs = ["switch:8", "switch:16", "switch2d:8,4,bw=300/25", RFS.format(n=4), RFS.format(n=8)]
    for spec in [*specs, RFS.format(n=16), "hgx-h100:2"]:
        for mode in ["ports", "unwind:1", "unwind:2", "unwind:4", "unwind:15"]:
            r = _sim(_synth(spec, "allreduce", switch_mode=mode, restarts=4))
            out.append(r)
    return out


def bench_reference() -> list[dict]:
    """The reference implementation's regression values (min over 20 seeds), simulated."""
    cases = [
        (f"mesh:5x5,bw={50 * GIB},lat=0.5", 1, "1024MiB", 9606.0),
        (f"mesh:10x10,bw={100 * GIB},lat=1", 2, "1024MiB", 5049.0),
        (f"mesh:7x12,bw={100 * GIB},lat=1", 3, "4096MiB", 19966.27),
        (f"mesh:4x3,bw={50 * GIB},lat=0.5", 3, "12MiB", 119.18),
    ]
    out = []
    for spec, k, size, ref in cases:
        r = _sim(_synth(spec, "allgather", size, chunks_per_npu=k, restarts=20))
        r["reference_us"] = ref
        r["ratio"] = r["time_us"] / ref
        out.append(r)
    return out


def bench_scaling(budget_s: float = 240.0) -> list[dict]:
    """`--time-only` allgather on n x n meshes until one run exceeds `budget_s`; fitted
    exponent of synthesis seconds vs N; the 40K mesh (200x200) if the fit says it fits in
    10 minutes. Writes bench/results/tacos_scaling.png."""
    out = []
    for side in [16, 24, 32, 48, 64, 96, 128, 160, 200]:
        if len(out) >= 2:
            (n1, t1), (n2, t2) = [(r["N"], r["synthesis_seconds"]) for r in out[-2:]]
            e = math.log(t2 / t1) / math.log(n2 / n1)
            if t2 * (side * side / n2) ** e > (600.0 if side == 200 else budget_s):
                break
        spec = f"mesh:{side}x{side}"
        topo = Topology.resolve(spec)
        r = _core.time_only(topo._core, "allgather", "tacos", 0, {}, "1GiB")
        out.append(
            {
                "spec": spec,
                "N": r["N"],
                "time_us": r["time_us"],
                "synthesis_seconds": r["synthesis_seconds"],
                "events": r["events"],
            }
        )
    xs = [math.log(r["N"]) for r in out]
    ys = [math.log(r["synthesis_seconds"]) for r in out]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    for r in out:
        r["fitted_exponent"] = slope
        r["predicted_40k_seconds"] = math.exp(my + slope * (math.log(40000) - mx))
    _plot(out, slope)
    return out


def _plot(records: list[dict], slope: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    ax.loglog([r["N"] for r in records], [r["synthesis_seconds"] for r in records], "o-")
    ax.set_xlabel("NPUs (n x n mesh)")
    ax.set_ylabel("synthesis seconds (--time-only)")
    ax.set_title(f"TACOS allgather synthesis time, exponent {slope:.2f}")
    ax.grid(True, which="both", alpha=0.3)
    RESULTS.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(RESULTS / "tacos_scaling.png", dpi=120)
    plt.close(fig)


def bench_stages(spec: str = "mesh:48x48") -> list[dict]:
    """Where the time goes on one mesh allgather: the engine alone (`--time-only`), then the
    engine with the schedule, IR and verification (`synthesis_and_verify_seconds`)."""
    topo = Topology.resolve(spec)
    t0 = time.perf_counter()
    quick = _core.time_only(topo._core, "allgather", "tacos", 0, {}, "1GiB")
    quick_s = time.perf_counter() - t0
    full = _sim(_synth(spec, "allgather"))
    return [
        {
            "spec": spec,
            "N": topo.n_ranks,
            "time_only_seconds": quick_s,
            "synthesis_seconds": full["synthesis_seconds"],
            "synthesis_and_verify_seconds": full["synthesis_and_verify_seconds"],
            "transfers": full["transfers"],
            "time_us": quick["time_us"],
            "simulated_time_us": full["time_us"],
        }
    ]


# The TACOS target rows: whole command, 2 cores (`/usr/bin/time -v`), with the exact result.
TARGETS = [
    (["rfs:2,4,128", "-c", "allreduce", "--json"], 15.0),
    (["mesh:200x200", "-c", "allgather", "--time-only", "--json"], 120.0),
]


def whole_command(args: list[str], algorithm: str = "tacos", cli: str | None = None) -> dict:
    """`collsynth synth ARGS -a ALGORITHM` as its own process under `/usr/bin/time -v`: wall
    seconds, peak memory and the printed JSON (`cli`: another build's executable)."""
    cli = cli or str(Path(sys.executable).with_name("collsynth"))
    cmd = ["/usr/bin/time", "-v", cli, "synth", *args, "-a", algorithm]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    figure = {
        "wall_seconds": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)",
        "user_seconds": r"User time \(seconds\): (\S+)",
        "max_rss_kib": r"Maximum resident set size \(kbytes\): (\d+)",
    }
    out = {}
    for key, pattern in figure.items():
        text = re.search(pattern, done.stderr).group(1)
        secs = 0.0
        for part in text.split(":"):
            secs = secs * 60 + float(part)
        out[key] = int(secs) if key == "max_rss_kib" else secs
    return out | {"result": json.loads(done.stdout)}


def bench_targets() -> list[dict]:
    """The 1K-NPU rfs allreduce (target <= 15 s) and the 40K mesh `--time-only` (<= 120 s),
    whole command, with their results: time, optimality, events."""
    out = []
    for args, target in TARGETS:
        r = whole_command(args)
        res = r.pop("result")
        keep = ["time_us", "optimality", "optimality_exact", "time_optimality", "transfers", "events"]
        out.append(
            {
                "spec": args[0],
                "command": " ".join(["collsynth synth", *args, "-a tacos"]),
                "N": res["N"],
                "synthesis_seconds": res["synthesis_seconds"],
                **r,
                **{k: res.get(k) for k in keep},  # the same keys in every row (the summary table)
                "target_seconds": target,
            }
        )
    return out


BENCHMARKS = {
    "tacos_targets": bench_targets,
    "tacos_reference": bench_reference,
    "tacos_stages": bench_stages,
    "tacos_switch_modes": bench_switch_modes,
    "tacos_large": bench_large,
    "tacos_scaling": bench_scaling,
}
