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
use crate::cost::events::Events;
use crate::cost::loads::ByteLayout;
use crate::error::{CollsynthError, Result};
use crate::ir::{Executor, Op, Schedule};
use crate::msccl::lower::BlockPlan;
use crate::rational::Rat;
use crate::topology::Topology;
use std::collections::VecDeque;

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

/// A lower bound on [`makespan_us`] under each protocol (indexed by `Protocol::index`), at
/// any slice count and with or without thread blocks: the busiest link's transmission. The
/// event loop serves a link's slices one after another (`Run::serve`), each for at least its
/// bytes at the link's effective bandwidth, so the link's last slice ends no sooner than
/// their sum; `auto` does not simulate a protocol this already rules out
/// (`cost::tuning::protocol_times`).
pub fn busiest_link_us(s: &Schedule, topo: &Topology, size: Rat) -> Result<[f64; 3]> {
    check(s, topo, size, 1)?;
    let classes = classify(topo);
    let layout = ByteLayout::new(s, size);
    // The bytes the simulator moves: each transfer its piece's whole-byte range on every hop.
    let piece_bytes: Vec<u128> =
        s.pieces.iter().map(|p| layout.range(p)).map(|r| u128::from(r.end - r.start)).collect();
    let mut bytes = vec![0u128; topo.links.len()];
    for t in &s.transfers {
        for &l in &t.route {
            bytes[l] += piece_bytes[t.piece];
        }
    }
    let mut out = [0.0; 3];
    for p in Protocol::ALL {
        let kernel = nccl::bandwidth_factor(s.provenance.executor, p, size);
        let bw = effective_bandwidths(topo, &classes, p, kernel);
        out[p.index()] = bytes
            .iter()
            .zip(&bw)
            .filter(|(&b, _)| b > 0)
            .map(|(&b, bw)| b as f64 * crate::cost::us_per_byte(bw))
            .fold(0.0, f64::max);
    }
    Ok(out)
}

/// [`busiest_link_us`] plus each protocol's base latency: a lower bound on the runtime
/// model's time of `s` under each protocol (indexed by `Protocol::index`), which is what
/// the model adds to a makespan.
pub fn floors_us(s: &Schedule, topo: &Topology, size: Rat) -> Result<[f64; 3]> {
    let busiest = busiest_link_us(s, topo, size)?;
    let mut out = [0.0; 3];
    for p in Protocol::ALL {
        out[p.index()] = p.base_latency_us() + busiest[p.index()];
    }
    Ok(out)
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
/// arrivals queue. Each kind is pushed nearly in time order (measured on TACOS's 1,024-NPU
/// allreduce: all finishes, 97 % of the frees, 99.9 % of the arrivals), so each has its
/// own FIFO lane in the queue ([`Events`]) and only the rest go to its heap.
const DONE: u8 = 0;
const FREE: u8 = 1;
const ARRIVE: u8 = 2;
const KINDS: usize = 3;

/// The makespan (us, without base latency) of `s` on `topo` for `size` bytes, each piece in
/// `k` slices, under `protocol`. A schedule marked for its thread blocks
/// ([`super::order::has_thread_block_order`]) runs in the thread blocks MSCCL's exporter
/// gives it ([`crate::msccl::lower::block_plan`]), each in its program order; every
/// other one (or one the exporter cannot fit) with every transfer on its own connection.
pub fn makespan_us(s: &Schedule, topo: &Topology, size: Rat, protocol: Protocol, k: usize) -> Result<f64> {
    // Blocks are per rank: a schedule stated per orbit runs them on its expansion (`api`).
    let order = if s.symmetry.is_none() { super::order::thread_block_order(s) } else { None };
    let plan = match order {
        Some(super::order::BlockOrder::Exported) => {
            let base = crate::msccl::lower::Options::default();
            match super::order::exported_lowering(s, topo, size, protocol, k, &base)? {
                Some(e) => return Ok(e.makespan_us),
                None => None,
            }
        }
        Some(super::order::BlockOrder::Timed) => {
            let order = super::order::timed_operations(s, topo, size, protocol, k)?;
            timed_block_plan(s, order).ok()
        }
        Some(_) => block_plan(s).ok(),
        None => None,
    };
    Ok(simulate(s, topo, size, protocol, k, plan.as_ref(), false)?.0)
}

/// The exporter's thread blocks of `s`, as `collsynth export` lowers it by default.
pub fn block_plan(s: &Schedule) -> Result<BlockPlan> {
    crate::msccl::lower::block_plan(s, &crate::msccl::lower::Options::default())
}

/// The exporter's thread blocks of `s` with T given ([`super::order::timed_operations`]) and
/// one channel per piece (up to the runtime's 32), so that no block carries two pieces'
/// steps; the fewest channels that fit when that does not.
pub fn timed_block_plan(s: &Schedule, order: Vec<crate::msccl::lower::Operation>) -> Result<BlockPlan> {
    use crate::msccl::lower::{block_plan, Options};
    let spread = s.pieces.len().clamp(1, crate::msccl::lower::MAX_CHANNELS);
    let o = Options { order: Some(order), channels: Some(spread), ..Default::default() };
    block_plan(s, &o).or_else(|_| block_plan(s, &Options { channels: None, ..o }))
}

/// The makespan of `s` run in the thread blocks of `plan`: each block runs its steps in its
/// order, slice after slice (Azure/msccl-executor-nccl `src/device/msccl_kernel.cu`,
/// `mscclRunInterpreter`).
pub fn makespan_in_blocks_us(
    s: &Schedule,
    topo: &Topology,
    size: Rat,
    protocol: Protocol,
    k: usize,
    plan: &BlockPlan,
) -> Result<f64> {
    Ok(simulate(s, topo, size, protocol, k, Some(plan), false)?.0)
}

/// One run of the default model, recorded: transfer i's slice j at `i k + j`.
pub(super) struct Timeline {
    /// When each slice arrived (a local transfer: was done).
    pub arrived: Vec<f64>,
    /// When each slice started on its first link (a local transfer: was released).
    pub started: Vec<f64>,
}

/// The default model's [`Timeline`] of `s`.
pub(super) fn timeline(s: &Schedule, topo: &Topology, size: Rat, protocol: Protocol, k: usize) -> Result<Timeline> {
    Ok(simulate(s, topo, size, protocol, k, None, true)?.1)
}

/// No node follows on its connection or thread block.
const NONE: u32 = u32::MAX;

/// One run: with `plan`, thread blocks in order; with `record`, every slice's arrival.
fn simulate(
    s: &Schedule,
    topo: &Topology,
    size: Rat,
    protocol: Protocol,
    k: usize,
    plan: Option<&BlockPlan>,
    record: bool,
) -> Result<(f64, Timeline)> {
    check(s, topo, size, k)?;
    if s.transfers.is_empty() {
        return Ok((0.0, Timeline { arrived: Vec::new(), started: Vec::new() }));
    }
    let classes = classify(topo);
    let mut program = Program::new(s, topo.links.len())?;
    let executor = s.provenance.executor;
    let kernel = nccl::bandwidth_factor(executor, protocol, size);
    let links: Vec<LinkModel> = effective_bandwidths(topo, &classes, protocol, kernel)
        .iter()
        .zip(hop_latencies(topo, &classes))
        .map(|(bw, lat)| LinkModel { us_per_byte: crate::cost::us_per_byte(bw), hop_latency_us: lat })
        .collect();
    // NCCL's kernels: NCCL's own per-channel ceiling.
    let (nodes, _) = nccl::nodes_and_ppn(topo);
    let cap = nccl::connection_cap_gbps(executor, protocol, nodes).map_or(0.0, |g| 1.0 / (g * 1e3));
    // Per link, what a route's fold takes from it (the class table, read once per class).
    let per_class = |f: &dyn Fn(&super::classes::ClassParams) -> f64| -> Vec<f64> {
        classes.iter().map(|&c| f(&params(c))).collect()
    };
    let conn_copy = per_class(&|p| p.connection_gbps.map_or(0.0, |g| 1.0 / (g[0] * 1e3)));
    let conn_reduce = per_class(&|p| p.connection_gbps.map_or(0.0, |g| 1.0 / (g[1] * 1e3)));
    // NCCL's kernels pay one kernel step per transfer, MSCCL's interpreter the message overhead.
    let step = match executor {
        Executor::Msccl => per_class(&|p| p.overhead_us[protocol.index()]),
        Executor::NcclRing | Executor::NcclTree => per_class(&|p| p.nccl_step_us),
    };
    let fold = |route: &[usize], per_link: &[f64]| route.iter().map(|&l| per_link[l]).fold(0.0, f64::max);
    let layout = ByteLayout::new(s, size);
    let mut bytes: Vec<f64> = Vec::with_capacity(s.pieces.len() * k);
    for p in &s.pieces {
        bytes.extend(layout.boundaries(p, k).windows(2).map(|w| (w[1] - w[0]) as f64));
    }
    // (overhead, connection us per byte) pairs: a handful of distinct values (they depend on
    // the route's classes only), so a transfer keeps a 4-byte index into them.
    // Found by a scan from the last one used (a hash per transfer costs more on millions).
    let mut costs: Vec<(f64, f64)> = Vec::new();
    let bits = |p: (f64, f64)| (p.0.to_bits(), p.1.to_bits());
    let mut last = 0usize;
    let shapes = std::mem::take(&mut program.tx);
    let mut tx: Vec<Tx> = Vec::with_capacity(shapes.len());
    for (&i, at) in program.order.iter().zip(shapes) {
        let t = &s.transfers[i as usize];
        let conn = if t.op == Op::Reduce { &conn_reduce } else { &conn_copy };
        let pair = (fold(&t.route, &step), fold(&t.route, conn).max(cap));
        if costs.get(last).is_none_or(|&c| bits(c) != bits(pair)) {
            last = costs.iter().position(|&c| bits(c) == bits(pair)).unwrap_or_else(|| {
                costs.push(pair);
                costs.len() - 1
            });
        }
        tx.push(Tx { at, cost: last as u32, conn: 0 });
    }
    let n = s.transfers.len();
    let chunks = n * k;
    let mut pos = vec![0u32; n];
    for (x, &i) in program.order.iter().enumerate() {
        pos[i as usize] = x as u32;
    }
    let chain = Chain::new(&mut tx, &pos, k, plan)?;
    // Slice j waits for slice j of each dependency and for the node before it on its
    // connection or block; a receive node for its slice's arrival too.
    let mut slices: Vec<Slice> = Vec::with_capacity(chain.next.len());
    for t in &tx {
        slices.extend((0..k).map(|_| Slice {
            tail: 0.0,
            earliest: 0.0,
            stream: 0.0,
            pending: t.at.n_after,
            folds: t.at.n_after,
        }));
    }
    if chain.blocks {
        slices.extend((0..chunks).map(|_| Slice { tail: 0.0, earliest: 0.0, stream: 0.0, pending: 1, folds: 0 }));
    }
    for &c in chain.next.iter().filter(|&&c| c != NONE) {
        slices[c as usize].pending += 1;
    }
    let mut run = Run {
        k,
        chunks,
        links,
        one_step_per_contribution: executor == Executor::Msccl,
        tx,
        costs,
        route_links: &program.route_links,
        children: &program.children,
        next: chain.next,
        blocks: chain.blocks,
        connection_free: vec![0.0f64; chain.connections],
        free_at: vec![0.0f64; topo.links.len()],
        bytes,
        slices,
        events: Events::from_sorted(Vec::new()),
        seq: 0,
        last: 0.0,
        done: 0,
        arrived: if record { vec![0.0f64; chunks] } else { Vec::new() },
        started: if record { vec![0.0f64; chunks] } else { Vec::new() },
    };
    let mut waiting: Vec<VecDeque<(u32, u32)>> = vec![VecDeque::new(); topo.links.len()];
    // Initial releases in list order.
    for &x in &pos {
        let x = x as usize;
        for c in x * k..(x + 1) * k {
            if run.slices[c].pending == 0 {
                run.release(c, 0.0);
            }
        }
    }
    while let Some((tb, ks, a, h)) = run.events.pop() {
        let t = f64::from_bits(tb);
        let (a, h) = (a as usize, h as usize);
        match (ks >> KIND_SHIFT) as u8 {
            ARRIVE => {
                let l = run.link(a / k, h);
                if waiting[l].is_empty() && run.free_at[l] <= t {
                    run.serve(a, h, t);
                } else {
                    // Only a link with a queue needs to wake up when it frees.
                    if waiting[l].is_empty() {
                        run.push(run.free_at[l], FREE, l, 0);
                    }
                    waiting[l].push_back((a as u32, h as u32));
                }
            }
            FREE => {
                if let Some((c, hop)) = waiting[a].pop_front() {
                    run.serve(c as usize, hop as usize, t);
                }
                if !waiting[a].is_empty() {
                    run.push(run.free_at[a], FREE, a, 0);
                }
            }
            _ if run.blocks && run.tx[a / k].at.hops > 0 => {
                // Arrived; its block's receive step takes it when the block gets there.
                let r = chunks + a;
                run.slices[r].earliest = t;
                run.settle(r);
            }
            _ => run.finish(a, t),
        }
    }
    if run.done != chunks {
        return Err(CollsynthError::bad(format!(
            "dependency cycle (deadlock): {} of {chunks} slices never became ready",
            chunks - run.done
        )));
    }
    // Back to list order.
    let listed = |packed: &[f64]| {
        let mut out = vec![0.0f64; packed.len()];
        if !packed.is_empty() {
            for (i, &x) in pos.iter().enumerate() {
                let x = x as usize;
                out[i * k..(i + 1) * k].copy_from_slice(&packed[x * k..(x + 1) * k]);
            }
        }
        out
    };
    Ok((run.last, Timeline { arrived: listed(&run.arrived), started: listed(&run.started) }))
}

/// What runs after what on one connection or thread block: `next[c]` is the node after node
/// c. Nodes `0..n k` are slices (a send, or a local transfer); with blocks, `n k + c` is
/// slice c's receive step. Without blocks every routed transfer is a connection of its own
/// streaming its slices in order.
struct Chain {
    next: Vec<u32>,
    blocks: bool,
    connections: usize,
}

impl Chain {
    /// Sets each transfer's connection (`Tx::conn`); `pos` maps list indices to packed ones.
    fn new(tx: &mut [Tx], pos: &[u32], k: usize, plan: Option<&BlockPlan>) -> Result<Chain> {
        let chunks = tx.len() * k;
        let Some(plan) = plan else {
            let mut next = vec![NONE; chunks];
            for (x, t) in tx.iter_mut().enumerate() {
                t.conn = x as u32;
                if t.at.hops > 0 {
                    for (c, nx) in next[x * k..(x + 1) * k - 1].iter_mut().enumerate() {
                        *nx = (x * k + c) as u32 + 1;
                    }
                }
            }
            return Ok(Chain { next, blocks: false, connections: tx.len() });
        };
        let too_big = || CollsynthError::bad("schedule too large to simulate in thread blocks");
        u32::try_from(2 * chunks).map_err(|_| too_big())?;
        let mut next = vec![NONE; 2 * chunks];
        for (b, ops) in plan.blocks.iter().enumerate() {
            let mut prev = NONE;
            for j in 0..k {
                for &(i, is_send) in ops {
                    let x = *pos.get(i).ok_or_else(|| CollsynthError::internal("block plan of another schedule"))?;
                    let x = x as usize;
                    let local = tx[x].at.hops == 0;
                    if is_send {
                        tx[x].conn = b as u32;
                    }
                    let c = x * k + j + if is_send || local { 0 } else { chunks };
                    if prev != NONE {
                        next[prev as usize] = c as u32;
                    }
                    prev = c as u32;
                }
            }
        }
        Ok(Chain { next, blocks: true, connections: plan.blocks.len() })
    }
}

/// A schedule's structure as the event loop reads it, packed: per transfer its route (in
/// `route_links`), piece, dependents (CSR in `children`) and count of dependencies, so that
/// an event touches one small record instead of a transfer's vectors.
///
/// Transfers are renumbered by depth in the dependency DAG (the list order within a depth):
/// transfers that run at about the same time sit together in memory, where the list order
/// (tree after tree, say) scatters them. Nothing in the run orders events by transfer index
/// (ties go by push order), and pushes happen in the list's order (the initial releases,
/// each transfer's dependents), so the renumbering changes no result.
struct Program {
    /// List index of each packed transfer.
    order: Vec<u32>,
    tx: Vec<Shape>,
    route_links: Vec<u32>,
    children: Vec<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Shape {
    /// The route is `route_links[route..route + hops]`; `first` is its first link, inline.
    route: u32,
    hops: u32,
    first: u32,
    piece: u32,
    /// The dependents are `children[children..children + n_children]`.
    children: u32,
    n_children: u32,
    n_after: u32,
}

impl Program {
    fn new(s: &Schedule, n_links: usize) -> Result<Program> {
        let n = s.transfers.len();
        let too_big = || CollsynthError::bad(format!("schedule too large to simulate ({n} transfers)"));
        let small = |x: usize| u32::try_from(x).map_err(|_| too_big());
        small(n_links)?;
        small(n)?;
        let order = depth_order(s);
        let mut pos = vec![0u32; n];
        for (x, &i) in order.iter().enumerate() {
            pos[i as usize] = x as u32;
        }
        let mut n_children = vec![0u32; n];
        for t in &s.transfers {
            for &a in &t.after {
                n_children[pos[a] as usize] += 1;
            }
        }
        let mut tx: Vec<Shape> = Vec::with_capacity(n);
        let mut route_links: Vec<u32> = Vec::new();
        let mut start = 0usize;
        for (&i, &c) in order.iter().zip(&n_children) {
            let t = &s.transfers[i as usize];
            tx.push(Shape {
                route: small(route_links.len())?,
                hops: small(t.route.len())?,
                first: t.route.first().map_or(0, |&l| l as u32),
                piece: small(t.piece)?,
                children: small(start)?,
                n_children: 0,
                n_after: small(t.after.len())?,
            });
            route_links.extend(t.route.iter().map(|&l| l as u32));
            start += c as usize;
        }
        small(start)?;
        drop(n_children);
        // Each transfer's dependents in list order (the order their releases are pushed).
        let mut children = vec![0u32; start];
        for (i, t) in s.transfers.iter().enumerate() {
            for &a in &t.after {
                let x = &mut tx[pos[a] as usize];
                children[(x.children + x.n_children) as usize] = pos[i];
                x.n_children += 1;
            }
        }
        Ok(Program { order, tx, route_links, children })
    }
}

/// List indices sorted by (depth in the dependency DAG, index); the list order when the
/// dependencies have a cycle (the run reports it).
fn depth_order(s: &Schedule) -> Vec<u32> {
    let n = s.transfers.len();
    let Ok(topo) = crate::ir::transform::topological_order(s) else { return (0..n as u32).collect() };
    let mut depth = vec![0u32; n];
    for &i in &topo {
        depth[i] = s.transfers[i].after.iter().map(|&a| depth[a] + 1).max().unwrap_or(0);
    }
    // Counting sort: stable, so the list order within a depth.
    let levels = depth.iter().max().map_or(0, |&d| d as usize + 1);
    let mut first = vec![0usize; levels + 1];
    for &d in &depth {
        first[d as usize + 1] += 1;
    }
    for d in 0..levels {
        first[d + 1] += first[d];
    }
    let mut order = vec![0u32; n];
    for (i, &d) in depth.iter().enumerate() {
        order[first[d as usize]] = i as u32;
        first[d as usize] += 1;
    }
    order
}

/// The event kind sits above a 62-bit sequence number in an event's second word.
const KIND_SHIFT: u32 = 62;

/// (time bits, kind << 62 | sequence, slice or link, hop): (time, kind, sequence) is unique,
/// so events order as (time, kind, sequence) and the payload never decides.
type Event = (u64, u64, u32, u32);

/// One transfer of a run: its shape, its route's per-message overhead and connection speed
/// (`Run::costs[cost]`), and the connection (or thread block) that pushes its bytes.
#[derive(Debug, Clone, Copy)]
struct Tx {
    at: Shape,
    cost: u32,
    conn: u32,
}

/// One slice of a transfer.
#[derive(Debug, Clone, Copy)]
struct Slice {
    /// When its last byte reaches the source of the hop it is on.
    tail: f64,
    /// When its received contributions are processed.
    earliest: f64,
    /// When the node before it on its connection or block started sending (or finished).
    stream: f64,
    /// Conditions that remain before it is released.
    pending: u32,
    /// Received contributions still to come (its dependencies' slices).
    folds: u32,
}

/// One simulation's program and event queue.
struct Run<'a> {
    k: usize,
    /// Slices (n k): node `chunks + c` is slice c's receive step when `blocks`.
    chunks: usize,
    links: Vec<LinkModel>,
    /// MSCCL's interpreter processes received contributions one step each; NCCL's kernels
    /// take them all in one step.
    one_step_per_contribution: bool,
    tx: Vec<Tx>,
    /// (per-message overhead, connection us per byte) of the protocol on a route.
    costs: Vec<(f64, f64)>,
    route_links: &'a [u32],
    children: &'a [u32],
    /// [`Chain::next`].
    next: Vec<u32>,
    blocks: bool,
    /// Per connection (or thread block): when it has pushed its last byte.
    connection_free: Vec<f64>,
    /// Per link: when it finishes the slice it serves (a link is never idle with a queue).
    free_at: Vec<f64>,
    /// Whole bytes of slice j of piece p at `p k + j`.
    bytes: Vec<f64>,
    slices: Vec<Slice>,
    events: Events<Event, KINDS>,
    seq: u64,
    /// The latest finish so far, and how many slices finished.
    last: f64,
    done: usize,
    /// Per slice (packed), when it finished and when it started; empty unless recorded.
    arrived: Vec<f64>,
    started: Vec<f64>,
}

impl Run<'_> {
    fn push(&mut self, t: f64, kind: u8, a: usize, h: usize) {
        self.seq += 1;
        self.events.push_to(kind as usize, (t.to_bits(), (kind as u64) << KIND_SHIFT | self.seq, a as u32, h as u32));
    }

    /// Link of hop h of transfer i.
    #[inline]
    fn link(&self, i: usize, h: usize) -> usize {
        let at = &self.tx[i].at;
        if h == 0 {
            at.first as usize
        } else {
            self.route_links[at.route as usize + h] as usize
        }
    }

    /// Slice c's dependency arrived at t over a route whose message overhead is `received`.
    /// MSCCL's interpreter processes the contributions one step each, in turn: every one but
    /// the last is a receive step on its own connection (`received`), the last is fused with
    /// the send (`sending`, slice c's own route). NCCL's kernels take them all in one step.
    /// The last condition releases the slice.
    fn contribution(&mut self, c: usize, t: f64, received: f64, sending: f64) {
        let x = &mut self.slices[c];
        x.folds -= 1;
        x.earliest = if !self.one_step_per_contribution {
            x.earliest.max(t + sending)
        } else if x.folds == 0 {
            x.earliest.max(t) + sending
        } else {
            x.earliest.max(t) + received
        };
        self.settle(c);
    }

    /// The node before c on its connection or block started sending (or finished) at t.
    fn streamed(&mut self, c: usize, t: f64) {
        self.slices[c].stream = t;
        self.settle(c);
    }

    fn settle(&mut self, c: usize) {
        let x = &mut self.slices[c];
        x.pending -= 1;
        if x.pending == 0 {
            let at = x.earliest.max(x.stream);
            self.release(c, at);
        }
    }

    /// Slice c enters its first hop's queue at `at` (or is done, with an empty route). A
    /// slice without dependencies still pays the message overhead.
    fn release(&mut self, c: usize, at: f64) {
        if c >= self.chunks {
            // A receive step done: its slice is at its destination, the block moves on.
            self.finish(c - self.chunks, at);
            self.stream_on(c, at);
            return;
        }
        let i = c / self.k;
        let tx = self.tx[i];
        self.slices[c].tail = 0.0;
        if !self.started.is_empty() && tx.at.hops == 0 {
            self.started[c] = at;
        }
        if tx.at.hops == 0 {
            self.push(at, DONE, c, 0);
            return;
        }
        let (overhead, connection) = self.costs[tx.cost as usize];
        let at = if tx.at.n_after == 0 { at.max(overhead) } else { at };
        // The connection is a virtual first hop, cut-through like the links: the slice
        // cannot leave its first link before the thread block has pushed its last byte.
        let start = at.max(self.connection_free[tx.conn as usize]);
        let bytes = self.bytes[tx.at.piece as usize * self.k + c % self.k];
        let tail = start + bytes * connection;
        self.slices[c].tail = tail;
        self.connection_free[tx.conn as usize] = tail;
        self.push(start, ARRIVE, c, 0);
    }

    /// Node c is done (sending, or its step) at t: the next on its connection or block goes.
    fn stream_on(&mut self, c: usize, t: f64) {
        let nx = self.next[c];
        if nx != NONE {
            self.streamed(nx as usize, t);
        }
    }

    /// Slice c is at its destination at t: its dependents' contributions.
    fn finish(&mut self, c: usize, t: f64) {
        self.last = self.last.max(t);
        self.done += 1;
        if !self.arrived.is_empty() {
            self.arrived[c] = t;
        }
        let (i, j) = (c / self.k, c % self.k);
        let at = self.tx[i].at;
        if at.hops == 0 {
            // A local step: its block moves on.
            self.stream_on(c, t);
        }
        let received = self.costs[self.tx[i].cost as usize].0;
        for x in at.children..at.children + at.n_children {
            let ch = self.children[x as usize] as usize;
            self.contribution(ch * self.k + j, t, received, self.costs[self.tx[ch].cost as usize].0);
        }
    }

    /// Serve slice c on hop h of its route from time t: schedules the link's release and the
    /// slice's next hop (cut-through) or its arrival.
    fn serve(&mut self, c: usize, h: usize, t: f64) {
        let i = c / self.k;
        let at = self.tx[i].at;
        let (l, hops) = (self.link(i, h), at.hops as usize);
        let m = self.links[l];
        if h == 0 {
            if !self.started.is_empty() {
                self.started[c] = t;
            }
            // The connection streams on: the next slice may queue behind this one.
            self.stream_on(c, t);
        }
        let finish = (t + self.bytes[at.piece as usize * self.k + c % self.k] * m.us_per_byte).max(self.slices[c].tail);
        self.free_at[l] = finish;
        if h + 1 < hops {
            self.slices[c].tail = finish + m.hop_latency_us;
            self.push(t + m.hop_latency_us, ARRIVE, c, h + 1);
        } else {
            self.push(finish + m.hop_latency_us, DONE, c, 0);
        }
    }
}
