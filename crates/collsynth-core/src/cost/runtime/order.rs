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

use super::sim::timeline;
use super::Protocol;
use super::{choose_protocol, slices_for};
use crate::error::Result;
use crate::ir::{Executor, Op, Schedule};
use crate::msccl::lower::Operation;
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

/// The detail value that asks for T by time ([`timed_operations`]).
pub const TIMED: &str = "timed";

/// How a schedule marked with [`DETAIL`] runs in its thread blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockOrder {
    /// T from the numbering (what `collsynth export` writes).
    Numbered,
    /// T by time ([`timed_operations`]).
    Timed,
}

/// `None` unless `s` runs in thread blocks ([`has_thread_block_order`]).
pub fn thread_block_order(s: &Schedule) -> Option<BlockOrder> {
    if !has_thread_block_order(s) {
        return None;
    }
    let timed = s.provenance.details.get(DETAIL).and_then(|v| v.as_str()) == Some(TIMED);
    Some(if timed { BlockOrder::Timed } else { BlockOrder::Numbered })
}

/// T chosen by time, for the lowering (`msccl::lower::Options::order`): every send at the
/// time its first slice starts and every receive at the time it arrives, in the default
/// model's run (independent connections, no block order) — so that each thread block runs
/// its steps in the order they happen when nothing serializes them. Reductions take the
/// times of the time-reversed schedule read backwards (a send at its reversed arrival, a
/// receive at its reversed start; the reverse of an allgather's execution, [`time_reversed`]),
/// and come before copies at equal readiness. Ties: the deeper transfer, then the smaller
/// index, then the send. Kahn's algorithm by that key: a linear extension whatever the times.
pub fn timed_operations(
    s: &Schedule,
    topo: &Topology,
    size: Rat,
    protocol: Protocol,
    k: usize,
) -> Result<Vec<Operation>> {
    // Operations name flat transfers (the expansion's order, as the lowering sees it).
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    let n = s.transfers.len();
    let forth = timeline(s, topo, size, protocol, k)?;
    let mut key: Vec<[(u8, u64); 2]> =
        (0..n).map(|i| [(1, forth.started[i * k].to_bits()), (1, forth.arrived[i * k].to_bits())]).collect();
    if s.transfers.iter().any(|t| t.op == Op::Reduce) {
        if let Some((r, kept)) = reversed_reductions(s, topo) {
            let back = timeline(&r, topo, size, protocol, k)?;
            let end = back.arrived.iter().copied().fold(0.0, f64::max);
            for (x, &i) in kept.iter().enumerate() {
                let mirror = |t: f64| (end - t).max(0.0).to_bits();
                key[i] = [(0, mirror(back.arrived[x * k])), (0, mirror(back.started[x * k]))];
            }
        }
    }
    let mut depth = vec![0u32; n];
    for i in crate::ir::transform::topological_order(s)? {
        depth[i] = s.transfers[i].after.iter().map(|&a| depth[a] + 1).max().unwrap_or(0);
    }
    // Operation 2 i is transfer i's send, 2 i + 1 its receive.
    let local = |i: usize| s.transfers[i].is_local();
    let mut indegree = vec![0usize; 2 * n];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); 2 * n];
    for (i, t) in s.transfers.iter().enumerate() {
        let first = if local(i) { 2 * i + 1 } else { 2 * i };
        if !local(i) {
            children[2 * i].push(2 * i + 1);
            indegree[2 * i + 1] += 1;
        }
        for &a in &t.after {
            children[2 * a + 1].push(first);
            indegree[first] += 1;
        }
    }
    let entry = |op: usize| Reverse((key[op / 2][op % 2], u32::MAX - depth[op / 2], op / 2, op % 2));
    let mut ready: BinaryHeap<_> =
        (0..2 * n).filter(|&op| indegree[op] == 0 && !(op % 2 == 0 && local(op / 2))).map(entry).collect();
    let mut order = Vec::with_capacity(2 * n);
    while let Some(Reverse((_, _, i, recv))) = ready.pop() {
        let op = 2 * i + recv;
        order.push((i, recv == 0));
        for &c in &children[op] {
            indegree[c] -= 1;
            if indegree[c] == 0 {
                ready.push(entry(c));
            }
        }
    }
    Ok(order)
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
    // The order is per flat transfer: a schedule stated per orbit is expanded first.
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    if s.provenance.executor != Executor::Msccl || !s.transfers.iter().any(|t| t.op == Op::Reduce) {
        return Ok(None);
    }
    let Some((r, kept)) = reversed_reductions(s, topo) else {
        return Ok(None);
    };
    let protocol = choose_protocol(s, topo, size)?;
    let k = slices_for(s, topo, size, protocol);
    let back = timeline(&r, topo, size, protocol, k)?.arrived;
    let forth = timeline(s, topo, size, protocol, k)?.arrived;
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
