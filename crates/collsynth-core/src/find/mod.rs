//! `find`: the direct-connect paper's topology finder (§5.4; user docs
//! `docs/find.md`). For a target (N, d) it lists the Pareto frontier, on total-hop latency
//! T_L = steps x alpha and bandwidth runtime T_B = tau x M/B, of the base/generative
//! topologies (measured exactly by `bfb::plan`) and of their expansions (line graph, degree
//! expansion, Cartesian power and product), which are predicted by the closed forms of
//! [`predict`] without being built ([`search`]). Only the frontier is built: to re-measure
//! the few members whose prediction is not provably BFB's, and for the all-to-all figure.

pub mod candidates;
mod circulant_bfs;
pub mod predict;
pub mod search;
pub mod sweep;
#[cfg(test)]
mod tests;

use crate::bound::alltoall::alltoall;
use crate::error::{CollsynthError, Result};
use crate::rational::{to_f64, Rat};
use crate::zoo::{self, spec::DEFAULT_BW, Expr};

/// See [`Candidate::factor_key`].
pub type FactorKey = (usize, bool, usize);

/// Largest N the finder accepts (BFB's own limit).
pub const MAX_NODES: usize = crate::synth::bfb::MAX_RANKS;

/// Largest degree the finder accepts (the search visits every degree up to it).
pub const MAX_DEGREE: usize = 64;

/// One topology with its allgather performance: T_L = `steps` x alpha, T_B = `tau` x M/B.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The zoo expression that builds it.
    pub expr: Expr,
    pub n: usize,
    /// Nominal degree (the paper's d: a Kautz graph's dropped self-loops count).
    pub degree: usize,
    pub steps: usize,
    pub tau: Rat,
    pub diameter: usize,
    /// One link per arc, all of one bandwidth: the line graph has exactly d N nodes.
    pub simple: bool,
    /// `steps` and `tau` are exactly BFB's on the built topology (measured or by a theorem).
    pub exact: bool,
    /// Every link has its reverse (usable on a bidirectional testbed).
    pub symmetric: bool,
    /// Largest shortest-cycle length through a node, when known (degree expansion needs it).
    pub girth: Option<usize>,
}

impl Candidate {
    /// tau = (N - 1)/N, the least any allgather can have (Thm 17).
    pub fn bw_optimal(&self) -> bool {
        self.tau == predict::optimal_tau(self.n)
    }

    /// Usable as a factor of a product (Thm 13): simple, exact and bandwidth-optimal.
    pub fn product_ready(&self) -> bool {
        self.simple && self.exact && self.bw_optimal()
    }

    /// How product factors rank, least first: (diameter, girth unknown, expression length).
    pub fn factor_key(&self) -> FactorKey {
        (self.diameter, self.girth.is_none(), self.expr.to_string().len())
    }
}

/// Check the target: 2 <= n <= [`MAX_NODES`], 1 <= d <= [`MAX_DEGREE`]; BadInput otherwise.
fn check_target(n: usize, d: usize) -> Result<()> {
    if !(2..=MAX_NODES).contains(&n) {
        return Err(CollsynthError::bad(format!("--nodes must be between 2 and {MAX_NODES}, got {n}")));
    }
    if !(1..=MAX_DEGREE).contains(&d) {
        return Err(CollsynthError::bad(format!("--degree must be between 1 and {MAX_DEGREE}, got {d}")));
    }
    Ok(())
}

/// The Pareto frontier for (n, d), sorted by T_L ascending (then tau). Guarantees: every
/// member builds with `zoo::from_spec` to n nodes of degree d, its `steps`/`tau` are exactly
/// what BFB (`bfb::plan`) gets on it (members predicted otherwise are re-measured), and no
/// member is dominated in (T_L, tau) by another. BadInput on a bad target or when no
/// candidate exists.
pub fn frontier(n: usize, d: usize, bidirectional: bool) -> Result<Vec<Candidate>> {
    check_target(n, d)?;
    let out = members(n, d, bidirectional)?;
    if out.is_empty() {
        let kind = if bidirectional { "bidirectional " } else { "" };
        return Err(CollsynthError::bad(format!("no {kind}topology with {n} nodes and degree {d} is known")));
    }
    Ok(out)
}

/// [`frontier`] of a checked target, empty when no topology is known.
pub(crate) fn members(n: usize, d: usize, bidirectional: bool) -> Result<Vec<Candidate>> {
    let predicted = search::pareto(search::pool(n, d, bidirectional)?.to_vec(), false);
    let mut measured = Vec::with_capacity(predicted.len());
    for c in predicted {
        measured.push(if c.exact { c } else { remeasure(c)? });
    }
    Ok(search::pareto(measured, false))
}

/// Build `c` and replace its predicted values with BFB's.
fn remeasure(c: Candidate) -> Result<Candidate> {
    let topo = zoo::from_spec(&c.expr.to_string())?;
    let m = candidates::measure(c.expr.clone(), &topo, c.degree)?;
    Ok(Candidate { girth: c.girth, ..m })
}

/// The workload a frontier is judged by: alpha (us per step), node bandwidth B (GB/s, the
/// total egress of a node, d links of B/d) and the collective size M (bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub alpha_us: f64,
    pub node_bw_gbps: Rat,
    pub size_bytes: Rat,
}

impl Workload {
    /// M / B in microseconds.
    pub fn m_over_b_us(&self) -> f64 {
        to_f64(&self.size_bytes) / to_f64(&self.node_bw_gbps) / 1e3
    }

    /// Allreduce (reduce-scatter then allgather) time: 2 (T_L alpha + tau M/B), in us.
    pub fn allreduce_us(&self, c: &Candidate) -> f64 {
        2.0 * (c.steps as f64 * self.alpha_us + to_f64(&c.tau) * self.m_over_b_us())
    }
}

/// A frontier member judged by a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub candidate: Candidate,
    pub allreduce_us: f64,
    /// All-to-all with `size_bytes` per node (size / N to each), links of B / d.
    pub alltoall_us: f64,
    /// False where the all-to-all figure is the bandwidth-tax estimate, not the LP's.
    pub alltoall_exact: bool,
}

/// The frontier judged by `w`, and the index of the recommended member: the smallest
/// allreduce time (ties: the first, i.e. the lower T_L).
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub frontier: Vec<Member>,
    pub recommended: usize,
}

/// [`frontier`] for (n, d) with every member's allreduce and all-to-all times for `w`.
pub fn find(n: usize, d: usize, bidirectional: bool, w: &Workload) -> Result<Report> {
    check_workload(w)?;
    let mut members = Vec::new();
    for c in frontier(n, d, bidirectional)? {
        let topo = zoo::from_spec(&c.expr.to_string())?;
        let a2a = alltoall(&topo)?;
        // The zoo builds unit links of DEFAULT_BW GB/s; the workload's are B / d.
        let scale = to_f64(&w.node_bw_gbps) / c.degree as f64 / DEFAULT_BW as f64;
        let rate = crate::bound::alltoall::AllToAll { rate_gbps: a2a.rate_gbps * scale, exact: a2a.exact };
        members.push(Member {
            allreduce_us: w.allreduce_us(&c),
            alltoall_us: rate.time_us(n, to_f64(&w.size_bytes)),
            alltoall_exact: a2a.exact,
            candidate: c,
        });
    }
    let recommended = recommend(members.iter().map(|m| &m.candidate), w);
    Ok(Report { frontier: members, recommended })
}

/// The index of the member of `frontier` with the least allreduce time for `w` (ties: the
/// first, i.e. the lower T_L); 0 for an empty frontier.
pub fn recommend<'a>(frontier: impl IntoIterator<Item = &'a Candidate>, w: &Workload) -> usize {
    let time: Vec<f64> = frontier.into_iter().map(|c| w.allreduce_us(c)).collect();
    (0..time.len()).min_by(|&a, &b| time[a].total_cmp(&time[b])).unwrap_or(0)
}

pub fn check_workload(w: &Workload) -> Result<()> {
    if !(w.alpha_us.is_finite() && w.alpha_us >= 0.0) {
        return Err(CollsynthError::bad("--alpha must be >= 0"));
    }
    if w.node_bw_gbps <= Rat::from_integer(0) {
        return Err(CollsynthError::bad("--node-bw must be positive"));
    }
    if w.size_bytes <= Rat::from_integer(0) {
        return Err(CollsynthError::bad("--size must be positive"));
    }
    Ok(())
}
