//! Fast path for identical boxes on one switch (`mi250:N`): ranks joined by direct links
//! inside a box (the components of the rank-to-rank links), every rank with one link to and
//! one link from the single switch.
//!
//! Construction: tree j of rank i in box B spans box B with an in-box tree rooted at i, goes
//! from i to position i of every other box through the switch, and spans each of those boxes
//! with an in-box tree rooted at position i. Position i of every box then roots `k N` in-box
//! trees (k of its own, k per other box), so one packing of `k N` out-trees per rank inside
//! one box (Alg. 5 on G ranks, not on all N G) serves every box: in-box unit `B k + j` of
//! position i goes to tree (B, i, j) in every box, which uses each unit exactly once.
//!
//! Exact where it applies: loads are the box packing's inside a box and `k (N - 1)` on every
//! switch link, so the forest fits `caps` iff those links carry `k (N - 1)` trees and Edmonds'
//! condition holds for `k N` trees per rank in the box (checked with G flows). This holds at
//! the optimum when the bottleneck is a box's switch ingress (MI250 x4 and up); otherwise
//! (MI250 x2) [`trees`] returns None and the caller packs in general.

use super::emit::Tree;
use super::packing::{self, Batch, Stats};
use crate::flow::{Cap, FlowNetwork};
use crate::topology::Topology;

/// Boxes of equal size and equal in-box capacities, and the switch links of every rank.
pub struct Boxes {
    /// `boxes[b][p]`: the rank at position p of box b (ranks in increasing order).
    boxes: Vec<Vec<usize>>,
    /// In-box capacities by position: `cap[p][q]` of the link p -> q (0: none).
    cap: Vec<Vec<Cap>>,
    /// Per rank: its link to the switch and the switch's link to it.
    up: Vec<usize>,
    down: Vec<usize>,
}

impl Boxes {
    /// The boxes of `topo` under `caps`, or None unless: one switch, every rank with exactly
    /// one link each way to it and no other switch link, at least two boxes, all of the same
    /// size with the same in-box capacities position by position, no parallel links.
    pub fn detect(topo: &Topology, caps: &[Cap]) -> Option<Boxes> {
        if topo.n_switches() != 1 {
            return None;
        }
        let n = topo.n_ranks();
        let (mut up, mut down) = (vec![usize::MAX; n], vec![usize::MAX; n]);
        let mut parent: Vec<usize> = (0..n).collect();
        for (e, l) in topo.links.iter().enumerate() {
            match (topo.rank_of(l.src), topo.rank_of(l.dst)) {
                (Some(a), Some(b)) => union(&mut parent, a, b),
                (Some(a), None) => set_once(&mut up[a], e)?,
                (None, Some(b)) => set_once(&mut down[b], e)?,
                (None, None) => return None,
            }
        }
        if up.contains(&usize::MAX) || down.contains(&usize::MAX) {
            return None;
        }
        let mut boxes: Vec<Vec<usize>> = Vec::new();
        let mut box_of = vec![usize::MAX; n];
        for r in 0..n {
            let root = find(&mut parent, r);
            if box_of[root] == usize::MAX {
                box_of[root] = boxes.len();
                boxes.push(Vec::new());
            }
            boxes[box_of[root]].push(r);
        }
        let size = boxes[0].len();
        if boxes.len() < 2 || boxes.iter().any(|b| b.len() != size) {
            return None;
        }
        let mut pos = vec![0; n];
        for b in &boxes {
            b.iter().enumerate().for_each(|(p, &r)| pos[r] = p);
        }
        let cap = in_box_caps(topo, caps, &boxes[0], &pos)?;
        if boxes[1..].iter().any(|b| in_box_caps(topo, caps, b, &pos).as_ref() != Some(&cap)) {
            return None;
        }
        Some(Boxes { boxes, cap, up, down })
    }

    /// The boxes' ranks by position (`boxes()[b][p]`).
    pub fn boxes(&self) -> &[Vec<usize>] {
        &self.boxes
    }

    /// Rank r's link to the switch.
    pub fn up(&self, r: usize) -> usize {
        self.up[r]
    }

    /// The switch's link to rank r.
    pub fn down(&self, r: usize) -> usize {
        self.down[r]
    }

    /// `8 boxes x 16 ranks, one switch`.
    pub fn describe(&self) -> String {
        format!("{} boxes x {} ranks, one switch", self.boxes.len(), self.boxes[0].len())
    }
}

fn set_once(slot: &mut usize, e: usize) -> Option<()> {
    (*slot == usize::MAX).then(|| *slot = e)
}

fn find(parent: &mut [usize], mut a: usize) -> usize {
    while parent[a] != a {
        parent[a] = parent[parent[a]];
        a = parent[a];
    }
    a
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    parent[ra.max(rb)] = ra.min(rb);
}

/// The capacity matrix of one box by position (`pos[rank]`); None on parallel links.
fn in_box_caps(topo: &Topology, caps: &[Cap], ranks: &[usize], pos: &[usize]) -> Option<Vec<Vec<Cap>>> {
    let mut m = vec![vec![0 as Cap; ranks.len()]; ranks.len()];
    for (p, &r) in ranks.iter().enumerate() {
        let mut last = None;
        for e in topo.out_links(topo.rank_node(r)) {
            let Some(d) = topo.rank_of(topo.links[e].dst) else { continue };
            if last == Some(d) {
                return None; // parallel links: out-links are sorted by destination
            }
            last = Some(d);
            m[p][pos[d]] = caps[e];
        }
    }
    Some(m)
}

/// The forest of `k` trees per rank within `caps` (see the module docs) and the box
/// packing's counters, or None when a switch link carries fewer than `k (N - 1)` trees or
/// the box cannot hold `k N` out-trees per rank. Guarantees: spanning arborescences rooted at
/// every rank, counts summing to `k` per root, loads within `caps`.
pub fn trees(topo: &Topology, bx: &Boxes, k: Cap, caps: &[Cap]) -> Option<(Vec<Tree>, Stats)> {
    let (nb, size) = (bx.boxes.len() as Cap, bx.boxes[0].len());
    let need = k * (nb - 1);
    if bx.up.iter().chain(&bx.down).any(|&e| caps[e] < need) || !edmonds(&bx.cap, k * nb) {
        return None;
    }
    let mut m = bx.cap.clone();
    let (batches, stats) = packing::pack(size, &mut m, k * nb).ok()?;
    let mut by_root: Vec<Vec<&Batch>> = vec![Vec::new(); size];
    for b in &batches {
        by_root[b.root].push(b);
    }
    let mut out = Vec::new();
    for (b, ranks) in bx.boxes.iter().enumerate() {
        for (i, &root) in ranks.iter().enumerate() {
            // Units b k .. b k + k of position i's in-box trees, batch by batch.
            let (lo, hi) = (b as Cap * k, (b as Cap + 1) * k);
            let mut start = 0;
            for batch in &by_root[i] {
                let (a, z) = (start.max(lo), (start + batch.m).min(hi));
                start += batch.m;
                if a < z {
                    out.push(Tree { root, count: z - a, edges: tree_edges(topo, bx, b, i, batch) });
                }
            }
        }
    }
    Some((out, stats))
}

/// Edmonds' condition for `per_root` out-trees per position in the box (Thm 5's flows).
fn edmonds(cap: &[Vec<Cap>], per_root: Cap) -> bool {
    let g = cap.len();
    let mut edges: Vec<(usize, usize, Cap)> = (0..g).map(|v| (g, v, per_root)).collect();
    for (p, row) in cap.iter().enumerate() {
        edges.extend(row.iter().enumerate().filter(|c| *c.1 > 0).map(|(q, &c)| (p, q, c)));
    }
    let mut net = FlowNetwork::new(g + 1, &edges);
    let need = per_root * g as Cap;
    (0..g).all(|v| net.max_flow_limited(g, v, need) >= need)
}

/// Tree edges, parents first: the batch in the root's box b, the switch routes from the root
/// to position i of the other boxes, then the batch in each of those.
fn tree_edges(topo: &Topology, bx: &Boxes, b: usize, i: usize, batch: &Batch) -> Vec<(usize, usize, Vec<usize>)> {
    let root = bx.boxes[b][i];
    let mut edges = Vec::with_capacity(bx.boxes.len() * bx.boxes[0].len());
    in_box(topo, &bx.boxes[b], batch, &mut edges);
    let others: Vec<&Vec<usize>> = bx.boxes.iter().enumerate().filter(|&(c, _)| c != b).map(|(_, r)| r).collect();
    edges.extend(others.iter().map(|r| (root, r[i], vec![bx.up[root], bx.down[r[i]]])));
    for r in others {
        in_box(topo, r, batch, &mut edges);
    }
    edges
}

/// The batch's edges placed in the box whose positions are `ranks`.
fn in_box(topo: &Topology, ranks: &[usize], batch: &Batch, out: &mut Vec<(usize, usize, Vec<usize>)>) {
    out.extend(batch.edges.iter().map(|&(p, q)| {
        let (x, y) = (ranks[p], ranks[q]);
        let l = topo.link_between(topo.rank_node(x), topo.rank_node(y)).expect("in-box link");
        (x, y, vec![l])
    }));
}
