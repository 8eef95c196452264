//! An MSCCL program as plain data: exactly what an `<algo>` XML holds, nothing derived.
//! The exporter builds one from a schedule, the parser reads one from a file, and the rule
//! checker, the symbolic interpreter and the writer consume it.

use crate::ir::Collective;

pub use super::runtime::{CType, Limits, Runtime};

/// Limits shared by every runtime (`msccl.h`, `msccl_struct.h`, `msccl_parser.h`); what
/// differs is in [`Runtime::limits`]. The exporter writes at most this many channels, the
/// smallest `MAXCHANNELS` of the runtimes.
pub const MAX_CHANNELS: usize = 32;
pub const MAX_TBS_PER_CHANNEL: usize = 32;
/// `cnt` must be below this (`MSCCL_MAX_COUNT`).
pub const MAX_COUNT: usize = 72;
/// Peers per channel and direction.
pub const MAX_PEERS_PER_CHANNEL: usize = 32;
pub const MAX_ATTRS_PER_NODE: usize = 16;
pub const MAX_CHILDREN_PER_NODE: usize = 1024;
/// Nodes parsed for one rank (its `<gpu>` subtree and the `<algo>`).
pub const MAX_NODES_PER_RANK: usize = 4096;
pub const MAX_STRING_LEN: usize = 255;
/// Unreceived send calls a connection holds before a send blocks (docs/contracts.md, "MSCCL
/// XML"; a Simple call is 2 slices of 2 NCCL steps, an LL or LL128 call 1 step, of a
/// connection's 8).
pub fn connection_slots(proto: Protocol) -> usize {
    match proto {
        Protocol::Simple => 2,
        Protocol::LL | Protocol::LL128 => 8,
    }
}

pub use crate::protocol::Protocol;

/// A buffer a step reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Buf {
    Input,
    Output,
    Scratch,
}

impl Buf {
    pub fn letter(self) -> char {
        match self {
            Buf::Input => 'i',
            Buf::Output => 'o',
            Buf::Scratch => 's',
        }
    }
    pub fn parse(text: &str) -> Option<Buf> {
        match text {
            "i" => Some(Buf::Input),
            "o" => Some(Buf::Output),
            "s" => Some(Buf::Scratch),
            _ => None,
        }
    }
}

/// Step types of the runtime interpreters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepType {
    /// `s`: send src.
    Send,
    /// `r`: receive into dst.
    Recv,
    /// `rcs`: receive into dst, then send it on.
    RecvCopySend,
    /// `rrs`: receive, add src, send the sum (not stored).
    RecvReduceSend,
    /// `rrc`: receive, add src, store into dst.
    RecvReduceCopy,
    /// `rrcs`: receive, add src, store into dst and send.
    RecvReduceCopySend,
    /// `cpy`: local copy src -> dst.
    Copy,
    /// `re`: local reduce, dst += src.
    LocalReduce,
    /// `nop`: carries one dependency.
    Nop,
}

impl StepType {
    pub const ALL: [StepType; 9] = [
        StepType::Send,
        StepType::Recv,
        StepType::RecvCopySend,
        StepType::RecvReduceSend,
        StepType::RecvReduceCopy,
        StepType::RecvReduceCopySend,
        StepType::Copy,
        StepType::LocalReduce,
        StepType::Nop,
    ];
    pub fn name(self) -> &'static str {
        match self {
            StepType::Send => "s",
            StepType::Recv => "r",
            StepType::RecvCopySend => "rcs",
            StepType::RecvReduceSend => "rrs",
            StepType::RecvReduceCopy => "rrc",
            StepType::RecvReduceCopySend => "rrcs",
            StepType::Copy => "cpy",
            StepType::LocalReduce => "re",
            StepType::Nop => "nop",
        }
    }
    pub fn parse(text: &str) -> Option<StepType> {
        StepType::ALL.into_iter().find(|t| t.name() == text)
    }
    /// Receives from the thread block's `recv` peer.
    pub fn receives(self) -> bool {
        matches!(
            self,
            StepType::Recv
                | StepType::RecvCopySend
                | StepType::RecvReduceSend
                | StepType::RecvReduceCopy
                | StepType::RecvReduceCopySend
        )
    }
    /// Sends to the thread block's `send` peer.
    pub fn sends(self) -> bool {
        matches!(
            self,
            StepType::Send | StepType::RecvCopySend | StepType::RecvReduceSend | StepType::RecvReduceCopySend
        )
    }
    /// Reads `srcbuf[srcoff..+cnt]` (the runtime bounds-checks src for these).
    pub fn reads_src(self) -> bool {
        matches!(
            self,
            StepType::Send
                | StepType::RecvReduceSend
                | StepType::RecvReduceCopy
                | StepType::RecvReduceCopySend
                | StepType::Copy
                | StepType::LocalReduce
        )
    }
    /// Writes `dstbuf[dstoff..+cnt]`.
    pub fn writes_dst(self) -> bool {
        matches!(
            self,
            StepType::Recv
                | StepType::RecvCopySend
                | StepType::RecvReduceCopy
                | StepType::RecvReduceCopySend
                | StepType::Copy
                | StepType::LocalReduce
        )
    }
    /// Adds into a value (`rrs`, `rrc`, `rrcs`, `re`).
    pub fn reduces(self) -> bool {
        matches!(
            self,
            StepType::RecvReduceSend | StepType::RecvReduceCopy | StepType::RecvReduceCopySend | StepType::LocalReduce
        )
    }
}

/// One `<step>`. Offsets are chunk indices (`-1` where the type does not use that side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub s: usize,
    pub kind: StepType,
    pub srcbuf: Buf,
    pub srcoff: i64,
    pub dstbuf: Buf,
    pub dstoff: i64,
    pub cnt: usize,
    /// Thread block (same GPU) this step waits for, with `deps` its step index; -1 = none.
    pub depid: i64,
    pub deps: i64,
    /// Some other thread block waits on this step.
    pub hasdep: bool,
}

/// One `<tb>`: a thread block with at most one send and one receive peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadBlock {
    pub id: usize,
    /// Peer rank or -1.
    pub send: i64,
    pub recv: i64,
    pub chan: usize,
    pub steps: Vec<Step>,
    /// Comments (`<!-- ... -->`) written before the steps; ignored by the runtimes.
    pub comment: Option<String>,
}

/// One `<gpu>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpu {
    pub id: usize,
    pub i_chunks: usize,
    pub o_chunks: usize,
    pub s_chunks: usize,
    pub tbs: Vec<ThreadBlock>,
}

/// One `<algo>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub name: String,
    pub proto: Protocol,
    pub nchannels: usize,
    pub nchunksperloop: usize,
    pub ngpus: usize,
    pub collective: Collective,
    pub inplace: bool,
    pub outofplace: bool,
    pub min_bytes: u64,
    /// `0` means "unbounded" in the new runtime and "never" in the old one.
    pub max_bytes: u64,
    /// Optional `nthreads` (old runtime only).
    pub nthreads: Option<usize>,
    pub gpus: Vec<Gpu>,
}

impl Program {
    /// Root of a broadcast or reduce. The XML has no root attribute (the runtime passes the
    /// caller's root, and a program is written for one): it is the one rank that never
    /// receives (broadcast) or never sends (reduce); 0 if there is no such single rank and
    /// for the other collectives.
    pub fn root(&self) -> usize {
        let silent = |g: &Gpu, recv: bool| {
            !g.tbs.iter().flat_map(|t| &t.steps).any(|st| if recv { st.kind.receives() } else { st.kind.sends() })
        };
        let candidates: Vec<usize> = match self.collective {
            Collective::Broadcast => self.gpus.iter().filter(|g| silent(g, true)).map(|g| g.id).collect(),
            Collective::Reduce => self.gpus.iter().filter(|g| silent(g, false)).map(|g| g.id).collect(),
            _ => vec![],
        };
        if candidates.len() == 1 {
            candidates[0]
        } else {
            0
        }
    }

    /// Rank-count multiplier of the runtime: the user's `count` covers one shard for the
    /// allgather family (input of allgather, output of reduce-scatter).
    pub fn size_multiplier(&self) -> usize {
        match self.collective {
            Collective::Allgather | Collective::ReduceScatter => self.ngpus,
            _ => 1,
        }
    }
}

impl Program {
    /// The program as JSON (the shape of the XML, attribute names kept), for the Python
    /// MPI executor: `{"name", "proto", "nchannels", "nchunksperloop", "ngpus",
    /// "collective" (our name, e.g. "reduce-scatter"), "root" (see `root`), "inplace", "outofplace", "minBytes",
    /// "maxBytes", "gpus": [{"id", "i_chunks", "o_chunks", "s_chunks", "tbs": [{"id",
    /// "send", "recv", "chan", "steps": [{"s", "type", "srcbuf", "srcoff", "dstbuf",
    /// "dstoff", "cnt", "depid", "deps", "hasdep"}]}]}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let gpus: Vec<_> = self
            .gpus
            .iter()
            .map(|g| {
                let tbs: Vec<_> = g
                    .tbs
                    .iter()
                    .map(|tb| {
                        let steps: Vec<_> = tb
                            .steps
                            .iter()
                            .map(|st| {
                                json!({
                                    "s": st.s, "type": st.kind.name(),
                                    "srcbuf": st.srcbuf.letter().to_string(), "srcoff": st.srcoff,
                                    "dstbuf": st.dstbuf.letter().to_string(), "dstoff": st.dstoff,
                                    "cnt": st.cnt, "depid": st.depid, "deps": st.deps, "hasdep": st.hasdep,
                                })
                            })
                            .collect();
                        json!({"id": tb.id, "send": tb.send, "recv": tb.recv, "chan": tb.chan, "steps": steps})
                    })
                    .collect();
                json!({"id": g.id, "i_chunks": g.i_chunks, "o_chunks": g.o_chunks, "s_chunks": g.s_chunks, "tbs": tbs})
            })
            .collect();
        json!({
            "name": self.name, "proto": self.proto.name(), "nchannels": self.nchannels,
            "nchunksperloop": self.nchunksperloop, "ngpus": self.ngpus,
            "collective": self.collective.name(), "root": self.root(), "inplace": self.inplace, "outofplace": self.outofplace,
            "minBytes": self.min_bytes, "maxBytes": self.max_bytes, "gpus": gpus,
        })
    }
}
