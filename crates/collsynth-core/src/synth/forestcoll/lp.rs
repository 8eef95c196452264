//! (in progress) The allreduce linear program of ForestColl appendix E.
//!
//! Interface used by `forestcoll/mod.rs` (keep these signatures):
//! * [`lp_algbw`]: the LP's optimal allreduce algbw (GB/s, exact after rounding), or `None`
//!   when the LP is too large for `auto` / was not solved.
//! * [`allreduce`]: the verified-by-construction unequal-root allreduce schedule from the LP.

use crate::error::{CollsynthError, Result};
use crate::ir::Schedule;
use crate::rational::Rat;
use crate::topology::Topology;

/// How `--allreduce-lp` asks for the LP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LpMode {
    Auto,
    Always,
    Never,
}

/// The LP's optimal allreduce algbw, `None` when not solved (mode `Never`, or too large for `Auto`).
pub fn lp_algbw(_topo: &Topology, _mode: LpMode) -> Result<Option<Rat>> {
    Ok(None)
}

/// The allreduce schedule built from the LP solution (unequal shards, one per root).
pub fn allreduce(_topo: &Topology, _mode: LpMode) -> Result<Option<Schedule>> {
    Err(CollsynthError::Infeasible("the ForestColl allreduce LP is not available yet".into()))
}
