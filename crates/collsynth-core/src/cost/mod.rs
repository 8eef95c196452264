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
//! * [`runtime`]: the runtime-faithful model (slices, protocols, link classes, cut-through)
//!   and the time bound with the same effective link parameters.
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
mod events;
pub mod latency_bandwidth;
pub mod loads;
pub mod runtime;
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
    /// The runtime-faithful model ([`runtime::runtime`]: link classes, NCCL's protocols
    /// chosen by size, slices, cut-through switches; calibrated, docs/calibration.md). The
    /// tuner's judge. Not in [`Model::ALL`], the two classic models that agree exactly on a
    /// ring (its base latency is the runtime's, not the topology's).
    Runtime,
}

impl Model {
    pub const ALL: [Model; 2] = [Model::AlphaBeta, Model::Simulator];

    pub fn name(self) -> &'static str {
        match self {
            Model::AlphaBeta => "alpha-beta",
            Model::Simulator => "simulator",
            Model::Runtime => "runtime",
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
/// A schedule stated per orbit is expanded first (`api::cost_view` costs it on its quotient).
pub fn time_us(model: Model, s: &Schedule, topo: &Topology, size: Rat, pipeline: usize) -> Result<f64> {
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    match model {
        Model::AlphaBeta => alpha_beta(s, topo, size, pipeline).map(|e| e.total_us),
        Model::Simulator => simulate(s, topo, size, pipeline).map(|r| r.time_us),
        Model::Runtime => {
            runtime::runtime(&crate::ir::transform::pipelined(s, pipeline)?, topo, size).map(|e| e.time_us)
        }
    }
}

/// Most chunk transfers (transfers, or pieces, x pipeline sub-chunks) the models size tables
/// by: twice the largest case benchmarked (a ring allreduce on torus:32x32 pipelined 64 ways).
pub const MAX_CHUNK_TRANSFERS: usize = 1 << 28;

/// Bytes the cost models hold per chunk transfer, at most (the simulator's, see `check`).
const CHUNK_TRANSFER_BYTES: u128 = 48;

/// Checks shared by the models, so that a malformed schedule (e.g. read from a file) is a
/// clear error, never a panic: size >= 0, pipeline >= 1, every index in range. Route
/// continuity and data semantics are the verifier's job.
pub(crate) fn check(s: &Schedule, topo: &Topology, size: Rat, pipeline: usize) -> Result<()> {
    if !s.is_flat() {
        // The models read flat schedules; `api::cost_view` gives them a compact one's quotient.
        return Err(CollsynthError::internal(
            "a schedule stated per orbit reaches a cost model: cost it through api::cost_view or ir::orbit::flat",
        ));
    }
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
    // The simulator's event keys, sub-chunk bytes and countdowns, per chunk transfer (its
    // event queues grow by doubling: half as much again).
    crate::budget::check_memory(
        &format!("pipeline {pipeline} ({units} transfers x {pipeline} sub-chunks)"),
        Some(units as u128 * pipeline as u128),
        CHUNK_TRANSFER_BYTES,
    )?;
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

/// Microseconds per byte on a link of `bw` GB/s (10^3 bytes per microsecond), as both
/// simulators and the runtime model's floor (`runtime::sim::busiest_link_us`) charge it.
pub(crate) fn us_per_byte(bw: &Rat) -> f64 {
    crate::rational::to_f64(&(Rat::from_integer(1) / (bw * Rat::from_integer(1000))))
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
mod tests;
