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
mod tests;
