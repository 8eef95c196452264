//! The event-driven, congestion-aware simulator: the common yardstick for comparing schedules.
//!
//! Model:
//! * Pipelining with k sub-chunks per piece is [`crate::ir::transform::split`]: transfer i
//!   becomes chunks (i, 0..k), chunk (i, j) carrying sub-piece j and depending on the chunks
//!   (a, j) of i's dependencies. The split is not materialised (a 64-way split of a
//!   million-transfer schedule would not fit in memory); chunk (i, j) is transfer `i k + j`
//!   of the split schedule and gives the same answer bit for bit (tested).
//! * Bytes are whole ([`ByteLayout`]): chunks are floored, the remainder goes to the last one.
//! * A chunk is ready when every chunk it depends on has arrived at its destination. It then
//!   goes hop by hop along its route, store-and-forward: every directed link (switch ports
//!   included, so shared ports congest) is a FIFO server whose service time per chunk is
//!   `latency + bytes / bandwidth` (bandwidth in GB/s = 10^3 bytes/us). Chunks are served in
//!   order of arrival at the link, ties by transfer index of the split schedule. A zero-byte
//!   chunk still pays the latency.
//! * The time is the last arrival.
//!
//! Implementation: one binary heap of events (time, key), where the key packs (kind,
//! transfer, sub-chunk, hop) into a u64 so that events compare as plain integers
//! (non-negative f64 times order like their bit patterns). At equal times, completions come
//! before arrivals at links, so a chunk made ready at time t by a completion at t queues
//! at its first link together with the chunks arriving there at t, and the transfer index
//! decides among them. Each event costs O(log heap) with no allocation: a link's FIFO is just
//! the time it becomes free, because arrivals reach it in order.

use super::check;
use super::loads::ByteLayout;
use crate::error::{CollsynthError, Result};
use crate::ir::Schedule;
use crate::rational::{to_f64, Rat};
use crate::topology::Topology;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

fn bits(x: usize) -> u32 {
    usize::BITS - x.leading_zeros()
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
    if n > u32::MAX as usize || s.pieces.len().checked_mul(k).is_none_or(|x| x > u32::MAX as usize) {
        return Err(too_big());
    }

    // The program in flat arrays: routes, pieces, dependents (CSR), pending counts per chunk.
    let mut route_start: Vec<usize> = Vec::with_capacity(n + 1);
    let mut route_links: Vec<u32> = Vec::new();
    let mut piece_of: Vec<u32> = Vec::with_capacity(n);
    let mut child_start = vec![0usize; n + 1];
    let mut max_hops = 0usize;
    route_start.push(0);
    for t in &s.transfers {
        route_links.extend(t.route.iter().map(|&l| l as u32));
        route_start.push(route_links.len());
        piece_of.push(t.piece as u32);
        max_hops = max_hops.max(t.route.len());
        for &a in &t.after {
            child_start[a + 1] += 1;
        }
    }
    for i in 0..n {
        child_start[i + 1] += child_start[i];
    }
    let mut fill = child_start.clone();
    let mut children = vec![0u32; child_start[n]];
    let mut pending: Vec<u32> = Vec::with_capacity(flows);
    for (i, t) in s.transfers.iter().enumerate() {
        for &a in &t.after {
            children[fill[a]] = i as u32;
            fill[a] += 1;
        }
        let deps = u32::try_from(t.after.len()).map_err(|_| too_big())?;
        pending.extend(std::iter::repeat_n(deps, k));
    }
    drop(fill);

    // Whole bytes of sub-chunk j of piece p at p k + j.
    let layout = ByteLayout::new(s, size);
    let mut chunk_bytes: Vec<f64> = Vec::with_capacity(s.pieces.len() * k);
    for p in &s.pieces {
        let b = layout.boundaries(p, k);
        chunk_bytes.extend(b.windows(2).map(|w| (w[1] - w[0]) as f64));
    }

    let lat: Vec<f64> = topo.links.iter().map(|l| l.latency).collect();
    let us_per_byte: Vec<f64> =
        topo.links.iter().map(|l| to_f64(&(Rat::from_integer(1) / (l.bandwidth * Rat::from_integer(1000))))).collect();
    let mut free = vec![0.0f64; topo.links.len()];
    let mut busy = vec![0.0f64; topo.links.len()];

    // Key layout: [arrival flag | transfer | sub-chunk | hop].
    let (hb, jb, ib) = (bits(max_hops), bits(k - 1), bits(n - 1));
    if hb + jb + ib > 63 {
        return Err(too_big());
    }
    let (hmask, jmask) = ((1u64 << hb) - 1, (1u64 << jb) - 1);
    let ishift = hb + jb;
    let ready_key = |i: usize, j: usize| -> u64 {
        let flag = if route_start[i + 1] > route_start[i] { ARRIVAL } else { 0 };
        flag | (i as u64) << ishift | (j as u64) << hb
    };

    let initial: Vec<Reverse<(u64, u64)>> = (0..n)
        .filter(|&i| s.transfers[i].after.is_empty())
        .flat_map(|i| (0..k).map(move |j| (i, j)))
        .map(|(i, j)| Reverse((0f64.to_bits(), ready_key(i, j))))
        .collect();
    let mut heap = BinaryHeap::from(initial);

    let (mut last, mut done) = (0.0f64, 0usize);
    // The event produced last, not yet in the heap: often the next one to process, and then
    // it never enters the heap at all.
    let mut carry: Option<(u64, u64)> = None;
    loop {
        let (tb, key) = match carry.take() {
            Some(e) => match heap.peek_mut() {
                Some(mut top) if top.0 < e => std::mem::replace(&mut *top, Reverse(e)).0,
                _ => e,
            },
            None => match heap.pop() {
                Some(Reverse(e)) => e,
                None => break,
            },
        };
        let t = f64::from_bits(tb);
        let h = (key & hmask) as usize;
        let j = ((key >> hb) & jmask) as usize;
        let i = ((key & !ARRIVAL) >> ishift) as usize;
        let rs = route_start[i];
        let len = route_start[i + 1] - rs;
        if h < len {
            // Arrives at link l: FIFO service after whatever arrived before.
            let l = route_links[rs + h] as usize;
            let start = if free[l] > t { free[l] } else { t };
            let svc = lat[l] + chunk_bytes[piece_of[i] as usize * k + j] * us_per_byte[l];
            let fin = start + svc;
            free[l] = fin;
            busy[l] += svc;
            let next = (key & !ARRIVAL) + 1;
            let e = (fin.to_bits(), if h + 1 < len { next | ARRIVAL } else { next });
            if carry.is_none() {
                carry = Some(e);
            } else {
                heap.push(Reverse(e));
            }
        } else {
            // Arrived at the destination: release the dependents' sub-chunk j.
            last = t;
            done += 1;
            for &c in &children[child_start[i]..child_start[i + 1]] {
                let f = c as usize * k + j;
                pending[f] -= 1;
                if pending[f] == 0 {
                    let e = (tb, ready_key(c as usize, j));
                    if carry.is_none() {
                        carry = Some(e);
                    } else {
                        heap.push(Reverse(e));
                    }
                }
            }
        }
    }
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
mod tests {
    use super::*;
    use crate::cost::alpha_beta;
    use crate::cost::testutil::{link, ring_allreduce, ring_allreduce_n};
    use crate::ir::{Collective, Op, Piece, Transfer};
    use crate::topology::TopologyBuilder;
    use crate::zoo::from_spec;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-300)
    }

    fn tr(piece: usize, src: usize, dst: usize, route: Vec<usize>, after: Vec<usize>) -> Transfer {
        Transfer { piece, src, dst, route, op: Op::Copy, after, step: None }
    }

    /// Broadcast chain 0 -> 1 -> ... -> N-1 of one piece on ring:N.
    fn chain(topo: &Topology) -> Schedule {
        let n = topo.n_ranks();
        let mut s = Schedule::new(Collective::Broadcast, n, 0, "chain");
        let p = s.add_piece(Piece::whole(0));
        for i in 0..n - 1 {
            let after = if i == 0 { vec![] } else { vec![i - 1] };
            s.add(tr(p, i, i + 1, vec![link(topo, i, i + 1)], after));
        }
        s
    }

    /// The classic pipeline formula: N-1 hops, k sub-chunks of M/k each take
    /// (N - 1 + k - 1) (alpha + M / (k b)); the analytic model says (N - 1) alpha + M / b.
    #[test]
    fn pipelined_chain() {
        let m: i128 = 64 * 7_000;
        for n in [2usize, 3, 5, 8] {
            for (bw, lat) in [("12.5", "0.7"), ("100", "0"), ("0.5", "10")] {
                let topo = from_spec(&format!("ring:{n},bw={bw},lat={lat}")).unwrap();
                let (b, alpha) = (to_f64(&topo.links[0].bandwidth) * 1e3, topo.links[0].latency);
                let s = chain(&topo);
                for k in [1usize, 2, 4, 16, 64] {
                    let size = Rat::from_integer(m);
                    let r = simulate(&s, &topo, size, k).unwrap();
                    let want = (n - 1 + k - 1) as f64 * (alpha + m as f64 / k as f64 / b);
                    assert!(close(r.time_us, want), "ring:{n} bw={bw} lat={lat} k={k}: {} != {want}", r.time_us);
                    assert_eq!(r.transfers, (n - 1) * k);
                    let e = alpha_beta(&s, &topo, size, k).unwrap();
                    assert!(close(e.total_us, (n - 1) as f64 * alpha + m as f64 / b), "alpha-beta k={k}");
                }
            }
        }
        // Zero bytes still pay the latency: (3 + 2) hops x 1.5 us.
        let topo = from_spec("ring:4,lat=1.5").unwrap();
        assert_eq!(simulate(&chain(&topo), &topo, Rat::from_integer(0), 3).unwrap().time_us, 7.5);
    }

    /// Whole bytes: M = 10 in 3 sub-chunks is 3 + 3 + 4 bytes. At 1 MB/s (1 byte/us) and
    /// 1 us latency the chunks take 4, 4 and 5 us per hop: over 2 hops the last arrives at
    /// 4 + 4 + 5 + 5 = 18 us (17.33 with fractional bytes).
    #[test]
    fn uneven_bytes_floor_and_remainder() {
        let topo = from_spec("ring:3,bw=0.001,lat=1").unwrap();
        let r = simulate(&chain(&topo), &topo, Rat::from_integer(10), 3).unwrap();
        assert_eq!(r.time_us, 18.0);
        assert_eq!((r.busiest_link, r.busiest_link_busy_us), (Some(0), 13.0));

        // Ring allreduce on ring:3 of M = 10: shards of 3, 3, 4 bytes; the 4-byte shard's
        // chain sets the pace on every link: 4 steps x (1 + 4) us = 20 us. The analytic
        // model uses exact fractions: 4 x (1 + 10/3) = 52/3 us.
        let s = ring_allreduce_n(&topo);
        let r = simulate(&s, &topo, Rat::from_integer(10), 1).unwrap();
        assert_eq!(r.time_us, 20.0);
        let e = alpha_beta(&s, &topo, Rat::from_integer(10), 1).unwrap();
        assert!(close(e.total_us, 52.0 / 3.0));
    }

    /// Two transfers sharing a link serialize; on disjoint links they overlap.
    #[test]
    fn shared_link_serializes() {
        let topo = from_spec("ring:4,bw=10,lat=2").unwrap();
        let one = 2.0 + 500.0 / 10_000.0;
        let m = Rat::from_integer(1000);
        let halves = |pairs: [(usize, usize); 2]| {
            let mut s = Schedule::new(Collective::Broadcast, 4, 0, "t");
            for (h, (a, b)) in pairs.into_iter().enumerate() {
                let p = s.add_piece(Piece { shard: 0, start: Rat::new(h as i128, 2), end: Rat::new(h as i128 + 1, 2) });
                s.add(tr(p, a, b, vec![link(&topo, a, b)], vec![]));
            }
            s
        };
        let shared = simulate(&halves([(0, 1), (0, 1)]), &topo, m, 1).unwrap();
        assert!(close(shared.time_us, 2.0 * one));
        assert_eq!(shared.busiest_link, Some(link(&topo, 0, 1)));
        assert!(close(shared.busiest_link_busy_us, 2.0 * one));
        let disjoint = simulate(&halves([(0, 1), (1, 2)]), &topo, m, 1).unwrap();
        assert!(close(disjoint.time_us, one));
    }

    /// All ranks of switch:4 send to rank 0: the uplinks run in parallel, then the
    /// switch -> n0 port serializes the three chunks.
    #[test]
    fn switch_port_congestion() {
        let topo = from_spec("switch:4,bw=25,lat=0.5").unwrap();
        let m = Rat::from_integer(1_000_000);
        let hop = 0.5 + 1e6 / 25e3; // 40.5 us
        let mut router = crate::ir::Router::new(&topo);
        let sends = |pairs: &[(usize, usize)], router: &mut crate::ir::Router| {
            let mut s = Schedule::new(Collective::Reduce, 4, 0, "t");
            let p = s.add_piece(Piece::whole(0));
            for &(a, b) in pairs {
                let route = router.route(a, b).unwrap();
                assert_eq!(route.len(), 2);
                s.add(Transfer { op: Op::Reduce, ..tr(p, a, b, route, vec![]) });
            }
            s
        };
        let incast = sends(&[(1, 0), (2, 0), (3, 0)], &mut router);
        let r = simulate(&incast, &topo, m, 1).unwrap();
        assert!(close(r.time_us, 4.0 * hop));
        let port = topo.link_between(topo.node_index("sw").unwrap(), topo.rank_node(0)).unwrap();
        assert_eq!(r.busiest_link, Some(port));
        assert!(close(r.busiest_link_busy_us, 3.0 * hop));
        // The analytic model does not see the queue, only the port's load: 1 us + 120 us.
        let e = alpha_beta(&incast, &topo, m, 1).unwrap();
        assert!(close(e.total_us, 121.0));
        // Distinct destinations: no shared port, two hops.
        let spread = sends(&[(1, 2), (2, 3), (3, 1)], &mut router);
        assert!(close(simulate(&spread, &topo, m, 1).unwrap().time_us, 2.0 * hop));
        // Pipelining through the switch: 2 hops, k = 4 quarter chunks, 3 senders on one port:
        // the port serves 12 quarter chunks back to back after the first uplink hop.
        let q = 0.5 + 1e6 / 4.0 / 25e3;
        assert!(close(simulate(&incast, &topo, m, 4).unwrap().time_us, 13.0 * q));
    }

    /// FIFO ties go by transfer index, and a chunk made ready at t by a completion at t
    /// queues together with the chunks arriving at t. On a -> b, d -> b, b -> c, c -> a,
    /// c -> d (every service 1 us): X (index 2) a -> b ends at 1 and releases Y (index 0,
    /// b -> c); Z (index 1) d -> b -> c reaches b -> c at 1 too. Y goes first (lower index),
    /// then Z, then W (after Z, c -> a): done at 4 (3 if Z went first).
    #[test]
    fn ties_by_transfer_index() {
        let mut b = TopologyBuilder::new("t");
        let [a, bb, c, d] = ["a", "b", "c", "d"].map(|x| b.compute(x, None));
        for (u, v) in [(a, bb), (d, bb), (bb, c), (c, a), (c, d)] {
            b.link(u, v, Rat::from_integer(1), 1.0);
        }
        let topo = b.build().unwrap();
        let l = |u: usize, v: usize| topo.link_between(u, v).unwrap();
        let mut s = Schedule::new(Collective::Broadcast, 4, 0, "t");
        let p = s.add_piece(Piece::whole(0));
        s.add(tr(p, 1, 2, vec![l(bb, c)], vec![2])); // Y
        s.add(tr(p, 3, 2, vec![l(d, bb), l(bb, c)], vec![])); // Z
        s.add(tr(p, 0, 1, vec![l(a, bb)], vec![])); // X
        s.add(tr(p, 2, 0, vec![l(c, a)], vec![1])); // W
        let r = simulate(&s, &topo, Rat::from_integer(0), 1).unwrap();
        assert_eq!(r.time_us, 4.0);
        // A larger first chunk delays a smaller one behind it: 750 and 250 bytes at 1 GB/s
        // (1000 B/us) with 0.5 us latency on ring:3: A 1.25, B 0.75, then B's forward 0.75.
        let topo = from_spec("ring:3,bw=1,lat=0.5").unwrap();
        let mut s = Schedule::new(Collective::Broadcast, 3, 0, "t");
        let big = s.add_piece(Piece { shard: 0, start: Rat::from_integer(0), end: Rat::new(3, 4) });
        let small = s.add_piece(Piece { shard: 0, start: Rat::new(3, 4), end: Rat::from_integer(1) });
        s.add(tr(big, 0, 1, vec![link(&topo, 0, 1)], vec![]));
        s.add(tr(small, 0, 1, vec![link(&topo, 0, 1)], vec![]));
        s.add(tr(small, 1, 2, vec![link(&topo, 1, 2)], vec![1]));
        assert!(close(simulate(&s, &topo, Rat::from_integer(1000), 1).unwrap().time_us, 2.75));
        s.transfers.swap(0, 1);
        s.transfers[2].after = vec![0];
        assert!(close(simulate(&s, &topo, Rat::from_integer(1000), 1).unwrap().time_us, 2.0));
    }

    /// Throughput of the simulator on the brief's large case: a ring allreduce on
    /// torus:32x32 (a snake Hamiltonian ring, 2 x 1023 x 1024 = 2.1M transfers of one hop)
    /// pipelined 64 ways: 134M chunk-hops. Measured, not asserted:
    /// `cargo test --release -p collsynth-core cost -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn timing_ring_allreduce_torus_32x32_k64() {
        use std::time::Instant;
        let t0 = Instant::now();
        let topo = from_spec("torus:32x32").unwrap();
        let order: Vec<usize> = (0..32usize)
            .flat_map(|y| (0..32usize).map(move |x| if y % 2 == 0 { x + 32 * y } else { 31 - x + 32 * y }))
            .collect();
        let s = ring_allreduce(&topo, &order);
        assert_eq!(s.transfers.len(), 2 * 1023 * 1024);
        assert!(s.transfers.iter().all(|t| t.route.len() == 1));
        let build = t0.elapsed().as_secs_f64();
        let size = Rat::from_integer(1 << 30);
        let t1 = Instant::now();
        let r = simulate(&s, &topo, size, 64).unwrap();
        let sim = t1.elapsed().as_secs_f64();
        let t2 = Instant::now();
        let e = alpha_beta(&s, &topo, size, 64).unwrap();
        let ab = t2.elapsed().as_secs_f64();
        let t3 = Instant::now();
        let bw = crate::cost::bandwidth_term_us(&s, &topo, size);
        let loads = t3.elapsed().as_secs_f64();
        let t4 = Instant::now();
        let r1 = simulate(&s, &topo, size, 1).unwrap();
        let sim1 = t4.elapsed().as_secs_f64();
        println!(
            "torus:32x32 ring allreduce, 1 GiB: build {build:.2} s; simulate k=64 ({} chunk transfers) {sim:.2} s \
             -> {:.1} us ({:.1} M chunk-hops/s); simulate k=1 {sim1:.2} s -> {:.1} us; alpha-beta {ab:.2} s -> {:.1} us; \
             bandwidth term {loads:.2} s -> {:.1} us",
            r.transfers,
            r.time_us,
            r.transfers as f64 / sim / 1e6,
            r1.time_us,
            e.total_us,
            to_f64(&bw)
        );
    }
}
