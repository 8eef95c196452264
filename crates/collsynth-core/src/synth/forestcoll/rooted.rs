//! (in progress) Single-root broadcast / reduce by spanning-arborescence packing (Edmonds),
//! the Blink baseline of the ForestColl paper.
//!
//! Interface used by `forestcoll/mod.rs` (keep this signature).

use crate::error::{CollsynthError, Result};
use crate::ir::Schedule;
use crate::topology::Topology;

/// A broadcast from `root` at the min-cut rate (exact), as weighted out-trees.
pub fn broadcast(_topo: &Topology, _root: usize) -> Result<Schedule> {
    Err(CollsynthError::Infeasible("ForestColl broadcast is not available yet".into()))
}
