//! Summary metrics of a topology, as shown by `topo show`.

use super::Topology;
use crate::rational::Rat;
use std::collections::VecDeque;

#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// Compute nodes.
    pub n: usize,
    pub switches: usize,
    /// Directed links after merging parallel links.
    pub links: usize,
    /// Out-degree (distinct out-neighbours, switches included) of compute nodes.
    pub min_degree: usize,
    pub max_degree: usize,
    /// In-degree of compute nodes.
    pub min_in_degree: usize,
    pub max_in_degree: usize,
    /// Largest hop count between two compute nodes (through switches).
    pub diameter: usize,
    /// Mean hop count over ordered pairs of distinct compute nodes (0 when N = 1).
    pub average_distance: f64,
    /// Every link has a reverse link.
    pub bidirectional: bool,
    /// Total egress bandwidth of compute nodes (GB/s), smallest and largest.
    pub min_egress: Rat,
    pub max_egress: Rat,
}

/// Hop distances from node `s` to every node (`usize::MAX` when unreachable).
pub fn bfs_hops(t: &Topology, s: usize) -> Vec<usize> {
    let mut dist = vec![usize::MAX; t.n_nodes()];
    let mut queue = VecDeque::from([s]);
    dist[s] = 0;
    while let Some(u) = queue.pop_front() {
        for i in t.out_links(u) {
            let w = t.links[i].dst;
            if dist[w] == usize::MAX {
                dist[w] = dist[u] + 1;
                queue.push_back(w);
            }
        }
    }
    dist
}

/// Compute all metrics. Cost: one BFS per compute node, O(N * links).
pub fn metrics(t: &Topology) -> Metrics {
    let out_deg: Vec<usize> = t.ranks().iter().map(|&v| t.out_links(v).len()).collect();
    let in_deg: Vec<usize> = t.ranks().iter().map(|&v| t.in_links(v).len()).collect();
    let egress: Vec<Rat> = t.ranks().iter().map(|&v| t.egress(v)).collect();
    let (mut diameter, mut total) = (0usize, 0u128);
    for &s in t.ranks() {
        let dist = bfs_hops(t, s);
        for &v in t.ranks() {
            if v != s {
                diameter = diameter.max(dist[v]);
                total += dist[v] as u128;
            }
        }
    }
    let n = t.n_ranks();
    let pairs = (n * n.saturating_sub(1)) as f64;
    Metrics {
        n,
        switches: t.n_switches(),
        links: t.links.len(),
        min_degree: *out_deg.iter().min().unwrap_or(&0),
        max_degree: *out_deg.iter().max().unwrap_or(&0),
        min_in_degree: *in_deg.iter().min().unwrap_or(&0),
        max_in_degree: *in_deg.iter().max().unwrap_or(&0),
        diameter,
        average_distance: if n > 1 { total as f64 / pairs } else { 0.0 },
        bidirectional: t.is_bidirectional(),
        min_egress: egress.iter().min().copied().unwrap_or_default(),
        max_egress: egress.iter().max().copied().unwrap_or_default(),
    }
}

impl Topology {
    pub fn metrics(&self) -> Metrics {
        metrics(self)
    }
}
