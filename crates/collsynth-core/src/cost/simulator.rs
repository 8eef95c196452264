//! The event-driven, congestion-aware simulator: the common yardstick for comparing schedules.
//!
//! Model:
//! * Pipelining with k sub-chunks per piece is [`crate::ir::transform::pipelined`]: transfer i
//!   becomes chunks (i, 0..k), chunk (i, j) carrying sub-piece j and depending on the chunks
//!   (a, j) of i's dependencies. The split is not materialised (64 copies of a
//!   two-million-transfer schedule, each with its own route and dependency vectors, would
//!   take tens of GB); chunk (i, j) is transfer `i k + j` of the split schedule and gives
//!   the same answer bit for bit (tested).
//! * Bytes are whole ([`ByteLayout`]): chunks are floored, the remainder goes to the last one.
//! * A chunk is ready when every chunk it depends on has arrived at its destination. It then
//!   goes hop by hop along its route, store-and-forward: every directed link (switch ports
//!   included, so shared ports congest) is a FIFO server whose service time per chunk is
//!   `latency + bytes / bandwidth` (bandwidth in GB/s = 10^3 bytes/us). Chunks are served in
//!   order of arrival at the link, ties by transfer index of the split schedule. A zero-byte
//!   chunk still pays the latency.
//! * The time is the last arrival.
//!
//! Implementation: events (time, key), where the key packs (kind, transfer, sub-chunk, hop)
//! into a u64 so that events compare as plain integers (non-negative f64 times order like
//! their bit patterns). An event says "chunk (i, j) has finished hop h - 1 and arrives at
//! hop h" (or at its destination). At equal times, arrivals at destinations come first, so a
//! chunk they make ready at t queues at its first link together with the chunks arriving
//! there at t, and the transfer index decides among them. Each link keeps the chunks waiting
//! for it in a FIFO; only the chunk it serves has an event pending, so there are about as
//! many pending events as busy links. Pending events wait in a few sorted FIFO lanes or,
//! when they fit none, in a binary heap; the next event is the smallest of the fronts.
//! Schedules whose links finish in step (rings, symmetric step schedules) emit a few
//! interleaved sorted streams and hardly touch the heap; in general an event costs
//! O(log pending). The loop allocates nothing except when a queue outgrows its capacity
//! (amortised, a few times per run). Per-chunk memory is spent only on transfers with two or
//! more dependencies (a countdown per sub-chunk); the rest is per IR transfer.
//!
//! The tests check all this against a textbook simulator (the split materialised, every
//! chunk's link reservation made on arrival, one heap) bit for bit on random schedules.
//! Both agree whenever service times are positive. A service of zero duration (a zero-byte
//! chunk on a zero-latency link) keeps its place in the FIFO but may let a same-instant tie
//! further on be broken in a different order, since the chunk queued behind it gets its
//! event when the zero-length service ends rather than when it arrived.

use super::check;
use super::events::Events;
use super::loads::ByteLayout;
use crate::error::{CollsynthError, Result};
use crate::ir::Schedule;
use crate::rational::Rat;
use crate::topology::Topology;
use std::collections::VecDeque;

/// The simulator's answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimResult {
    /// Makespan in microseconds: when the last chunk arrives.
    pub time_us: f64,
    /// Chunk transfers simulated (IR transfers x pipeline).
    pub transfers: usize,
    /// The link with the largest busy time (lowest index on ties); `None` when no link was
    /// ever busy.
    pub busiest_link: Option<usize>,
    /// Total service time of that link (us).
    pub busiest_link_busy_us: f64,
}

/// Top bit of an event key: set for "arrives at hop h's link", clear for "arrived at the
/// destination" (so completions sort first at equal times).
const ARRIVAL: u64 = 1 << 63;

/// Sorted FIFO lanes of pending events besides the heap.
const LANES: usize = 4;

fn bits(x: usize) -> u32 {
    usize::BITS - x.leading_zeros()
}

/// One transfer of the program, packed (one cache line serves a chunk's whole visit).
#[derive(Debug, Clone, Copy)]
struct Tx {
    /// The route is `route_links[route..route + hops]`; `first` is its first link, inline
    /// (most routes have one hop: their events never read `route_links`).
    route: u32,
    hops: u32,
    first: u32,
    piece: u32,
    /// The dependents are `children[children..children + n_children]`.
    children: u32,
    n_children: u32,
    /// Transfers with two or more dependencies count them down per sub-chunk in
    /// `pending[slot k..slot k + k]`; `NO_SLOT` for the others (ready as soon as their one
    /// dependency, if any, arrives), which costs nothing per chunk.
    slot: u32,
}

const NO_SLOT: u32 = u32::MAX;

/// The flat program and the link state of one simulation.
struct Sim {
    k: usize,
    hb: u32,
    hmask: u64,
    jmask: u64,
    ishift: u32,
    tx: Vec<Tx>,
    route_links: Vec<u32>,
    children: Vec<u32>,
    pending: Vec<u32>,
    /// Whole bytes of sub-chunk j of piece p at `p k + j`.
    chunk_bytes: Vec<f64>,
    links: Vec<LinkState>,
    /// The chunks waiting for each link, in order of arrival (as event keys).
    waiting: Vec<VecDeque<u64>>,
}

#[derive(Debug, Clone, Copy)]
struct LinkState {
    latency_us: f64,
    us_per_byte: f64,
    /// Total service time so far.
    busy_us: f64,
    /// Serves no chunk now.
    idle: bool,
}

impl Sim {
    /// Link of hop h of a transfer.
    #[inline]
    fn link(&self, x: &Tx, h: usize) -> usize {
        if h == 0 {
            x.first as usize
        } else {
            self.route_links[x.route as usize + h] as usize
        }
    }

    #[inline]
    fn decode(&self, key: u64) -> (usize, usize, usize) {
        let h = (key & self.hmask) as usize;
        let j = ((key >> self.hb) & self.jmask) as usize;
        let i = ((key & !ARRIVAL) >> self.ishift) as usize;
        (i, j, h)
    }

    /// Key of chunk (i, j) arriving at its first hop (or done at once, for an empty route).
    #[inline]
    fn ready_key(&self, i: usize, j: usize) -> u64 {
        let flag = if self.tx[i].hops > 0 { ARRIVAL } else { 0 };
        flag | (i as u64) << self.ishift | (j as u64) << self.hb
    }

    /// Start serving chunk `key` on its hop's link at time t; returns the event of its
    /// arrival at the next hop (flagged as an arrival unless that is the destination).
    #[inline]
    fn serve(&mut self, key: u64, t: f64) -> (u64, u64) {
        let (i, j, h) = self.decode(key);
        let tx = self.tx[i];
        let l = self.link(&tx, h);
        let link = &mut self.links[l];
        let svc = link.latency_us + self.chunk_bytes[tx.piece as usize * self.k + j] * link.us_per_byte;
        link.busy_us += svc;
        let next = (key & !ARRIVAL) + 1;
        ((t + svc).to_bits(), if h + 1 < tx.hops as usize { next | ARRIVAL } else { next })
    }
}

/// Simulate schedule `s` on `topo` for `size` bytes with `pipeline` (>= 1) sub-chunks per
/// piece (see the module docs).
pub fn simulate(s: &Schedule, topo: &Topology, size: Rat, pipeline: usize) -> Result<SimResult> {
    check(s, topo, size, pipeline)?;
    let k = pipeline;
    let n = s.transfers.len();
    let too_big = || CollsynthError::bad(format!("schedule too large to simulate ({n} transfers x {k} sub-chunks)"));
    let flows = n.checked_mul(k).ok_or_else(too_big)?;
    if n == 0 {
        return Ok(SimResult { time_us: 0.0, transfers: 0, busiest_link: None, busiest_link_busy_us: 0.0 });
    }
    let small = |x: usize| u32::try_from(x).ok().filter(|&x| x != NO_SLOT).ok_or_else(too_big);

    // The program: packed transfers, routes, dependents (CSR), countdowns for many-dependency
    // transfers.
    let mut tx: Vec<Tx> = Vec::with_capacity(n);
    let mut route_links: Vec<u32> = Vec::new();
    let mut n_children = vec![0usize; n];
    let (mut max_hops, mut slots) = (0usize, 0usize);
    for t in &s.transfers {
        let slot = if t.after.len() >= 2 {
            slots += 1;
            small(slots - 1)?
        } else {
            NO_SLOT
        };
        tx.push(Tx {
            route: small(route_links.len())?,
            hops: small(t.route.len())?,
            first: t.route.first().map_or(0, |&l| l as u32),
            piece: small(t.piece)?,
            children: 0,
            n_children: 0,
            slot,
        });
        route_links.extend(t.route.iter().map(|&l| l as u32));
        max_hops = max_hops.max(t.route.len());
        for &a in &t.after {
            n_children[a] += 1;
        }
    }
    let mut start = 0usize;
    for (x, &c) in tx.iter_mut().zip(&n_children) {
        x.children = small(start)?;
        start += c;
    }
    drop(n_children);
    let mut children = vec![0u32; start];
    let mut pending: Vec<u32> = Vec::with_capacity(slots.checked_mul(k).ok_or_else(too_big)?);
    for (i, t) in s.transfers.iter().enumerate() {
        for &a in &t.after {
            let x = &mut tx[a];
            children[(x.children + x.n_children) as usize] = i as u32;
            x.n_children += 1;
        }
        if tx[i].slot != NO_SLOT {
            pending.extend(std::iter::repeat_n(small(t.after.len())?, k));
        }
    }

    // Whole bytes of sub-chunk j of piece p at p k + j.
    let layout = ByteLayout::new(s, size);
    let mut chunk_bytes: Vec<f64> = Vec::with_capacity(s.pieces.len().checked_mul(k).ok_or_else(too_big)?);
    for p in &s.pieces {
        let b = layout.boundaries(p, k);
        chunk_bytes.extend(b.windows(2).map(|w| (w[1] - w[0]) as f64));
    }
    let links: Vec<LinkState> = topo
        .links
        .iter()
        .map(|l| LinkState {
            latency_us: l.latency,
            us_per_byte: super::us_per_byte(&l.bandwidth),
            busy_us: 0.0,
            idle: true,
        })
        .collect();

    // Key layout: [arrival flag | transfer | sub-chunk | hop].
    let (hb, jb, ib) = (bits(max_hops), bits(k - 1), bits(n - 1));
    if hb + jb + ib > 63 {
        return Err(too_big());
    }
    let mut sim = Sim {
        k,
        hb,
        hmask: (1u64 << hb) - 1,
        jmask: (1u64 << jb) - 1,
        ishift: hb + jb,
        tx,
        route_links,
        children,
        pending,
        chunk_bytes,
        links,
        waiting: vec![VecDeque::new(); topo.links.len()],
    };

    // Pending events live in a few FIFO lanes (`cost::events`; an event joins the lane whose
    // last event is the latest one not later than it) and a heap. Schedules whose links
    // finish in step (rings, symmetric step schedules) emit a few interleaved sorted streams
    // (chunks made ready now, chunks done one service time later), so most events never
    // touch the heap.
    let mut initial: Vec<(u64, u64)> = (0..n)
        .filter(|&i| s.transfers[i].after.is_empty())
        .flat_map(|i| (0..k).map(move |j| (i, j)))
        .map(|(i, j)| (0f64.to_bits(), sim.ready_key(i, j)))
        .collect();
    initial.sort_unstable();
    let mut events: Events<(u64, u64), LANES> = Events::from_sorted(initial);

    let (mut last, mut done) = (0.0f64, 0usize);
    while let Some((tb, key)) = events.pop() {
        // The chunk `key` has finished hop h - 1 (if h > 0) and arrives at hop h (h < hops)
        // or at its destination (h = hops).
        let t = f64::from_bits(tb);
        let (i, j, h) = sim.decode(key);
        let x = sim.tx[i];
        if h > 0 {
            // The link it leaves serves the next chunk waiting there.
            let l = sim.link(&x, h - 1);
            match sim.waiting[l].pop_front() {
                Some(next) => events.push(sim.serve(next, t)),
                None => sim.links[l].idle = true,
            }
        }
        if h < x.hops as usize {
            let l = sim.link(&x, h);
            if sim.links[l].idle {
                sim.links[l].idle = false;
                events.push(sim.serve(key, t));
            } else {
                sim.waiting[l].push_back(key);
            }
        } else {
            // Arrived at the destination: release the dependents' sub-chunk j.
            last = t;
            done += 1;
            if done.is_multiple_of(65536) {
                crate::budget::check_cancelled()?;
            }
            for y in x.children..x.children + x.n_children {
                let c = sim.children[y as usize] as usize;
                let slot = sim.tx[c].slot;
                if slot != NO_SLOT {
                    let f = slot as usize * k + j;
                    sim.pending[f] -= 1;
                    if sim.pending[f] > 0 {
                        continue;
                    }
                }
                events.push((tb, sim.ready_key(c, j)));
            }
        }
    }
    let busy: Vec<f64> = sim.links.iter().map(|l| l.busy_us).collect();
    if done != flows {
        return Err(CollsynthError::bad(format!(
            "dependency cycle (deadlock): {} of {flows} chunk transfers never became ready",
            flows - done
        )));
    }
    let mut busiest: Option<usize> = None;
    for (l, &b) in busy.iter().enumerate() {
        if b > 0.0 && busiest.is_none_or(|m| b > busy[m]) {
            busiest = Some(l);
        }
    }
    Ok(SimResult {
        time_us: last,
        transfers: flows,
        busiest_link: busiest,
        busiest_link_busy_us: busiest.map_or(0.0, |l| busy[l]),
    })
}

#[cfg(test)]
mod tests;
