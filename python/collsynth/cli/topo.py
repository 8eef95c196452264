"""`collsynth topo list | show | export | draw`."""

from __future__ import annotations

from pathlib import Path

from collsynth._core import BadInput
from collsynth.cli.common import console, emit_json, resolve_topology, table, with_version
from collsynth.cli.options import size_help
from collsynth.progress import run_with_progress
from collsynth.topology import Topology, families

TOPO_HELP = "a topology JSON file, a zoo spec (ring:8, torus:4x4x2, dgx-a100:2) or an expression"


def register(sub) -> None:
    p = sub.add_parser("topo", help="list, show, export and draw topologies")
    tsub = p.add_subparsers(dest="topo_command", metavar="ACTION", required=True)

    q = tsub.add_parser("list", help="every zoo family with its arguments")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(run=run_list)

    q = tsub.add_parser("show", help="metrics of a topology")
    q.add_argument("topo", metavar="TOPO", help=TOPO_HELP)
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.add_argument("--links", action="store_true", help="also list every directed link")
    q.add_argument(
        "--alltoall", action="store_true", help="uniform all-to-all throughput (multi-commodity flow)"
    )
    q.add_argument(
        "--size", default=None, help=size_help("with --alltoall: bytes each rank sends in total (1MiB)")
    )
    q.set_defaults(run=run_show)

    q = tsub.add_parser("export", help="write a topology as JSON v1")
    q.add_argument("topo", metavar="TOPO", help=TOPO_HELP)
    q.add_argument("-o", "--output", required=True, metavar="FILE.json")
    q.set_defaults(run=run_export)

    q = tsub.add_parser(
        "import",
        help="read an NCCL/RCCL topology XML dump (NCCL_TOPO_DUMP_FILE) as one box or a cluster of boxes",
    )
    q.add_argument("xml", metavar="NODE.xml", help="the topology XML of one box")
    q.add_argument("-o", "--output", required=True, metavar="FILE.json", help="topology JSON to write")
    q.add_argument("--boxes", type=int, default=1, metavar="N", help="number of boxes (default 1)")
    q.add_argument(
        "--fabric",
        default=None,
        metavar="F",
        help="how boxes join through their NICs: rails (NIC i on rail switch i; the default for N > 1),"
        " switch (one non-blocking switch) or fat-tree:K",
    )
    q.add_argument(
        "--fabric-bandwidth", default=None, metavar="BW", help="every fabric link (default: the NIC's speed)"
    )
    q.add_argument("--fabric-latency", default=None, metavar="LAT", help="every fabric link (default 1us)")
    q.add_argument("--latency", default=None, metavar="LAT", help="every link inside a box (default 1us)")
    q.add_argument("--name", default=None, help="topology name (default: the file's stem)")
    q.add_argument("--json", action="store_true", help="print the metrics as JSON")
    q.set_defaults(run=run_import)

    q = tsub.add_parser("draw", help="draw a topology (groups as boxes, bandwidths on links)")
    q.add_argument("topo", metavar="TOPO", help=TOPO_HELP)
    q.add_argument("-o", "--output", required=True, metavar="FILE.svg|png")
    q.set_defaults(run=run_draw)


def run_list(args) -> int:
    fams = families()
    if args.json:
        emit_json(fams)
        return 0
    rows = [[f"{f['name']}:{f['args']}" if f["args"] else f["name"], f["help"]] for f in fams]
    console.print(table("Topology families", [("spec", "left"), ("description", "left")], rows))
    console.print(
        "Options for every family: bw=GB/s or bw=A/B/.. (one per level), lat=us likewise;"
        " e.g. torus:4x4x2,bw=50/50/25",
        markup=False,
    )
    return 0


def show_rows(m: dict) -> list[list]:
    return [
        ["compute nodes (N)", m["N"]],
        ["switches", m["switches"]],
        ["directed links", m["links"]],
        ["out-degree min/max", f"{m['min_degree']} / {m['max_degree']}"],
        ["in-degree min/max", f"{m['min_in_degree']} / {m['max_in_degree']}"],
        ["diameter (hops)", m["diameter"]],
        ["average distance", f"{m['average_distance']:.4f}"],
        ["bidirectional", "yes" if m["bidirectional"] else "no"],
        ["egress per rank (GB/s)", f"{m['min_egress_GBps']:g} .. {m['max_egress_GBps']:g}"],
    ]


def run_show(args) -> int:
    topo = resolve_topology(args.topo)
    m = topo.metrics()
    if args.size is not None and not args.alltoall:
        raise BadInput("--size applies to --alltoall only")
    rows = show_rows(m)
    if args.alltoall:
        a = run_with_progress(lambda: topo.alltoall(args.size or "1MiB"), "all-to-all flow")
        m.update(a)
        kind = "multi-commodity flow LP" if a["alltoall_exact"] else "bandwidth-tax estimate"
        rows.append(["all-to-all rate per pair (GB/s)", f"{a['alltoall_rate_GBps']:.6g} ({kind})"])
        rows.append([f"all-to-all time, {args.size or '1MiB'} per rank (us)", f"{a['alltoall_us']:.3f}"])
    if args.json:
        emit_json(with_version(topo.name, m))
        return 0
    console.print(table(f"Topology {topo.name}", [("metric", "left"), ("value", "right")], rows))
    if args.links:
        rows = [[lk.src, lk.dst, f"{float(lk.bandwidth):g}", f"{lk.latency:g}"] for lk in topo.links]
        cols = [("src", "left"), ("dst", "left"), ("GB/s", "right"), ("latency us", "right")]
        console.print(table("Links", cols, rows))
    return 0


def run_export(args) -> int:
    topo = resolve_topology(args.topo)
    topo.save(args.output)
    console.print(f"wrote {args.output} ({topo.n_ranks} ranks)")
    return 0


def run_import(args) -> int:
    fabric = args.fabric
    if fabric is None and args.boxes > 1:
        fabric = "rails"
    if fabric is None and (args.fabric_bandwidth is not None or args.fabric_latency is not None):
        raise BadInput("--fabric-bandwidth and --fabric-latency need --fabric (or --boxes N > 1)")
    topo = Topology.load_nccl_xml(
        args.xml,
        name=args.name if args.name is not None else Path(args.xml).stem,
        boxes=args.boxes,
        fabric=fabric,
        latency=args.latency,
        fabric_bandwidth=args.fabric_bandwidth,
        fabric_latency=args.fabric_latency,
    )
    topo.save(args.output)
    m = topo.metrics()
    if args.json:
        emit_json(with_version(topo.name, {**m, "output": args.output}))
        return 0
    console.print(f"wrote {args.output} ({m['N']} ranks, {m['switches']} switches, {m['links']} links)")
    return 0


def run_draw(args) -> int:
    from collsynth import draw  # matplotlib is imported only when drawing

    topo = resolve_topology(args.topo)
    draw.draw_topology(topo, args.output)
    console.print(f"wrote {args.output}")
    return 0
