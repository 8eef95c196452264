//! What NCCL's own ring and tree kernels add to the runtime model ([`Executor::NcclRing`],
//! [`Executor::NcclTree`]), and NCCL's tuner, which picks their protocol.
//!
//! * The simulator charges every transfer of such a schedule one kernel step
//!   ([`super::classes::ClassParams::nccl_step_us`], fitted) in place of the message overhead,
//!   and a receiver takes all its contributions in that one step (`recvReduceSend` reads
//!   every child at once), where MSCCL's interpreter runs one step per received chunk.
//! * The tree kernel reaches less of the links' bandwidth: NCCL's own refinements of its
//!   tree model (src/graph/tuning.cc of NCCL 2.12, `ncclTopoTuneModel`: `busBw * .92`;
//!   `ncclTopoGetAlgoTime`: `treeCorrectionFactor` by protocol and size), from the source.
//! * The protocol is what NCCL 2.12's tuner picks ([`estimates_us`]): its latency tables
//!   (`baseLat`, `hwLat`, what NCCL believes a step costs, not the fitted step) along the
//!   schedule's longest dependency path, plus the busiest link's bytes at NCCL's protocol
//!   bandwidth factors.

use super::classes::{classify, params, LinkClass, NcclHw};
use super::protocol::Protocol;
use crate::cost::loads::link_loads;
use crate::error::Result;
use crate::ir::transform::topological_order;
use crate::ir::{Collective, Executor, Schedule};
use crate::rational::{to_f64, Rat};
use crate::topology::Topology;

/// The kernel step (us) of a transfer along `route`: the largest of its classes'.
pub fn step_us(route: &[usize], classes: &[LinkClass]) -> f64 {
    route.iter().map(|&l| params(classes[l]).nccl_step_us).fold(0.0, f64::max)
}

/// NCCL 2.12 src/graph/tuning.cc `treeCorrectionFactor[protocol][log2i(nBytes >> 6)]` in
/// tenths, 64 B to 256 MiB; 1 beyond.
const TREE_CORRECTION_TENTHS: [[i128; 23]; 3] = [
    [10, 10, 10, 10, 9, 8, 7, 7, 7, 7, 6, 5, 4, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10],
    [10, 10, 10, 10, 10, 9, 8, 8, 8, 7, 6, 6, 6, 6, 6, 6, 8, 9, 9, 9, 9, 10, 10],
    [9, 9, 9, 9, 9, 9, 9, 8, 7, 6, 6, 5, 5, 5, 5, 6, 7, 8, 7, 7, 8, 9, 9],
];

/// NCCL's `log2i(nBytes >> 6)`: floor of log2, 0 for 0.
fn size_index(size: Rat) -> usize {
    let bytes = size.floor().to_integer().max(0) as u128 >> 6;
    if bytes == 0 {
        0
    } else {
        (127 - bytes.leading_zeros()) as usize
    }
}

/// NCCL's `treeCorrectionFactor` for `protocol` at `size` bytes (exact).
pub fn tree_correction(protocol: Protocol, size: Rat) -> Rat {
    let i = size_index(size);
    Rat::new(TREE_CORRECTION_TENTHS[protocol.index()].get(i).copied().unwrap_or(10), 10)
}

/// Fraction of the links' effective bandwidth `executor`'s kernel reaches for `size` bytes
/// under `protocol` (exact): the tree's `.92` times its correction factor; 1 otherwise.
pub fn bandwidth_factor(executor: Executor, protocol: Protocol, size: Rat) -> Rat {
    match executor {
        Executor::NcclTree => Rat::new(23, 25) * tree_correction(protocol, size),
        Executor::Msccl | Executor::NcclRing => Rat::from_integer(1),
    }
}

/// NCCL 2.12's ceiling (GB/s) on one connection of `executor`'s kernel under `protocol` on
/// `nodes` nodes, from its per-channel caps (src/graph/tuning.cc `ncclTopoTuneModel`):
/// LL128 `ll128MaxBwPerCh` = 20, the tree's Simple `perChMaxTreeBws` (Ampere row: 24.0,
/// 23.6, 17.8 for 1, 2, more nodes; the topology does not say the GPU generation, as in the
/// channel search). A channel is one thread block per connection; a tree channel's
/// algorithm bandwidth is half its bus bandwidth (`ratio = .5` for trees: the reduction up and
/// the broadcast down share the block's threads, `runTreeSplit`), so a tree connection gets
/// half the cap. The simulator caps the connection's throughput there.
pub fn connection_cap_gbps(executor: Executor, protocol: Protocol, nodes: usize) -> Option<f64> {
    let tree_simple = [24.0, 23.6, 17.8][nodes.clamp(1, 3) - 1];
    match (executor, protocol) {
        (Executor::NcclRing, Protocol::LL128) => Some(20.0),
        (Executor::NcclTree, Protocol::LL128) => Some(20.0 / 2.0),
        (Executor::NcclTree, Protocol::Simple) => Some(tree_simple / 2.0),
        _ => None,
    }
}

/// Payload bytes of one chunk of NCCL's tree kernel under `protocol`, for a channel moving
/// `channel_bytes` down a tree `depth` deep (NCCL 2.12 src/enqueue.cc `computeColl`): one
/// FIFO step (Simple 512 KiB, LL128 614,400 B of which 120/128 payload), halved while the
/// channel would run too few chunks to fill the tree's pipeline; LL keeps its step.
pub fn tree_chunk_bytes(protocol: Protocol, channel_bytes: f64, nodes: usize, ranks_per_node: usize) -> f64 {
    // connect.cc `ncclTopoPreset`: "not an exact value but a good approximation"
    let log2_nodes = f64::from(usize::BITS - 1 - nodes.max(1).leading_zeros());
    let ppn = ranks_per_node as f64;
    let depth = ppn - 1.0 + log2_nodes;
    let halve = |mut chunk: f64, rules: &[(f64, f64)]| {
        for &(steps, floor) in rules {
            while channel_bytes / chunk < steps && chunk > floor {
                chunk /= 2.0;
            }
        }
        chunk
    };
    match protocol {
        Protocol::Simple => halve(524_288.0, &[(depth * 8.0, 131_072.0), (depth * 4.0, 65_536.0), (depth, 32_768.0)]),
        Protocol::LL128 => {
            let steps = 1.0 + log2_nodes + 0.1 * ppn;
            let rules = [(steps * 64.0 / ppn, 131_072.0), (steps * 16.0 / ppn, 32_768.0)];
            halve(614_400.0, &rules) * 120.0 / 128.0
        }
        Protocol::LL => protocol.slice_bytes() as f64,
    }
}

/// NCCL's node count and ranks per node: a node is a group of ranks (`node.group`, the zoo's
/// boxes; ungrouped ranks form one node).
pub fn nodes_and_ppn(topo: &Topology) -> (usize, usize) {
    let mut groups: Vec<Option<&str>> =
        (0..topo.n_ranks()).map(|r| topo.nodes[topo.rank_node(r)].group.as_deref()).collect();
    groups.sort_unstable();
    groups.dedup();
    let nodes = groups.len().max(1);
    (nodes, topo.n_ranks().div_ceil(nodes))
}

/// NCCL 2.12 `baseLat[algorithm][protocol]` (us), [LL, LL128, Simple].
fn base_latency_us(executor: Executor) -> [f64; 3] {
    match executor {
        Executor::NcclTree => [4.4, 4.4, 0.0],
        _ => [3.6, 10.0, 8.4],
    }
}

/// NCCL 2.12 `hwLat[hw][algorithm][protocol]` (us), [LL, LL128, Simple].
fn hw_latency_us(hw: NcclHw, executor: Executor) -> [f64; 3] {
    let tree = executor == Executor::NcclTree;
    match (hw, tree) {
        (NcclHw::NvLink, true) => [0.52, 1.25, 28.0],
        (NcclHw::NvLink, false) => [0.47, 1.9, 3.4],
        (NcclHw::Pci, true) => [1.0, 1.9, 28.0],
        (NcclHw::Pci, false) => [1.0, 2.5, 5.7],
        (NcclHw::Net, true) => [5.0, 8.5, 28.0],
        (NcclHw::Net, false) => [2.7, 4.0, 28.0],
    }
}

/// NCCL 2.12's bandwidth factor per protocol [LL, LL128, Simple] of `executor`'s kernel for
/// `collective` (`ncclTopoTuneModel`): ring LL 1/4 (several nodes, or a reduction to all)
/// else 1/3, LL128 0.92; tree .92 times LL 1/3.8, LL128 120/128 (several nodes) or 7/9, and
/// the correction factor at `size`. The per-channel caps (`llMaxBw`, `ll128MaxBwPerCh`,
/// `perChMaxTreeBw`) need NCCL's channel count and CPU, which a schedule does not carry.
fn tuner_bandwidth_factor(executor: Executor, collective: Collective, multi_node: bool, size: Rat) -> [f64; 3] {
    match executor {
        Executor::NcclTree => {
            let ll128 = if multi_node { 120.0 / 128.0 } else { 7.0 / 9.0 };
            let c = Protocol::ALL.map(|p| to_f64(&tree_correction(p, size)));
            [0.92 / 3.8 * c[0], 0.92 * ll128 * c[1], 0.92 * c[2]]
        }
        _ => {
            let reduction_to_all = matches!(collective, Collective::Allreduce | Collective::Reduce);
            let ll = if multi_node || reduction_to_all { 0.25 } else { 1.0 / 3.0 };
            [ll, 0.92, 1.0]
        }
    }
}

/// NCCL 2.12's time estimate (us) of `s` under each protocol [LL, LL128, Simple], as its
/// tuner computes it (`ncclTopoTuneModel` + `ncclTopoGetAlgoTime`): `baseLat` + the
/// schedule's longest dependency path of `hwLat` steps (the hardware row of each transfer's
/// slowest class; LL's intra-node steps x 1.8 on several nodes; the ring's Simple allreduce
/// latency x 1.9 from nRanks/16 x 64 KiB on several nodes, the "plateau effect") + the
/// busiest link's bytes at raw bandwidth times NCCL's protocol factor. The ring's path is its
/// 2(n-1) or n-1 steps, the tree's the chain up and down, as NCCL counts them.
pub fn estimates_us(s: &Schedule, topo: &Topology, size: Rat) -> Result<[f64; 3]> {
    crate::cost::check(s, topo, size, 1)?;
    if s.transfers.is_empty() {
        return Ok([0.0; 3]);
    }
    let executor = s.provenance.executor;
    let classes = classify(topo);
    let multi_node = classes.iter().any(|&c| params(c).nccl_hw == Some(NcclHw::Net));
    let mut finish = vec![[0.0f64; 3]; s.transfers.len()];
    let mut path = [0.0f64; 3];
    for i in topological_order(s)? {
        let t = &s.transfers[i];
        let hw = t.route.iter().filter_map(|&l| params(classes[l]).nccl_hw).max();
        let mut lat = hw.map_or([0.0; 3], |h| hw_latency_us(h, executor));
        if multi_node && hw != Some(NcclHw::Net) {
            lat[0] *= 1.8;
        }
        let ready = t.after.iter().fold([0.0f64; 3], |r, &a| std::array::from_fn(|x| r[x].max(finish[a][x])));
        for x in 0..3 {
            finish[i][x] = ready[x] + lat[x];
            path[x] = path[x].max(finish[i][x]);
        }
    }
    let base = base_latency_us(executor);
    let mut latency: [f64; 3] = std::array::from_fn(|x| base[x] + path[x]);
    let plateau = Rat::new(s.n_ranks as i128 * 65_536, 16);
    if executor == Executor::NcclRing && s.collective == Collective::Allreduce && multi_node && size >= plateau {
        latency[Protocol::Simple.index()] *= 1.9;
    }
    let busiest = link_loads(s, topo, size)
        .iter()
        .zip(&topo.links)
        .map(|(x, l)| to_f64(&(x / (l.bandwidth * Rat::from_integer(1000)))))
        .fold(0.0, f64::max);
    let factor = tuner_bandwidth_factor(executor, s.collective, multi_node, size);
    Ok(std::array::from_fn(|x| latency[x] + busiest / factor[x]))
}
