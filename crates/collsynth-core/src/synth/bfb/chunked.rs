//! Discrete chunked BFB (direct-connect paper App. E.2):
//! every shard is cut into exactly P equal chunks and every (u, t) assignment moves whole
//! chunks. The integer program (13) is NP-hard in general, so, as the paper does, we round
//! the exact LP optimum: for each source v with LP split x_{v,w}, `y^LP_w = P x_{v,w}`, take
//! floors and give the remaining `P - sum floor` chunks to the senders with the largest
//! fractional parts (ties: the lower local sender). Every `y_w < y^LP_w + 1`, so a link
//! carrying k sources at step t is at most k / P shards above the LP, which is Theorem 20:
//! `tau_P <= tau_LP + d (d^D - 1) / ((d - 1) P N)` (<= T_B^OPT's bound, since LP <= OPT).
//!
//! The plan does the rounding (per (u, t), in `plan_step`); this module holds
//! the rule itself, the option and the public entry points.

use super::plan::{plan_full, BfbPlan};
use super::{allgather_with, allreduce_with, reduce_scatter_with};
use crate::error::{CollsynthError, Result};
use crate::flow::Cap;
use crate::ir::Schedule;
use crate::synth::Request;
use crate::topology::Topology;

/// Largest P: keeps `P * units` far inside i128 and the piece count bounded by the IR's
/// transfer limit anyway.
pub const MAX_CHUNKS: usize = 1 << 32;

/// The `chunks` option: `None` without it; P = 0 or P > [`MAX_CHUNKS`] is `BadInput`.
pub fn chunks_option(req: &Request) -> Result<Option<Cap>> {
    if !req.options.contains_key("chunks") {
        return Ok(None);
    }
    checked(req.option_usize("chunks", 0)?).map(Some)
}

/// Round one source's LP split to whole chunks. `parts` = `(local sender, units)` with units in
/// 1/`unit` of a shard summing to `unit`; writes `(local sender, chunks)` (chunks > 0, same
/// sender order) summing to `p` into `out`, each chunk count < `p * units / unit + 1`.
pub fn round(parts: &[(u32, Cap)], unit: Cap, p: Cap, out: &mut Vec<(u32, Cap)>) {
    debug_assert_eq!(parts.iter().map(|x| x.1).sum::<Cap>(), unit, "a split covers its shard");
    // y^LP = p units / unit = floor + rem / unit: the fractional parts share the denominator
    // `unit`, so they compare as the integer remainders.
    let mut y: Vec<Cap> = parts.iter().map(|&(_, units)| p * units / unit).collect();
    let rem: Vec<Cap> = parts.iter().map(|&(_, units)| p * units % unit).collect();
    let left = p - y.iter().sum::<Cap>();
    // sum rem = left * unit with every rem < unit, so at least `left` remainders are positive
    // and the extra chunks only go to senders with a fractional part (y < y^LP + 1).
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| rem[b].cmp(&rem[a]).then(a.cmp(&b)));
    for &i in &order[..left as usize] {
        debug_assert!(rem[i] > 0);
        y[i] += 1;
    }
    out.clear();
    out.extend(parts.iter().zip(&y).filter(|(_, &c)| c > 0).map(|(&(w, _), &c)| (w, c)));
}

/// The plan of `topo` with every shard in `p` chunks (see `plan_full`).
pub fn plan(topo: &Topology, p: usize) -> Result<BfbPlan> {
    plan_full(topo, Some(checked(p)?), None)
}

/// The BFB allgather with `p` chunks per shard; `provenance.details` has `chunks`, `tau`
/// (this schedule's) and `tau_fractional` (the LP optimum's).
pub fn allgather(topo: &Topology, p: usize) -> Result<Schedule> {
    allgather_with(topo, Some(checked(p)?), None)
}

/// Reduce-scatter with `p` chunks per shard (the chunked allgather of the transpose, reversed).
pub fn reduce_scatter(topo: &Topology, p: usize) -> Result<Schedule> {
    reduce_scatter_with(topo, Some(checked(p)?), None)
}

/// Allreduce with `p` chunks per shard in both halves.
pub fn allreduce(topo: &Topology, p: usize) -> Result<Schedule> {
    allreduce_with(topo, Some(checked(p)?), None)
}

fn checked(p: usize) -> Result<Cap> {
    if p == 0 || p > MAX_CHUNKS {
        return Err(CollsynthError::bad(format!("--chunks must be between 1 and {MAX_CHUNKS}, got {p}")));
    }
    Ok(p as Cap)
}
