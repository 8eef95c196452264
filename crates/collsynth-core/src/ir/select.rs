//! One shard's or one step's transfers, for pictures of a schedule (`collsynth draw --shard K`
//! / `--step K`): which transfers they are, the links each crosses (through switches), its
//! level in the DAG and its bytes.
//!
//! A shard's transfers are its trees for a tree schedule (ForestColl: one tree per piece; an
//! allreduce: the reduction tree into the shard's owner, then the broadcast tree out of it).
//! A transfer's *step* is its `step` in a step schedule and its level otherwise, so steps run
//! over `0..Schedule::steps()` for every schedule.

use super::{Op, Schedule};
use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use crate::topology::Topology;

/// What to select.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// The transfers of pieces of shard K.
    Shard(usize),
    /// The transfers of step K (a step schedule's step, else the DAG level).
    Step(usize),
}

/// One selected transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    /// Its index in the schedule.
    pub transfer: usize,
    pub piece: usize,
    pub shard: usize,
    /// Ranks.
    pub src: usize,
    pub dst: usize,
    pub op: Op,
    /// Its step (see the module docs).
    pub step: usize,
    /// Its level in the DAG: 0 with no dependency, else one more than its deepest dependency.
    pub level: usize,
    /// Bytes it moves for a collective of `size` bytes (exact).
    pub bytes: Rat,
    /// The links it crosses, in order.
    pub route: Vec<usize>,
}

/// How many shards or steps `s` has to choose from under `sel`'s kind.
fn range(s: &Schedule, sel: Selection) -> (usize, &'static str) {
    match sel {
        Selection::Shard(_) => (s.shards.len(), "shards"),
        Selection::Step(_) => (s.steps(), "steps"),
    }
}

/// The transfers `sel` picks from `s` (on `topo`, for `size` bytes), in schedule order.
/// `BadInput` for a shard or step out of range and for a schedule whose pieces or links do
/// not exist (a schedule read from a file).
pub fn select(s: &Schedule, topo: &Topology, sel: Selection, size: Rat) -> Result<Vec<Selected>> {
    let (have, what) = range(s, sel);
    let (Selection::Shard(k) | Selection::Step(k)) = sel;
    if k >= have {
        let span = if have == 0 { "none".to_string() } else { format!("0..{}", have - 1) };
        return Err(CollsynthError::bad(format!(
            "{} {k}: the schedule has {have} {what} ({span})",
            &what[..what.len() - 1]
        )));
    }
    if size < Rat::from_integer(0) {
        return Err(CollsynthError::bad(format!("size must be >= 0 bytes, got {size}")));
    }
    for (i, t) in s.transfers.iter().enumerate() {
        if s.pieces.get(t.piece).is_none_or(|p| p.shard >= s.shards.len()) {
            return Err(CollsynthError::bad(format!("transfer {i} refers to unknown piece {}", t.piece)));
        }
        if let Some(&l) = t.route.iter().find(|&&l| l >= topo.links.len()) {
            return Err(CollsynthError::bad(format!("transfer {i} uses unknown link {l}")));
        }
    }
    let level = s.levels()?;
    let mut out = Vec::new();
    for (i, t) in s.transfers.iter().enumerate() {
        let shard = s.pieces[t.piece].shard;
        let step = t.step.map_or(level[i], |x| x as usize);
        let picked = match sel {
            Selection::Shard(k) => shard == k,
            Selection::Step(k) => step == k,
        };
        if picked {
            out.push(Selected {
                transfer: i,
                piece: t.piece,
                shard,
                src: t.src,
                dst: t.dst,
                op: t.op,
                step,
                level: level[i],
                bytes: s.piece_fraction(t.piece) * size,
                route: t.route.clone(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
