//! Verification of a schedule stated per orbit ([`crate::ir::orbit`]) without expanding it.
//!
//! Why the representatives and the group suffice (docs/schedule-format.md has the argument
//! in full): once every generator is shown to be an automorphism of the topology (nodes,
//! kinds, links, bandwidths, latencies) acting freely on the ranks, the flat schedule is the
//! union of the orbits `g t`, and g maps every fact the flat verifier checks about a transfer
//! `t` to the same fact about `g t`: a route of consecutive links from src to dst moves to one
//! from `g src` to `g dst`; "rank r holds piece p before t" moves to "rank g r holds piece
//! g p before g t" (dependencies move with the transfers); a rank receiving a piece twice
//! moves likewise. So each check needs to run on one member per orbit, and the state of the
//! symbolic execution on one (rank, piece) per orbit of G on those pairs: the pairs
//! (representative rank, any piece), since G is free on the ranks. The dependency graph is
//! acyclic iff its quotient by G is (a flat cycle projects to a quotient cycle; a quotient
//! cycle lifts to a path from t to h t, and h has finite order).
//!
//! Copy collectives (allgather, allgatherv) run on the orbits here; reduce-scatter and
//! allreduce with one shard per rank in `orbit_sums` (partial sums are sets of ranks, which
//! the group moves too); anything else expands and runs the flat verifier.

use super::{order, plain, structure, verify, Cx, Report, Violation};
use crate::ir::orbit::{self, move_piece, PieceIndex};
use crate::ir::{Collective, Schedule};
use crate::topology::Topology;
use std::collections::HashSet;

const NONE: usize = usize::MAX;

pub(super) fn check(s: &Schedule, topo: &Topology) -> Result<Report, Violation> {
    let group = s.symmetry.as_deref().expect("a compact schedule");
    let orbits = group.check_for(topo, s).map_err(|e| plain(format!("symmetry {}: {e}", group.name)))?;
    let copies = matches!(s.collective, Collective::Allgather | Collective::Allgatherv) && !s.uses_scratch();
    let sums = matches!(s.collective, Collective::ReduceScatter | Collective::Allreduce);
    if !(copies || sums) || s.shards.len() != s.n_ranks {
        let flat = orbit::expand(s).map_err(|e| plain(e.to_string()))?;
        return verify(&flat, topo);
    }
    let order = group.order();
    let total = s.transfers.len().saturating_mul(order);
    if let Some((a, _)) = s.transfers.iter().enumerate().find(|(_, t)| t.after.iter().any(|&x| x >= total)) {
        return Err(plain(format!("representative {a} depends on a transfer beyond the {total} of the flat schedule")));
    }
    // The quotient: representatives, dependencies on their orbits' representatives.
    let view = orbit::representatives(s);
    let cx = Cx { s: &view, topo };
    structure::check(&cx)?;
    let dag = order::Dag::build(&cx)?;
    // Shards and pieces move with the ranks.
    let index = PieceIndex::new(&s.pieces);
    for (i, gen) in group.gens.iter().enumerate() {
        for r in 0..s.n_ranks {
            let image = gen.ranks[r];
            if s.shards[image] != s.shards[r] {
                return Err(plain(format!(
                    "generator {i} maps rank {r} to rank {image}, whose shard has another size"
                )));
            }
        }
        let unit = group.unit(i);
        if let Some(p) = (0..s.pieces.len()).find(|&p| move_piece(s, &index, unit, p).is_none()) {
            return Err(plain(format!("generator {i} maps {} to no piece of the schedule", cx.piece(p))));
        }
    }
    if copies {
        copy(&cx, s, &orbits, &index)?;
    } else {
        super::orbit_sums::run(&cx, s, &dag, &orbits, &index)?;
    }
    Ok(Report { transfers: s.n_transfers(), pieces: s.pieces.len(), depth: dag.depth })
}

/// The copy check of `exec` on one (rank, piece) per orbit (module docs): every pair is
/// delivered at most once and not when held from the start, every sender holds its piece by
/// a transfer it waits for, every rank ends with every piece.
fn copy(cx: &Cx, s: &Schedule, orbits: &orbit::RankOrbits, index: &PieceIndex) -> Result<(), Violation> {
    let group = s.symmetry.as_deref().expect("compact");
    let (order, np) = (group.order(), s.pieces.len());
    let initially = |r: usize, p: usize| s.pieces[p].shard == r;
    // The representative pair (orbit of r, piece) that g^-1 moves (r, p) to, and g^-1.
    let pair = |r: usize, p: usize| -> Result<(usize, usize, usize), Violation> {
        let back = group.inverse(orbits.from_rep[r]);
        let p0 = move_piece(s, index, back, p).ok_or_else(|| plain(format!("{} has no image", cx.piece(p))))?;
        Ok((orbits.orbit[r], p0, back))
    };
    let mut delivered = vec![NONE; orbits.reps.len() * np];
    for (a, t) in s.transfers.iter().enumerate() {
        let (o, p0, back) = pair(t.dst, t.piece)?;
        let slot = &mut delivered[o * np + p0];
        if initially(orbits.reps[o], p0) || *slot != NONE {
            let how = if *slot != NONE {
                format!("flat transfer {} delivers it too", moved(group, *slot, orbits.from_rep[t.dst]))
            } else {
                String::from("it holds it from the start")
            };
            return Err(Violation {
                rank: Some(t.dst),
                ..cx.at(a, format!("rank {} receives piece {} twice ({how})", t.dst, t.piece))
            });
        }
        *slot = a * order + back;
    }
    let mut search = Ancestors::default();
    for (a, t) in s.transfers.iter().enumerate() {
        if initially(t.src, t.piece) {
            continue;
        }
        let (o, p0, _) = pair(t.src, t.piece)?;
        let w = delivered[o * np + p0];
        let x = if w == NONE { NONE } else { moved(group, w, orbits.from_rep[t.src]) };
        if x == NONE || !search.is_ancestor(s, x, a * order) {
            let why = if x == NONE {
                String::new()
            } else {
                format!(" (it arrives by flat transfer {x}, which this transfer does not wait for)")
            };
            return Err(Violation {
                rank: Some(t.src),
                ..cx.at(a, format!("rank {} sends piece {} before it holds it{why}", t.src, t.piece))
            });
        }
    }
    let rows = orbits.reps.iter().copied().enumerate();
    super::exec::ends_with_every_piece(cx, rows, np, initially, |i| delivered[i] != NONE)
}

/// Flat transfer `x` moved by `g`.
fn moved(group: &orbit::Group, x: usize, g: usize) -> usize {
    let order = group.order();
    (x / order) * order + group.compose(g, x % order)
}

/// Ancestor queries in the flat dependency graph, walked backwards from the dependent on
/// the fly (flat transfer `b |G| + h` waits for the images under h of representative b's
/// dependencies). Trees and chains answer at the first step.
/// `pos`, when given, is each orbit's position in a topological order of the quotient:
/// an ancestor of x lies in an orbit strictly before x's (the quotient is acyclic), so the
/// search skips the transfers of orbits at or before x's.
#[derive(Default)]
pub(super) struct Ancestors {
    seen: HashSet<usize>,
    stack: Vec<usize>,
    pub pos: Vec<u32>,
}

impl Ancestors {
    pub fn is_ancestor(&mut self, s: &Schedule, x: usize, y: usize) -> bool {
        let group = s.symmetry.as_deref().expect("compact");
        let order = group.order();
        let floor = self.pos.get(x / order).copied();
        self.seen.clear();
        self.stack.clear();
        self.stack.push(y);
        while let Some(z) = self.stack.pop() {
            for &e in &s.transfers[z / order].after {
                let dep = moved(group, e, z % order);
                if dep == x {
                    return true;
                }
                if floor.is_some_and(|f| self.pos[dep / order] <= f) {
                    continue;
                }
                if self.seen.insert(dep) {
                    self.stack.push(dep);
                }
            }
        }
        false
    }
}
