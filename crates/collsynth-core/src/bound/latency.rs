//! Latency lower bounds, in communication steps / hops.

use crate::topology::metrics::bfs_hops;
use crate::topology::Topology;

/// Largest hop count between two compute nodes, counting hops through switches (0 when
/// N = 1). Any collective in which every rank needs data from every other rank (allgather,
/// reduce-scatter, allreduce) takes at least this many hops of latency.
pub fn diameter_hops(topo: &Topology) -> usize {
    let mut diameter = 0;
    for &s in topo.ranks() {
        let dist = bfs_hops(topo, s);
        for &v in topo.ranks() {
            diameter = diameter.max(dist[v]);
        }
    }
    diameter
}

/// Moore bound: the smallest `k` with `sum_{i=0..=k} d^i >= n`, i.e. the fewest steps in
/// which data from one node can reach `n` nodes on a graph of out-degree `d`. 0 when
/// `n <= 1`; `usize::MAX` when `d = 0` and `n >= 2` (unreachable).
pub fn moore_steps(n: usize, d: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    if d == 0 {
        return usize::MAX;
    }
    if d == 1 {
        return n - 1;
    }
    let (mut reached, mut layer, mut k) = (1usize, 1usize, 0usize);
    while reached < n {
        layer = layer.saturating_mul(d);
        reached = reached.saturating_add(layer);
        k += 1;
    }
    k
}

/// Rounds of a one-ported broadcast (or any collective where one rank's data must reach all
/// `p`): `ceil(log2 p)`, since the informed set at most doubles per round. 0 when `p <= 1`.
pub fn one_ported_broadcast_rounds(p: usize) -> usize {
    if p <= 1 {
        0
    } else {
        (usize::BITS - (p - 1).leading_zeros()) as usize
    }
}
