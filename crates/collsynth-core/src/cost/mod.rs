//! Cost of a schedule: exact link loads, the analytic alpha-beta model and the event-driven,
//! congestion-aware simulator.
//!
//! Like ASTRA-sim's congestion-unaware and congestion-aware backends, the two models answer
//! the same question ("how long does this schedule take for M bytes?") through one interface,
//! [`time_us`] with a [`Model`], and the tests keep them in agreement where both are exact
//! (a ring allreduce: `2 (N-1) (alpha + M / (N b))`).
//!
//! Units: sizes in bytes (exact [`Rat`]), bandwidth in GB/s = 10^9 B/s = 10^3 B/us, latency
//! and every result in microseconds.
//!
//! * [`loads`]: bytes per link over the whole schedule and the bandwidth term used by
//!   `optimality` (exact, no rounding), plus [`ByteLayout`], the rounding of pieces to whole
//!   bytes that every executing consumer (simulator, XML, MPI) shares.
//! * [`alpha_beta`](mod@alpha_beta): the analytic model, in exact fractions of M.
//! * [`simulator`]: per-link FIFO queues, store-and-forward per chunk, pipelining, whole bytes.
//!
//! ```
//! use collsynth_core::cost::{self, Model};
//! use collsynth_core::ir::{Collective, Op, Piece, Schedule, Transfer};
//! use collsynth_core::{zoo, Rat};
//!
//! // One piece sent 0 -> 1 on a 4-rank ring of 100 GB/s, 1 us links.
//! let topo = zoo::from_spec("ring:4").unwrap();
//! let mut s = Schedule::new(Collective::Broadcast, 4, 0, "example");
//! let p = s.add_piece(Piece::whole(0));
//! let route = vec![topo.link_between(topo.rank_node(0), topo.rank_node(1)).unwrap()];
//! s.add(Transfer::new(p, 0, 1, route, Op::Copy, vec![], None));
//! let m = Rat::from_integer(1_000_000); // 1 MB: 10 us on the wire, + 1 us latency
//! let t = cost::time_us(Model::Simulator, &s, &topo, m, 1).unwrap();
//! assert!((t - 11.0).abs() < 1e-9);
//! ```

pub mod alpha_beta;
pub mod latency_bandwidth;
pub mod loads;
pub mod simulator;
pub mod tuning;

pub use alpha_beta::{alpha_beta, Estimate};
pub use latency_bandwidth::{latency_bandwidth_costs, LatencyBandwidthCosts};
pub use loads::{bandwidth_term_us, link_loads, ByteLayout};
pub use simulator::{simulate, SimResult};

use crate::error::{CollsynthError, Result};
use crate::ir::Schedule;
use crate::rational::Rat;
use crate::topology::Topology;

/// Which cost model answers [`time_us`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Model {
    /// The analytic model ([`alpha_beta()`]): per-step or critical-path latency plus a
    /// bandwidth term, no congestion between steps, exact fractions of M.
    AlphaBeta,
    /// The event-driven, congestion-aware simulator ([`simulate()`]), whole bytes.
    Simulator,
}

impl Model {
    pub const ALL: [Model; 2] = [Model::AlphaBeta, Model::Simulator];

    pub fn name(self) -> &'static str {
        match self {
            Model::AlphaBeta => "alpha-beta",
            Model::Simulator => "simulator",
        }
    }

    pub fn parse(name: &str) -> Result<Model> {
        Model::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| CollsynthError::bad(format!("unknown cost model '{name}' (alpha-beta, simulator)")))
    }
}

/// Time in microseconds of schedule `s` on `topo` for `size` bytes with `pipeline`
/// sub-chunks per piece, by `model`.
pub fn time_us(model: Model, s: &Schedule, topo: &Topology, size: Rat, pipeline: usize) -> Result<f64> {
    match model {
        Model::AlphaBeta => alpha_beta(s, topo, size, pipeline).map(|e| e.total_us),
        Model::Simulator => simulate(s, topo, size, pipeline).map(|r| r.time_us),
    }
}

/// Most chunk transfers (transfers, or pieces, x pipeline sub-chunks) the models size tables
/// by: twice the largest case benchmarked (a ring allreduce on torus:32x32 pipelined 64 ways).
pub const MAX_CHUNK_TRANSFERS: usize = 1 << 28;

/// Checks shared by the models, so that a malformed schedule (e.g. read from a file) is a
/// clear error, never a panic: size >= 0, pipeline >= 1, every index in range. Route
/// continuity and data semantics are the verifier's job.
pub(crate) fn check(s: &Schedule, topo: &Topology, size: Rat, pipeline: usize) -> Result<()> {
    if size < Rat::from_integer(0) {
        return Err(CollsynthError::bad(format!("size must be >= 0 bytes, got {size}")));
    }
    if pipeline == 0 {
        return Err(CollsynthError::bad("pipeline must be at least 1 sub-chunk per piece"));
    }
    let units = s.transfers.len().max(s.pieces.len());
    if units.checked_mul(pipeline).is_none_or(|c| c > MAX_CHUNK_TRANSFERS) {
        return Err(CollsynthError::bad(format!(
            "pipeline {pipeline}: {units} transfers x {pipeline} sub-chunks is more than the {MAX_CHUNK_TRANSFERS} chunk \
             transfers the models hold"
        )));
    }
    if s.n_ranks != topo.n_ranks() {
        return Err(CollsynthError::bad(format!(
            "schedule has {} ranks but the topology has {}",
            s.n_ranks,
            topo.n_ranks()
        )));
    }
    for (i, p) in s.pieces.iter().enumerate() {
        if p.shard >= s.shards.len() {
            return Err(CollsynthError::bad(format!("piece {i} refers to unknown shard {}", p.shard)));
        }
    }
    let (n, n_links, n_pieces) = (s.transfers.len(), topo.links.len(), s.pieces.len());
    for (i, t) in s.transfers.iter().enumerate() {
        if t.piece >= n_pieces {
            return Err(CollsynthError::bad(format!("transfer {i} refers to unknown piece {}", t.piece)));
        }
        if let Some(&l) = t.route.iter().find(|&&l| l >= n_links) {
            return Err(CollsynthError::bad(format!("transfer {i} uses unknown link {l}")));
        }
        if let Some(&a) = t.after.iter().find(|&&a| a >= n) {
            return Err(CollsynthError::bad(format!("transfer {i} depends on unknown transfer {a}")));
        }
    }
    Ok(())
}

/// Sum of the latencies of a route's links (us).
pub(crate) fn route_latency(topo: &Topology, route: &[usize]) -> f64 {
    route.iter().map(|&l| topo.links[l].latency).sum()
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Schedules built by hand for the cost tests.
    use crate::ir::transform::{compose, reverse, transpose};
    use crate::ir::{Collective, Op, Piece, Router, Schedule, Transfer};
    use crate::topology::Topology;

    /// Ring allgather along `order` (order[q] sends to order[q+1]): in step t, order[q]
    /// forwards the shard of rank order[q - t], after receiving it in step t - 1.
    pub fn ring_allgather(topo: &Topology, order: &[usize]) -> Schedule {
        let n = order.len();
        let mut s = Schedule::new(Collective::Allgather, n, 0, "ring-test");
        for r in 0..n {
            s.add_piece(Piece::whole(r));
        }
        let mut router = Router::new(topo);
        let routes: Vec<Vec<usize>> = (0..n).map(|q| router.route(order[q], order[(q + 1) % n]).unwrap()).collect();
        for t in 0..n - 1 {
            for q in 0..n {
                let shard = order[(q + n - t) % n];
                let after = if t == 0 { vec![] } else { vec![(t - 1) * n + (q + n - 1) % n] };
                s.add(Transfer::new(
                    shard,
                    order[q],
                    order[(q + 1) % n],
                    routes[q].clone(),
                    Op::Copy,
                    after,
                    Some(t as u32),
                ));
            }
        }
        s
    }

    /// Ring allreduce along `order`: the reduce-scatter is the reversal of a ring allgather
    /// made on the transpose (running the other way), composed with a ring allgather.
    pub fn ring_allreduce(topo: &Topology, order: &[usize]) -> Schedule {
        let tt = transpose(topo);
        let back: Vec<usize> = order.iter().rev().copied().collect();
        let rs = reverse(&ring_allgather(&tt, &back), &tt, topo).unwrap();
        let ag = ring_allgather(topo, order);
        compose(&rs, &ag, Collective::Allreduce).unwrap()
    }

    /// The ring allreduce of `ring:N` in rank order.
    pub fn ring_allreduce_n(topo: &Topology) -> Schedule {
        let order: Vec<usize> = (0..topo.n_ranks()).collect();
        ring_allreduce(topo, &order)
    }

    /// The link from rank `a` to rank `b`.
    pub fn link(topo: &Topology, a: usize, b: usize) -> usize {
        topo.link_between(topo.rank_node(a), topo.rank_node(b)).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;
    use crate::ir::transform::pipelined;
    use crate::rational::to_f64;
    use crate::zoo::from_spec;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-300)
    }

    /// The agreement test: on a ring allreduce both models give exactly
    /// 2 (N-1) (alpha + M / (N b)), through the one interface.
    #[test]
    fn ring_allreduce_both_models_exact() {
        for n in [2usize, 3, 4, 8, 16] {
            for (bw, lat) in [("100", "1"), ("12.5", "0.5"), ("0.001", "3"), ("400Gbps", "0"), ("0.3", "2.25")] {
                let topo = from_spec(&format!("ring:{n},bw={bw},lat={lat}")).unwrap();
                let s = ring_allreduce_n(&topo);
                assert_eq!(s.steps(), 2 * (n - 1));
                let (b, alpha) = (topo.links[0].bandwidth, topo.links[0].latency);
                for m in [n as i128 * 12_345, n as i128 * (1 << 20), 0] {
                    let size = Rat::from_integer(m);
                    let per_step_bw = to_f64(&(size / Rat::from_integer(n as i128) / (b * Rat::from_integer(1000))));
                    let want = 2.0 * (n as f64 - 1.0) * (alpha + per_step_bw);
                    for model in Model::ALL {
                        let got = time_us(model, &s, &topo, size, 1).unwrap();
                        assert!(close(got, want), "ring:{n} bw={bw} lat={lat} M={m} {}: {got} != {want}", model.name());
                    }
                    let e = alpha_beta(&s, &topo, size, 1).unwrap();
                    assert!(close(e.latency_us, 2.0 * (n as f64 - 1.0) * alpha) || alpha == 0.0);
                    assert_eq!(e.total_us, e.latency_us + e.bandwidth_us);
                    let r = simulate(&s, &topo, size, 1).unwrap();
                    assert_eq!(r.transfers, 2 * n * (n - 1));
                }
            }
        }
    }

    /// Pipelining is applied as `ir::transform::pipelined`: simulating with k sub-chunks is
    /// bit-for-bit the same as simulating the split schedule, and the analytic model does
    /// not change at all.
    #[test]
    fn pipeline_is_split() {
        let cases = [("ring:5,bw=0.7,lat=0.3", 1_000_003i128), ("ring:4,lat=0", 10), ("switch:4,bw=25,lat=0.5", 999)];
        for (spec, m) in cases {
            let topo = from_spec(spec).unwrap();
            let s = ring_allreduce_n(&topo);
            let size = Rat::from_integer(m);
            for k in [2usize, 3, 7] {
                let split_s = pipelined(&s, k);
                let a = simulate(&s, &topo, size, k).unwrap();
                let b = simulate(&split_s, &topo, size, 1).unwrap();
                assert_eq!(a.time_us.to_bits(), b.time_us.to_bits(), "{spec} k={k}");
                assert_eq!((a.transfers, a.busiest_link), (b.transfers, b.busiest_link));
                assert_eq!(a.busiest_link_busy_us.to_bits(), b.busiest_link_busy_us.to_bits());
                let e1 = alpha_beta(&s, &topo, size, 1).unwrap();
                let ek = alpha_beta(&s, &topo, size, k).unwrap();
                let es = alpha_beta(&split_s, &topo, size, 1).unwrap();
                assert_eq!(e1.total_us, ek.total_us);
                assert!(close(es.total_us, e1.total_us), "{spec} k={k}");
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let topo = from_spec("ring:3").unwrap();
        let s = ring_allreduce_n(&topo);
        let one = Rat::from_integer(1);
        for model in Model::ALL {
            assert!(time_us(model, &s, &topo, -one, 1).is_err());
            assert!(time_us(model, &s, &topo, one, 0).is_err());
            // a pipeline beyond what the models hold is refused before any table is sized
            let most = MAX_CHUNK_TRANSFERS / s.transfers.len();
            let e = time_us(model, &s, &topo, one, most + 1).unwrap_err().to_string();
            assert!(e.contains("chunk transfers the models hold"), "{e}");
            assert!(time_us(model, &s, &topo, one, usize::MAX).is_err());
            let mut bad = s.clone();
            bad.transfers[0].route = vec![99];
            assert!(time_us(model, &bad, &topo, one, 1).is_err());
            let mut bad = s.clone();
            bad.transfers[0].after = vec![999];
            assert!(time_us(model, &bad, &topo, one, 1).is_err());
            let mut cyc = s.clone();
            let child = s.transfers.iter().position(|t| t.after.contains(&0)).unwrap();
            cyc.transfers[0].after = vec![child];
            cyc.transfers[0].step = None;
            assert!(time_us(model, &cyc, &topo, one, 1).is_err(), "cycle must fail ({})", model.name());
            assert!(time_us(model, &s, &from_spec("ring:4").unwrap(), one, 1).is_err());
        }
        assert_eq!(Model::parse("simulator").unwrap(), Model::Simulator);
        assert_eq!(Model::parse("alpha-beta").unwrap(), Model::AlphaBeta);
        assert!(Model::parse("magic").is_err());
    }
}
