//! NCCL's three protocols as the runtime model sees them: slice size, wire efficiency and
//! base (launch) latency.
//!
//! Sources (NVIDIA/nccl; Azure/msccl-executor-nccl for MSCCL):
//! * buffers, src/init.cc: LL 524,288 B, LL128 4,915,200 B, Simple 1 << 22 (NCCL_BUFFSIZE),
//!   each split in NCCL_STEPS = 8 FIFO steps;
//! * slice (the pipelining unit between dependent transfers): MSCCL's `chunkSize` in
//!   src/device/msccl_kernel.cu `mscclRunInterpreter` = bytes per step x (Simple ? 4 : 1)
//!   chunk steps: Simple 2 MiB, LL 32 KiB of payload (half of every 16-byte line is flags,
//!   src/device/prims_ll.h), LL128 576,000 B (120 of every 128 bytes are payload,
//!   src/device/prims_ll128.h);
//! * wire factor: the payload fraction just named (LL 1/2, LL128 15/16, Simple 1);
//! * base latency: NCCL 2.12 src/graph/tuning.cc `baseLat[RING]` 3.6 / 10 / 8.4 us.

use crate::rational::Rat;

pub use crate::protocol::Protocol;

/// The runtime model's facts of each protocol (the enum itself is `crate::protocol`).
impl Protocol {
    /// Payload bytes of one slice: the unit a transfer is pipelined in.
    pub fn slice_bytes(self) -> u64 {
        match self {
            Protocol::LL => 32_768,
            Protocol::LL128 => 576_000,
            Protocol::Simple => 2_097_152,
        }
    }

    /// Fraction of a link's bytes that are payload (exact).
    pub fn wire_factor(self) -> Rat {
        match self {
            Protocol::LL => Rat::new(1, 2),
            Protocol::LL128 => Rat::new(15, 16),
            Protocol::Simple => Rat::from_integer(1),
        }
    }

    /// Latency paid once per collective (us): launch and the first synchronisation.
    pub fn base_latency_us(self) -> f64 {
        match self {
            Protocol::LL => 3.6,
            Protocol::LL128 => 10.0,
            Protocol::Simple => 8.4,
        }
    }
}
