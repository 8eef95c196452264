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
//!   links need `M T / w_p` of transmission, and the last byte still crosses one hop.
//!
//! So the bound is `min over p of max(both)`. Both hold for every schedule the model can
//! run (proof: the two bullets); `T` is exactly as proven as the `optimality` bound it
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
        l.bandwidth *= params(c).efficiency;
    }
    t
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

/// The bound (us) and the protocol that attains it, for `size` bytes, given the floor and
/// the exact cut bound's time per byte (us) on [`effective_topology`].
pub fn time_bound_us(floor: &LatencyFloor, time_per_byte_us: Rat, size: Rat) -> (f64, Protocol) {
    let mut best = (f64::INFINITY, Protocol::Simple);
    for p in Protocol::ALL {
        let start = floor.start_us[p.index()];
        let bandwidth = to_f64(&(time_per_byte_us * size / p.wire_factor()));
        let t = (start + floor.distance_us).max(start + bandwidth + floor.min_hop_us);
        if t < best.0 {
            best = (t, p);
        }
    }
    best
}
