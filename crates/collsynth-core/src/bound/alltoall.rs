//! Uniform all-to-all throughput (the direct-connect paper's section 2.3 / A.5): the largest
//! rate f (GB/s) at which every rank can send to every other rank at once, as a
//! multi-commodity flow. The source-aggregated LP is solved where it is small (seconds);
//! above that the paper's bandwidth-tax estimate (total link capacity over the sum of
//! pairwise distances) stands in, marked not exact.

use crate::error::{CollsynthError, Result};
use crate::rational::to_f64;
use crate::topology::metrics::bfs_hops;
use crate::topology::Topology;
use microlp::{ComparisonOp, OptimizationDirection, Problem, Variable};

/// Above this many flow variables (ranks x links) the LP is not solved. Measured with
/// `microlp` (a pure-Rust simplex; HiGHS needs cmake, absent here): L(K_{4,4}) (N = 32,
/// 4096 variables) 0.8 s, Kautz N = 64 (16384) 21 s; so N up to about 45 at degree 4.
pub const LP_MAX_VARIABLES: usize = 8192;

/// All-to-all throughput: `rate_gbps` per ordered pair of ranks; `exact` when it is the LP
/// optimum (to the solver's f64 precision), false for the bandwidth-tax estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllToAll {
    pub rate_gbps: f64,
    pub exact: bool,
}

impl AllToAll {
    /// Microseconds for every rank to send `per_rank_bytes` in total (that / N to each rank).
    pub fn time_us(&self, n: usize, per_rank_bytes: f64) -> f64 {
        per_rank_bytes / n as f64 / self.rate_gbps / 1e3
    }
}

/// The all-to-all throughput of `topo`: the LP when it has at most `LP_MAX_VARIABLES`
/// variables, the bandwidth-tax estimate otherwise (and for one rank: infinite rate).
pub fn alltoall(topo: &Topology) -> Result<AllToAll> {
    let n = topo.n_ranks();
    if n < 2 {
        return Ok(AllToAll { rate_gbps: f64::INFINITY, exact: true });
    }
    if n * topo.links.len() <= LP_MAX_VARIABLES {
        return Ok(AllToAll { rate_gbps: lp(topo)?, exact: true });
    }
    Ok(AllToAll { rate_gbps: bandwidth_tax(topo), exact: false })
}

/// Total capacity / sum over ordered rank pairs of their hop distance: every byte from s to
/// t uses at least d(s, t) links, so no rate above this is possible (it is an upper bound,
/// tight on symmetric graphs whose links all lie on shortest paths).
pub fn bandwidth_tax(topo: &Topology) -> f64 {
    let capacity: f64 = topo.links.iter().map(|l| to_f64(&l.bandwidth)).sum();
    let ranks = topo.ranks();
    let hops: usize = ranks
        .iter()
        .map(|&s| {
            let d = bfs_hops(topo, s);
            ranks.iter().map(|&t| d[t]).sum::<usize>()
        })
        .sum();
    capacity / hops as f64
}

/// maximize f: per source s, every other rank keeps at least f of s's commodity, switches
/// and s itself forward it; per link, the commodities share its bandwidth.
fn lp(topo: &Topology) -> Result<f64> {
    // Capacities relative to the largest bandwidth keep the simplex well scaled.
    let bmax = topo.links.iter().map(|l| to_f64(&l.bandwidth)).fold(0.0, f64::max);
    let mut p = Problem::new(OptimizationDirection::Maximize);
    let f = p.add_var(1.0, (0.0, f64::INFINITY));
    let ranks = topo.ranks();
    // y[s][l], none on links into the source (useless).
    let y: Vec<Vec<Option<Variable>>> = ranks
        .iter()
        .map(|&s| topo.links.iter().map(|l| (l.dst != s).then(|| p.add_var(0.0, (0.0, f64::INFINITY)))).collect())
        .collect();
    for (l, link) in topo.links.iter().enumerate() {
        let uses: Vec<(Variable, f64)> = y.iter().filter_map(|ys| ys[l].map(|v| (v, 1.0))).collect();
        p.add_constraint(uses, ComparisonOp::Le, to_f64(&link.bandwidth) / bmax);
    }
    for (si, &s) in ranks.iter().enumerate() {
        for u in (0..topo.n_nodes()).filter(|&u| u != s) {
            // in - out >= f at a rank, >= 0 at a switch
            let mut e: Vec<(Variable, f64)> = Vec::new();
            e.extend(topo.in_links(u).iter().filter_map(|&l| y[si][l].map(|v| (v, 1.0))));
            e.extend(topo.out_links(u).filter_map(|l| y[si][l].map(|v| (v, -1.0))));
            if topo.is_compute(u) {
                e.push((f, -1.0));
            }
            p.add_constraint(e, ComparisonOp::Ge, 0.0);
        }
    }
    let sol = p
        .solve()
        .map_err(|e| CollsynthError::internal(format!("all-to-all LP: {e}")))?
        .into_solution()
        .map_err(|_| CollsynthError::internal("all-to-all LP: the solve was interrupted"))?;
    Ok(sol.var_value(f) * bmax)
}

#[cfg(test)]
mod tests;
