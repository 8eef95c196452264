//! The topology as BFB reads it: ranks, each rank's in-links with integer capacities, and
//! the hop distances between ranks (BFS over in-links), all of them or only the rows one
//! rank's subproblems read.

use super::{in_parallel, MAX_RANKS};
use crate::error::{CollsynthError, Result};
use crate::flow::{integer_capacities, Cap};
use crate::rational::Rat;
use crate::topology::Topology;
use num_traits::{One, Zero};

/// An in-link (w, u) of rank u.
#[derive(Debug, Clone, Copy)]
pub(super) struct InLink {
    /// Rank w.
    pub(super) from: u32,
    /// Index of the link in the topology.
    pub(super) link: u32,
    /// Bandwidth scaled to an integer (see [`integer_capacities`]).
    pub(super) cap: Cap,
}

pub(super) struct Graph {
    pub(super) n: usize,
    /// In-links of each rank, by source node.
    pub(super) ins: Vec<Vec<InLink>>,
    /// `dist[slot[x] * n + v]` = hops from v to x (every rank reaches every rank: validated)
    /// for the ranks x whose row was computed ([`Graph::new`]: all, in rank order).
    pub(super) dist: Vec<u16>,
    pub(super) slot: Vec<u32>,
    /// The largest distance in the computed rows: the diameter D, the number of steps, when
    /// every row is computed or the graph is vertex-transitive.
    pub(super) steps: usize,
    /// Bandwidth = capacity / sigma.
    pub(super) sigma: Rat,
    /// With `hetero`: every link's latency (µs, exact) and the scale k of [`hetero::solve`].
    pub(super) hetero: Option<(Vec<Rat>, Rat)>,
    /// Every link's latency (µs) as the cost model reads it (`cost::route_latency`).
    pub(super) latency: Vec<f64>,
}

impl Graph {
    /// The graph of `topo` with every distance row.
    pub(super) fn new(topo: &Topology) -> Result<Graph> {
        let mut g = Graph::without_rows(topo)?;
        g.all_rows();
        Ok(g)
    }

    pub(super) fn all_rows(&mut self) {
        let all: Vec<usize> = (0..self.n).collect();
        self.rows(&all);
    }

    /// The graph of `topo` with only the rows rank `u`'s subproblems read: u's own and its
    /// in-neighbours' (so [`plan_node`] works for u alone).
    pub(super) fn around(topo: &Topology, u: usize) -> Result<Graph> {
        let mut g = Graph::without_rows(topo)?;
        let ins = g.ins.get(u).into_iter().flatten();
        let mut rows: Vec<usize> =
            std::iter::once(u).chain(ins.map(|i| i.from as usize)).filter(|&x| x < g.n).collect();
        rows.sort_unstable();
        rows.dedup();
        g.rows(&rows);
        Ok(g)
    }

    /// The graph of ranks `0..n` with one link of capacity 1 per arc, link ids the arcs'
    /// positions, without rows: [`Graph::without_rows`] of the topology of those links, all of
    /// one bandwidth, but for the scale sigma (1 here; the caller's values must not depend on
    /// it) and the latencies (0; only plans emitted for a cost model read them).
    pub(super) fn from_arcs(n: usize, arcs: &[(usize, usize)]) -> Graph {
        let mut ins: Vec<Vec<InLink>> = vec![Vec::new(); n];
        for (l, &(u, v)) in arcs.iter().enumerate() {
            ins[v].push(InLink { from: u as u32, link: l as u32, cap: 1 });
        }
        let latency = vec![0.0; arcs.len()];
        Graph { n, ins, dist: Vec::new(), slot: Vec::new(), steps: 0, sigma: Rat::one(), hetero: None, latency }
    }

    /// Everything but the distances (checked: no switches, at most [`MAX_RANKS`] ranks).
    pub(super) fn without_rows(topo: &Topology) -> Result<Graph> {
        if topo.n_switches() > 0 {
            return Err(CollsynthError::bad(format!(
                "bfb needs a direct-connect topology (no switches); '{}' has {} switch(es)",
                topo.name,
                topo.n_switches()
            )));
        }
        let n = topo.n_ranks();
        if n > MAX_RANKS {
            return Err(CollsynthError::bad(format!("bfb: at most {MAX_RANKS} ranks, '{}' has {n}", topo.name)));
        }
        let (caps, sigma) = integer_capacities(topo)?;
        let ins: Vec<Vec<InLink>> = (0..n)
            .map(|u| {
                let node = topo.rank_node(u);
                topo.in_links(node)
                    .iter()
                    .map(|&l| {
                        let from = topo.rank_of(topo.links[l].src).expect("no switches");
                        InLink { from: from as u32, link: l as u32, cap: caps[l] }
                    })
                    .collect()
            })
            .collect();
        let latency = (0..topo.links.len()).map(|l| crate::cost::route_latency(topo, &[l])).collect();
        Ok(Graph { n, ins, dist: Vec::new(), slot: Vec::new(), steps: 0, sigma, hetero: None, latency })
    }

    /// Compute the distance rows of `targets` (sorted, distinct ranks) and the steps.
    pub(super) fn rows(&mut self, targets: &[usize]) {
        let ins = &self.ins;
        self.dist = in_parallel(targets.len(), |range| distances_to(ins, &targets[range])).concat();
        self.steps = self.dist.iter().copied().max().unwrap_or(0) as usize;
        self.slot = vec![u32::MAX; self.n];
        for (i, &x) in targets.iter().enumerate() {
            self.slot[x] = i as u32;
        }
    }

    /// The smallest and largest total in-link bandwidth of a rank (GB/s; from the integer
    /// capacities, one division each).
    pub(super) fn ingress_bounds(&self) -> (Rat, Rat) {
        let sums = self.ins.iter().map(|ins| ins.iter().map(|i| i.cap).sum::<Cap>());
        let (min, max) = sums.fold((Cap::MAX, 0), |(lo, hi), c| (lo.min(c), hi.max(c)));
        if self.n == 0 {
            return (Rat::zero(), Rat::zero());
        }
        (Rat::from_integer(min) / self.sigma, Rat::from_integer(max) / self.sigma)
    }

    /// Hops from every rank to `x`. Panics if x's row was not computed.
    pub(super) fn row(&self, x: usize) -> &[u16] {
        let i = self.slot[x] as usize;
        &self.dist[i * self.n..(i + 1) * self.n]
    }
}

/// The distance rows of `targets`: BFS backwards over in-links from each x.
pub(super) fn distances_to(ins: &[Vec<InLink>], targets: &[usize]) -> Vec<u16> {
    let n = ins.len();
    let mut out = vec![u16::MAX; targets.len() * n];
    // Every node enters the queue once per BFS, so a flat array with a read index is the
    // whole queue (no ring buffer).
    let mut queue: Vec<u32> = Vec::with_capacity(n);
    for (i, &x) in targets.iter().enumerate() {
        let row = &mut out[i * n..(i + 1) * n];
        row[x] = 0;
        queue.clear();
        queue.push(x as u32);
        let mut head = 0;
        while let Some(&y) = queue.get(head) {
            head += 1;
            let next = row[y as usize] + 1;
            for inl in &ins[y as usize] {
                let z = inl.from as usize;
                if row[z] == u16::MAX {
                    row[z] = next;
                    queue.push(z as u32);
                }
            }
        }
    }
    out
}
