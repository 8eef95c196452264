//! The direct-connect paper's cost notions of a schedule (its section 3.2): T_L in units of
//! alpha and T_B in units of M/B, B being a node's total egress bandwidth (the largest over
//! compute nodes; d times the link bandwidth on the paper's d-regular graphs).
//!
//! A step schedule pays, per step, alpha times its longest route (a hop per alpha) and the
//! busiest link's time; a schedule without steps (trees) is one pipelined phase: its depth
//! in hops and its busiest link over the whole schedule. Allreduce is whatever the schedule
//! is (reduce-scatter then allgather for the composed ones), steps continuing.

use crate::ir::{Collective, Schedule};
use crate::rational::Rat;
use crate::topology::Topology;
use num_traits::Zero;

/// `latency_steps` (T_L / alpha) and `bandwidth_factor` (T_B / (M/B), exact), with the
/// optima they are measured against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyBandwidthCosts {
    pub latency_steps: usize,
    pub bandwidth_factor: Rat,
    /// T_L*: the Moore bound for N ranks at the largest out-degree d (per pass: allgather
    /// and reduce-scatter one, allreduce two); `None` on topologies with switches, where
    /// the Moore bound of a d-regular graph does not apply.
    pub moore_steps: Option<usize>,
    /// T_B* / (M/B) = (N-1)/N per pass (allreduce: two).
    pub optimum_factor: Rat,
}

/// The costs of `s` on `topo` (see the module docs). Guarantees: a unidirectional ring
/// allgather gives (N-1, (N-1)/N); a bandwidth-optimal schedule gives (N-1)/N.
/// Range transfers (`ir::ranges`) are read on their expansion.
pub fn latency_bandwidth_costs(s: &Schedule, topo: &Topology) -> LatencyBandwidthCosts {
    if crate::ir::ranges::has_ranges(s) {
        if let Ok(flat) = crate::ir::ranges::flat(s) {
            return latency_bandwidth_costs(&flat, topo);
        }
    }
    let stepped = !s.transfers.is_empty() && s.transfers.iter().all(|t| t.step.is_some());
    let (latency_steps, per_byte) = if stepped { by_steps(s, topo) } else { one_phase(s, topo) };
    LatencyBandwidthCosts::new(topo, s.collective, latency_steps, per_byte)
}

impl LatencyBandwidthCosts {
    /// The costs of a `collective` schedule on `topo` that takes `latency_steps` hops and
    /// `per_byte` (time per byte of M, in 1/(GB/s)) in its bandwidth term, with the optima of
    /// `topo`. What [`latency_bandwidth_costs`] reports, for a caller that measured the schedule itself
    /// (BFB's `--time-only` reads them from its plans).
    pub fn new(topo: &Topology, collective: Collective, latency_steps: usize, per_byte: Rat) -> LatencyBandwidthCosts {
        let egress = topo.ranks().iter().map(|&v| topo.egress(v)).max().unwrap_or_default();
        let n = topo.n_ranks();
        let passes = if collective == Collective::Allreduce { 2 } else { 1 };
        let d = topo.ranks().iter().map(|&v| topo.out_links(v).len()).max().unwrap_or(0);
        let moore_steps = (topo.n_switches() == 0).then(|| passes * crate::bound::latency::moore_steps(n, d));
        let optimum_factor = Rat::new(passes as i128 * (n as i128 - 1), n.max(1) as i128);
        LatencyBandwidthCosts { latency_steps, bandwidth_factor: per_byte * egress, moore_steps, optimum_factor }
    }
}

/// Sum over steps of the longest route and of the busiest link's time per byte of M.
fn by_steps(s: &Schedule, topo: &Topology) -> (usize, Rat) {
    let n_steps = s.n_steps().unwrap_or(0) as usize;
    let mut hops = vec![0usize; n_steps];
    let mut load: Vec<std::collections::HashMap<usize, Rat>> = vec![Default::default(); n_steps];
    for t in &s.transfers {
        let st = t.step.unwrap_or(0) as usize;
        hops[st] = hops[st].max(t.route.len());
        let f = s.piece_fraction(t.piece);
        for &l in &t.route {
            *load[st].entry(l).or_insert_with(Rat::zero) += f;
        }
    }
    let time: Rat = load.iter().map(|m| busiest(topo, m.iter().map(|(&l, x)| (l, *x)))).sum();
    (hops.iter().sum(), time)
}

/// Depth in hops and the busiest link over the whole schedule, per byte of M.
fn one_phase(s: &Schedule, topo: &Topology) -> (usize, Rat) {
    let mut depth = vec![0usize; s.transfers.len()];
    for i in crate::ir::transform::topological_order(s).unwrap_or_default() {
        let t = &s.transfers[i];
        depth[i] = t.route.len() + t.after.iter().map(|&a| depth[a]).max().unwrap_or(0);
    }
    let loads = super::link_loads(s, topo, Rat::from_integer(1));
    (depth.into_iter().max().unwrap_or(0), busiest(topo, loads.into_iter().enumerate()))
}

/// Max over links of load / bandwidth (load in fractions of M, bandwidth in GB/s).
fn busiest(topo: &Topology, loads: impl Iterator<Item = (usize, Rat)>) -> Rat {
    loads.map(|(l, x)| x / topo.links[l].bandwidth).max().unwrap_or_else(Rat::zero)
}

#[cfg(test)]
mod tests;
