//! The plans a plain BFB collective is made from: the allgather's on the topology, the
//! reduce-scatter's on its transpose (one plan when they are equal), and the provenance
//! details of the schedule made from them.

use super::plan::{plan_mode, quoted, BfbPlan};
use crate::error::{CollsynthError, Result};
use crate::flow::Cap;
use crate::ir::transform::transpose;
use crate::ir::{Collective, Details};
use crate::rational::Rat;
use crate::topology::Topology;

/// The solved plans a plain BFB collective is made from: the reduce-scatter's (BFB on the
/// transpose, to be reversed) and / or the allgather's (on the topology itself).
pub(super) struct Phases {
    pub(super) plans: Vec<BfbPlan>,
    /// Indices into `plans`; a topology equal to its transpose shares one plan for both.
    pub(super) rs: Option<usize>,
    pub(super) ag: Option<usize>,
    /// The transpose the reduce-scatter's plan was made on; `None`: the topology itself.
    pub(super) transposed: Option<Topology>,
    pub(super) chunks: Option<Cap>,
}

impl Phases {
    /// Plans `topo` (and / or its transpose) for `collective`, which must be allgather,
    /// reduce-scatter or allreduce (else `BadInput`).
    /// With `record` = false the plans cannot be emitted (see [`plan_mode`]).
    pub(super) fn new(
        topo: &Topology,
        collective: Collective,
        chunks: Option<Cap>,
        hetero: Option<Rat>,
        record: bool,
    ) -> Result<Phases> {
        let (rs_wanted, ag_wanted) = match collective {
            Collective::Allgather => (false, true),
            Collective::ReduceScatter => (true, false),
            Collective::Allreduce => (true, true),
            c => return Err(CollsynthError::bad(format!("algorithm 'bfb' does not support {}", c.name()))),
        };
        let transposed = if rs_wanted { asymmetric_transpose(topo) } else { None };
        let mut ph = Phases { plans: Vec::new(), rs: None, ag: None, transposed, chunks };
        if ag_wanted {
            ph.plans.push(plan_mode(topo, chunks, hetero, record)?);
            ph.ag = Some(0);
        }
        if rs_wanted {
            match &ph.transposed {
                Some(t) => ph.plans.push(plan_mode(t, chunks, hetero, record)?),
                None if ph.ag.is_none() => ph.plans.push(plan_mode(topo, chunks, hetero, record)?),
                None => {}
            }
            ph.rs = Some(ph.plans.len() - 1);
        }
        Ok(ph)
    }

    pub(super) fn rs(&self) -> Option<&BfbPlan> {
        self.rs.map(|i| &self.plans[i])
    }

    pub(super) fn ag(&self) -> Option<&BfbPlan> {
        self.ag.map(|i| &self.plans[i])
    }

    /// The topology the reduce-scatter's plan is for: the transpose, or `topo` itself.
    pub(super) fn made_on<'a>(&'a self, topo: &'a Topology) -> &'a Topology {
        self.transposed.as_ref().unwrap_or(topo)
    }

    /// `provenance.details` of the schedule made from these phases (docs/bfb.md): one
    /// phase's keys, or for allreduce the sums at the top and each half's keys prefixed
    /// `rs_` / `ag_`.
    pub(super) fn details(&self) -> Details {
        let (rs, ag) = match (self.rs(), self.ag()) {
            (Some(rs), Some(ag)) => (rs, ag),
            (Some(one), None) | (None, Some(one)) => return one.one_phase_details(),
            (None, None) => return Details::new(),
        };
        let mut details = Details::new()
            .with("tau", quoted(&(rs.tau() + ag.tau())))
            .with("bandwidth_optimal", rs.bandwidth_optimal() && ag.bandwidth_optimal());
        if let Some(p) = self.chunks {
            details.set("chunks", p);
            details.set("tau_fractional", quoted(&(rs.tau_fractional() + ag.tau_fractional())));
        }
        details.extend(ag.hetero_details(rs.time_sum() + ag.time_sum()));
        details.extend(rs.details("rs_"));
        details.extend(ag.details("ag_"));
        details
    }
}

/// The transpose of `topo`, or `None` when it has exactly the same links (then schedules
/// made on `topo` itself reverse onto it).
pub(super) fn asymmetric_transpose(topo: &Topology) -> Option<Topology> {
    let t = transpose(topo);
    (t.links != topo.links).then_some(t)
}

pub(super) fn merge_cuts(a: &[Rat], b: &[Rat]) -> Vec<Rat> {
    let mut all: Vec<Rat> = a.iter().chain(b).copied().collect();
    all.sort_unstable();
    all.dedup();
    all
}
