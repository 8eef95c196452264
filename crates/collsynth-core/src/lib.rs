//! collsynth-core: everything whose cost grows with the cluster.
//!
//! Data flows one way: a [`topology::Topology`] (from JSON or the [`zoo`]) feeds the
//! synthesizers, whose schedules are verified, costed and exported. This crate has no
//! Python in it; `collsynth-py` is a thin binding over these free functions.

pub mod api;
pub mod bound;
pub mod budget;
pub mod cost;
pub mod error;
pub mod find;
pub mod flow;
pub(crate) mod hash;
pub mod import;
pub mod input;
pub mod ir;
pub mod msccl;
pub mod mscclpp;
pub mod parallel;
pub mod progress;
pub mod protocol;
pub mod rational;
pub mod synth;
#[cfg(test)]
pub(crate) mod testing;
pub mod topology;
pub mod units;
pub mod verify;
pub mod zoo;

pub use error::{CollsynthError, Result};

/// Every Rust allocation is counted, so that the memory budget stops what no estimate foresaw
/// ([`budget::Counting`]).
#[global_allocator]
static ALLOCATOR: budget::Counting = budget::Counting;
pub use rational::Rat;
pub use topology::{Link, Node, NodeKind, Topology};

/// Version reported as `collsynth_version` in every JSON output.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod tests;
