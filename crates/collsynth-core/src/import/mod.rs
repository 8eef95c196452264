//! The machine as the runtime sees it: NCCL / RCCL topology XML (what `NCCL_TOPO_DUMP_FILE`
//! writes) read into the topology model, one box or a cluster of boxes joined by a fabric.
//! docs/topology-file.md gives the rules and where in NCCL's and RCCL's source each comes from.

pub mod fabric;
pub mod nccl;
pub mod routes;
pub mod rules;
pub mod xml;

pub use fabric::{ClusterSpec, Fabric};

use crate::error::Result;
use crate::topology::Topology;

/// Default latency (us) of a link inside a box and of a fabric link: the topology XML has
/// none, so the zoo's default stands in.
pub const DEFAULT_LATENCY: f64 = 1.0;

impl ClusterSpec {
    /// One box, no fabric, default latencies.
    pub fn single() -> ClusterSpec {
        ClusterSpec {
            boxes: 1,
            fabric: None,
            box_latency: DEFAULT_LATENCY,
            fabric_bandwidth: None,
            fabric_latency: DEFAULT_LATENCY,
        }
    }
}

/// An imported topology and the notes on what the reader left out.
pub struct Imported {
    pub topology: Topology,
    pub warnings: Vec<String>,
}

/// Read NCCL / RCCL topology XML `text` and build `spec`'s cluster of it, named `name`.
pub fn nccl_topology(name: &str, text: &str, spec: &ClusterSpec) -> Result<Imported> {
    let root = xml::parse(text)?;
    let model = routes::route(nccl::read_box(&root)?);
    let topology = fabric::build(name, &model, spec)?;
    let mut warnings = model.warnings;
    if spec.boxes > 1 {
        warnings.extend(model.fabric_warnings);
    }
    Ok(Imported { topology, warnings })
}

/// The text of the NCCL dump at `path`, read no further than [`xml::MAX_BYTES`] (the one
/// reader of input files, [`crate::input::read`]).
pub fn read_file(path: &str) -> Result<String> {
    crate::input::read(std::path::Path::new(path), crate::input::Kind::NcclXml)
}

#[cfg(test)]
mod tests;
