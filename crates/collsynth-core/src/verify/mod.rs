//! The verifier: a schedule is checked against its topology by a checker that trusts
//! nothing the synthesizer says.
//!
//! 1. Structure (`structure`): ranks, root, shards (count, signs, exact sum), pieces
//!    (valid intervals tiling each shard exactly), transfers (valid piece, ranks, op,
//!    dependencies) and routes (consecutive links of the topology from the source's node
//!    to the destination's).
//! 2. Order (`order`): the dependencies form a DAG (a cycle is a deadlock) and steps, where
//!    given, respect them.
//! 3. Symbolic execution (`exec`) in a topological order, with a distinct value per
//!    (rank, piece): which pieces a rank holds (copy collectives) or which ranks contributed
//!    to a partial sum (reductions). A send needs the data to have arrived *in every
//!    execution*, i.e. through the DAG; a partial sum never counts a rank twice; reads and
//!    writes of one (rank, piece) never race.
//! 4. Postconditions: exactly what the collective promises.
//!
//! The first violation found is returned; its [`Violation::message`] is one
//! self-contained line (with the transfer, ranks, piece and link names it is about).

mod exec;
mod orbit;
mod orbit_sums;
mod order;
mod structure;

use crate::ir::{ranges, Schedule};
use crate::rational::to_fraction_string;
use crate::topology::Topology;
use std::fmt;

/// Why a schedule is wrong. `message` is the whole one-line description (with its
/// context: transfer, step, ranks, piece, link names), which is also what `Display`
/// prints; the other fields locate the problem for programs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub message: String,
    /// Index of the transfer at fault.
    pub transfer: Option<usize>,
    /// The rank the problem is about (the sender that lacks data, the receiver that gets
    /// it twice, the rank that ends with a wrong value, ...).
    pub rank: Option<usize>,
    pub piece: Option<usize>,
    /// Step of the transfer at fault, when it has one.
    pub step: Option<u32>,
    /// Link (index into the topology's links) at fault.
    pub link: Option<usize>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Violation {}

/// What a verified schedule looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    pub transfers: usize,
    pub pieces: usize,
    /// Longest chain of dependent transfers.
    pub depth: usize,
}

/// Check `s` on `topo` (see the module docs); `Ok` only if it is correct in every
/// execution the dependencies allow.
///
/// A schedule stated per orbit (`s.symmetry`) is verified on its representatives and its
/// group (`orbit`); its report counts the flat transfers.
///
/// Range transfers (`ir::ranges`) are checked against their rules (counts, runs within the
/// pieces, every member's dependencies in range) and then verified on their expansion: a
/// compact schedule's representatives only, so per orbit that costs the stored runs' pieces.
pub fn verify(s: &Schedule, topo: &Topology) -> Result<Report, Violation> {
    if ranges::has_ranges(s) {
        let expanded = ranges::flat(s).map_err(|e| plain(e.message()))?;
        return verify(&expanded, topo);
    }
    if s.symmetry.is_some() {
        return orbit::check(s, topo);
    }
    let cx = Cx { s, topo };
    structure::check(&cx)?;
    let mut dag = order::Dag::build(&cx)?;
    exec::run(&cx, &mut dag)?;
    Ok(Report { transfers: s.transfers.len(), pieces: s.pieces.len(), depth: dag.depth })
}

/// The schedule and topology, with the names used in messages.
struct Cx<'a> {
    s: &'a Schedule,
    topo: &'a Topology,
}

impl Cx<'_> {
    fn node(&self, v: usize) -> String {
        match self.topo.nodes.get(v) {
            Some(n) => n.name.clone(),
            None => format!("node #{v}"),
        }
    }

    /// `link 3 (n0 -> sw)`.
    fn link(&self, l: usize) -> String {
        match self.topo.links.get(l) {
            Some(link) => format!("link {l} ({} -> {})", self.node(link.src), self.node(link.dst)),
            None => format!("link {l}"),
        }
    }

    /// `piece 7 = shard 1 [0, 1/2)` (just `piece 7` when it does not exist).
    fn piece(&self, p: usize) -> String {
        match self.s.pieces.get(p) {
            Some(pc) => format!(
                "piece {p} = shard {} [{}, {})",
                pc.shard,
                to_fraction_string(&pc.start),
                to_fraction_string(&pc.end)
            ),
            None => format!("piece {p}"),
        }
    }

    /// `transfer 12 (step 3, rank 2 -> 5, piece 7 = shard 1 [0, 1/2))`.
    fn transfer(&self, i: usize) -> String {
        let t = &self.s.transfers[i];
        let step = t.step.map(|st| format!("step {st}, ")).unwrap_or_default();
        format!("transfer {i} ({step}rank {} -> {}, {})", t.src, t.dst, self.piece(t.piece))
    }

    /// A violation about transfer `i`: the message is prefixed with its description.
    fn at(&self, i: usize, message: impl fmt::Display) -> Violation {
        let t = &self.s.transfers[i];
        Violation {
            message: format!("{}: {message}", self.transfer(i)),
            transfer: Some(i),
            step: t.step,
            piece: (t.piece < self.s.pieces.len()).then_some(t.piece),
            ..plain(String::new())
        }
    }
}

/// A violation not tied to a transfer.
fn plain(message: impl Into<String>) -> Violation {
    Violation { message: message.into(), transfer: None, rank: None, piece: None, step: None, link: None }
}

/// `rank 3` / `ranks 1, 7, 9` (at most `limit` listed, then `and k more`).
fn rank_list(ranks: &[usize], limit: usize) -> String {
    let word = if ranks.len() == 1 { "rank" } else { "ranks" };
    let shown: Vec<String> = ranks.iter().take(limit).map(|r| r.to_string()).collect();
    let more = if ranks.len() > limit { format!(" and {} more", ranks.len() - limit) } else { String::new() };
    format!("{word} {}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests;
