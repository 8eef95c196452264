//! Building a topology: add nodes and links in any order, then `build()` merges parallel
//! links, sorts them canonically and validates everything once.

use super::{validate, Link, Node, NodeKind, Topology};
use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use num_traits::CheckedAdd;
use std::collections::HashMap;

#[derive(Debug, Default)]
pub struct TopologyBuilder {
    name: String,
    nodes: Vec<Node>,
    index: HashMap<String, usize>,
    /// Raw links in insertion order (before merging), with a label for error messages (None:
    /// "link SRC -> DST", written only if needed: most topologies never report one).
    raw: Vec<(usize, usize, Rat, f64, Option<String>)>,
    first_error: Option<CollsynthError>,
}

impl TopologyBuilder {
    pub fn new(name: impl Into<String>) -> Self {
        TopologyBuilder { name: name.into(), ..Default::default() }
    }

    fn add_node(&mut self, name: String, kind: NodeKind, group: Option<String>) -> usize {
        if let Some(&i) = self.index.get(&name) {
            self.fail(CollsynthError::bad(format!("duplicate node name '{name}'")));
            return i;
        }
        let i = self.nodes.len();
        self.index.insert(name.clone(), i);
        self.nodes.push(Node { name, kind, group });
        i
    }

    /// Add a compute node (the next rank); returns its node index.
    pub fn compute(&mut self, name: impl Into<String>, group: Option<&str>) -> usize {
        self.add_node(name.into(), NodeKind::Compute, group.map(str::to_owned))
    }

    /// Add a switch node; returns its node index.
    pub fn switch(&mut self, name: impl Into<String>, group: Option<&str>) -> usize {
        self.add_node(name.into(), NodeKind::Switch, group.map(str::to_owned))
    }

    /// Add a node of the given kind.
    pub fn node(&mut self, name: impl Into<String>, kind: NodeKind, group: Option<&str>) -> usize {
        self.add_node(name.into(), kind, group.map(str::to_owned))
    }

    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn n_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Add the directed link `src -> dst`; `label` locates it in error messages.
    pub fn link_labeled(&mut self, src: usize, dst: usize, bw: Rat, lat: f64, label: String) {
        self.raw.push((src, dst, bw, lat, Some(label)));
    }

    /// Add the directed link `src -> dst`.
    pub fn link(&mut self, src: usize, dst: usize, bw: Rat, lat: f64) {
        self.raw.push((src, dst, bw, lat, None));
    }

    /// Add links both ways, each with the full bandwidth.
    pub fn bilink(&mut self, a: usize, b: usize, bw: Rat, lat: f64) {
        self.link(a, b, bw, lat);
        self.link(b, a, bw, lat);
    }

    /// Record an error; `build()` reports the first one.
    pub fn fail(&mut self, e: CollsynthError) {
        self.first_error.get_or_insert(e);
    }

    fn name_of(&self, v: usize) -> &str {
        self.nodes.get(v).map(|n| n.name.as_str()).unwrap_or("?")
    }

    /// Merge, sort and validate. Guarantees the invariants documented on [`Topology`].
    pub fn build(self) -> Result<Topology> {
        if let Some(e) = self.first_error {
            return Err(e);
        }
        for (src, dst, bw, lat, label) in &self.raw {
            validate::link(&self.nodes, *src, *dst, bw, *lat).map_err(|e| match label {
                Some(label) => e.context(label),
                None => e.context(&format!("link {} -> {}", self.name_of(*src), self.name_of(*dst))),
            })?;
        }
        // Sorted by (src, dst), parallel links merged: bandwidths add, the least latency stays.
        let order = link_order(&self.raw, self.nodes.len());
        let mut links: Vec<Link> = Vec::with_capacity(order.len());
        for i in order {
            let (src, dst, ref bw, lat, _) = self.raw[i];
            match links.last_mut() {
                Some(l) if (l.src, l.dst) == (src, dst) => {
                    let sum = l.bandwidth.checked_add(bw).filter(validate::exact_enough);
                    l.bandwidth = sum.ok_or_else(|| {
                        let (a, b) = (&self.nodes[src].name, &self.nodes[dst].name);
                        CollsynthError::bad(format!("link {a} -> {b}: {}", validate::TOO_FINE))
                    })?;
                    l.latency = l.latency.min(lat);
                }
                _ => links.push(Link { src, dst, bandwidth: *bw, latency: lat }),
            }
        }
        let topo = assemble(self.name, self.nodes, links);
        validate::topology(&topo)?;
        Ok(topo)
    }
}

/// Positions of the raw links (endpoints below `nodes`) in a stable sort by (src, dst): by a
/// counting sort on src, then each src's few links by (dst, position), instead of a
/// comparison sort of every link (most families add them by src already, not by dst).
fn link_order(raw: &[(usize, usize, Rat, f64, Option<String>)], nodes: usize) -> Vec<usize> {
    let mut start = vec![0usize; nodes + 1];
    for l in raw {
        start[l.0 + 1] += 1;
    }
    for v in 0..nodes {
        start[v + 1] += start[v];
    }
    let mut order = vec![0usize; raw.len()];
    let mut fill = start.clone();
    for (i, l) in raw.iter().enumerate() {
        order[fill[l.0]] = i;
        fill[l.0] += 1;
    }
    for run in start.windows(2) {
        let links = &mut order[run[0]..run[1]];
        if !links.is_sorted_by_key(|&i| raw[i].1) {
            links.sort_unstable_by_key(|&i| (raw[i].1, i));
        }
    }
    order
}

/// Index the (already sorted, merged) links.
fn assemble(name: String, nodes: Vec<Node>, links: Vec<Link>) -> Topology {
    let n = nodes.len();
    let mut ranks = Vec::new();
    let mut rank_of = vec![None; n];
    for (i, node) in nodes.iter().enumerate() {
        if node.kind == NodeKind::Compute {
            rank_of[i] = Some(ranks.len());
            ranks.push(i);
        }
    }
    let mut out_start = vec![0; n + 1];
    for l in &links {
        out_start[l.src + 1] += 1;
    }
    for v in 0..n {
        out_start[v + 1] += out_start[v];
    }
    let mut in_degree = vec![0usize; n];
    for l in &links {
        in_degree[l.dst] += 1;
    }
    let mut in_links: Vec<Vec<usize>> = in_degree.into_iter().map(Vec::with_capacity).collect();
    for (i, l) in links.iter().enumerate() {
        in_links[l.dst].push(i);
    }
    Topology { name, nodes, links, ranks, rank_of, out_start, in_links }
}
