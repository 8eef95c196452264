//! Range transfers (docs/schedule-format.md "Range transfers"): one stored transfer that
//! moves a run of consecutive pieces.
//!
//! A transfer with `count` k > 1 stands for k transfers, run member i (0 <= i < k) moving
//! piece `piece + i` with the same ranks, route, op, step and slots, and waiting for flat
//! transfer `a + i s` for every `a` in `after`, where the stride s is |G| for a schedule stated
//! per orbit and 1 otherwise (so member i waits for member i of the runs it depends on: for a
//! compact schedule the representatives `a / |G| + i` moved by the same element). Ranges are
//! expanded first, in place and in order: stored transfer j becomes the `count` consecutive
//! transfers from the sum of the earlier counts, and `after` always holds indices of that
//! expansion (flat indices, or for a compact schedule flat indices of the orbit expansion of
//! the range-expanded representatives). A range-compressed schedule is thus exactly a compact
//! statement of its expansion, transfer order included, and every consumer that needs single
//! pieces reads [`flat`].

use super::{Schedule, Transfer};
use crate::error::{CollsynthError, Result};
use std::borrow::Cow;

/// Most transfers the expansion of a schedule's ranges may have (times |G| for a compact
/// schedule): what the cost models hold (`cost::MAX_CHUNK_TRANSFERS`). Counts from a file
/// are checked against it before anything is allocated.
pub const MAX_FLAT_TRANSFERS: usize = 1 << 28;

/// The step between the dependencies of consecutive members of a run (module docs).
pub fn stride(s: &Schedule) -> usize {
    s.symmetry.as_ref().map_or(1, |g| g.order())
}

/// Some stored transfer moves more than one piece.
pub fn has_ranges(s: &Schedule) -> bool {
    s.transfers.iter().any(|t| t.count != 1)
}

/// The transfers the ranges stand for (the representatives of a compact schedule), saturating.
pub fn n_expanded(s: &Schedule) -> usize {
    s.transfers.iter().fold(0usize, |a, t| a.saturating_add(t.count as usize))
}

/// The precise rules of a range (module docs), checked before an expansion allocates: every
/// count at least 1, every run within the pieces, at most [`MAX_FLAT_TRANSFERS`] flat
/// transfers, and every dependency of every member a transfer of the expansion.
pub fn check(s: &Schedule) -> Result<()> {
    let bad = |i: usize, why: String| CollsynthError::bad(format!("transfers[{i}]: {why}"));
    let stride = stride(s);
    let total = n_expanded(s).saturating_mul(stride);
    if total > MAX_FLAT_TRANSFERS {
        return Err(CollsynthError::bad(format!(
            "the ranges stand for {total} transfers, more than the {MAX_FLAT_TRANSFERS} a schedule may have"
        )));
    }
    for (i, t) in s.transfers.iter().enumerate() {
        let k = t.count as usize;
        if k == 0 {
            return Err(bad(i, "count 0: a transfer moves at least one piece".into()));
        }
        if k == 1 {
            continue;
        }
        if t.piece.checked_add(k).is_none_or(|end| end > s.pieces.len()) {
            return Err(bad(
                i,
                format!("count {k} from piece {} runs past the schedule's {} pieces", t.piece, s.pieces.len()),
            ));
        }
        // Member k - 1 waits for a + (k - 1) s: the last of the run it lines up with.
        if let Some(&a) = t.after.iter().find(|&&a| a.saturating_add((k - 1) * stride) >= total) {
            return Err(bad(
                i,
                format!(
                    "after {a}: member {} of the run would wait for transfer {}, beyond the {total} transfers",
                    k - 1,
                    a.saturating_add((k - 1) * stride)
                ),
            ));
        }
    }
    Ok(())
}

/// `s` with every range expanded (itself when it has none); a compact schedule stays compact
/// (its representatives expanded). Fails when [`check`] does.
pub fn flat(s: &Schedule) -> Result<Cow<'_, Schedule>> {
    if !has_ranges(s) {
        return Ok(Cow::Borrowed(s));
    }
    check(s)?;
    let stride = stride(s);
    let mut transfers = Vec::with_capacity(n_expanded(s));
    for t in &s.transfers {
        for i in 0..t.count as usize {
            let after = t.after.iter().map(|&a| a + i * stride).collect();
            transfers.push(Transfer { piece: t.piece + i, after, count: 1, ..t.clone() });
        }
    }
    Ok(Cow::Owned(Schedule { transfers, ..s.without_transfers() }))
}

/// The same schedule with runs of consecutive transfers that differ only by the next piece
/// and the next dependencies merged into range transfers; [`flat`] gives `s` back exactly.
pub fn compress(s: &Schedule) -> Schedule {
    let stride = stride(s);
    let mut transfers: Vec<Transfer> = Vec::with_capacity(s.transfers.len());
    for t in &s.transfers {
        push(&mut transfers, t.clone(), stride);
    }
    transfers.shrink_to_fit();
    Schedule { transfers, ..s.without_transfers() }
}

/// Appends `t` to `transfers`, merged into the last one when it continues that run (same
/// everything, the next pieces, each dependency `count * stride` further on).
pub fn push(transfers: &mut Vec<Transfer>, t: Transfer, stride: usize) {
    if let Some(last) = transfers.last_mut() {
        if continues(last, &t, stride) {
            last.count += t.count;
            return;
        }
    }
    transfers.push(t);
}

fn continues(last: &Transfer, t: &Transfer, stride: usize) -> bool {
    let k = last.count as usize;
    last.piece + k == t.piece
        && (last.count as u64 + t.count as u64) <= u32::MAX as u64
        && last.src == t.src
        && last.dst == t.dst
        && last.op == t.op
        && last.step == t.step
        && (last.src_slot, last.dst_slot) == (t.src_slot, t.dst_slot)
        && last.route == t.route
        && last.after.len() == t.after.len()
        && last.after.iter().zip(&t.after).all(|(&a, &b)| a + k * stride == b)
}

impl Schedule {
    /// A copy of everything but the transfers (which can be millions).
    pub(super) fn without_transfers(&self) -> Schedule {
        Schedule {
            collective: self.collective,
            n_ranks: self.n_ranks,
            root: self.root,
            shards: self.shards.clone(),
            pieces: self.pieces.clone(),
            transfers: Vec::new(),
            provenance: self.provenance.clone(),
            symmetry: self.symmetry.clone(),
        }
    }

    /// Neither stated per orbit nor holding range transfers: every transfer is one flat one.
    pub fn is_flat(&self) -> bool {
        self.symmetry.is_none() && !has_ranges(self)
    }
}

#[cfg(test)]
mod tests;
