//! The time lower bound of the runtime model, with the simulator's own effective link
//! parameters (so `time_optimality` judges the schedule, not the hardware).
//!
//! For protocol p, every schedule simulated by [`super::sim`] takes at least
//! * `base_p + o_p + D`, where `o_p` is the smallest per-message overhead of any link class
//!   present (every byte moves in at least one message) and `D` the largest, over the rank
//!   pairs the collective must connect (every pair for allgather, reduce-scatter and
//!   allreduce; root to every rank for broadcast, every rank to root for reduce), of the
//!   shortest path by hop latency: a slice's first byte cannot reach its destination sooner
//!   (beyond [`EXACT_SOURCES`] ranks the maximum is over a sample of sources: still a bound);
//! * `base_p + o_p + M T / w_p + h`, where `T` is the exact cut bound's time per byte on the
//!   effective (Simple) bandwidths, `w_p` the protocol's wire factor and `h` the smallest hop
//!   latency: no link transmits before the first overhead has passed, the bottleneck cut's
//!   links need `M T / w_p` of transmission, and the last byte still crosses one hop;
//! * `base_p + s_p + M T_C / w_p + h` for the bottleneck cut C itself (allgather,
//!   reduce-scatter, broadcast, reduce: the cut `api::bounds` certifies `T` with), where
//!   `s_p` is the cut's bandwidth-weighted start: a link cannot transmit before the message
//!   overhead of its own class has passed (a slice pays its route's largest overhead, or
//!   NCCL's kernel step, before its first byte leaves), so link l of C carries at most
//!   `b_l (t - s_l)` by time t, and C's demand `M T_C sum b_l` needs
//!   `t >= M T_C + sum b_l s_l / sum b_l`. On `mi250:2` a GCD pair's IB ports start at
//!   22.5 us under Simple against its xGMI links' 3.6: +2.2 us.
//!
//! So the bound is `min over p of max(all three)`. All hold for every schedule the model can
//! run (proof: the three bullets); `T` is exactly as proven as the `optimality` bound it
//! comes from (`api::bounds` on the effective topology). Summing the terms instead of taking
//! the maximum would not be a bound: a schedule overlaps its latency with its transmission.

use super::classes::{classify, params};
use super::protocol::Protocol;
use crate::ir::Collective;
use crate::rational::{to_f64, Rat};
use crate::topology::Topology;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// `topo` with every link at its Simple effective bandwidth (raw x class efficiency).
pub fn effective_topology(topo: &Topology) -> Topology {
    let mut t = topo.clone();
    for (l, c) in t.links.iter_mut().zip(classify(topo)) {
        l.bandwidth = effective_bandwidth(l, c);
    }
    t
}

/// A link's Simple effective bandwidth: raw x its class's efficiency.
fn effective_bandwidth(link: &crate::topology::Link, class: super::classes::LinkClass) -> Rat {
    link.bandwidth * params(class).efficiency
}

/// The size-independent part of the bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyFloor {
    /// Per protocol [LL, LL128, Simple]: base latency + smallest message overhead (us).
    pub start_us: [f64; 3],
    /// Largest shortest-path hop latency between rank pairs the collective connects (us).
    pub distance_us: f64,
    /// Smallest hop latency of any link (us).
    pub min_hop_us: f64,
}

/// The bottleneck cut's own bandwidth term ([`cut_term`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CutTerm {
    /// Per protocol [LL, LL128, Simple]: base latency + the cut's bandwidth-weighted start (us).
    pub start_us: [f64; 3],
    /// The cut's demand over its capacity (us per byte of M), exact.
    pub time_per_byte_us: Rat,
}

/// Whether data leaves the cut's set S (allgather, broadcast) or enters it (reduce-scatter,
/// reduce: certified on the transpose); None where `T` is not one cut's demand of equal
/// shards (allreduce's two phases, allgatherv's sizes).
fn cut_leaves(collective: Collective) -> Option<bool> {
    match collective {
        Collective::Allgather | Collective::Broadcast => Some(true),
        Collective::ReduceScatter | Collective::Reduce => Some(false),
        Collective::Allreduce | Collective::Allgatherv => None,
    }
}

/// The earliest a link of class `c` can transmit under `p` in any execution the model runs:
/// MSCCL's interpreter pays the message overhead, NCCL's kernels their step.
fn earliest_start_us(c: super::classes::LinkClass, p: Protocol) -> f64 {
    let x = params(c);
    x.overhead_us[p.index()].min(x.nccl_step_us)
}

/// The bound's third term for `collective` from its bottleneck cut `cut` (the node set
/// `api::bounds` returns, on [`effective_topology`] bandwidths): None for allreduce, an
/// empty cut or a cut without capacity.
pub fn cut_term(topo: &Topology, collective: Collective, cut: &[usize]) -> Option<CutTerm> {
    let leaves = cut_leaves(collective)?;
    let mut inside = vec![false; topo.n_nodes()];
    for &v in cut {
        *inside.get_mut(v)? = true;
    }
    let classes = classify(topo);
    let crossing: Vec<usize> = (0..topo.links.len())
        .filter(|&l| inside[topo.links[l].src] == leaves && inside[topo.links[l].dst] != leaves)
        .collect();
    let bw = |l: usize| effective_bandwidth(&topo.links[l], classes[l]);
    let capacity: Rat = crossing.iter().map(|&l| bw(l)).sum();
    if capacity <= Rat::from_integer(0) {
        return None;
    }
    // Demand per byte of M: one shard per rank of S (allgather family), the message (rooted).
    let demand = if collective.is_rooted() {
        Rat::from_integer(1)
    } else {
        let ranks = cut.iter().filter(|&&v| topo.is_compute(v)).count();
        Rat::new(ranks as i128, topo.n_ranks() as i128)
    };
    let cap = to_f64(&capacity);
    let start_us = Protocol::ALL.map(|p| {
        let weighted: f64 = crossing.iter().map(|&l| to_f64(&bw(l)) * earliest_start_us(classes[l], p)).sum();
        p.base_latency_us() + weighted / cap
    });
    Some(CutTerm { start_us, time_per_byte_us: demand / capacity / Rat::from_integer(1000) })
}

/// Shortest path by hop latency from node `src` to every node (Dijkstra).
fn distances(topo: &Topology, lat: &[f64], src: usize) -> Vec<f64> {
    let mut d = vec![f64::INFINITY; topo.n_nodes()];
    let mut heap = BinaryHeap::new();
    d[src] = 0.0;
    heap.push(Reverse((0f64.to_bits(), src)));
    while let Some(Reverse((db, v))) = heap.pop() {
        let dv = f64::from_bits(db);
        if dv > d[v] {
            continue;
        }
        for l in topo.out_links(v) {
            let w = topo.links[l].dst;
            let nd = dv + lat[l];
            if nd < d[w] {
                d[w] = nd;
                heap.push(Reverse((nd.to_bits(), w)));
            }
        }
    }
    d
}

/// Most ranks whose distances to all others the all-to-all floor computes exactly (one
/// Dijkstra each); beyond it, [`SAMPLED_SOURCES`] evenly spaced ranks. A smaller maximum is
/// still a lower bound (weaker), and it keeps a million-rank topology to 64 Dijkstras.
pub const EXACT_SOURCES: usize = 512;
pub const SAMPLED_SOURCES: usize = 64;

fn sources(n: usize) -> Box<dyn Iterator<Item = usize>> {
    if n <= EXACT_SOURCES {
        Box::new(0..n)
    } else {
        Box::new((0..SAMPLED_SOURCES).map(move |x| x * n / SAMPLED_SOURCES))
    }
}

/// The latency part of the bound for `collective` (root for broadcast / reduce).
pub fn latency_floor(topo: &Topology, collective: Collective, root: usize) -> LatencyFloor {
    let classes = classify(topo);
    let lat = super::sim::hop_latencies(topo, &classes);
    let start_us = Protocol::ALL.map(|p| {
        let o = classes.iter().map(|&c| params(c).overhead_us[p.index()]).fold(f64::INFINITY, f64::min);
        p.base_latency_us() + if o.is_finite() { o } else { 0.0 }
    });
    let n = topo.n_ranks();
    let rank_dist = |u: usize| distances(topo, &lat, topo.rank_node(u));
    let far = |d: &[f64], ranks: &mut dyn Iterator<Item = usize>| {
        ranks.map(|v| d[topo.rank_node(v)]).filter(|x| x.is_finite()).fold(0.0, f64::max)
    };
    let distance_us = match collective {
        Collective::Broadcast => far(&rank_dist(root), &mut (0..n)),
        Collective::Reduce => (0..n).map(|u| far(&rank_dist(u), &mut std::iter::once(root))).fold(0.0, f64::max),
        _ => sources(n).map(|u| far(&rank_dist(u), &mut (0..n))).fold(0.0, f64::max),
    };
    let min_hop_us = lat.iter().copied().fold(f64::INFINITY, f64::min);
    LatencyFloor { start_us, distance_us, min_hop_us: if min_hop_us.is_finite() { min_hop_us } else { 0.0 } }
}

/// The bound (us) and the protocol that attains it, for `size` bytes, given the floor, the
/// exact cut bound's time per byte (us) on [`effective_topology`] and its cut's own term.
pub fn time_bound_us(floor: &LatencyFloor, time_per_byte_us: Rat, cut: Option<&CutTerm>, size: Rat) -> (f64, Protocol) {
    let mut best = (f64::INFINITY, Protocol::Simple);
    for p in Protocol::ALL {
        let start = floor.start_us[p.index()];
        let transmit = |per_byte: Rat| to_f64(&(per_byte * size / p.wire_factor()));
        let by_cut = cut.map_or(0.0, |c| c.start_us[p.index()] + transmit(c.time_per_byte_us) + floor.min_hop_us);
        let t = (start + floor.distance_us).max(start + transmit(time_per_byte_us) + floor.min_hop_us).max(by_cut);
        if t < best.0 {
            best = (t, p);
        }
    }
    best
}
