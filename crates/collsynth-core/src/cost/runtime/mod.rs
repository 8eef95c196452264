//! The runtime-faithful cost model: what an MSCCL/NCCL execution of a schedule costs.
//!
//! * [`classes`]: link classes (NVLink, NVSwitch, PCIe, NIC, IB switch, xGMI) and their
//!   parameters in one table, with sources.
//! * [`protocol`]: LL, LL128, Simple: slice size, wire factor, base latency.
//! * [`sim`]: the event simulator (slices, per-message overhead, cut-through, shared links).
//! * [`bound`]: the time lower bound with the same effective link parameters.
//! * [`order`]: the order thread blocks run their transfers in, chosen by time reversal.
//!
//! * [`nccl`]: what NCCL's own ring and tree kernels cost per step, and NCCL's tuner.
//!
//! [`runtime_time`] runs one protocol; [`runtime`] picks the protocol as NCCL's tuner does,
//! by an analytic estimate per protocol (NCCL src/graph/tuning.cc `ncclTopoGetAlgoTime`:
//! latency + bytes / bandwidth), and simulates it. A schedule NCCL's kernels run
//! ([`crate::ir::Executor`]) is estimated with NCCL 2.12's own tables ([`nccl::estimates_us`]).
//! docs/simulator.md has the whole model.

pub mod bound;
pub mod classes;
pub mod nccl;
pub mod order;
pub mod program;
pub mod protocol;
pub mod sim;

pub use bound::{latency_floor, LatencyFloor};
pub use classes::{classify, params, ClassParams, LinkClass};
pub use protocol::Protocol;

use crate::cost::loads::link_loads;
use crate::error::Result;
use crate::ir::transform::topological_order;
use crate::ir::{Executor, Schedule};
use crate::rational::{to_f64, Rat};
use crate::topology::Topology;

/// Most slice transfers (IR transfers x slices) one simulation runs; beyond it slices grow
/// (fewer, larger) so that a huge schedule at 4 GiB stays a fraction of a second.
pub const MAX_SLICE_TRANSFERS: usize = 1 << 21;

/// The runtime model's answer for one schedule and size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuntimeEstimate {
    /// Base latency + simulated makespan (us).
    pub time_us: f64,
    pub protocol: Protocol,
    /// Slices per piece.
    pub slices: usize,
}

/// Slices per piece under `protocol`: enough that the largest piece's slices fit the
/// protocol's slice size (MSCCL iterates every chunk the same number of times), capped by
/// [`MAX_SLICE_TRANSFERS`].
pub fn slices_for(s: &Schedule, topo: &Topology, size: Rat, protocol: Protocol) -> usize {
    slices_for_copies(s, topo, size, protocol, 1)
}

/// [`slices_for`] of a schedule that stands for `copies` times its transfers (the quotient of
/// a compact schedule, `ir::orbit::quotient`): the cap counts the flat transfers.
fn slices_for_copies(s: &Schedule, topo: &Topology, size: Rat, protocol: Protocol, copies: usize) -> usize {
    let largest = (0..s.pieces.len()).map(|p| s.piece_fraction(p)).max().unwrap_or_default() * size;
    let per = match s.provenance.executor {
        // NCCL's tree kernel: its own chunk, a piece being one channel's data.
        Executor::NcclTree => {
            let (nodes, ppn) = nccl::nodes_and_ppn(topo);
            Rat::from_integer(nccl::tree_chunk_bytes(protocol, to_f64(&largest), nodes, ppn).floor().max(1.0) as i128)
        }
        Executor::Msccl | Executor::NcclRing => Rat::from_integer(protocol.slice_bytes() as i128),
    };
    let k = (largest / per).ceil().to_integer().max(1);
    let cap = (MAX_SLICE_TRANSFERS / s.transfers.len().saturating_mul(copies).max(1)).max(1);
    usize::try_from(k).unwrap_or(usize::MAX).min(cap)
}

/// Time (us) of `s` on `topo` for `size` bytes under `protocol`, simulated.
pub fn runtime_time(s: &Schedule, topo: &Topology, size: Rat, protocol: Protocol) -> Result<RuntimeEstimate> {
    runtime_time_copies(s, topo, size, protocol, 1)
}

fn runtime_time_copies(
    s: &Schedule,
    topo: &Topology,
    size: Rat,
    protocol: Protocol,
    copies: usize,
) -> Result<RuntimeEstimate> {
    let k = slices_for_copies(s, topo, size, protocol, copies);
    let makespan = sim::makespan_us(s, topo, size, protocol, k)?;
    let time_us = if s.transfers.is_empty() { 0.0 } else { protocol.base_latency_us() + makespan };
    Ok(RuntimeEstimate { time_us, protocol, slices: k })
}

/// NCCL-style analytic estimate (us) of `s` under each protocol [LL, LL128, Simple]: base
/// latency + the longest dependency path, each transfer weighing its overhead, hop
/// latencies and one slice on its slowest link or connection + the busiest link's bytes at
/// effective bandwidth. One pass for the three protocols, in floats (it only ranks them).
pub fn estimates_us(s: &Schedule, topo: &Topology, size: Rat) -> Result<[f64; 3]> {
    estimates_copies(s, topo, size, 1)
}

fn estimates_copies(s: &Schedule, topo: &Topology, size: Rat, copies: usize) -> Result<[f64; 3]> {
    if s.provenance.executor != Executor::Msccl {
        return nccl::estimates_us(s, topo, size);
    }
    crate::cost::check(s, topo, size, 1)?;
    if s.transfers.is_empty() {
        return Ok([0.0; 3]);
    }
    let classes = classify(topo);
    // Simple's effective bandwidth; protocol p divides the per-byte times by its wire factor.
    let simple = sim::effective_bandwidths(topo, &classes, Protocol::Simple, Rat::from_integer(1));
    let us_per_byte: Vec<f64> = simple.iter().map(|b| 1.0 / (to_f64(b) * 1e3)).collect();
    let lat = sim::hop_latencies(topo, &classes);
    let wire = Protocol::ALL.map(|p| 1.0 / to_f64(&p.wire_factor()));
    let k = Protocol::ALL.map(|p| slices_for_copies(s, topo, size, p, copies) as f64);
    let piece_bytes: Vec<f64> = (0..s.pieces.len()).map(|p| to_f64(&(s.piece_fraction(p) * size))).collect();
    let mut finish = vec![[0.0f64; 3]; s.transfers.len()];
    let mut path = [0.0f64; 3];
    for i in topological_order(s)? {
        let t = &s.transfers[i];
        let link_upb = t.route.iter().map(|&l| us_per_byte[l]).fold(0.0, f64::max);
        let connection = sim::connection_us_per_byte(&t.route, &classes, t.op);
        let hops: f64 = t.route.iter().map(|&l| lat[l]).sum();
        let mut ready = [0.0f64; 3];
        for &a in &t.after {
            for x in 0..3 {
                ready[x] = ready[x].max(finish[a][x]);
            }
        }
        for p in Protocol::ALL {
            let x = p.index();
            let slice = piece_bytes[t.piece] / k[x] * (link_upb * wire[x]).max(connection);
            finish[i][x] = ready[x] + sim::message_overhead_us(&t.route, &classes, p) + hops + slice;
            path[x] = path[x].max(finish[i][x]);
        }
    }
    let loads = link_loads(s, topo, size);
    let busiest = loads.iter().zip(&us_per_byte).map(|(x, u)| to_f64(x) * u).fold(0.0, f64::max);
    Ok(Protocol::ALL.map(|p| p.base_latency_us() + path[p.index()] + busiest * wire[p.index()]))
}

/// The detail in which `auto` pins the protocol it chose a schedule with
/// (`cost::tuning::fastest`), when that is not the one NCCL's tuner would pick: an MSCCL XML
/// fixes its protocol, so the schedule runs under it at every size (and is exported so).
pub const PINNED_PROTOCOL: &str = "auto_protocol";

/// The protocol `s` is pinned to ([`PINNED_PROTOCOL`]), for MSCCL's interpreter only (NCCL's
/// kernels choose their own); an unknown name pins nothing.
pub fn pinned_protocol(s: &Schedule) -> Option<Protocol> {
    let name = s.provenance.details.get(PINNED_PROTOCOL)?.as_str()?;
    (s.provenance.executor == Executor::Msccl).then(|| Protocol::parse(name).ok()).flatten()
}

/// The protocol `s` runs under at `size`: the pinned one ([`pinned_protocol`]), else the
/// one NCCL's tuner would pick: the smallest of [`estimates_us`] (ties: the earlier of LL,
/// LL128, Simple).
pub fn choose_protocol(s: &Schedule, topo: &Topology, size: Rat) -> Result<Protocol> {
    choose_protocol_copies(s, topo, size, 1)
}

fn choose_protocol_copies(s: &Schedule, topo: &Topology, size: Rat, copies: usize) -> Result<Protocol> {
    if let Some(p) = pinned_protocol(s) {
        return Ok(p);
    }
    let est = estimates_copies(s, topo, size, copies)?;
    let mut best = Protocol::LL;
    for p in Protocol::ALL {
        if est[p.index()] < est[best.index()] {
            best = p;
        }
    }
    Ok(best)
}

/// The runtime model's time: the protocol [`choose_protocol`] picks, simulated.
pub fn runtime(s: &Schedule, topo: &Topology, size: Rat) -> Result<RuntimeEstimate> {
    runtime_copies(s, topo, size, 1)
}

/// [`runtime`] of a schedule standing for `copies` times its transfers: the quotient of a
/// compact schedule (`ir::orbit::quotient`), whose slices are capped by the flat count, so
/// that the answer is the flat schedule's exactly.
pub fn runtime_copies(s: &Schedule, topo: &Topology, size: Rat, copies: usize) -> Result<RuntimeEstimate> {
    let p = choose_protocol_copies(s, topo, size, copies)?;
    runtime_time_copies(s, topo, size, p, copies)
}

/// What `collsynth export` writes for `s` (flat, as given) under `base`, and its time: under
/// the protocol the program is written with (`base.proto`; `protocol="auto"` chose it before),
/// the lowering fastest in thread blocks ([`order::exported_lowering`]), base latency
/// included. `None`: nothing fits the runtime.
pub fn exported(
    s: &Schedule,
    topo: &Topology,
    size: Rat,
    base: &crate::msccl::lower::Options,
) -> Result<Option<(order::ExportedLowering, RuntimeEstimate)>> {
    let protocol = base.proto;
    let k = slices_for(s, topo, size, protocol);
    let e = order::exported_lowering(s, topo, size, protocol, k, base)?;
    Ok(e.map(|e| {
        let time_us = if s.transfers.is_empty() { 0.0 } else { protocol.base_latency_us() + e.makespan_us };
        (e, RuntimeEstimate { time_us, protocol, slices: k })
    }))
}

#[cfg(test)]
mod tests;
