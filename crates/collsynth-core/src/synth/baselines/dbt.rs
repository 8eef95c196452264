//! `dbt`: NCCL's double binary tree (broadcast, reduce, allreduce). Tree 1 is NCCL's
//! `ncclGetBtree` over ranks 0..N (rank 0 on top with one child); tree 2 is tree 1 mirrored
//! (r -> N-1-r) for even N, shifted by one (r -> r+1 mod N) for odd N, as `ncclGetDtree`
//! does, so no rank is an inner node (parent and children) of both trees. The message is
//! split in two halves; half h goes down tree h.
//!
//! - broadcast: half h starts at the root, which sends it to the top of tree h (unless it
//!   is that top); the top sends it down tree h, the root feeding its own subtree (the
//!   edge from its parent is dropped), so every rank receives each half once.
//! - reduce: the reversal of that broadcast made on the transpose.
//! - allreduce: each half reduced up its tree to its top, then broadcast back down:
//!   compose(reduce, broadcast) of the trees with half h rooted at the top of tree h.

use super::common::{allreduce, part, reduction, unsupported, Paths};
use crate::error::Result;
use crate::ir::{Collective, Schedule};
use crate::synth::{Algorithm, Extras, Request};
use crate::topology::Topology;
use std::collections::VecDeque;

pub const DBT: Algorithm = Algorithm {
    name: "dbt",
    help: "NCCL's double binary tree: half the message down (or up) each of two complementary trees",
    collectives: &[Collective::Broadcast, Collective::Reduce, Collective::Allreduce],
    options: &[],
    synthesize,
    extras: Extras::NONE,
};

/// A rooted tree over all ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub top: usize,
    pub parent: Vec<Option<usize>>,
    pub children: Vec<Vec<usize>>,
}

impl Tree {
    /// Longest top-to-leaf path, in edges.
    pub fn depth(&self) -> usize {
        let mut depth = 0;
        let mut queue = VecDeque::from([(self.top, 0)]);
        while let Some((u, d)) = queue.pop_front() {
            depth = depth.max(d);
            queue.extend(self.children[u].iter().map(|&c| (c, d + 1)));
        }
        depth
    }

    /// Has a parent and at least one child.
    pub fn is_inner(&self, r: usize) -> bool {
        self.parent[r].is_some() && !self.children[r].is_empty()
    }
}

/// NCCL's `ncclGetBtree` for `rank` of `n`: (parent, first child, second child).
fn btree_node(n: usize, rank: usize) -> (Option<usize>, Option<usize>, Option<usize>) {
    let mut bit = 1usize;
    while bit < n && bit & rank == 0 {
        bit <<= 1;
    }
    if rank == 0 {
        return (None, None, (n > 1).then_some(bit >> 1));
    }
    let mut up = (rank ^ bit) | (bit << 1);
    if up >= n {
        up = rank ^ bit;
    }
    let lowbit = bit >> 1;
    let down0 = (lowbit > 0).then(|| rank - lowbit);
    // the largest of lowbit, lowbit/2, ..., 1 that stays below n
    let down1 = std::iter::successors((lowbit > 0).then_some(lowbit), |&b| (b > 1).then_some(b >> 1))
        .map(|b| rank + b)
        .find(|&d| d < n);
    (Some(up), down0, down1)
}

/// NCCL's binary tree over `n` ranks with every rank relabelled by `map` (an involution or
/// its inverse `unmap`: tree node x is rank `map(x)`, rank r is node `unmap(r)`).
fn mapped_btree(n: usize, map: impl Fn(usize) -> usize, unmap: impl Fn(usize) -> usize) -> Tree {
    let mut parent = vec![None; n];
    let mut children = vec![Vec::new(); n];
    for (r, (p, c)) in parent.iter_mut().zip(children.iter_mut()).enumerate() {
        let (up, d0, d1) = btree_node(n, unmap(r));
        *p = up.map(&map);
        c.extend(d0.into_iter().chain(d1).map(&map));
    }
    Tree { top: map(0), parent, children }
}

/// The two trees of NCCL's `ncclGetDtree` over `n >= 1` ranks.
pub fn double_tree(n: usize) -> [Tree; 2] {
    let first = mapped_btree(n, |x| x, |r| r);
    let second = if n.is_multiple_of(2) {
        mapped_btree(n, |x| n - 1 - x, |r| n - 1 - r)
    } else {
        mapped_btree(n, |x| (x + 1) % n, |r| (r + n - 1) % n)
    };
    [first, second]
}

fn synthesize(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    let trees = double_tree(topo.n_ranks());
    match collective {
        Collective::Broadcast => broadcast(topo, &trees, Some(req.root)),
        Collective::Reduce => reduction(topo, |t| broadcast(t, &trees, Some(req.root))),
        Collective::Allreduce => {
            let up = reduction(topo, |t| broadcast(t, &trees, None))?;
            let down = broadcast(topo, &trees, None)?;
            allreduce(&up, &down)
        }
        c => Err(unsupported(DBT.name, c)),
    }
}

/// Half h (piece h: `[h/2, (h+1)/2)` of the one shard) down tree h. With `root`, the root
/// holds both halves and first sends half h to the top of tree h (unless it is the top);
/// without (the allgather half of an allreduce), half h starts at the top of tree h.
/// Steps are as early as dependencies allow.
pub fn broadcast(topo: &Topology, trees: &[Tree; 2], root: Option<usize>) -> Result<Schedule> {
    if let Some(root) = root {
        crate::synth::check_root(topo, root)?;
    }
    let n = topo.n_ranks();
    let mut s = Schedule::new(Collective::Broadcast, n, root.unwrap_or(0), DBT.name);
    for h in 0..2 {
        s.add_piece(part(0, h, 2));
    }
    let mut paths = Paths::new(topo);
    for (h, tree) in trees.iter().enumerate() {
        if n == 1 {
            break;
        }
        // (transfer that delivered half h to the rank, step it ran at)
        let mut delivered: Vec<Option<(usize, u32)>> = vec![None; n];
        let mut send = |s: &mut Schedule, src: usize, dst: usize, delivered: &mut [Option<(usize, u32)>]| {
            let (after, step) = match delivered[src] {
                Some((t, st)) => (Some(t), st + 1),
                None => (None, 0),
            };
            let id = paths.send(s, h, src, dst, after, step)?;
            delivered[dst] = Some((id, step));
            Ok::<_, crate::error::CollsynthError>(())
        };
        if let Some(root) = root.filter(|&r| r != tree.top) {
            send(&mut s, root, tree.top, &mut delivered)?;
        }
        let mut queue = VecDeque::from([tree.top]);
        while let Some(u) = queue.pop_front() {
            for &c in &tree.children[u] {
                if Some(c) != root {
                    send(&mut s, u, c, &mut delivered)?;
                }
                queue.push_back(c);
            }
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests;
