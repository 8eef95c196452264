//! (in progress) ForestColl: throughput-optimal spanning-tree schedules.

pub mod lp;
pub mod rooted;

use super::Algorithm;

pub(crate) const ALGORITHMS: &[&Algorithm] = &[];
