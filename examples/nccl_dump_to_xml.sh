#!/usr/bin/env bash
# My cluster, from an NCCL topology dump to a verified MSCCL XML file and MSCCL++ plan.
#
#   examples/nccl_dump_to_xml.sh [NODE.xml] [OUTDIR]
#
# NODE.xml is what NCCL writes with NCCL_TOPO_DUMP_FILE=node.xml on one box of the cluster
# (default: the HGX A100 dump in tests/data/nccl-topo/). OUTDIR defaults to ./out.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
node="${1:-$here/../tests/data/nccl-topo/hgx-a100-8gpu-simai.xml}"
out="${2:-out}"
mkdir -p "$out"

# 1. Two such boxes joined rail by rail (NIC i of every box on rail switch i).
collsynth topo import "$node" --boxes 2 --fabric rails -o "$out/cluster.json"

# 2. The exact bound any allgather schedule on this cluster must respect.
collsynth bound "$out/cluster.json" --collective allgather

# 3. Synthesize, verify (every schedule is verified before it is written) and export:
#    writes $out/schedule.json, $out/schedule.xml and $out/schedule.mscclpp.json.
collsynth synth "$out/cluster.json" --collective allgather --algorithm forestcoll \
    --format json,msccl-xml,mscclpp-json -o "$out"

# 4. Judge the XML as the MSCCL runtime would, with link loads on the cluster, and the
#    MSCCL++ plan by the executor's checks and a symbolic run.
collsynth verify "$out/schedule.xml" --topology "$out/cluster.json"
collsynth verify "$out/schedule.mscclpp.json"

echo "MSCCL XML ready: $out/schedule.xml (the runtime loads it from MSCCL_ALGO_DIR; docs/msccl.md)"
echo "MSCCL++ plan ready: $out/schedule.mscclpp.json (docs/mscclpp.md)"
