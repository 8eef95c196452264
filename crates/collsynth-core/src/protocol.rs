//! NCCL's three protocols (LL, LL128, Simple): one idea for the MSCCL exporter and parser,
//! which write and read it (`proto="..."`), and the runtime cost model, which times it. Each
//! adds its own facts in its own module (`msccl::model`: buffer slots per connection;
//! `cost::runtime::protocol`: slice size, wire factor, base latency).

/// A protocol of the NCCL/MSCCL runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    LL,
    LL128,
    Simple,
}

impl Protocol {
    pub const ALL: [Protocol; 3] = [Protocol::LL, Protocol::LL128, Protocol::Simple];

    /// The name in MSCCL XML (`proto="..."`), on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::LL => "LL",
            Protocol::LL128 => "LL128",
            Protocol::Simple => "Simple",
        }
    }

    /// The protocol named `text` (`BadInput` otherwise).
    pub fn parse(text: &str) -> crate::Result<Protocol> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| crate::CollsynthError::bad(format!("unknown protocol '{text}' (Simple, LL, LL128)")))
    }

    /// Index into per-protocol tables ([LL, LL128, Simple]).
    pub fn index(self) -> usize {
        match self {
            Protocol::LL => 0,
            Protocol::LL128 => 1,
            Protocol::Simple => 2,
        }
    }
}
