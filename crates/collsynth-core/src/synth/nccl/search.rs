//! NCCL's channel search (src/graph/search.cc `ncclTopoCompute`) on our topology model.
//!
//! A *box* is a group of ranks (`node.group`; ungrouped ranks form one box), NCCL's node.
//! For each box and channel the search finds a chain through all its GPUs that NCCL's ring
//! pattern would accept, reserving the channel's speed on every link it uses:
//! - one box: a cycle `GPU a -> ... -> GPU x -> GPU a` (`ncclTopoSearchParams`,
//!   backToFirstRank);
//! - several boxes: `NET n -> GPU a -> ... -> GPU x -> NET n` with `crossNic = 0` (the first
//!   mode `ncclTopoCompute` tries): the chain enters at the GPU owning NIC n
//!   (`ncclTopoSearchRecNet` tries `localGpu` first) and leaves through the same NIC, via
//!   the NIC's GPU when the last GPU is not it (PXN, `PATH_PXN`). NICs rotate over
//!   channels (`nets[(nChannels + i) % netCount]`), so every NIC carries a channel.
//!
//! Next-GPU order is `ncclTopoSearchNextGpuSort`: on a box with an NVSwitch only the
//! neighbours (index + 1, then - 1); otherwise by path bandwidth, then hops, then index
//! distance. Speeds are the SM80 arrays (`speedArrayIntra` / `speedArrayInter`): start at
//! the first speed not above the best GPU path (`system->maxBw`), keep the most
//! `channels x speed`, lower the speed while the next is above 0.49 of the found one (pass
//! 1). Then `ncclTopoDupChannels` (double when speed >= 25, at most `maxChannels` = 32) and
//! `ncclTopoPostset` in connect.cc (double again, at most MAXCHANNELS = 64). With no chain
//! at any speed NCCL falls back to the index order at 0.1 GB/s, and so do we.

use crate::error::Result;
use crate::rational::to_f64;
use crate::synth::baselines::common::Paths;
use crate::topology::Topology;
use std::collections::VecDeque;

/// search.cc `speedArrayIntra` (SM80), GB/s per channel.
pub const SPEEDS_INTRA: &[f64] = &[40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0];
/// search.cc `speedArrayInter` (SM80).
pub const SPEEDS_INTER: &[f64] =
    &[48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24, 0.12];
/// init.cc: `ringGraph->maxChannels = MAXCHANNELS / 2`.
pub const MAX_SEARCH_CHANNELS: usize = 32;
/// device.h `MAXCHANNELS`.
pub const MAX_CHANNELS: usize = 64;
/// search.cc `NCCL_SEARCH_TIMEOUT` (steps of one search).
const SEARCH_TIMEOUT: usize = 1 << 14;
/// `ncclTopoDupChannels` doubles when the per-channel speed is at least this.
const DUP_SPEED: f64 = 25.0;
/// Slack of bandwidth comparisons (speeds are floats, as in NCCL).
const EPS: f64 = 1e-9;

/// The ranks of each box, in rank order; boxes in order of first appearance.
pub fn boxes(topo: &Topology) -> Vec<Vec<usize>> {
    crate::synth::baselines::ring::groups(topo)
}

/// Per channel, per box, the chain of ranks.
pub type Chains = Vec<Vec<Vec<usize>>>;

/// What the search found: per search channel, per box, the chain of ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct Channels {
    /// Per-channel speed in GB/s (`bwIntra`/`bwInter` before duplication); 0.1 = fallback.
    pub speed: f64,
    /// Channels the search found (`graph->nChannels` of pass 1).
    pub searched: usize,
    /// Channels after `ncclTopoPostset` (twice `chains.len()`, at most [`MAX_CHANNELS`]).
    pub total: usize,
    /// `chains[c][b]`: the ranks of box b in the order of channel c, for the channels after
    /// `ncclTopoDupChannels`; the first rank is where the channel enters the box (its NIC's
    /// GPU with several boxes).
    pub chains: Chains,
    /// The NCCL fallback (no chain at any speed): index order.
    pub fallback: bool,
}

impl Channels {
    /// Chains of channel `c` of the `total` channels: duplicates repeat the searched ones.
    pub fn chain(&self, c: usize) -> &Vec<Vec<usize>> {
        &self.chains[c % self.chains.len()]
    }
}

/// One box's search state: its ranks and the links it may use.
struct BoxSearch<'p, 'a> {
    paths: &'p mut Paths<'a>,
    ranks: Vec<usize>,
    /// Box has a switch linked to all its ranks (NCCL's `system->nodes[NVS].count > 0`).
    nvswitch: bool,
    /// Local indices of the ranks with a NIC (way out of and into the box), in order.
    nets: Vec<usize>,
    /// Per local index: links from the rank out of the box, and into it.
    out_leg: Vec<Option<Vec<usize>>>,
    in_leg: Vec<Option<Vec<usize>>>,
    budget: usize,
}

/// The node's group equals the box's.
fn same_group(topo: &Topology, v: usize, group: Option<&str>) -> bool {
    topo.nodes[v].group.as_deref() == group
}

/// Shortest path from `start` through switches of `group` to the first node outside it,
/// following out-links (`forward`) or in-links; the links in travel order.
fn leg(topo: &Topology, start: usize, group: Option<&str>, forward: bool) -> Option<Vec<usize>> {
    let mut via = vec![usize::MAX; topo.n_nodes()];
    let mut seen = vec![false; topo.n_nodes()];
    seen[start] = true;
    let mut queue = VecDeque::from([start]);
    while let Some(u) = queue.pop_front() {
        if u != start && !same_group(topo, u, group) {
            let mut links = Vec::new();
            let mut v = u;
            while v != start {
                let l = via[v];
                links.push(l);
                v = if forward { topo.links[l].src } else { topo.links[l].dst };
            }
            if forward {
                links.reverse();
            }
            return Some(links);
        }
        if u != start && topo.is_compute(u) {
            continue;
        }
        let next: Vec<usize> = if forward { topo.out_links(u).collect() } else { topo.in_links(u).to_vec() };
        for l in next {
            let w = if forward { topo.links[l].dst } else { topo.links[l].src };
            if !seen[w] {
                seen[w] = true;
                via[w] = l;
                queue.push_back(w);
            }
        }
    }
    None
}

impl<'p, 'a> BoxSearch<'p, 'a> {
    fn new(paths: &'p mut Paths<'a>, ranks: Vec<usize>, multi: bool) -> Self {
        let topo = paths.topology();
        let group = topo.nodes[topo.rank_node(ranks[0])].group.as_deref();
        let nodes: Vec<usize> = ranks.iter().map(|&r| topo.rank_node(r)).collect();
        let nvswitch = ranks.len() >= 3
            && (0..topo.n_nodes()).any(|v| {
                !topo.is_compute(v)
                    && same_group(topo, v, group)
                    && nodes.iter().all(|&g| topo.link_between(v, g).is_some() && topo.link_between(g, v).is_some())
            });
        let (mut out_leg, mut in_leg) = (vec![None; ranks.len()], vec![None; ranks.len()]);
        if multi {
            for (i, &g) in nodes.iter().enumerate() {
                out_leg[i] = leg(topo, g, group, true);
                in_leg[i] = leg(topo, g, group, false);
            }
        }
        let nets = (0..ranks.len()).filter(|&i| out_leg[i].is_some() && in_leg[i].is_some()).collect();
        BoxSearch { paths, ranks, nvswitch, nets, out_leg, in_leg, budget: 0 }
    }

    fn route(&mut self, a: usize, b: usize) -> Result<Vec<usize>> {
        self.paths.route(self.ranks[a], self.ranks[b])
    }

    fn bottleneck(&self, links: &[usize]) -> f64 {
        let topo = self.paths.topology();
        links.iter().map(|&l| to_f64(&topo.links[l].bandwidth)).fold(f64::INFINITY, f64::min)
    }

    /// `system->maxBw`: the best GPU-to-NIC path (several boxes) or GPU-to-GPU path.
    fn max_bw(&mut self, multi: bool) -> Result<f64> {
        let k = self.ranks.len();
        let mut best: f64 = 0.0;
        if multi {
            for &i in &self.nets {
                let legs = [self.out_leg[i].clone().unwrap_or_default(), self.in_leg[i].clone().unwrap_or_default()];
                best = best.max(self.bottleneck(&legs.concat()));
            }
        } else {
            for a in 0..k.min(64) {
                for b in 0..k {
                    if a != b {
                        let r = self.route(a, b)?;
                        best = best.max(self.bottleneck(&r));
                    }
                }
            }
        }
        Ok(best)
    }

    /// Candidates after local index `u` (`ncclTopoSearchNextGpuSort`).
    fn next_gpus(&mut self, u: usize, visited: &[bool]) -> Result<Vec<usize>> {
        let k = self.ranks.len();
        if self.nvswitch {
            let mut c = vec![(u + 1) % k];
            if (u + k - 1) % k != c[0] {
                c.push((u + k - 1) % k);
            }
            return Ok(c.into_iter().filter(|&v| !visited[v]).collect());
        }
        let mut scored = Vec::new();
        for v in (0..k).filter(|&v| !visited[v]) {
            let r = self.route(u, v)?;
            scored.push((-self.bottleneck(&r), r.len(), (v + k - u) % k, v));
        }
        scored.sort_by(|a, b| a.partial_cmp(b).expect("bandwidths are finite"));
        Ok(scored.into_iter().map(|s| s.3).collect())
    }
}

/// Link capacities left, reserved channel by channel.
struct Capacity(Vec<f64>);

impl Capacity {
    fn fits(&self, links: &[usize], s: f64) -> bool {
        // a link used twice by one path needs twice the speed
        let mut need: Vec<(usize, f64)> = Vec::new();
        for &l in links {
            match need.iter_mut().find(|(m, _)| *m == l) {
                Some((_, x)) => *x += s,
                None => need.push((l, s)),
            }
        }
        need.iter().all(|&(l, x)| self.0[l] + EPS >= x)
    }
    fn take(&mut self, links: &[usize], s: f64) {
        links.iter().for_each(|&l| self.0[l] -= s);
    }
    fn give(&mut self, links: &[usize], s: f64) {
        links.iter().for_each(|&l| self.0[l] += s);
    }
}

/// Depth-first search for one channel's chain from local index `first` at speed `s`,
/// reserving on `cap` (kept reserved when found). `closing(x)`: links from the last GPU x
/// back to the start (ring) or out through the entry NIC.
fn chain(bs: &mut BoxSearch, cap: &mut Capacity, first: usize, s: f64, multi: bool) -> Result<Option<Vec<usize>>> {
    let k = bs.ranks.len();
    let mut visited = vec![false; k];
    visited[first] = true;
    let mut order = vec![first];
    let mut taken: Vec<Vec<usize>> = Vec::new();
    let mut stack = vec![bs.next_gpus(first, &visited)?];
    stack[0].reverse();
    loop {
        if bs.budget == 0 {
            break;
        }
        bs.budget -= 1;
        if order.len() == k {
            let x = *order.last().expect("non-empty");
            let mut close = if x == first { Vec::new() } else { bs.route(x, first)? };
            if multi {
                close.extend(bs.out_leg[first].clone().unwrap_or_default());
            }
            if cap.fits(&close, s) {
                cap.take(&close, s);
                return Ok(Some(order));
            }
            stack.last_mut().expect("a frame per rank").clear();
        }
        let Some(frame) = stack.last_mut() else { break };
        match frame.pop() {
            Some(v) => {
                let u = *order.last().expect("non-empty");
                let r = bs.route(u, v)?;
                if cap.fits(&r, s) {
                    cap.take(&r, s);
                    taken.push(r);
                    visited[v] = true;
                    order.push(v);
                    let mut next = bs.next_gpus(v, &visited)?;
                    next.reverse();
                    stack.push(next);
                }
            }
            None => {
                stack.pop();
                if order.len() > 1 {
                    let v = order.pop().expect("non-empty");
                    visited[v] = false;
                    let r = taken.pop().expect("one route per hop");
                    cap.give(&r, s);
                } else {
                    break;
                }
            }
        }
    }
    Ok(None)
}

/// Channels of every box at speed `s`: for each box as many as fit (at most
/// [`MAX_SEARCH_CHANNELS`]); the count is the smallest over boxes.
fn at_speed(topo: &Topology, searches: &mut [BoxSearch], s: f64, multi: bool) -> Result<Chains> {
    let mut cap = Capacity(topo.links.iter().map(|l| to_f64(&l.bandwidth)).collect());
    let mut per_box: Vec<Vec<Vec<usize>>> = Vec::new();
    let mut limit = MAX_SEARCH_CHANNELS;
    for bs in searches.iter_mut() {
        let mut chains = Vec::new();
        bs.budget = SEARCH_TIMEOUT;
        while chains.len() < limit {
            let c = chains.len();
            let starts: Vec<usize> = if multi {
                (0..bs.nets.len()).map(|i| bs.nets[(c + i) % bs.nets.len()]).collect()
            } else {
                (0..bs.ranks.len()).collect()
            };
            let mut found = None;
            for first in starts {
                if multi {
                    let entry = bs.in_leg[first].clone().unwrap_or_default();
                    if !cap.fits(&entry, s) {
                        continue;
                    }
                    cap.take(&entry, s);
                    found = chain(bs, &mut cap, first, s, multi)?;
                    if found.is_none() {
                        cap.give(&entry, s);
                    }
                } else {
                    found = chain(bs, &mut cap, first, s, multi)?;
                }
                if found.is_some() || bs.budget == 0 {
                    break;
                }
            }
            match found {
                Some(order) => chains.push(order.into_iter().map(|i| bs.ranks[i]).collect()),
                None => break,
            }
        }
        limit = limit.min(chains.len());
        per_box.push(chains);
    }
    // channel-major, the first `limit` of each box
    Ok((0..limit).map(|c| per_box.iter().map(|b| b[c].clone()).collect()).collect())
}

/// Pass 1 of `ncclTopoCompute`: the speed and chains with the most `channels x speed`, or
/// `None` when no box finds a chain (or, with several boxes, one has no NIC).
fn pass_one(topo: &Topology, boxes: &[Vec<usize>], multi: bool) -> Result<Option<(f64, Chains)>> {
    // one Paths per box: each search borrows its own (routes are cached per source rank)
    let mut box_paths: Vec<Paths> = boxes.iter().map(|_| Paths::new(topo)).collect();
    let mut searches: Vec<BoxSearch> =
        boxes.iter().zip(box_paths.iter_mut()).map(|(b, p)| BoxSearch::new(p, b.clone(), multi)).collect();
    if multi && searches.iter().any(|bs| bs.nets.is_empty()) {
        return Ok(None);
    }
    let mut max_bw = f64::INFINITY;
    for bs in searches.iter_mut() {
        max_bw = max_bw.min(bs.max_bw(multi)?);
    }
    let speeds = if multi { SPEEDS_INTER } else { SPEEDS_INTRA };
    let mut found: Option<(f64, Chains)> = None;
    let first = speeds.iter().position(|&s| s <= max_bw + EPS).unwrap_or(speeds.len() - 1);
    for &s in &speeds[first..] {
        if found.as_ref().is_some_and(|(fs, _)| s / fs <= 0.49) {
            break;
        }
        let chains = at_speed(topo, &mut searches, s, multi)?;
        let better = match &found {
            None => !chains.is_empty(),
            Some((fs, fc)) => chains.len() as f64 * s > fc.len() as f64 * fs + EPS,
        };
        if better {
            found = Some((s, chains));
        }
    }
    Ok(found)
}

/// NCCL's ring channels on `topo` (see the module docs).
pub fn search(topo: &Topology) -> Result<Channels> {
    let boxes = boxes(topo);
    let found = pass_one(topo, &boxes, boxes.len() >= 2)?;
    Ok(match found {
        Some((speed, chains)) => {
            let searched = chains.len();
            let dup =
                if speed + EPS >= DUP_SPEED { (2 * searched).clamp(searched, MAX_SEARCH_CHANNELS) } else { searched };
            let speed = speed / dup.div_ceil(searched) as f64;
            let total = (2 * dup).min(MAX_CHANNELS);
            let chains = (0..dup).map(|c| chains[c % searched].clone()).collect();
            Channels { speed, searched, total, chains, fallback: false }
        }
        None => Channels { speed: 0.1, searched: 1, total: 2, chains: vec![boxes], fallback: true },
    })
}
