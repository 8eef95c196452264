//! `--time-only` for BFB: what the schedule `synthesize` would emit costs, read from its
//! plans without emitting a transfer (docs/bfb.md, "--time-only").
//!
//! Why the plans suffice, exactly: every BFB transfer is one hop over an in-link (w, u) at
//! its step, and that link carries only u's deliveries, so at step t the busiest link's time
//! per shard is max_u of the plan's U_{u,t} ([`BfbPlan::step_max`]; chunked or latency-aware,
//! the plan stores the recorded splits' busiest link, which is what the transfers load).
//! The largest latency of a step is the largest over the links that carry data at it
//! ([`BfbPlan::step_latency`]; the plan is made without recording its deliveries). The
//! reduce-scatter is the transpose's allgather reversed: its steps in reverse order, each
//! link reversed onto one of the same bandwidth and latency; allreduce runs both in sequence.
//! So the analytic model (`cost::alpha_beta`'s step model) and the direct-connect factors
//! (`cost::latency_bandwidth`) are recomputed per step from the same exact rationals, and the `f64`
//! sums are taken in the same order: equal bit for bit (tested against the full path).

use super::bi::{self, BiMethod};
use super::phases::Phases;
use super::{options, BfbPlan};
use crate::cost::latency_bandwidth::LatencyBandwidthCosts;
use crate::error::{CollsynthError, Result};
use crate::ir::{exact_value, Collective, Details};
use crate::rational::{to_f64, Rat};
use crate::synth::{Request, TimeReport};
use crate::topology::Topology;

/// The costs of the BFB schedule of a collective at one size, without the schedule.
#[derive(Debug, Clone)]
pub struct TimeOnly {
    pub n_ranks: usize,
    /// Communication steps (`Schedule::steps`).
    pub steps: usize,
    /// `latency_steps`, `bandwidth_factor` and their optima, as `cost::latency_bandwidth_costs` gives them.
    pub direct: LatencyBandwidthCosts,
    /// The analytic model's terms at the size asked (µs), as `cost::alpha_beta` gives them.
    pub latency_us: f64,
    pub bandwidth_us: f64,
    /// The schedule's `provenance.details`.
    pub details: Details,
}

impl TimeOnly {
    /// The analytic model's total (µs): `latency_us + bandwidth_us`.
    pub fn alpha_beta_us(&self) -> f64 {
        self.latency_us + self.bandwidth_us
    }
}

/// [`time_only`] at the request's size, as the registry reports it: the analytic model is
/// BFB's own clock (the paper's T_L + T_B; the simulator needs the transfers). The keys are
/// the full path's names for the same quantities, then the schedule's details.
pub fn report(topo: &Topology, collective: Collective, req: &Request) -> Result<TimeReport> {
    let size = req.size.ok_or_else(|| CollsynthError::internal("bfb --time-only without a size"))?;
    let t = time_only(topo, collective, req, size)?;
    let mut keys = Details::new()
        .with("steps", t.steps)
        .with("latency_steps", t.direct.latency_steps)
        .with("bandwidth_factor", exact_value(&t.direct.bandwidth_factor))
        .with("moore_latency_steps", t.direct.moore_steps)
        .with("bandwidth_factor_optimum", exact_value(&t.direct.optimum_factor))
        .with("alpha_beta_us", t.alpha_beta_us())
        .with("latency_us", t.latency_us)
        .with("bandwidth_us", t.bandwidth_us);
    let time_us = t.alpha_beta_us();
    keys.extend(t.details);
    Ok(TimeReport { n_ranks: t.n_ranks, time_us, time_model: "alpha-beta", keys })
}

/// One step of a schedule: the largest latency of a link it uses (µs) and its busiest
/// link's load in shards per GB/s.
struct StepCost {
    alpha: f64,
    load: Rat,
}

/// The costs of `synthesize(topo, collective, req)` with bfb at `size` bytes (see the
/// module docs). Guarantees: every field equals what the full path's schedule gets
/// (`latency_bandwidth_costs`, `alpha_beta`, `steps`, `provenance.details`). `BadInput` where the
/// full path would refuse, for the allgather of a `line^k(..)` / `degree*n(..)`
/// expansion, which is mapped from its base's schedule and has no plan, and for a `bi(G)`
/// whose schedule may be the split one (unless `bi-method` = `union`).
pub fn time_only(topo: &Topology, collective: Collective, req: &Request, size: Rat) -> Result<TimeOnly> {
    let req = Request { size: Some(size), ..req.clone() };
    let (chunks, hetero) = options(topo, collective, &req)?;
    let union = match bi::method_for(topo, &req, chunks.is_none() && hetero.is_none())? {
        None => false,
        Some(BiMethod::Union) => true,
        Some(_) => {
            return Err(CollsynthError::bad(format!(
                "--time-only: the schedule of '{}' may be appendix A.6's split, which is measured on its \
                 transfers; add --bi-method union or drop --time-only",
                topo.name
            )))
        }
    };
    if collective == Collective::Allgather && super::expand::is_mapped(topo) {
        return Err(CollsynthError::bad(format!(
            "--time-only: the allgather of '{}' is mapped from its base's schedule and has no BFB plan; \
             drop --time-only",
            topo.name
        )));
    }
    let ph = Phases::new(topo, collective, chunks, hetero, false)?;
    let mut steps = Vec::new();
    if let Some(rs) = ph.rs() {
        steps.extend(step_costs(rs).into_iter().rev());
    }
    if let Some(ag) = ph.ag() {
        steps.extend(step_costs(ag));
    }
    let mut details = ph.details();
    if union {
        details.extend(bi::method_detail("union"));
    }
    Ok(from_steps(topo, collective, &steps, size, details))
}

/// Sum the steps as `cost::alpha_beta` and `cost::latency_bandwidth_costs` do (same order, same exact
/// per-step values).
fn from_steps(topo: &Topology, collective: Collective, steps: &[StepCost], size: Rat, details: Details) -> TimeOnly {
    let n = Rat::from_integer(topo.n_ranks().max(1) as i128);
    let thousand = Rat::from_integer(1000);
    // A shard is M / N: a load of x shards per GB/s is x / N per byte of M (ns per byte).
    let (mut latency_us, mut bandwidth_us, mut per_byte) = (0.0f64, 0.0f64, Rat::from_integer(0));
    for s in steps {
        latency_us += s.alpha;
        bandwidth_us += to_f64(&(size * (s.load / n / thousand)));
        per_byte += s.load / n;
    }
    TimeOnly {
        n_ranks: topo.n_ranks(),
        steps: steps.len(),
        // One hop per step.
        direct: LatencyBandwidthCosts::new(topo, collective, steps.len(), per_byte),
        latency_us,
        bandwidth_us,
        details,
    }
}

/// Steps 1..=D of `p`'s allgather, in order.
fn step_costs(p: &BfbPlan) -> Vec<StepCost> {
    (1..=p.steps).map(|t| StepCost { alpha: p.step_latency(t), load: p.step_max(t) }).collect()
}
