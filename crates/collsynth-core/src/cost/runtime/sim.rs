//! The runtime-faithful event simulator (see docs/simulator.md).
//!
//! * Slices: every piece is cut into `k` slices (as [`crate::ir::transform::pipelined`]
//!   cuts it, whole bytes by [`ByteLayout`]); slice j of a transfer is ready when slice j of
//!   each of its dependencies has fully arrived. MSCCL runs its program once per slice of at
//!   most `chunkSize` bytes per chunk, with the same count of iterations for every chunk.
//! * Per-message overhead: a ready slice waits the largest overhead of its route's link
//!   classes before its first byte leaves (flag polling, fences: NCCL's per-step latency).
//!   It does not occupy a link, so consecutive slices overlap it.
//! * Cut-through: a slice starts on hop h + 1 as soon as its first byte got there (hop h's
//!   start + hop h's wire latency); hop h + 1 cannot finish before the last byte arrived
//!   (hop h's finish + latency). Store-and-forward of a whole piece is not what switches do.
//! * Links are FIFO servers at their effective bandwidth (raw x class efficiency x protocol
//!   wire factor), busy from a slice's start to its finish. Concurrent channels share a link
//!   by interleaving slices in arrival order: round robin at slice granularity.
//! * The makespan is the last slice's arrival; [`super::runtime_time`] adds the protocol's
//!   base latency.

use super::classes::{classify, params, LinkClass};
use super::nccl;
use super::protocol::Protocol;
use crate::cost::check;
use crate::cost::loads::ByteLayout;
use crate::error::{CollsynthError, Result};
use crate::ir::{Executor, Op, Schedule};
use crate::rational::{to_f64, Rat};
use crate::topology::Topology;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Per-link parameters of one run: microseconds per payload byte and hop latency.
#[derive(Debug, Clone, Copy)]
pub struct LinkModel {
    pub us_per_byte: f64,
    pub hop_latency_us: f64,
}

/// Effective bandwidth (GB/s, exact) of every link under `protocol`: raw x class efficiency
/// x wire factor x `kernel` (the executing kernel's own factor, [`nccl::bandwidth_factor`]).
pub fn effective_bandwidths(topo: &Topology, classes: &[LinkClass], protocol: Protocol, kernel: Rat) -> Vec<Rat> {
    topo.links
        .iter()
        .zip(classes)
        .map(|(l, &c)| l.bandwidth * params(c).efficiency * protocol.wire_factor() * kernel)
        .collect()
}

/// Hop latency of every link (us): the class's, or the topology's for a generic link.
pub fn hop_latencies(topo: &Topology, classes: &[LinkClass]) -> Vec<f64> {
    topo.links.iter().zip(classes).map(|(l, &c)| params(c).hop_latency_us.unwrap_or(l.latency)).collect()
}

/// Overhead of one message along `route` under `protocol`: the largest of its classes'.
pub fn message_overhead_us(route: &[usize], classes: &[LinkClass], protocol: Protocol) -> f64 {
    route.iter().map(|&l| params(classes[l]).overhead_us[protocol.index()]).fold(0.0, f64::max)
}

/// Microseconds per byte of one connection along `route` for `op` (its slowest class's
/// thread-block throughput; 0 when no class limits it).
pub fn connection_us_per_byte(route: &[usize], classes: &[LinkClass], op: Op) -> f64 {
    let x = usize::from(op == Op::Reduce);
    route.iter().filter_map(|&l| params(classes[l]).connection_gbps).map(|g| 1.0 / (g[x] * 1e3)).fold(0.0, f64::max)
}

/// Events ordered by (time, kind, sequence): at equal times a finished slice releases its
/// dependents first, a freed link (only one with a queue gets this event) next, then
/// arrivals queue.
const DONE: u8 = 0;
const FREE: u8 = 1;
const ARRIVE: u8 = 2;

/// The makespan (us, without base latency) of `s` on `topo` for `size` bytes, each piece in
/// `k` slices, under `protocol`.
pub fn makespan_us(s: &Schedule, topo: &Topology, size: Rat, protocol: Protocol, k: usize) -> Result<f64> {
    check(s, topo, size, k)?;
    let n = s.transfers.len();
    if n == 0 {
        return Ok(0.0);
    }
    let classes = classify(topo);
    let executor = s.provenance.executor;
    let kernel = nccl::bandwidth_factor(executor, protocol, size);
    let links: Vec<LinkModel> = effective_bandwidths(topo, &classes, protocol, kernel)
        .iter()
        .zip(hop_latencies(topo, &classes))
        .map(|(bw, lat)| LinkModel {
            us_per_byte: to_f64(&(Rat::from_integer(1) / (bw * Rat::from_integer(1000)))),
            hop_latency_us: lat,
        })
        .collect();
    // NCCL's kernels: NCCL's own per-channel ceiling.
    let (nodes, _) = nccl::nodes_and_ppn(topo);
    let cap = nccl::connection_cap_gbps(executor, protocol, nodes).map_or(0.0, |g| 1.0 / (g * 1e3));
    let connection: Vec<f64> =
        s.transfers.iter().map(|t| connection_us_per_byte(&t.route, &classes, t.op).max(cap)).collect();
    // NCCL's kernels pay one kernel step per transfer, MSCCL's interpreter the message overhead.
    let overhead: Vec<f64> = s
        .transfers
        .iter()
        .map(|t| match executor {
            Executor::Msccl => message_overhead_us(&t.route, &classes, protocol),
            Executor::NcclRing | Executor::NcclTree => nccl::step_us(&t.route, &classes),
        })
        .collect();
    let layout = ByteLayout::new(s, size);
    let mut bytes: Vec<f64> = Vec::with_capacity(s.pieces.len() * k);
    for p in &s.pieces {
        bytes.extend(layout.boundaries(p, k).windows(2).map(|w| (w[1] - w[0]) as f64));
    }
    // Dependents in CSR: transfer a's are children[first[a]..first[a + 1]].
    let mut first = vec![0usize; n + 1];
    for t in &s.transfers {
        for &a in &t.after {
            first[a + 1] += 1;
        }
    }
    for a in 0..n {
        first[a + 1] += first[a];
    }
    let mut children = vec![0usize; first[n]];
    let mut fill = first.clone();
    for (i, t) in s.transfers.iter().enumerate() {
        for &a in &t.after {
            children[fill[a]] = i;
            fill[a] += 1;
        }
    }
    drop(fill);
    let chunks = n * k;
    // Slice j waits for slice j of each dependency and, with a route, for slice j - 1 of
    // its own transfer to start sending (a connection streams its slices in order).
    let mut pending: Vec<u32> = Vec::with_capacity(chunks);
    for t in &s.transfers {
        let own = u32::from(!t.route.is_empty());
        pending.extend((0..k).map(|j| t.after.len() as u32 + if j > 0 { own } else { 0 }));
    }
    let mut run = Run {
        s,
        k,
        links,
        overhead,
        one_step_per_contribution: executor == Executor::Msccl,
        connection,
        connection_free: vec![0.0f64; n],
        free_at: vec![0.0f64; topo.links.len()],
        bytes,
        tail: vec![0.0f64; chunks],
        earliest: vec![0.0f64; chunks],
        stream: vec![0.0f64; chunks],
        pending,
        heap: BinaryHeap::new(),
        seq: 0,
    };
    let mut waiting: Vec<VecDeque<(usize, usize)>> = vec![VecDeque::new(); topo.links.len()];
    for c in 0..chunks {
        if run.pending[c] == 0 {
            run.release(c, 0.0);
        }
    }
    let (mut last, mut done) = (0.0f64, 0usize);
    while let Some(Reverse(((tb, kind, _), a, h))) = run.heap.pop() {
        let t = f64::from_bits(tb);
        match kind {
            ARRIVE => {
                let l = s.transfers[a / k].route[h];
                if waiting[l].is_empty() && run.free_at[l] <= t {
                    run.serve(a, h, t);
                } else {
                    // Only a link with a queue needs to wake up when it frees.
                    if waiting[l].is_empty() {
                        run.push(run.free_at[l], FREE, l, 0);
                    }
                    waiting[l].push_back((a, h));
                }
            }
            FREE => {
                if let Some((c, hop)) = waiting[a].pop_front() {
                    run.serve(c, hop, t);
                }
                if !waiting[a].is_empty() {
                    run.push(run.free_at[a], FREE, a, 0);
                }
            }
            _ => {
                last = last.max(t);
                done += 1;
                let (i, j) = (a / k, a % k);
                for &ch in &children[first[i]..first[i + 1]] {
                    run.contribution(ch * k + j, t, run.overhead[ch]);
                }
            }
        }
    }
    if done != chunks {
        return Err(CollsynthError::bad(format!(
            "dependency cycle (deadlock): {} of {chunks} slices never became ready",
            chunks - done
        )));
    }
    Ok(last)
}

/// ((time bits, kind, sequence), slice or link, hop).
type Event = ((u64, u8, u64), usize, usize);

/// One simulation's program and event queue.
struct Run<'a> {
    s: &'a Schedule,
    k: usize,
    links: Vec<LinkModel>,
    overhead: Vec<f64>,
    /// MSCCL's interpreter processes received contributions one step each; NCCL's kernels
    /// take them all in one step.
    one_step_per_contribution: bool,
    /// Per transfer: us per byte of its connection, and when the connection is free.
    connection: Vec<f64>,
    connection_free: Vec<f64>,
    /// Per link: when it finishes the slice it serves (a link is never idle with a queue).
    free_at: Vec<f64>,
    /// Whole bytes of slice j of piece p at `p k + j`.
    bytes: Vec<f64>,
    /// Per slice: when its last byte reaches the source of the hop it is on.
    tail: Vec<f64>,
    /// Per slice: when its received contributions are processed, and how many conditions
    /// remain.
    earliest: Vec<f64>,
    /// Per slice: when the previous slice of its transfer started sending.
    stream: Vec<f64>,
    pending: Vec<u32>,
    /// (time bits, kind, sequence) -> (slice or link, hop).
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
}

impl Run<'_> {
    fn push(&mut self, t: f64, kind: u8, a: usize, h: usize) {
        self.seq += 1;
        self.heap.push(Reverse(((t.to_bits(), kind, self.seq), a, h)));
    }

    /// Slice c's dependency arrived at t. The receiver processes its contributions one at a
    /// time (MSCCL: one step per received chunk, each waiting on its flag), each paying the
    /// message overhead, or (NCCL's kernels) all in one step; the last condition releases
    /// the slice.
    fn contribution(&mut self, c: usize, t: f64, overhead: f64) {
        self.earliest[c] = if self.one_step_per_contribution {
            self.earliest[c].max(t) + overhead
        } else {
            self.earliest[c].max(t + overhead)
        };
        self.settle(c);
    }

    /// Slice c - 1 of the same transfer started sending at t: the connection streams on.
    fn streamed(&mut self, c: usize, t: f64) {
        self.stream[c] = t;
        self.settle(c);
    }

    fn settle(&mut self, c: usize) {
        self.pending[c] -= 1;
        if self.pending[c] == 0 {
            self.release(c, self.earliest[c].max(self.stream[c]));
        }
    }

    /// Slice c enters its first hop's queue at `at` (or is done, with an empty route). A
    /// slice without dependencies still pays the message overhead.
    fn release(&mut self, c: usize, at: f64) {
        let i = c / self.k;
        let tx = &self.s.transfers[i];
        self.tail[c] = 0.0;
        if tx.route.is_empty() {
            self.push(at, DONE, c, 0);
            return;
        }
        let at = if tx.after.is_empty() { at.max(self.overhead[i]) } else { at };
        // The connection is a virtual first hop, cut-through like the links: the slice
        // cannot leave its first link before the thread block has pushed its last byte.
        let start = at.max(self.connection_free[i]);
        let bytes = self.bytes[tx.piece * self.k + c % self.k];
        self.tail[c] = start + bytes * self.connection[i];
        self.connection_free[i] = self.tail[c];
        self.push(start, ARRIVE, c, 0);
    }

    /// Serve slice c on hop h of its route from time t: schedules the link's release and the
    /// slice's next hop (cut-through) or its arrival.
    fn serve(&mut self, c: usize, h: usize, t: f64) {
        let i = c / self.k;
        let tx = &self.s.transfers[i];
        let (l, hops) = (tx.route[h], tx.route.len());
        let m = self.links[l];
        if h == 0 && !(c + 1).is_multiple_of(self.k) {
            // The connection streams on: the next slice may queue behind this one.
            self.streamed(c + 1, t);
        }
        let finish = (t + self.bytes[tx.piece * self.k + c % self.k] * m.us_per_byte).max(self.tail[c]);
        self.free_at[l] = finish;
        if h + 1 < hops {
            self.tail[c] = finish + m.hop_latency_us;
            self.push(t + m.hop_latency_us, ARRIVE, c, h + 1);
        } else {
            self.push(finish + m.hop_latency_us, DONE, c, 0);
        }
    }
}
