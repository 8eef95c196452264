//! The topology model: compute nodes (ranks) and switches joined by directed links.
//!
//! Plain data: a [`Topology`] is built once (by [`TopologyBuilder`], the JSON reader or the
//! zoo), validated, and then only read. Parallel links are merged (bandwidths add, the
//! smallest latency wins), links are kept sorted by (src, dst), and compute nodes keep their
//! input order, which defines the ranks.

pub mod automorphism;
mod builder;
pub mod json;
pub mod metrics;
pub mod restrict;
pub(crate) mod validate;

pub use builder::TopologyBuilder;
pub use metrics::Metrics;

use crate::rational::Rat;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A rank: holds data, sends, receives and reduces.
    Compute,
    /// Forward only: no data of its own, no reduction.
    Switch,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Compute => "compute",
            NodeKind::Switch => "switch",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Box / cluster label, for display and hierarchy-aware baselines.
    pub group: Option<String>,
}

/// A directed link after merging parallel links. `src`/`dst` are node indices.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub src: usize,
    pub dst: usize,
    /// GB/s (10^9 bytes per second), exact.
    pub bandwidth: Rat,
    /// Microseconds, >= 0.
    pub latency: f64,
}

/// A validated topology. Invariants (checked by the builder): at least one compute node,
/// compute nodes mutually reachable, no self-loops, every bandwidth > 0, every latency
/// finite and >= 0, every switch has a link, links sorted by (src, dst) without duplicates.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub name: String,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// `ranks[r]` is the node index of rank r.
    ranks: Vec<usize>,
    /// `rank_of[node]` is the rank of a compute node.
    rank_of: Vec<Option<usize>>,
    /// CSR offsets into `links` by source node (links are sorted by src).
    out_start: Vec<usize>,
    /// Link indices grouped by destination node.
    in_links: Vec<Vec<usize>>,
}

impl Topology {
    /// Number of compute nodes (ranks).
    pub fn n_ranks(&self) -> usize {
        self.ranks.len()
    }
    pub fn n_nodes(&self) -> usize {
        self.nodes.len()
    }
    pub fn n_switches(&self) -> usize {
        self.nodes.len() - self.ranks.len()
    }
    /// Node index of rank `r`.
    pub fn rank_node(&self, r: usize) -> usize {
        self.ranks[r]
    }
    /// Node indices of the ranks, in rank order.
    pub fn ranks(&self) -> &[usize] {
        &self.ranks
    }
    /// Rank of node `v`, or `None` for a switch.
    pub fn rank_of(&self, v: usize) -> Option<usize> {
        self.rank_of[v]
    }
    pub fn is_compute(&self, v: usize) -> bool {
        self.nodes[v].kind == NodeKind::Compute
    }
    /// Index of the node called `name`.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }
    /// Indices (into `links`) of the links leaving `v`, sorted by destination.
    pub fn out_links(&self, v: usize) -> std::ops::Range<usize> {
        self.out_start[v]..self.out_start[v + 1]
    }
    /// Indices of the links entering `v`, sorted by source.
    pub fn in_links(&self, v: usize) -> &[usize] {
        &self.in_links[v]
    }
    /// The link `u -> v`, if any.
    pub fn link_between(&self, u: usize, v: usize) -> Option<usize> {
        let r = self.out_links(u);
        self.links[r.clone()].binary_search_by_key(&v, |l| l.dst).ok().map(|i| r.start + i)
    }
    /// Total bandwidth leaving node `v`.
    pub fn egress(&self, v: usize) -> Rat {
        self.out_links(v).map(|i| self.links[i].bandwidth).sum()
    }
    /// Total bandwidth entering node `v`.
    pub fn ingress(&self, v: usize) -> Rat {
        self.in_links[v].iter().map(|&i| self.links[i].bandwidth).sum()
    }
    /// True when every link has a reverse link (bandwidths may differ).
    pub fn is_bidirectional(&self) -> bool {
        self.links.iter().all(|l| self.link_between(l.dst, l.src).is_some())
    }
}

#[cfg(test)]
mod tests;
