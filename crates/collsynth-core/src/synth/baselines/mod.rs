//! Classic baselines on any topology (routed over shortest paths): ring, direct, rhd, dbt.
//!
//! Each builds the copy forms (allgather, broadcast) and derives the reductions with the
//! shared transformations of [`crate::ir::transform`]: reduce-scatter / reduce = reversal
//! of the copy form made on the transposed topology, allreduce = composition.

use super::Algorithm;

pub(crate) mod common;
pub mod dbt;
pub mod direct;
pub mod rhd;
pub mod ring;

#[cfg(test)]
mod tests;

pub(crate) const ALGORITHMS: &[&Algorithm] = &[&ring::RING, &direct::DIRECT, &rhd::RHD, &dbt::DBT];
