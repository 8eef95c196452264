"""The Python API end to end: a topology from the zoo, the exact bound, a synthesized and
verified schedule, its time by the runtime model, MSCCL XML, and a save / load round trip.

    python examples/python_api.py [OUTDIR]      (OUTDIR defaults to ./out)
"""

import sys
from pathlib import Path

import collsynth


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)

    # Two DGX A100 boxes (8 GPUs each on NVSwitch, a NIC per GPU) from the zoo.
    topo = collsynth.Topology.from_spec("dgx-a100:2")
    print(topo)

    # The exact bound: no allgather schedule on this network can beat it.
    b = collsynth.bound(topo, "allgather")
    print(f"bound: {b['bound_algbw_GBps']} GB/s algbw (bottleneck cut of {len(b['bottleneck_cut'])} nodes)")

    # Synthesize; the schedule is verified by symbolic execution before it is returned, and
    # verify() runs that check again (it raises collsynth.BadInput naming the first violation).
    sched = collsynth.synthesize(topo, "allgather", "forestcoll")
    print(sched)
    print(f"verified: {sched.verify()}")

    # Its time at 1 GiB by the runtime model, against the time bound.
    e = sched.evaluate("1GiB")
    print(
        f"runtime model at 1 GiB: {e['runtime_time_us']:.1f} us ({e['runtime_protocol']}), "
        f"time bound {e['time_bound_us']:.1f} us, time-optimality {e['time_optimality']:.3f}"
    )

    # MSCCL XML for the runtime (validated by the core before it is returned).
    xml_path = out / "allgather.xml"
    xml_path.write_text(sched.to_msccl_xml())
    report = collsynth.msccl.validate(xml_path.read_text())
    print(f"{xml_path}: ok={report['ok']}")

    # Save and load: the same schedule, byte for byte.
    sched.save(out / "allgather.json")
    again = collsynth.Schedule.load(out / "allgather.json")
    assert again.to_json() == sched.to_json()
    again.verify()
    topo.save(out / "dgx-a100x2.json")
    assert collsynth.Topology.load(out / "dgx-a100x2.json") == topo
    print(f"saved and reloaded: {out / 'allgather.json'}, {out / 'dgx-a100x2.json'}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "out"))
