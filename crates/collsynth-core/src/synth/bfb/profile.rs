//! What the topology finder needs of a BFB plan: its steps and exact bandwidth factor, without
//! the per-source splits that emission needs (no deliveries, parts or cuts are recorded).
//!
//! On a vertex-transitive topology (for every rank u an automorphism, bandwidths included,
//! maps rank 0 to u) the subproblem of u at step t is rank 0's relabelled, so it has the same
//! optimum: max_u U*_{u,t} = U*_{0,t}, and rank 0 alone gives the exact profile — one BFS per
//! in-neighbour of rank 0 and D subproblems instead of N BFS and N D subproblems. Whether a
//! topology is vertex-transitive is the caller's knowledge (the zoo's, by construction: see
//! `zoo::vertex_transitive`); no automorphism search is run here.

use super::{bandwidth_factor, in_parallel, levels, plan_range, Graph};
use crate::error::Result;
use crate::rational::Rat;
use crate::topology::Topology;

/// A BFB allgather's two performance numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// D, the diameter: [`super::Plan::steps`].
    pub steps: usize,
    /// The exact bandwidth factor: [`super::Plan::tau`].
    pub tau: Rat,
}

/// What the caller knows of the topology's symmetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symmetry {
    /// Nothing: every rank's subproblems are solved.
    Unknown,
    /// Vertex-transitive (links and bandwidths): rank 0's subproblems are solved alone.
    VertexTransitive,
}

/// The steps and tau of `plan(topo)` (no switches; else `BadInput`). Guarantees: equal to
/// [`super::plan`]'s `steps()` and `tau()` — for [`Symmetry::VertexTransitive`] provided the
/// topology is vertex-transitive, which is not checked.
pub fn profile(topo: &Topology, symmetry: Symmetry) -> Result<Profile> {
    // The optima of some ranks, `steps` per rank: tau only needs each step's maximum.
    let (g, steps, optima) = match symmetry {
        Symmetry::VertexTransitive => {
            let g = Graph::around(topo, 0)?;
            let optima = plan_range(&g, 0..g.n.min(1), None, false).optima;
            let steps = g.steps;
            (g, steps, optima)
        }
        Symmetry::Unknown => {
            let mut g = Graph::without_rows(topo)?;
            match levels::step_maxima(&g) {
                // One row of step maxima: as if one rank were the busiest at every step.
                Some(maxima) => (g, maxima.len(), maxima),
                None => {
                    g.all_rows();
                    let outs = in_parallel(g.n, |range| plan_range(&g, range, None, false));
                    let steps = g.steps;
                    (g, steps, outs.into_iter().flat_map(|o| o.optima).collect())
                }
            }
        }
    };
    let (_, max_ingress) = g.ingress_bounds();
    Ok(Profile { steps, tau: bandwidth_factor(&optima, steps, max_ingress, g.n) })
}
