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
use crate::error::CollsynthError;
use crate::error::Result;
use crate::ir::{Executor, Op, Schedule};
use crate::msccl::lower::{block_plan, BlockPlan, Operation, Options, Spread, MAX_CHANNELS};
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

/// The detail value that asks for the lowering `collsynth export` writes
/// ([`exported_lowering`]).
pub const EXPORTED: &str = "exported";

/// How a schedule marked with [`DETAIL`] runs in its thread blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockOrder {
    /// T from the numbering, the fewest channels that fit.
    Numbered,
    /// T by time ([`timed_operations`]).
    Timed,
    /// What `collsynth export` writes: the fastest of its lowerings ([`exported_lowering`]).
    Exported,
}

/// `None` unless `s` runs in thread blocks ([`has_thread_block_order`]).
pub fn thread_block_order(s: &Schedule) -> Option<BlockOrder> {
    if !has_thread_block_order(s) {
        return None;
    }
    Some(match s.provenance.details.get(DETAIL).and_then(|v| v.as_str()) {
        Some(TIMED) => BlockOrder::Timed,
        Some(EXPORTED) => BlockOrder::Exported,
        _ => BlockOrder::Numbered,
    })
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
    linear_extension(s, &key)
}

/// T by criticality, for the lowering: every operation keyed by its transfer's remaining
/// critical path (the transfer's own time and the longest chain of dependents after it, each
/// at its slowest link or connection; HEFT's upward rank), longest first. A thread block then
/// runs first what the rest of the collective waits on longest: a reduction's leaf whose sum
/// crosses the network goes before one that ends at its destination, where the order by time
/// interleaves them as a block's turns on a shared link come round.
pub fn ranked_operations(s: &Schedule, topo: &Topology, size: Rat, protocol: Protocol) -> Result<Vec<Operation>> {
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    let n = s.transfers.len();
    let classes = super::classify(topo);
    let per_byte: Vec<f64> = super::sim::effective_bandwidths(topo, &classes, protocol, Rat::from_integer(1))
        .iter()
        .map(crate::cost::us_per_byte)
        .collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, t) in s.transfers.iter().enumerate() {
        for &a in &t.after {
            dependents[a].push(i);
        }
    }
    let mut rank = vec![0.0f64; n];
    for &i in crate::ir::transform::topological_order(s)?.iter().rev() {
        let t = &s.transfers[i];
        let bytes = crate::rational::to_f64(&(s.piece_fraction(t.piece) * size));
        let wire = t.route.iter().map(|&l| per_byte[l]).fold(0.0, f64::max);
        let own = super::sim::message_overhead_us(&t.route, &classes, protocol)
            + bytes * wire.max(super::sim::connection_us_per_byte(&t.route, &classes, t.op));
        rank[i] = own + dependents[i].iter().map(|&d| rank[d]).fold(0.0, f64::max);
    }
    // Longest first: keys are ascending, so the gap to the longest.
    let longest = rank.iter().copied().fold(0.0, f64::max);
    let key: Vec<[(u8, u64); 2]> = rank.iter().map(|&r| [(0, (longest - r).to_bits()); 2]).collect();
    linear_extension(s, &key)
}

/// Kahn's algorithm over the sends and receives of `s` (flat) by `key` (per transfer: its
/// send's and its receive's), ties to the deeper transfer, the smaller index, the send: a
/// linear extension whatever the keys, each connection FIFO.
fn linear_extension(s: &Schedule, key: &[[(u8, u64); 2]]) -> Result<Vec<Operation>> {
    let n = s.transfers.len();
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
    // A connection is FIFO (the receiver takes its messages in the order they were sent):
    // a receive is ready once its send is the oldest unreceived one between its two ranks.
    let mut in_flight: crate::hash::FastMap<(usize, usize), std::collections::VecDeque<usize>> = Default::default();
    let mut sent_waiting = vec![false; n];
    let mut order = Vec::with_capacity(2 * n);
    while let Some(Reverse((_, _, i, recv))) = ready.pop() {
        let op = 2 * i + recv;
        order.push((i, recv == 0));
        let t = &s.transfers[i];
        let wire = (t.src, t.dst);
        if recv == 0 {
            let queue = in_flight.entry(wire).or_default();
            queue.push_back(i);
            if queue.len() > 1 {
                // Its receive waits behind the older ones.
                sent_waiting[i] = true;
                indegree[2 * i + 1] -= 1;
                continue;
            }
        } else if !local(i) {
            let queue = in_flight.get_mut(&wire).expect("sent before received");
            queue.pop_front();
            if let Some(&next) = queue.front() {
                if std::mem::take(&mut sent_waiting[next]) {
                    ready.push(entry(2 * next + 1));
                }
            }
        }
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

/// A lowering `collsynth export` may write ([`exported_lowering`] picks one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lowering {
    /// T from the numbering, the fewest channels that fit (the exporter's first lowering).
    Numbered,
    /// T by time ([`timed_operations`]), one channel per piece.
    Timed,
    /// T by time, one channel per (piece, half): a piece's reductions and its copies in
    /// different thread blocks (`msccl::lower::Spread::ByHalf`).
    TimedHalves,
    /// T by time, channels by depth in the dependency DAG (`Spread::ByDepth`: one per depth,
    /// or as many per depth as the 32 channels allow).
    TimedDepth,
    /// T by criticality ([`ranked_operations`]), channels by depth, as many per depth as the
    /// runtime's limits allow without two depths sharing a channel.
    RankedDepth,
}

impl Lowering {
    pub fn name(self) -> &'static str {
        match self {
            Lowering::Numbered => "as numbered",
            Lowering::Timed => "timed, a channel per piece",
            Lowering::TimedHalves => "timed, a channel per piece and half",
            Lowering::TimedDepth => "timed, channels by depth",
            Lowering::RankedDepth => "critical path first, channels by depth",
        }
    }
}

/// The lowering [`exported_lowering`] chose: its options (T and channels, for
/// `msccl::lower`), its thread blocks and their makespan in the runtime model.
#[derive(Debug, Clone)]
pub struct ExportedLowering {
    pub lowering: Lowering,
    pub options: Options,
    pub plan: BlockPlan,
    pub makespan_us: f64,
}

/// The lowering of `s` that runs fastest in MSCCL's thread blocks
/// ([`super::sim::makespan_in_blocks_us`] at `size`, `protocol`, `k` slices): the one rule
/// by which `collsynth export` writes a schedule (`api::export_msccl`) and by which the
/// runtime model times a schedule MSCCL executes. Candidates, in this order (a tie keeps
/// the earlier, so a program the numbering already serves best keeps its bytes): T from the
/// numbering with `base`'s channels; T by time ([`timed_operations`]) with one channel per
/// piece; and, when `s` has reductions and copies (allreduce), T by time with one channel per
/// (piece, half). A given `base.channels` is kept by every candidate; otherwise a timed
/// candidate that does not fit its spread takes the fewest channels that fit. `None`: no
/// candidate fits the runtime's limits.
/// The block plan of `o` with the most channels below `o.channels` that fits the runtime's
/// limits (thread blocks and the values they store grow with the channels), by bisection:
/// the limits are monotone in the channels for a given spread up to the spread's rounding.
fn most_channels_that_fit(s: &Schedule, o: Options) -> Result<Option<(BlockPlan, Options)>> {
    let (mut lo, mut hi) = (0usize, o.channels.unwrap_or(MAX_CHANNELS));
    let mut best = None;
    while hi > lo + 1 {
        let mid = (lo + hi).div_ceil(2);
        let tried = Options { channels: Some(mid), ..o.clone() };
        match block_plan(s, &tried) {
            Ok(plan) => {
                lo = mid;
                best = Some((plan, tried));
            }
            Err(CollsynthError::Infeasible(_)) => hi = mid,
            Err(e) => return Err(e),
        }
    }
    if best.is_none() {
        // Too few channels can fail too (steps per block): the fewest that fit.
        let o = Options { channels: None, ..o };
        best = block_plan(s, &o).ok().map(|plan| (plan, o));
    }
    Ok(best)
}

/// The block plan of `o` (spread by depth, `width` channels per depth) with the widest
/// spread below it that fits the runtime's limits, by bisection on the width, channels
/// depths x width: no channel carries two depths. When one channel per depth does not fit
/// either, the most channels that fit, depths sharing them.
fn widest_by_depth_that_fits(s: &Schedule, o: Options) -> Result<Option<(BlockPlan, Options)>> {
    let (Some(Spread::ByDepth { width }), Some(channels)) = (o.spread, o.channels) else {
        return most_channels_that_fit(s, o);
    };
    let depths = (channels / width.max(1)).max(1);
    let with =
        |w: usize| Options { channels: Some(depths * w), spread: Some(Spread::ByDepth { width: w }), ..o.clone() };
    let (mut lo, mut hi) = (0usize, width);
    let mut best = None;
    while hi > lo + 1 {
        let mid = (lo + hi).div_ceil(2);
        match block_plan(s, &with(mid)) {
            Ok(plan) => {
                lo = mid;
                best = Some((plan, with(mid)));
            }
            Err(CollsynthError::Infeasible(_)) => hi = mid,
            Err(e) => return Err(e),
        }
    }
    match best {
        Some(b) => Ok(Some(b)),
        None => most_channels_that_fit(s, with(1)),
    }
}

pub fn exported_lowering(
    s: &Schedule,
    topo: &Topology,
    size: Rat,
    protocol: Protocol,
    k: usize,
    base: &Options,
) -> Result<Option<ExportedLowering>> {
    // Blocks are per rank: the candidates and their plans name flat transfers.
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    let base = Options { order: None, spread: None, pipeline: 1, ..base.clone() };
    let pieces = s.pieces.len().max(1);
    let halves = s.transfers.iter().any(|t| t.op == Op::Reduce && !t.is_local())
        && s.transfers.iter().any(|t| t.op == Op::Copy && !t.is_local());
    let mut candidates = vec![(Lowering::Numbered, base.clone())];
    if !s.transfers.is_empty() {
        let order = timed_operations(s, topo, size, protocol, k)?;
        let mut depth = vec![0usize; s.transfers.len()];
        for i in crate::ir::transform::topological_order(s)? {
            depth[i] = s.transfers[i].after.iter().map(|&a| depth[a] + 1).max().unwrap_or(0);
        }
        let depths = depth.iter().max().map_or(1, |d| d + 1);
        let timed = Options { order: Some(order), ..base.clone() };
        let spread = |c: usize| base.channels.or(Some(c.min(MAX_CHANNELS)));
        candidates.push((Lowering::Timed, Options { channels: spread(pieces), ..timed.clone() }));
        if halves {
            let o = Options { channels: spread(2 * pieces), spread: Some(Spread::ByHalf), ..timed.clone() };
            candidates.push((Lowering::TimedHalves, o));
        }
        // One channel per depth; and, where depths leave channels over, several per depth.
        let wide = (MAX_CHANNELS / depths).max(1);
        for width in if wide > 1 { vec![1, wide] } else { vec![1] } {
            let by_depth = Some(Spread::ByDepth { width });
            candidates.push((
                Lowering::TimedDepth,
                Options { channels: spread(depths * width), spread: by_depth, ..timed.clone() },
            ));
        }
        let ranked = Options { order: Some(ranked_operations(s, topo, size, protocol)?), ..base.clone() };
        let width = base.channels.map_or(wide, |c| (c / depths).max(1));
        let by_depth = Some(Spread::ByDepth { width });
        candidates
            .push((Lowering::RankedDepth, Options { channels: spread(depths * width), spread: by_depth, ..ranked }));
    }
    // Each candidate lowered and run in its blocks on every core (a lowering of mi250:2's
    // allreduce takes seconds); taken in order, so the choice is the sequential one.
    let judged = crate::parallel::each(candidates.len(), usize::MAX, |i| -> Result<Option<ExportedLowering>> {
        let (lowering, o) = candidates[i].clone();
        let fitted = match block_plan(s, &o) {
            Ok(plan) => Some((plan, o)),
            // A spread the runtime's limits refuse: the most channels below it that fit,
            // unless the user gave them.
            Err(CollsynthError::Infeasible(_)) if base.channels.is_none() && lowering == Lowering::RankedDepth => {
                widest_by_depth_that_fits(s, o)?
            }
            Err(CollsynthError::Infeasible(_)) if base.channels.is_none() && lowering != Lowering::Numbered => {
                most_channels_that_fit(s, o)?
            }
            Err(CollsynthError::Infeasible(_)) => None,
            Err(e) => return Err(e),
        };
        let Some((plan, options)) = fitted else { return Ok(None) };
        let makespan_us = super::sim::makespan_in_blocks_us(s, topo, size, protocol, k, &plan)?;
        Ok(Some(ExportedLowering { lowering, options, plan, makespan_us }))
    });
    let mut best: Option<ExportedLowering> = None;
    for e in judged {
        if let Some(e) = e? {
            if best.as_ref().is_none_or(|b| e.makespan_us < b.makespan_us) {
                best = Some(e);
            }
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests;
