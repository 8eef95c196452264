//! Step 7 of ForestColl: map the logical batches back to physical routes (App. C.3) and
//! emit the IR.
//!
//! A batch of `m` trees whose logical edge expands into several physical routes is split
//! into sub-trees (the common refinement of its edges' route lists), each with one route
//! per edge. Tree `(u, i)` carrying `c` of the `k` units of rank u's shard gets the piece
//! `[a/k, (a+c)/k)` of shard u; each tree edge is one copy transfer along its physical
//! route, `after` the transfer into its parent. No steps: trees are pipelined fluidly.

use super::packing::Batch;
use super::switch_removal::{Logical, Routes};
use crate::error::{CollsynthError, Result};
use crate::flow::Cap;
use crate::ir::orbit::Group;
use crate::ir::{Collective, Op, Piece, Schedule, Transfer};
use crate::rational::Rat;
use crate::topology::Topology;
use std::sync::Arc;

/// `count` identical trees rooted at rank `root`: edges `(x, y, route)` between ranks,
/// parents first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tree {
    pub root: usize,
    pub count: Cap,
    pub edges: Vec<(usize, usize, Vec<usize>)>,
}

/// Consume the batches' units from `g`'s routes and split batches by route.
pub fn map_back(topo: &Topology, batches: &[Batch], g: &mut Logical) -> Result<Vec<Tree>> {
    let mut trees = Vec::new();
    for b in batches {
        let mut lists: Vec<Routes> = Vec::with_capacity(b.edges.len());
        for &(x, y) in &b.edges {
            lists.push(g.take(topo.rank_node(x), topo.rank_node(y), b.m)?);
        }
        if lists.is_empty() {
            trees.push(Tree { root: b.root, count: b.m, edges: Vec::new() });
            continue;
        }
        let mut pos = vec![0usize; lists.len()];
        let mut left: Vec<Cap> = lists.iter().map(|l| l[0].1).collect();
        let mut remaining = b.m;
        while remaining > 0 {
            let t = *left.iter().min().expect("edges");
            let edges = b.edges.iter().zip(&lists).zip(&pos).map(|((&(x, y), l), &p)| (x, y, l[p].0.clone())).collect();
            trees.push(Tree { root: b.root, count: t, edges });
            remaining -= t;
            for i in 0..lists.len() {
                left[i] -= t;
                if left[i] == 0 && remaining > 0 {
                    pos[i] += 1;
                    left[i] = lists[i].get(pos[i]).map(|r| r.1).ok_or_else(|| CollsynthError::internal("map-back"))?;
                }
            }
        }
    }
    Ok(trees)
}

/// The allgather schedule of the representatives' `trees` (rooted at the smallest rank of
/// each rank orbit of `group`) and their images, stated per orbit (`ir::orbit`): every shard's
/// pieces (those of its orbit's representative, moved; in the order [`allgather`] makes them
/// for a regular group) and the representatives' transfers.
pub fn allgather_compact(topo: &Topology, trees: &[Tree], k: Cap, group: Arc<Group>) -> Result<Schedule> {
    let n = topo.n_ranks();
    let order = group.order();
    let orbits = group.check(topo).map_err(CollsynthError::internal)?;
    let mut s = Schedule::new(Collective::Allgather, n, 0, "forestcoll");
    // The representative's tree intervals, and the index of each tree's piece of its own shard.
    let mut intervals: Vec<Vec<(Cap, Cap)>> = vec![Vec::new(); n];
    let mut nth = Vec::with_capacity(trees.len());
    for t in trees {
        let list = &mut intervals[t.root];
        let a = list.last().map_or(0, |x| x.1);
        nth.push(list.len());
        list.push((a, a + t.count));
    }
    let mut first = vec![0usize; n];
    for v in 0..n {
        first[v] = s.pieces.len();
        for &(a, b) in &intervals[orbits.reps[orbits.orbit[v]]] {
            s.add_piece(Piece { shard: v, start: Rat::new(a, k), end: Rat::new(b, k) });
        }
    }
    let mut into = vec![usize::MAX; n];
    for (t, j) in trees.iter().zip(nth) {
        let piece = first[t.root] + j;
        for (x, y, route) in &t.edges {
            let after = if *x == t.root { Vec::new() } else { vec![into[*x] * order] };
            into[*y] = s.add(Transfer::new(piece, *x, *y, route.clone(), Op::Copy, after, None));
        }
    }
    s.symmetry = Some(group);
    Ok(s)
}

/// The allgather schedule of `trees` (k units per root).
pub fn allgather(topo: &Topology, trees: &[Tree], k: Cap) -> Schedule {
    let n = topo.n_ranks();
    let mut s = Schedule::new(Collective::Allgather, n, 0, "forestcoll");
    let mut offset = vec![0 as Cap; n];
    let mut into = vec![usize::MAX; n];
    for t in trees {
        let a = offset[t.root];
        offset[t.root] += t.count;
        let piece = s.add_piece(Piece { shard: t.root, start: Rat::new(a, k), end: Rat::new(a + t.count, k) });
        for (x, y, route) in &t.edges {
            let after = if *x == t.root { Vec::new() } else { vec![into[*x]] };
            into[*y] = s.add(Transfer::new(piece, *x, *y, route.clone(), Op::Copy, after, None));
        }
    }
    s
}
