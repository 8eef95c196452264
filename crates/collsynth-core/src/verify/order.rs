//! The dependency DAG: a topological order (or the cycle that makes it a deadlock), the
//! step check, the depth, and ancestor queries ("does transfer `e` wait, directly or not,
//! for transfer `x`?").
//!
//! Ancestor queries must stay cheap on schedules of millions of transfers. Each transfer
//! picks a *primary* dependency (the one that delivered its piece to its source when there
//! is one); the primary edges form a forest whose preorder intervals answer "x is a
//! primary ancestor of e" in O(1). That covers chains, trees and most step schedules;
//! otherwise a backward search from `e` runs, pruned to transfers after `x` in the
//! topological order and stopping at any transfer that has `x` as a primary ancestor.

use super::{Cx, Violation};
use crate::ir::Schedule;

const NONE: u32 = u32::MAX;

pub(super) struct Dag {
    /// Transfers in a topological order (smallest index first among ready ones).
    pub order: Vec<u32>,
    /// `pos[t]`: position of transfer t in `order`.
    pos: Vec<u32>,
    /// Preorder number of t in the primary forest, and the size of its subtree there.
    pre: Vec<u32>,
    size: Vec<u32>,
    /// Longest chain of transfers.
    pub depth: usize,
    // Scratch for the backward search, reused across queries.
    seen: Vec<u32>,
    stamp: u32,
    stack: Vec<u32>,
}

impl Dag {
    /// Order the transfers; a dependency cycle is a deadlock, a dependency at the same or
    /// a later step than its dependent is a violation. Indices are already checked.
    pub fn build(cx: &Cx) -> Result<Dag, Violation> {
        let s = cx.s;
        let n = s.transfers.len();
        // Indices are u32 internally, and the race check counts two accesses per transfer.
        if n >= (NONE / 2) as usize {
            return Err(super::plain(format!("{n} transfers are more than the verifier handles")));
        }
        let order = topological_order(cx)?;
        let mut pos = vec![0u32; n];
        for (k, &t) in order.iter().enumerate() {
            pos[t as usize] = k as u32;
        }
        steps(cx)?;

        // Depth, and the primary dependency of each transfer.
        let mut depth = vec![0u32; n];
        let mut primary = vec![NONE; n];
        for &t in &order {
            let tr = &s.transfers[t as usize];
            let mut d = 0;
            let (mut flow, mut latest) = (NONE, NONE);
            for &a in &tr.after {
                d = d.max(depth[a]);
                let dep = &s.transfers[a];
                if flow == NONE && dep.dst == tr.src && dep.piece == tr.piece && dep.dst_slot == tr.src_slot {
                    flow = a as u32;
                }
                if latest == NONE || pos[a] > pos[latest as usize] {
                    latest = a as u32;
                }
            }
            depth[t as usize] = d + 1;
            primary[t as usize] = if flow != NONE { flow } else { latest };
        }
        let max_depth = depth.iter().copied().max().unwrap_or(0) as usize;

        // Preorder intervals of the primary forest: subtree sizes bottom-up, then each child
        // takes the next free block of its parent's interval (parents come first in `order`).
        let mut size = vec![1u32; n];
        for &t in order.iter().rev() {
            let p = primary[t as usize];
            if p != NONE {
                size[p as usize] += size[t as usize];
            }
        }
        let mut pre = depth; // reuse the allocation
        let mut next_free = vec![0u32; n];
        let mut roots_free = 0u32;
        for &t in &order {
            let t = t as usize;
            let p = primary[t];
            let start = if p == NONE { &mut roots_free } else { &mut next_free[p as usize] };
            pre[t] = *start;
            *start += size[t];
            next_free[t] = pre[t] + 1;
        }

        Ok(Dag { order, pos, pre, size, depth: max_depth, seen: vec![0; n], stamp: 0, stack: Vec::new() })
    }

    fn primary_ancestor(&self, x: usize, e: usize) -> bool {
        self.pre[x] <= self.pre[e] && self.pre[e] < self.pre[x] + self.size[x]
    }

    /// Does transfer `e` wait (through any chain of dependencies) for transfer `x`?
    pub fn is_ancestor(&mut self, s: &Schedule, x: usize, e: usize) -> bool {
        if x == e || self.pos[x] >= self.pos[e] {
            return false;
        }
        if self.primary_ancestor(x, e) {
            return true;
        }
        if self.stamp == u32::MAX {
            self.seen.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
        let (stamp, px) = (self.stamp, self.pos[x]);
        self.stack.clear();
        self.stack.push(e as u32);
        while let Some(y) = self.stack.pop() {
            for &d in &s.transfers[y as usize].after {
                if d == x {
                    return true;
                }
                if self.pos[d] <= px || self.seen[d] == stamp {
                    continue;
                }
                if self.primary_ancestor(x, d) {
                    return true;
                }
                self.seen[d] = stamp;
                self.stack.push(d as u32);
            }
        }
        false
    }
}

/// Kahn's algorithm (smallest index first among ready transfers; the identity when every
/// transfer only depends on earlier ones). A cycle is reported as a deadlock naming it.
fn topological_order(cx: &Cx) -> Result<Vec<u32>, Violation> {
    let s = cx.s;
    let n = s.transfers.len();
    // The IR's Kahn gives the same order, faster (a heap only for the transfers that become
    // ready behind its scan); the pass below names the cycle when there is one.
    if let Ok(order) = crate::ir::transform::topological_order(s) {
        return Ok(order.into_iter().map(|i| i as u32).collect());
    }
    // Children in CSR form (one slot per dependency edge, duplicates included).
    let mut indegree = vec![0u32; n];
    let mut start = vec![0u32; n + 1];
    for (i, t) in s.transfers.iter().enumerate() {
        indegree[i] = t.after.len() as u32;
        for &a in &t.after {
            start[a + 1] += 1;
        }
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut children = vec![0u32; start[n] as usize];
    for (i, t) in s.transfers.iter().enumerate() {
        for &a in &t.after {
            children[fill[a] as usize] = i as u32;
            fill[a] += 1;
        }
    }
    drop(fill);
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<u32>> =
        (0..n as u32).filter(|&i| indegree[i as usize] == 0).map(std::cmp::Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        order.push(i);
        for &c in &children[start[i as usize] as usize..start[i as usize + 1] as usize] {
            indegree[c as usize] -= 1;
            if indegree[c as usize] == 0 {
                ready.push(std::cmp::Reverse(c));
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    Err(deadlock(cx, &indegree))
}

/// Name a dependency cycle among the transfers left unordered (`indegree > 0`): each of
/// them waits for another one of them, so walking back from one must come round.
fn deadlock(cx: &Cx, indegree: &[u32]) -> Violation {
    let s = cx.s;
    let stuck = |t: usize| indegree[t] > 0;
    let mut walk: Vec<usize> = Vec::new();
    let mut at: std::collections::HashMap<usize, usize> = Default::default();
    let mut t = (0..s.transfers.len()).find(|&t| stuck(t)).expect("a transfer is left unordered");
    let cycle_start = loop {
        if let Some(&k) = at.get(&t) {
            break k;
        }
        at.insert(t, walk.len());
        walk.push(t);
        t = *s.transfers[t].after.iter().find(|&&a| stuck(a)).expect("an unordered transfer waits for another");
    };
    // walk[k + 1] is a dependency of walk[k]: list the cycle from its smallest transfer.
    let mut cycle = walk.split_off(cycle_start);
    let min = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
    cycle.rotate_left(min);
    let mut chain: Vec<String> = cycle.iter().take(8).map(|c| c.to_string()).collect();
    if cycle.len() > 8 {
        chain.push(format!("... ({} transfers)", cycle.len()));
    }
    chain.push(cycle[0].to_string());
    cx.at(cycle[0], format!("deadlock: dependency cycle, transfer {} (each waits for the next)", chain.join(" -> ")))
}

/// A dependency with a step must come at an earlier step than its dependent; a local
/// transfer (no link) may also depend on its own step: it combines what that step brought.
fn steps(cx: &Cx) -> Result<(), Violation> {
    for (i, t) in cx.s.transfers.iter().enumerate() {
        let Some(st) = t.step else { continue };
        for &a in &t.after {
            if let Some(sa) = cx.s.transfers[a].step {
                if sa > st || (sa == st && !t.is_local()) {
                    let need = if t.is_local() { "a later step" } else { "not an earlier step" };
                    return Err(cx.at(i, format!("depends on transfer {a} of step {sa}, which is {need}")));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
