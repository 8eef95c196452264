//! Choosing an algorithm per size (`--algorithm auto`, size windows), like NCCL's
//! `tuning.cc`: the cost model judges every candidate at every pipeline depth its shape
//! allows; no synthesizer decides for itself.

use super::{time_us, Model};
use crate::error::Result;
use crate::ir::Schedule;
use crate::rational::Rat;
use crate::topology::Topology;

/// Pipeline depths tried for schedules without steps (trees): what the MSCCL exporter can
/// write (it cuts trees into at most 4 sub-chunks when it chooses itself).
const PIPELINES: [usize; 4] = [1, 2, 4, 8];

/// The depths a schedule is tried at: 1, 2, 4 and 8 for one without steps (a tree pipelines
/// its pieces down the tree), 1 for a step schedule (its steps already are the pipeline).
pub fn depths(s: &Schedule) -> &'static [usize] {
    if s.n_steps().is_none() {
        &PIPELINES
    } else {
        &[1]
    }
}

/// The fastest candidate at `size` by the runtime-faithful model ([`Model::Runtime`], the
/// calibrated one), over [`depths`]: (index, depth, time in µs); ties go to the earlier
/// candidate and the shallower depth. `None` without candidates.
pub fn fastest<'a>(
    candidates: impl IntoIterator<Item = &'a Schedule>,
    topo: &Topology,
    size: Rat,
) -> Result<Option<(usize, usize, f64)>> {
    let mut best: Option<(usize, usize, f64)> = None;
    for (i, s) in candidates.into_iter().enumerate() {
        for &k in depths(s) {
            let t = time_us(Model::Runtime, s, topo, size, k)?;
            if best.is_none_or(|(_, _, bt)| t < bt) {
                best = Some((i, k, t));
            }
        }
    }
    Ok(best)
}
