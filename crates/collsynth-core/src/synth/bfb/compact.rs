//! The allgather stated per orbit (`ir::orbit`, docs/bfb.md "Compact emission"): when the
//! zoo's translations (`zoo::symmetry::node_generators`: tori, hypercubes, Hamming graphs,
//! rings, circulants) are automorphisms acting regularly on the ranks, only rank 0's
//! subproblems are solved and its deliveries are the representatives.
//!
//! Why that is BFB's schedule: an automorphism g maps shortest paths to shortest paths, so
//! rank g0's subproblem at step t is rank 0's relabelled by g, with the same optimum; rank
//! 0's plan moved by g is an optimal plan for g0 (the per-source splits moved along), and
//! the union over G is a BFB allgather whose every step's busiest link is at the LP (1)
//! optimum, as the flat plan's. Every shard is cut at every cut point of rank 0's splits, so
//! the pieces of shard x are those of shard 0 moved by the element taking 0 to x.
//!
//! Dependencies: the piece j of shard x that rank 0 receives from w at step t reached w at
//! step t - 1 as the image under g_w (the element with g_w 0 = w) of rank 0's delivery of
//! shard g_w^-1 x, piece j: flat index `(rep of that delivery, piece j) |G| + g_w`.

use super::emit::senders;
use super::plan::{plan_rank0, BfbPlan};
use super::BFB;
use crate::error::{CollsynthError, Result};
use crate::ir::orbit::{Group, RankOrbits};
use crate::ir::{Collective, Op, Piece, Schedule, Transfer};
use crate::rational::Rat;
use crate::topology::Topology;
use num_traits::{One, Zero};
use std::sync::Arc;

/// The zoo's translation group of `topo` with its rank orbits, when it is proved to act
/// regularly on the ranks (one orbit, |G| = N) by automorphisms; None otherwise (switches,
/// no candidate, a candidate that is no automorphism: the flat plan then).
pub(super) fn regular_group(topo: &Topology) -> Option<(Group, RankOrbits)> {
    if topo.n_switches() > 0 || topo.n_ranks() < 2 {
        return None;
    }
    let (group, orbits) = Group::of_permutations(topo, crate::zoo::symmetry::node_generators(topo)).ok()?;
    (orbits.reps.len() == 1).then_some((group, orbits))
}

/// The BFB allgather of `topo` stated per orbit of `group` (regular on the ranks, see
/// [`regular_group`]), and rank 0's plan (its details are the schedule's). Guarantees: the
/// expansion is a BFB allgather with the flat plan's steps and per-step optima.
pub(super) fn allgather(topo: &Topology, group: Group, orbits: &RankOrbits) -> Result<(Schedule, BfbPlan)> {
    let p = plan_rank0(topo)?;
    let (n, order) = (p.n, group.order());
    if order != n || orbits.reps != [0] {
        return Err(CollsynthError::internal("bfb: a compact allgather needs a group regular on the ranks"));
    }
    // The element of each rank's image of 0 is `from_rep`; `rank_of` inverts it.
    let mut rank_of = vec![0usize; n];
    for (r, &g) in orbits.from_rep.iter().enumerate() {
        rank_of[g] = r;
    }
    let mut cuts: Vec<Rat> = p.cuts.iter().flatten().copied().collect();
    cuts.sort_unstable();
    cuts.dedup();
    let bounds: Vec<Rat> = std::iter::once(Rat::zero()).chain(cuts).chain(std::iter::once(Rat::one())).collect();
    let pieces = bounds.len() - 1;
    let flat = n.saturating_mul(n - 1).saturating_mul(pieces);
    if flat > u32::MAX as usize {
        return Err(CollsynthError::bad(format!("bfb: the schedule would have {flat} transfers (too many)")));
    }
    let mut s = Schedule::new(Collective::Allgather, n, 0, BFB.name);
    for v in 0..n {
        for w in bounds.windows(2) {
            s.add_piece(Piece { shard: v, start: w[0], end: w[1] });
        }
    }
    s.transfers.reserve_exact((n - 1) * pieces);
    // `first[x]`: the representative that brings piece 0 of shard x to rank 0.
    let mut first = vec![usize::MAX; n];
    let node = &p.nodes[0];
    for t in 1..=p.steps {
        let range = node.step_start[t - 1] as usize..node.step_start[t] as usize;
        for d in &node.deliveries[range] {
            let x = d.src as usize;
            first[x] = s.transfers.len();
            for (j, (link, from)) in senders(node, d, &bounds).enumerate() {
                let after = if t == 1 {
                    Vec::new()
                } else {
                    let g = orbits.from_rep[from as usize];
                    let y = rank_of[group.compose(group.inverse(g), orbits.from_rep[x])];
                    vec![(first[y] + j) * order + g]
                };
                let (piece, step) = (x * pieces + j, Some(t as u32 - 1));
                s.transfers.push(Transfer::new(piece, from as usize, 0, vec![link as usize], Op::Copy, after, step));
            }
        }
    }
    debug_assert!(first.iter().enumerate().all(|(x, &f)| (f == usize::MAX) == (x == 0)));
    s.symmetry = Some(Arc::new(group));
    Ok((s, p))
}
