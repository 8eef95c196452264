//! Interleaved pipelining: [`super::pipelined`]'s sub-pieces, listed round by round with
//! the longest remaining chain first, small at both ends.
//!
//! Why: a rank's connections share its links, and both the runtime model (a link serves the
//! slices that wait for it in the order they were pushed, the list's order on ties,
//! docs/simulator.md) and MSCCL's thread blocks (their steps in program order) serve what is
//! listed first. `pipelined` lists transfer after transfer, so every sub-piece of the first
//! transfer goes before the second one's first; here round j (sub-piece j of every transfer)
//! goes before round j + 1, and within a round a transfer that others wait on (a reduction
//! feeding a NIC, on `dgx-a100`) goes before one nothing waits on (a contribution to a rank
//! of the same box). The first and last sub-pieces are the smallest (weights 1, 2, .., 2, 1):
//! the first round's folds and the last round's hops, which nothing overlaps, are short.

use super::{topological_order, Piece, Schedule, Transfer};
use crate::error::Result;
use crate::rational::Rat;

/// Weight of each of `k` sub-pieces: `min(j + 1, k - j)`, a ramp up and down.
pub fn ramp(k: usize) -> Vec<i128> {
    (0..k).map(|j| (j + 1).min(k - j) as i128).collect()
}

/// Per transfer, the transfers on the longest chain of dependents starting with it (1 for a
/// transfer nothing waits on). Errors on a dependency cycle.
pub fn heights(s: &Schedule) -> Result<Vec<usize>> {
    let mut height = vec![1usize; s.transfers.len()];
    for &i in topological_order(s)?.iter().rev() {
        for &a in &s.transfers[i].after {
            height[a] = height[a].max(height[i] + 1);
        }
    }
    Ok(height)
}

/// Every piece of `s` (flat) cut into `k` sub-pieces of weights [`ramp`]`(k)`; transfer i
/// becomes k transfers, the j-th carrying sub-piece j and depending on the j-th copies of its
/// dependencies. Listed by sub-piece (all of round 0 first), within a round by [`heights`]
/// (highest first, then index), so every dependency is listed before its dependents. Steps
/// are kept. `k = 1` only reorders.
pub fn interleaved(s: &Schedule, k: usize) -> Result<Schedule> {
    assert!(s.is_flat(), "transforms take flat schedules (ir::orbit::flat)");
    let k = k.max(1);
    let height = heights(s)?;
    let mut order: Vec<usize> = (0..s.transfers.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(height[i]), i));
    let mut rank = vec![0usize; order.len()];
    for (x, &i) in order.iter().enumerate() {
        rank[i] = x;
    }
    let weights = ramp(k);
    let total = Rat::from_integer(weights.iter().sum());
    let mut pieces = Vec::with_capacity(s.pieces.len() * k);
    for p in &s.pieces {
        let mut done = 0i128;
        for (j, w) in weights.iter().enumerate() {
            let start = p.start + p.len() * Rat::from_integer(done) / total;
            done += w;
            let end = if j + 1 == k { p.end } else { p.start + p.len() * Rat::from_integer(done) / total };
            pieces.push(Piece { shard: p.shard, start, end });
        }
    }
    let n = s.transfers.len();
    let mut transfers = Vec::with_capacity(n * k);
    for j in 0..k {
        for &i in &order {
            let t = &s.transfers[i];
            transfers.push(Transfer {
                piece: t.piece * k + j,
                after: t.after.iter().map(|&a| j * n + rank[a]).collect(),
                ..t.clone()
            });
        }
    }
    Ok(Schedule { pieces, transfers, ..s.clone() })
}

#[cfg(test)]
mod tests;
