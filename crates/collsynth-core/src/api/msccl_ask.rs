//! What a user asks of an MSCCL export (`--runtime`, `--protocol`, `--channels`,
//! `--unfused`, `--pipeline`, `--size-range`, `--size`), resolved for one schedule: the one
//! rule that `export`, `synth --format msccl-xml` and `auto` for an export
//! ([`super::synthesize_for_msccl`]) share.

use super::{export_msccl_at, windows, MscclExport};
use crate::error::Result;
use crate::ir::Schedule;
use crate::msccl::{lower, Runtime};
use crate::protocol::Protocol;
use crate::topology::Topology;

/// An MSCCL export as asked, before the schedule is known.
#[derive(Debug, Clone, PartialEq)]
pub struct MscclAsk {
    pub runtime: Runtime,
    /// `None`: `auto`, the protocol the runtime model picks for the schedule at the size
    /// range's ends, else at `bytes`, else at 1 GiB ([`windows::protocol_for`]).
    pub protocol: Option<Protocol>,
    pub channels: Option<usize>,
    pub fused: bool,
    /// Sub-chunks per piece; `None`: the exporter picks the depth.
    pub pipeline: Option<usize>,
    pub size_range: Option<(u64, u64)>,
    /// The size the program is judged at (nccl-tests' moved bytes); `None`: the size range's
    /// middle, else 1 GiB ([`windows::judged_bytes`]).
    pub bytes: Option<u64>,
}

impl MscclAsk {
    /// The size the program is judged at.
    pub fn judged_bytes(&self) -> u64 {
        self.bytes.unwrap_or_else(|| windows::judged_bytes(self.size_range))
    }

    /// The lowering options for `s` on `topo` (the protocol resolved when it is `auto`).
    pub fn options(&self, s: &Schedule, topo: &Topology) -> Result<lower::Options> {
        let proto = match self.protocol {
            Some(p) => p,
            None => {
                let range = self.size_range.or(self.bytes.map(|m| (m, m))).unwrap_or((1 << 30, 1 << 30));
                let flat = crate::ir::orbit::flat(s)?;
                let piped = crate::ir::transform::pipelined(flat.as_ref(), self.pipeline.unwrap_or(1))?;
                windows::protocol_for(&piped, topo, range)?
            }
        };
        Ok(lower::Options {
            runtime: self.runtime,
            proto,
            channels: self.channels,
            fused: self.fused,
            pipeline: self.pipeline.unwrap_or(1),
            size_range: self.size_range,
            order: None,
            spread: None,
        })
    }

    /// Export `s` as asked (see [`export_msccl_at`]); `text` false leaves the XML to the writer.
    pub fn export(&self, s: &Schedule, topo: &Topology, text: bool) -> Result<MscclExport> {
        let o = self.options(s, topo)?;
        export_msccl_at(s, topo, &o, self.pipeline.is_none(), text, self.judged_bytes())
    }
}
