//! An MSCCL++ execution plan as the executor reads it (current format, mscclpp >= v0.8.0):
//! the keys of `src/core/executor/execution_plan.cc` (`ExecutionPlan::Impl`), the op codes
//! of `getOpType` and the limits of `src/core/include/execution_common.hpp`.

/// `MAX_OPERATION` (execution_common.hpp): operations per thread block after pipeline
/// expansion; `executor.cc` (`setupDeviceExecutionPlan`) throws beyond it.
pub const MAX_OPERATION: usize = 64;
/// `MAX_CHANNEL`: memory, port and switch channels per thread block (fixed device arrays).
pub const MAX_CHANNEL: usize = 16;
/// `MAX_CHANNEL_PER_OPERATION`.
pub const MAX_CHANNEL_PER_OPERATION: usize = 8;
/// `MAX_LOCAL_BUFFER_PER_OPERATION` + `MAX_CHANNEL_PER_OPERATION`: refs per src/dst list.
pub const MAX_BUFFERS_PER_OPERATION: usize = 10;
/// `MAX_DEVICE_SYNCERS`: barrier ids.
pub const MAX_DEVICE_SYNCERS: usize = 16;
/// `MAX_DEVICE_SEMAPHORES`: semaphore ids per operation.
pub const MAX_DEVICE_SEMAPHORES: usize = 16;
/// The kernel is compiled with `__launch_bounds__(1024, 1)` (execution_kernel.hpp).
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;

/// Buffer codes of `convertToBufferType`: "i", "o", "s".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Buf {
    Input,
    Output,
    Scratch,
}

impl Buf {
    pub fn code(self) -> &'static str {
        match self {
            Buf::Input => "i",
            Buf::Output => "o",
            Buf::Scratch => "s",
        }
    }
    pub fn parse(code: &str) -> Option<Buf> {
        [Buf::Input, Buf::Output, Buf::Scratch].into_iter().find(|b| b.code() == code)
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Channel codes of `convertToChannelType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Chan {
    /// Peer-to-peer load/store through CUDA IPC (NVLink / NVSwitch).
    Memory,
    /// Proxy (DMA / RDMA) puts and signals: IB across boxes.
    Port,
    /// NVLS multicast over NVSwitch.
    Switch,
    None,
}

impl Chan {
    pub fn code(self) -> &'static str {
        match self {
            Chan::Memory => "memory",
            Chan::Port => "port",
            Chan::Switch => "switch",
            Chan::None => "none",
        }
    }
    pub fn parse(code: &str) -> Option<Chan> {
        [Chan::Memory, Chan::Port, Chan::Switch, Chan::None].into_iter().find(|c| c.code() == code)
    }
}

/// Op codes accepted by `getOpType` (the `OperationType` enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    Nop,
    Barrier,
    Signal,
    Wait,
    RelaxedSignal,
    RelaxedWait,
    Flush,
    Put,
    PutWithSignal,
    PutWithSignalAndFlush,
    Get,
    Copy,
    Reduce,
    ReduceSend,
    ReadReduce,
    ReadReduceSend,
    PutPackets,
    ReadPutPackets,
    CopyPackets,
    UnpackPackets,
    ReducePackets,
    ReduceSendPackets,
    ReduceCopyPackets,
    ReduceCopySendPackets,
    MultiLoadReduceStore,
    MultiStore,
    MultiStorePackets,
    Pipeline,
    SemAcquire,
    SemRelease,
}

const CODES: &[(Code, &str)] = &[
    (Code::Nop, "nop"),
    (Code::Barrier, "barrier"),
    (Code::Signal, "signal"),
    (Code::Wait, "wait"),
    (Code::RelaxedSignal, "rlxsignal"),
    (Code::RelaxedWait, "rlxwait"),
    (Code::Flush, "flush"),
    (Code::Put, "put"),
    (Code::PutWithSignal, "pws"),
    (Code::PutWithSignalAndFlush, "pwsf"),
    (Code::Get, "get"),
    (Code::Copy, "copy"),
    (Code::Reduce, "re"),
    (Code::ReduceSend, "res"),
    (Code::ReadReduce, "rre"),
    (Code::ReadReduceSend, "rres"),
    (Code::PutPackets, "ppkt"),
    (Code::ReadPutPackets, "rppkt"),
    (Code::CopyPackets, "cpkt"),
    (Code::UnpackPackets, "upkt"),
    (Code::ReducePackets, "repkt"),
    (Code::ReduceSendPackets, "respkt"),
    (Code::ReduceCopyPackets, "recpkt"),
    (Code::ReduceCopySendPackets, "recspkt"),
    (Code::MultiLoadReduceStore, "glres"),
    (Code::MultiStore, "gstore"),
    (Code::MultiStorePackets, "gstorepkt"),
    (Code::Pipeline, "pipeline"),
    (Code::SemAcquire, "sem_acquire"),
    (Code::SemRelease, "sem_release"),
];

impl Code {
    pub fn name(self) -> &'static str {
        CODES.iter().find(|(c, _)| *c == self).map(|(_, n)| *n).unwrap_or("?")
    }
    pub fn parse(name: &str) -> Option<Code> {
        CODES.iter().find(|(_, n)| *n == name).map(|(c, _)| *c)
    }
    /// Signals, waits: the op names channels and moves no data.
    pub fn is_sync(self) -> bool {
        matches!(self, Code::Signal | Code::Wait | Code::RelaxedSignal | Code::RelaxedWait | Code::Flush)
    }
}

/// A buffer reference: `index` (first chunk) and `size` (chunks) of a local buffer, of a
/// remote buffer through the thread block's list (`buffer_id`), or of an NVLS channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ref {
    Local { buf: Buf, index: usize, size: usize },
    Remote { buffer_id: usize, index: usize, size: usize },
    Switch { channel: usize, index: usize, size: usize },
}

impl Ref {
    pub fn span(&self) -> (usize, usize) {
        match *self {
            Ref::Local { index, size, .. } | Ref::Remote { index, size, .. } | Ref::Switch { index, size, .. } => {
                (index, size)
            }
        }
    }
}

/// `pipeline`'s `iter_context` and nested ops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub unit_size: u64,
    pub num_chunks: u64,
    pub ops: Vec<Op>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub code: Code,
    pub chan: Chan,
    pub channel_ids: Vec<usize>,
    pub src: Vec<Ref>,
    pub dst: Vec<Ref>,
    /// `tbg_info`: (`tb_id`, `tbg_size`).
    pub tbg: Option<(usize, usize)>,
    /// `barrier_id`, `num_threadblocks`.
    pub barrier: Option<(usize, usize)>,
    pub semaphore_ids: Vec<usize>,
    pub pipeline: Option<Pipeline>,
    /// `reduce_op` as written (the C++ parser ignores it; the kernel sums).
    pub reduce_op: Option<String>,
}

impl Op {
    pub fn new(code: Code) -> Op {
        Op {
            code,
            chan: Chan::None,
            channel_ids: Vec::new(),
            src: Vec::new(),
            dst: Vec::new(),
            tbg: None,
            barrier: None,
            semaphore_ids: Vec::new(),
            pipeline: None,
            reduce_op: None,
        }
    }
}

/// A thread block: its ops and its views of the GPU's channels and remote buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadBlock {
    pub id: usize,
    pub ops: Vec<Op>,
    /// Per channel type, GPU-level channel indices (an op's `channel_ids` index this list).
    pub channels: Vec<(Chan, Vec<usize>)>,
    /// Per access channel type, indices into the GPU's `remote_buffers` (an op's
    /// `buffer_id` indexes this list).
    pub remote_refs: Vec<(Chan, Vec<usize>)>,
}

impl ThreadBlock {
    /// The thread block's list of `kind` channels (empty if none).
    pub fn channel_list(&self, kind: Chan) -> &[usize] {
        self.channels.iter().find(|(c, _)| *c == kind).map_or(&[], |(_, l)| l.as_slice())
    }
    pub fn remote_list(&self, kind: Chan) -> &[usize] {
        self.remote_refs.iter().find(|(c, _)| *c == kind).map_or(&[], |(_, l)| l.as_slice())
    }
}

/// A GPU-level channel declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelDecl {
    /// memory / port: one channel per element of `connected_to`.
    Peer { kind: Chan, connected_to: Vec<usize> },
    /// switch: one NVLS channel per rank group, bound to the whole buffer `buf`.
    Switch { buf: Buf, groups: Vec<Vec<usize>> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteBuffer {
    pub rank: usize,
    pub buf: Buf,
    pub access: Vec<Chan>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpu {
    pub id: usize,
    pub input_chunks: usize,
    pub output_chunks: usize,
    pub scratch_chunks: usize,
    pub threadblocks: Vec<ThreadBlock>,
    pub channels: Vec<ChannelDecl>,
    pub remote_buffers: Vec<RemoteBuffer>,
    /// `semaphores[].init_value`.
    pub semaphores: Vec<u64>,
}

impl Gpu {
    pub fn chunks(&self, b: Buf) -> usize {
        match b {
            Buf::Input => self.input_chunks,
            Buf::Output => self.output_chunks,
            Buf::Scratch => self.scratch_chunks,
        }
    }

    /// GPU-level channels of `kind` (memory / port), numbered in file order: the peer of each.
    pub fn peer_channels(&self, kind: Chan) -> Vec<usize> {
        self.channels
            .iter()
            .filter_map(|c| match c {
                ChannelDecl::Peer { kind: k, connected_to } if *k == kind => Some(connected_to.iter().copied()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// GPU-level switch channels in file order: (buffer, ranks of the group).
    pub fn switch_channels(&self) -> Vec<(Buf, &[usize])> {
        self.channels
            .iter()
            .filter_map(|c| match c {
                ChannelDecl::Switch { buf, groups } => Some(groups.iter().map(move |g| (*buf, g.as_slice()))),
                _ => None,
            })
            .flatten()
            .collect()
    }
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub name: String,
    pub collective: String,
    pub protocol: String,
    pub inplace: bool,
    pub reuse_resources: bool,
    pub double_scratch: bool,
    pub buffer_alignment: u64,
    pub min_message_size: u64,
    pub max_message_size: u64,
    pub threads_per_block: u64,
    pub gpus: Vec<Gpu>,
}

impl Plan {
    /// `protocol` "LL" selects packets (`isUsingPacket`); anything else is plain.
    pub fn uses_packets(&self) -> bool {
        self.protocol == "LL"
    }
}
