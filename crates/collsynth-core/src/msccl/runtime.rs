//! The runtimes an MSCCL XML is written for, each as a table of what its parser and kernel
//! hold: the limits the parser checks and the C type every attribute is stored in. A value
//! that its type cannot hold is stored as its low bits, silently, so the judge refuses it
//! rather than trusting the file's meaning. The sources (file:line at the pinned commits)
//! are in each table and in `docs/msccl.md`, "Runtime targets".

use crate::ir::Collective;

/// A runtime an XML is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Runtime {
    /// `Azure/msccl-executor-nccl` (NCCL 2.23): `reducescatter`, 64 steps, `maxBytes`
    /// inclusive (`0` = unbounded), `outofplace`/`minBytes`/`maxBytes` required.
    MscclNccl,
    /// `ROCm/rccl`: the same parser as msccl-nccl, 64 thread blocks and 128 channels.
    Rccl,
    /// `microsoft/msccl` (NCCL 2.12): `reduce_scatter`, 256 steps, `maxBytes` exclusive
    /// (`0` = never), scratch sized from `maxBytes`.
    MscclLegacy,
}

/// A C integer type of a stored field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CType {
    I8,
    U8,
    I16,
    U16,
    /// `int`: what `mscclXmlGetAttrInt` reads into before the field is assigned.
    I32,
}

impl CType {
    pub fn name(self) -> &'static str {
        match self {
            CType::I8 => "int8_t",
            CType::U8 => "uint8_t",
            CType::I16 => "int16_t",
            CType::U16 => "uint16_t",
            CType::I32 => "int",
        }
    }
    fn bits_signed(self) -> (u32, bool) {
        match self {
            CType::I8 => (8, true),
            CType::U8 => (8, false),
            CType::I16 => (16, true),
            CType::U16 => (16, false),
            CType::I32 => (32, true),
        }
    }
    /// `v` as the field holds it: its low bits, read back with the type's sign.
    pub fn store(self, v: i64) -> i64 {
        let (bits, signed) = self.bits_signed();
        let low = (v as u64) & ((1u64 << bits) - 1);
        if signed && low >> (bits - 1) == 1 {
            low as i64 - (1i64 << bits)
        } else {
            low as i64
        }
    }
    /// The largest value the type holds.
    pub fn max(self) -> i64 {
        let (bits, signed) = self.bits_signed();
        (1i64 << (bits - u32::from(signed))) - 1
    }
}

/// What one runtime's parser and kernel hold. Every limit is a count the parser compares
/// against (ids and steps below it); every type is a field of `struct mscclThreadBlock` or
/// `struct mscclTransmission`.
#[derive(Debug)]
pub struct Limits {
    /// `MSCCL_MAX_NUM_THREAD_BLOCKS`: thread-block ids below it.
    pub thread_blocks: usize,
    /// `MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL`: thread blocks, send and receive peers of
    /// one channel.
    pub per_channel: usize,
    /// `MAXCHANNELS`: `chan` below it. The parser's own check (`channelId > MAXCHANNELS`)
    /// lets `chan == MAXCHANNELS` through and then writes past its channel array.
    pub channels: usize,
    /// `MSCCL_MAX_NUM_STEPS`: `s` below it.
    pub steps: usize,
    pub dependent_bid: CType,
    pub dependent_step: CType,
    pub offset: CType,
    pub peer: CType,
    pub channel_id: CType,
    pub n_steps: CType,
    pub count: CType,
    /// (what, file:line) at the pinned commit.
    pub sources: &'static [(&'static str, &'static str)],
    /// The commit the table was read from.
    pub commit: &'static str,
}

static MSCCL_NCCL: Limits = Limits {
    thread_blocks: 32 * 32,
    per_channel: 32,
    channels: 32,
    steps: 64,
    dependent_bid: CType::I8,
    dependent_step: CType::I16,
    offset: CType::I16,
    peer: CType::I16,
    channel_id: CType::I16,
    n_steps: CType::U16,
    count: CType::U8,
    commit: "Azure/msccl-executor-nccl c6f6b36",
    sources: &[
        ("thread blocks 32 x MAXCHANNELS", "src/include/msccl/msccl_struct.h:18, src/misc/msccl/msccl_parser.cc:421"),
        ("MAXCHANNELS 32", "src/include/device.h:65"),
        ("per channel 32", "src/include/msccl/msccl_struct.h:17, src/misc/msccl/msccl_parser.cc:589,602"),
        ("steps 64", "makefiles/common.mk:19, src/misc/msccl/msccl_parser.cc:485"),
        ("count below MSCCL_MAX_COUNT 72, uint8_t", "src/include/msccl/msccl_struct.h:19,50, msccl_parser.cc:577"),
        (
            "dependentBid int8_t",
            "src/include/msccl/msccl_struct.h:58, msccl_parser.cc:546, src/device/msccl_kernel.cu:229,233",
        ),
        ("dependentStep int16_t", "src/include/msccl/msccl_struct.h:59"),
        ("srcOffset, dstOffset int16_t", "src/include/msccl/msccl_struct.h:44-45"),
        ("sendPeer, recvPeer int16_t; nSteps uint16_t; channelId int16_t", "src/include/msccl/msccl_struct.h:61-64"),
        ("chan check off by one", "src/misc/msccl/msccl_parser.cc:449"),
        ("integers by strtol(..., 0)", "src/include/msccl/msccl_parser.h:78,85"),
        ("MAX_STR_LEN 255, MAX_ATTR_COUNT 16, MAX_SUBS 1024, MAX_NODES 4096", "src/include/msccl/msccl_parser.h:20-23"),
        ("minBytes, maxBytes, outofplace required", "src/misc/msccl/msccl_parser.cc:376-389,773"),
    ],
};

static RCCL: Limits = Limits {
    thread_blocks: 64,
    channels: 128,
    commit: "ROCm/rccl 0cbce2a7",
    sources: &[
        ("thread blocks 64", "src/include/msccl/msccl_struct.h:18, src/misc/msccl/msccl_parser.cc:421"),
        ("MAXCHANNELS 128", "src/include/device.h:65"),
        ("steps 64", "src/include/msccl/msccl_struct.h:16"),
        ("dependentBid int8_t", "src/include/msccl/msccl_struct.h:58, src/device/msccl_kernel_impl.h:274,278"),
        ("the other types and the parser as msccl-nccl", "src/include/msccl/msccl_struct.h:40-64"),
    ],
    ..MSCCL_NCCL
};

static MSCCL_LEGACY: Limits = Limits {
    thread_blocks: 108 * 2,
    channels: 32,
    steps: 256,
    channel_id: CType::I8,
    commit: "microsoft/msccl b23e9cd",
    sources: &[
        ("steps 256, thread blocks 108 x 2, per channel 32", "src/include/msccl.h:6-8"),
        ("MAXCHANNELS 32", "src/include/devcomm.h:51"),
        ("srcoffset, dstoffset int16_t; count uint8_t", "src/include/msccl.h:46-47,56"),
        ("sendpeer, recvpeer int16_t; nsteps uint16_t; channelId int8_t", "src/include/msccl.h:60-63"),
        ("dependentBid int8_t, dependentStep int16_t", "src/include/msccl.h:65-66"),
        ("parser checks", "src/graph/topo.cc:903,936,972,1065"),
        ("integers by strtol(..., 0)", "src/graph/xml.h:104,111"),
    ],
    ..MSCCL_NCCL
};

impl Runtime {
    /// Every runtime, the default first.
    pub const ALL: [Runtime; 3] = [Runtime::MscclNccl, Runtime::Rccl, Runtime::MscclLegacy];

    /// By name; `new` and `old` are the names of the earlier `--msccl-dialect`.
    pub fn parse(text: &str) -> crate::Result<Runtime> {
        match text {
            "msccl-nccl" | "new" => Ok(Runtime::MscclNccl),
            "rccl" => Ok(Runtime::Rccl),
            "msccl-legacy" | "old" => Ok(Runtime::MscclLegacy),
            _ => crate::bad_input!("unknown MSCCL runtime '{text}' (msccl-nccl, rccl, msccl-legacy)"),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Runtime::MscclNccl => "msccl-nccl",
            Runtime::Rccl => "rccl",
            Runtime::MscclLegacy => "msccl-legacy",
        }
    }
    /// The name of the XML dialect it reads: `new` (msccl-nccl and RCCL) or `old`.
    pub fn dialect(self) -> &'static str {
        if self.legacy() {
            "old"
        } else {
            "new"
        }
    }
    /// The microsoft/msccl format: `reduce_scatter`, `maxBytes` exclusive, optional sizes.
    pub fn legacy(self) -> bool {
        self == Runtime::MscclLegacy
    }
    pub fn limits(self) -> &'static Limits {
        match self {
            Runtime::MscclNccl => &MSCCL_NCCL,
            Runtime::Rccl => &RCCL,
            Runtime::MscclLegacy => &MSCCL_LEGACY,
        }
    }
    /// Steps per thread block the runtime stores.
    pub fn max_steps_per_tb(self) -> usize {
        self.limits().steps
    }
    /// The `coll` attribute value of a collective for this runtime (None: not expressible).
    pub fn coll_name(self, c: Collective) -> Option<&'static str> {
        match c {
            Collective::Allgather => Some("allgather"),
            Collective::Allreduce => Some("allreduce"),
            Collective::Broadcast => Some("broadcast"),
            Collective::Reduce => Some("reduce"),
            Collective::ReduceScatter if self.legacy() => Some("reduce_scatter"),
            Collective::ReduceScatter => Some("reducescatter"),
            Collective::Allgatherv => None,
        }
    }
}

/// What `(int)strtol(text, NULL, 0)` gives, as the parsers read every integer attribute
/// (`int64` for `strtoll`): leading white space and a sign, then `0x` hex, `0` octal or
/// decimal digits up to the first other character; no digits reads 0, overflow clamps to
/// the `long` range before the cast.
pub fn strtol(text: &str, int64: bool) -> i64 {
    let b = text.as_bytes();
    let mut i = b.iter().take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)).count();
    let negative = b.get(i) == Some(&b'-');
    if matches!(b.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let hex_digit = |c: Option<&u8>| c.is_some_and(|c| c.is_ascii_hexdigit());
    let radix: u32 = if b.get(i) == Some(&b'0') && matches!(b.get(i + 1), Some(b'x' | b'X')) && hex_digit(b.get(i + 2))
    {
        i += 2;
        16
    } else if b.get(i) == Some(&b'0') {
        8
    } else {
        10
    };
    let mut v: i128 = 0;
    while let Some(d) = b.get(i).and_then(|&c| (c as char).to_digit(radix)) {
        v = (v * i128::from(radix) + i128::from(d)).min(1 << 64);
        i += 1;
    }
    let v = if negative { -v } else { v };
    let long = v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    if int64 {
        long
    } else {
        CType::I32.store(long)
    }
}

#[cfg(test)]
mod tests;
