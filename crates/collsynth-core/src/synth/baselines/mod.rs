//! Classic baselines on any topology (routed over shortest paths): ring, direct, rhd, dbt.

use super::Algorithm;

pub(crate) const ALGORITHMS: &[&Algorithm] = &[];
