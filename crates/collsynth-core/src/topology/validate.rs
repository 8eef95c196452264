//! Validation: one clear message per problem, naming where it is.

use super::{Node, NodeKind, Topology};
use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use num_traits::Zero;

/// A single raw link, before merging.
pub(super) fn link(nodes: &[Node], src: usize, dst: usize, bw: &Rat, lat: f64) -> Result<()> {
    if src >= nodes.len() || dst >= nodes.len() {
        return Err(CollsynthError::internal("link endpoint out of range"));
    }
    if src == dst {
        return Err(CollsynthError::bad(format!("self-loop on node '{}'", nodes[src].name)));
    }
    if *bw <= Rat::zero() {
        return Err(CollsynthError::bad(format!(
            "bandwidth must be positive, got {}",
            crate::rational::to_fraction_string(bw)
        )));
    }
    if !exact_enough(bw) {
        return Err(CollsynthError::bad(format!("bandwidth {}: {TOO_FINE}", crate::rational::to_fraction_string(bw))));
    }
    if !lat.is_finite() || lat < 0.0 {
        return Err(CollsynthError::bad(format!("latency must be a finite number >= 0, got {lat}")));
    }
    Ok(())
}

/// Largest numerator and denominator of a bandwidth in GB/s (about 1.2e24). The exact bounds
/// and flows add bandwidths over links and multiply them by rank counts in 128-bit integers;
/// this leaves them 2^47 of headroom.
pub const MAX_BANDWIDTH_TERM: i128 = 1 << 80;

/// Why a bandwidth past [`MAX_BANDWIDTH_TERM`] is refused.
pub const TOO_FINE: &str =
    "numerator or denominator above 2^80 (bandwidths are exact fractions of GB/s; give fewer digits)";

/// `bw`'s numerator and denominator are at most [`MAX_BANDWIDTH_TERM`].
pub fn exact_enough(bw: &Rat) -> bool {
    bw.numer().abs() <= MAX_BANDWIDTH_TERM && *bw.denom() <= MAX_BANDWIDTH_TERM
}

/// Whole-topology checks: compute nodes exist and are mutually reachable; no isolated switch.
pub(super) fn topology(t: &Topology) -> Result<()> {
    if t.n_ranks() == 0 {
        return Err(CollsynthError::bad("topology has no compute node"));
    }
    // Every collective of one rank is a no-op: nothing to schedule, bound or run.
    if t.n_ranks() == 1 {
        return Err(CollsynthError::bad(format!(
            "topology has one compute node ('{}'): a collective needs at least 2 ranks",
            t.nodes[t.rank_node(0)].name
        )));
    }
    for (v, node) in t.nodes.iter().enumerate() {
        if node.kind == NodeKind::Switch && t.out_links(v).is_empty() && t.in_links(v).is_empty() {
            return Err(CollsynthError::bad(format!("switch '{}' has no links", node.name)));
        }
    }
    let root = t.rank_node(0);
    let fwd = reachable(t, root, true);
    let bwd = reachable(t, root, false);
    for &v in t.ranks() {
        if !fwd[v] {
            return Err(unreachable_pair(t, root, v));
        }
        if !bwd[v] {
            return Err(unreachable_pair(t, v, root));
        }
    }
    Ok(())
}

fn unreachable_pair(t: &Topology, from: usize, to: usize) -> CollsynthError {
    CollsynthError::bad(format!(
        "compute nodes are not all mutually reachable: no path from '{}' to '{}'",
        t.nodes[from].name, t.nodes[to].name
    ))
}

/// Nodes reachable from `s` along links (forward) or against them (backward).
pub(crate) fn reachable(t: &Topology, s: usize, forward: bool) -> Vec<bool> {
    let mut seen = vec![false; t.n_nodes()];
    let mut stack = vec![s];
    seen[s] = true;
    let mut visit = |w: usize, stack: &mut Vec<usize>| {
        if !seen[w] {
            seen[w] = true;
            stack.push(w);
        }
    };
    while let Some(u) = stack.pop() {
        if forward {
            t.out_links(u).for_each(|i| visit(t.links[i].dst, &mut stack));
        } else {
            t.in_links(u).iter().for_each(|&i| visit(t.links[i].src, &mut stack));
        }
    }
    seen
}
