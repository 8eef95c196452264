//! Choosing an algorithm per size (`--algorithm auto`), like NCCL's `tuning.cc`: the cost
//! model judges every candidate; no synthesizer decides for itself.

use super::{time_us, Model};
use crate::error::Result;
use crate::ir::Schedule;
use crate::rational::Rat;
use crate::topology::Topology;

/// The candidate with the smallest simulated time at `size` (ties: the earliest candidate).
/// Returns `None` when there is no candidate.
pub fn fastest(candidates: Vec<Schedule>, topo: &Topology, size: Rat) -> Result<Option<(Schedule, f64)>> {
    let mut best: Option<(Schedule, f64)> = None;
    for s in candidates {
        let t = time_us(Model::Simulator, &s, topo, size, 1)?;
        if best.as_ref().is_none_or(|(_, bt)| t < *bt) {
            best = Some((s, t));
        }
    }
    Ok(best)
}
