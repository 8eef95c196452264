//! The order each thread block runs its transfers in, chosen by time reversal.
//!
//! MSCCL runs a thread block's steps in the program's order, every iteration (slice) the
//! same (Azure/msccl-executor-nccl `src/device/msccl_kernel.cu`, `mscclRunInterpreter`: the
//! loop over `nSteps` inside the loop over `gridOffset`), and the lowering writes them in
//! its order T (`msccl::lower`: step, then topological position, Kahn's smallest index
//! first). So without steps the order is the schedule's transfer numbering, and a schedule
//! whose numbering was chosen for it says so in its details ([`DETAIL`]); the simulator then
//! runs it in the lowering's thread blocks ([`super::sim::block_plan`]).
//!
//! A reduce-scatter is the time reverse of an allgather: reverse every transfer of an
//! allgather's execution and its time axis and the result is a reduce-scatter's execution
//! with the same makespan. Links served in arrival order lose that (leaves of every tree are
//! ready at once and delay the chains that feed the bottleneck). [`time_reversed`] orders
//! the reduction transfers by the reversed schedule's simulated arrivals, latest first, and
//! the copies after them by their own arrivals.

use super::sim::arrivals;
use super::{choose_protocol, slices_for};
use crate::error::Result;
use crate::ir::{Executor, Op, Schedule};
use crate::rational::Rat;
use crate::topology::Topology;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Renumbering key: (copies after reductions, time rank, deeper first).
type Key = (u8, u64, u32);

/// The detail that marks a schedule numbered for its thread blocks (value: how the order
/// was derived).
pub const DETAIL: &str = "thread_block_order";

/// Whether the simulator runs `s` in the lowering's thread blocks, each in program order.
pub fn has_thread_block_order(s: &Schedule) -> bool {
    s.provenance.executor == Executor::Msccl && s.provenance.details.get(DETAIL).is_some()
}

/// The reduction transfers of `s` time-reversed: each runs from its destination back to its
/// source over the reverse links after the reductions that consumed it, as a copy.
/// `None` when a reverse link is missing. Also returns the reversed transfers' indices in `s`.
fn reversed_reductions(s: &Schedule, topo: &Topology) -> Option<(Schedule, Vec<usize>)> {
    let reverse = |l: usize| {
        let (a, b) = (topo.links[l].dst, topo.links[l].src);
        topo.links.binary_search_by(|x| (x.src, x.dst).cmp(&(a, b))).ok()
    };
    let kept: Vec<usize> = (0..s.transfers.len()).filter(|&i| s.transfers[i].op == Op::Reduce).collect();
    let mut at = vec![usize::MAX; s.transfers.len()];
    for (x, &i) in kept.iter().enumerate() {
        at[i] = x;
    }
    let mut r = s.clone();
    r.transfers = Vec::with_capacity(kept.len());
    for &i in &kept {
        let t = &s.transfers[i];
        let mut u = t.clone();
        std::mem::swap(&mut u.src, &mut u.dst);
        std::mem::swap(&mut u.src_slot, &mut u.dst_slot);
        u.route = t.route.iter().rev().map(|&l| reverse(l)).collect::<Option<Vec<_>>>()?;
        u.op = Op::Copy;
        u.after.clear();
        u.step = None;
        r.transfers.push(u);
    }
    for &i in &kept {
        for &a in &s.transfers[i].after {
            if at[a] != usize::MAX {
                r.transfers[at[a]].after.push(at[i]);
            }
        }
    }
    Some((r, kept))
}

/// `s` renumbered so that its program order runs the reductions latest-first by the reversed
/// schedule's simulated arrivals at `size`, then the copies by their own, marked with
/// [`DETAIL`]. `None` when there is nothing to order (no reduction, not MSCCL's, a missing
/// reverse link) or the numbering would not change.
pub fn time_reversed(s: &Schedule, topo: &Topology, size: Rat) -> Result<Option<Schedule>> {
    if s.provenance.executor != Executor::Msccl || !s.transfers.iter().any(|t| t.op == Op::Reduce) {
        return Ok(None);
    }
    let Some((r, kept)) = reversed_reductions(s, topo) else {
        return Ok(None);
    };
    let protocol = choose_protocol(s, topo, size)?;
    let k = slices_for(s, topo, size, protocol);
    let (_, back) = arrivals(&r, topo, size, protocol, k)?;
    let (_, forth) = arrivals(s, topo, size, protocol, k)?;
    // Key: (copies after reductions, time rank, deeper first); the reversed arrival runs
    // backwards. At equal times the transfer further down its tree goes first: a thread
    // block that receives one piece and forwards another then forwards before it waits.
    let mut depth = vec![0u32; s.transfers.len()];
    for i in crate::ir::transform::topological_order(s)? {
        depth[i] = s.transfers[i].after.iter().map(|&a| depth[a] + 1).max().unwrap_or(0);
    }
    let mut key: Vec<Key> = vec![(0, 0, 0); s.transfers.len()];
    for (x, &i) in kept.iter().enumerate() {
        key[i] = (0, u64::MAX - back[x * k].to_bits(), u32::MAX - depth[i]);
    }
    for (i, t) in s.transfers.iter().enumerate() {
        if t.op != Op::Reduce {
            key[i] = (1, forth[i * k].to_bits(), u32::MAX - depth[i]);
        }
    }
    // Kahn's algorithm by key: a linear extension whatever the times say.
    let n = s.transfers.len();
    let mut indegree: Vec<usize> = s.transfers.iter().map(|t| t.after.len()).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, t) in s.transfers.iter().enumerate() {
        for &a in &t.after {
            children[a].push(i);
        }
    }
    let mut ready: BinaryHeap<Reverse<(Key, usize)>> =
        (0..n).filter(|&i| indegree[i] == 0).map(|i| Reverse((key[i], i))).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((_, i))) = ready.pop() {
        order.push(i);
        for &c in &children[i] {
            indegree[c] -= 1;
            if indegree[c] == 0 {
                ready.push(Reverse((key[c], c)));
            }
        }
    }
    if order.iter().enumerate().all(|(x, &i)| x == i) && has_thread_block_order(s) {
        return Ok(None);
    }
    let mut new_index = vec![0usize; n];
    for (x, &i) in order.iter().enumerate() {
        new_index[i] = x;
    }
    let mut out = s.clone();
    out.transfers = order
        .iter()
        .map(|&i| {
            let mut t = s.transfers[i].clone();
            t.after = t.after.iter().map(|&a| new_index[a]).collect();
            t
        })
        .collect();
    out.provenance.details.set(DETAIL, "time-reversed");
    Ok(Some(out))
}

#[cfg(test)]
mod tests;
