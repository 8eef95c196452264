//! Tests of the NCCL / RCCL import: the real files (tests/data/nccl-topo), fabrics, hostile XML.

mod fabrics;
mod hostile;
mod real_files;
mod real_input;
mod runtime_routes;

use super::*;
use crate::rational::Rat;

/// The text of `tests/data/nccl-topo/NAME` at the repository root.
pub(super) fn data(name: &str) -> String {
    let path = format!("{}/../../tests/data/nccl-topo/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub(super) fn one_box(name: &str) -> Topology {
    nccl_topology(name, &data(name), &ClusterSpec::single()).unwrap_or_else(|e| panic!("{name}: {e}")).topology
}

/// (allgather, allreduce) optimal times per byte of a rank's shard, as `collsynth bound` reports.
pub(super) fn optima(t: &Topology) -> (Rat, Rat) {
    let ag = crate::bound::allgather(t).unwrap().inv_throughput;
    let rs = crate::bound::reduce_scatter(t).unwrap().inv_throughput;
    (ag, ag + rs)
}

/// Bandwidth of the link between two named nodes.
pub(super) fn bw(t: &Topology, a: &str, b: &str) -> Rat {
    let (u, v) = (t.node_index(a).unwrap(), t.node_index(b).unwrap());
    t.links[t.link_between(u, v).unwrap_or_else(|| panic!("no link {a} -> {b}"))].bandwidth
}

/// The box as NCCL reads it (before `routes` keeps only the runtime's routes).
pub(super) fn physical(name: &str) -> nccl::BoxModel {
    nccl::read_box(&xml::parse(&data(name)).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Bandwidth NCCL puts on `a -> b` of a physical box (repeated rows added up).
pub(super) fn phys_bw(m: &nccl::BoxModel, a: &str, b: &str) -> Rat {
    let at = |n: &str| m.nodes.iter().position(|v| v.name == n).unwrap_or_else(|| panic!("no node {n}"));
    let (u, v) = (at(a), at(b));
    m.links.iter().filter(|l| l.src == u && l.dst == v).map(|l| l.bw).sum()
}
