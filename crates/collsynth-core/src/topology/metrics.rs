//! Summary metrics of a topology, as shown by `topo show`.

use super::Topology;
use crate::error::{CollsynthError, Result};
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

/// Most BFS work (sources times nodes plus links) the metrics may take: a few seconds on
/// one core. Beyond it they are refused rather than left to run for hours.
pub const MAX_METRICS_WORK: u128 = 1 << 32;

/// Whether moving every rank to the next one (rank N-1 to rank 0) is an automorphism of a
/// topology without switches (links and their bandwidths and latencies). Then every rank
/// sees the same distances and one BFS gives every metric. Links are sorted by (src, dst),
/// so each image is found by binary search: O(links log degree), no extra memory.
pub fn rank_shift_is_automorphism(t: &Topology) -> bool {
    let n = t.n_ranks();
    if t.n_switches() != 0 || n < 2 {
        return false;
    }
    let next = |v: usize| t.rank_node((t.rank_of(v).unwrap_or(0) + 1) % n);
    t.links.iter().all(|l| {
        let range = t.out_links(next(l.src));
        let (dst, image) = (next(l.dst), &t.links[range.clone()]);
        image
            .binary_search_by_key(&dst, |m| m.dst)
            .is_ok_and(|k| image[k].bandwidth == l.bandwidth && image[k].latency.to_bits() == l.latency.to_bits())
    })
}

/// Compute all metrics: one BFS per compute node, O(N * links), or one BFS when the ranks
/// are all alike ([`rank_shift_is_automorphism`]). Refused (BadInput) above
/// [`MAX_METRICS_WORK`].
pub fn metrics(t: &Topology) -> Result<Metrics> {
    let n = t.n_ranks();
    let sources: &[usize] = if rank_shift_is_automorphism(t) { &t.ranks()[..1] } else { t.ranks() };
    let work = sources.len() as u128 * (t.n_nodes() + t.links.len()) as u128;
    if work > MAX_METRICS_WORK {
        return Err(CollsynthError::bad(format!(
            "{}: its diameter and average distance need a BFS from each of its {n} ranks over {} links, {work} steps, above the limit of 2^32",
            t.name,
            t.links.len()
        )));
    }
    let out_deg: Vec<usize> = t.ranks().iter().map(|&v| t.out_links(v).len()).collect();
    let in_deg: Vec<usize> = t.ranks().iter().map(|&v| t.in_links(v).len()).collect();
    let egress: Vec<Rat> = t.ranks().iter().map(|&v| t.egress(v)).collect();
    let (mut diameter, mut total) = (0usize, 0u128);
    for &s in sources {
        let dist = bfs_hops(t, s);
        for &v in t.ranks() {
            if v != s {
                diameter = diameter.max(dist[v]);
                total += dist[v] as u128;
            }
        }
    }
    // With one source standing for all, every rank's distances sum to the same.
    if sources.len() == 1 {
        total *= n as u128;
    }
    let pairs = (n * n.saturating_sub(1)) as f64;
    Ok(Metrics {
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
    })
}

impl Topology {
    pub fn metrics(&self) -> Result<Metrics> {
        metrics(self)
    }
}
