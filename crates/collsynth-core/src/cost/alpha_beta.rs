//! The analytic alpha-beta model (congestion-unaware between steps, exact fractions of M).
//!
//! * Step schedules (every transfer has a `step`): the steps run one after another; a step
//!   costs the largest route latency among its transfers (alpha: the sum of the route's link
//!   latencies) plus the largest time any link needs for the step's bytes (beta: bytes on the
//!   link in that step / bandwidth). `latency_us` sums the first terms, `bandwidth_us` the
//!   second.
//! * Other schedules (trees, DAGs) are modelled as pipelined flows: `latency_us` is the longest
//!   path through the dependency DAG where each transfer weighs its route latency, and
//!   `bandwidth_us` the busiest link's total load / bandwidth ([`super::bandwidth_term_us`]).
//!
//! Bytes are `M * fraction`, exact: rounding to whole bytes belongs to execution (the
//! simulator), not to the model. `total_us = latency_us + bandwidth_us`.

use super::loads::{bandwidth_term_us, max_time_us};
use super::{check, route_latency};
use crate::error::Result;
use crate::ir::transform::topological_order;
use crate::ir::Schedule;
use crate::rational::{to_f64, Rat};
use crate::topology::Topology;
use num_traits::Zero;

/// The analytic model's answer, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub total_us: f64,
    pub latency_us: f64,
    pub bandwidth_us: f64,
}

/// Analytic time of schedule `s` on `topo` for `size` bytes (see the module docs).
///
/// `pipeline` (k sub-chunks per piece, >= 1) is accepted for symmetry with
/// [`super::simulate()`] but does not change this model's answer: splitting every piece into
/// k keeps each step's bytes per link and each link's total load, and sub-chunk j of a
/// transfer depends only on sub-chunk j of its dependencies, so the critical path is the
/// same. (The simulator is where pipelining pays off.)
pub fn alpha_beta(s: &Schedule, topo: &Topology, size: Rat, pipeline: usize) -> Result<Estimate> {
    check(s, topo, size, pipeline)?;
    let (latency_us, bandwidth_us) = if !s.transfers.is_empty() && s.transfers.iter().all(|t| t.step.is_some()) {
        step_model(s, topo, size)
    } else {
        dag_model(s, topo, size)?
    };
    Ok(Estimate { total_us: latency_us + bandwidth_us, latency_us, bandwidth_us })
}

/// Sum over steps of (max route latency, max link time for the step's bytes).
fn step_model(s: &Schedule, topo: &Topology, size: Rat) -> (f64, f64) {
    let fraction: Vec<Rat> = (0..s.pieces.len()).map(|p| s.piece_fraction(p)).collect();
    let mut order: Vec<(u32, usize)> =
        s.transfers.iter().enumerate().map(|(i, t)| (t.step.expect("step schedule"), i)).collect();
    order.sort_unstable();
    // Per-link fraction of M sent in the current step; `touched` lists the links to read
    // and reset, `seen[l]` marks membership for the current step.
    let mut bytes = vec![Rat::zero(); topo.links.len()];
    let mut seen = vec![false; topo.links.len()];
    let mut touched: Vec<usize> = Vec::new();
    let (mut latency, mut bandwidth) = (0.0f64, 0.0f64);
    for group in order.chunk_by(|a, b| a.0 == b.0) {
        let mut alpha = 0.0f64;
        for &(_, i) in group {
            let t = &s.transfers[i];
            alpha = alpha.max(route_latency(topo, &t.route));
            for &l in &t.route {
                if !seen[l] {
                    seen[l] = true;
                    touched.push(l);
                }
                bytes[l] += fraction[t.piece];
            }
        }
        let beta = size * max_time_us(topo, touched.iter().map(|&l| (l, &bytes[l])));
        latency += alpha;
        bandwidth += to_f64(&beta);
        for l in touched.drain(..) {
            seen[l] = false;
            bytes[l] = Rat::zero();
        }
    }
    (latency, bandwidth)
}

/// Longest latency path through the DAG, and the busiest link's total load / bandwidth.
fn dag_model(s: &Schedule, topo: &Topology, size: Rat) -> Result<(f64, f64)> {
    let mut finish = vec![0.0f64; s.transfers.len()];
    let mut latency = 0.0f64;
    for i in topological_order(s)? {
        let t = &s.transfers[i];
        let ready = t.after.iter().map(|&a| finish[a]).fold(0.0, f64::max);
        finish[i] = ready + route_latency(topo, &t.route);
        latency = latency.max(finish[i]);
    }
    Ok((latency, to_f64(&bandwidth_term_us(s, topo, size))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::testutil::link;
    use crate::ir::{Collective, Op, Piece, Transfer};
    use crate::zoo::from_spec;

    /// A step schedule on ring:4 (100 GB/s, 1 us): step 0 sends half of M 0 -> 1 and the other
    /// half 0 -> 2 (two hops, sharing link 0 -> 1); step 1 sends a quarter 2 -> 3.
    #[test]
    fn step_model_sums_steps() {
        let topo = from_spec("ring:4,bw=100,lat=1").unwrap();
        let mut s = Schedule::new(Collective::Broadcast, 4, 0, "t");
        let h0 = s.add_piece(Piece { shard: 0, start: Rat::zero(), end: Rat::new(1, 2) });
        let h1 = s.add_piece(Piece { shard: 0, start: Rat::new(1, 2), end: Rat::from_integer(1) });
        let q = s.add_piece(Piece { shard: 0, start: Rat::zero(), end: Rat::new(1, 4) });
        let (l01, l12, l23) = (link(&topo, 0, 1), link(&topo, 1, 2), link(&topo, 2, 3));
        let t = |piece, src, dst, route, step| Transfer::new(piece, src, dst, route, Op::Copy, vec![], Some(step));
        s.add(t(h0, 0, 1, vec![l01], 0));
        s.add(t(h1, 0, 2, vec![l01, l12], 0));
        s.add(t(q, 2, 3, vec![l23], 1));
        let m = Rat::from_integer(1_000_000);
        // Step 0: alpha 2 us (two hops), link 0->1 carries M = 10 us. Step 1: 1 us + 2.5 us.
        let e = alpha_beta(&s, &topo, m, 1).unwrap();
        assert_eq!((e.latency_us, e.bandwidth_us, e.total_us), (3.0, 12.5, 15.5));
        // Without steps it is a DAG of independent transfers: latency 2 us, busiest link M.
        for t in &mut s.transfers {
            t.step = None;
        }
        let e = alpha_beta(&s, &topo, m, 1).unwrap();
        assert_eq!((e.latency_us, e.bandwidth_us), (2.0, 10.0));
        // A gap in step numbers costs nothing; the empty schedule costs nothing.
        let empty = Schedule::new(Collective::Broadcast, 4, 0, "t");
        assert_eq!(alpha_beta(&empty, &topo, m, 1).unwrap().total_us, 0.0);
    }

    /// The DAG latency is the longest path, not the sum: a tree 0 -> 1 -> 2 and 0 -> 3
    /// (on biring:4 with different latencies per hop).
    #[test]
    fn dag_latency_is_longest_path() {
        let topo = from_spec("biring:4,lat=0.5").unwrap();
        let mut s = Schedule::new(Collective::Broadcast, 4, 0, "t");
        let p = s.add_piece(Piece::whole(0));
        let t = |src: usize, dst: usize, after: Vec<usize>| {
            Transfer::new(p, src, dst, vec![link(&topo, src, dst)], Op::Copy, after, None)
        };
        let a = s.add(t(0, 1, vec![]));
        s.add(t(1, 2, vec![a]));
        s.add(t(0, 3, vec![]));
        let m = Rat::from_integer(3_000);
        let e = alpha_beta(&s, &topo, m, 4).unwrap();
        // Two hops of 0.5 us; link 0 -> 1 is 100 GB/s and carries 3000 bytes: 0.03 us.
        assert_eq!(e.latency_us, 1.0);
        assert!((e.bandwidth_us - 0.03).abs() < 1e-15);
    }
}
