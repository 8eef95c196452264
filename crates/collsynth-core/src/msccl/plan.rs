//! Compiles an accepted MSCCL program into what the MPI executor runs: per rank, one ordered
//! list of byte moves (receive, send, copy, add) on three memory regions (the caller's send
//! buffer, its receive buffer, a scratch buffer), with the buffer aliasing of the chosen mode
//! resolved. Every rule (parser, structure, symbolic execution) is judged before, by
//! [`read::accepted`]: the executor has no rule of its own.
//!
//! The order: thread blocks are advanced in rounds over all ranks; in a round every thread
//! block whose head step is ready (its dependency has completed, a message waits on its
//! connection) runs that step. Each rank's list is its steps in round order. Sends never block
//! an MPI executor (it posts them and moves on) and every receive follows its send in this
//! global order, so running each list in order with blocking receives cannot deadlock; the
//! symbolic interpreter has ruled out races, so this order computes what the program does.

pub mod read;

#[cfg(test)]
mod tests;

use super::interp::Aliasing;
use super::model::{Buf, Program, Step, StepType, ThreadBlock};
use crate::error::{CollsynthError, Result};
use crate::hash::FastMap as HashMap;
use crate::ir::Collective;

/// Memory a chunk lives in on one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// The caller's send buffer (out of place only).
    SendBuf,
    /// The caller's receive buffer (in place: the one buffer).
    RecvBuf,
    Scratch,
}

impl Region {
    /// 0, 1, 2: the index the Python executor uses.
    pub fn code(self) -> usize {
        match self {
            Region::SendBuf => 0,
            Region::RecvBuf => 1,
            Region::Scratch => 2,
        }
    }
}

/// Chunk `chunk` of `region`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    pub region: Region,
    pub chunk: usize,
}

/// One step as a byte move on `cnt` chunks: `v` = the message received from `recv_from`, or
/// else the chunks at `first`; if `add`, `v += ` the chunks at `add`; if `store`, `v` is
/// written there; if `send_to`, `v` is sent. Connections are (peer, `chan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub recv_from: Option<usize>,
    pub send_to: Option<usize>,
    pub chan: usize,
    pub first: Option<Loc>,
    pub add: Option<Loc>,
    pub store: Option<Loc>,
    pub cnt: usize,
    /// Where it comes from, for messages: thread block id, step index, step type.
    pub tb: usize,
    pub step: usize,
    pub kind: StepType,
}

/// `chunks` chunks from `first` of `region`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub region: Region,
    pub first: usize,
    pub chunks: usize,
}

/// One rank's part of an [`ExecPlan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankProgram {
    pub rank: usize,
    /// Chunks of the caller's send buffer; None in place (there is only the receive buffer).
    pub sendbuf_chunks: Option<usize>,
    pub recvbuf_chunks: usize,
    pub scratch_chunks: usize,
    /// Where the collective's input and output of this rank are.
    pub input: Span,
    pub output: Span,
    /// Steps with an effect (nops only order), in execution order.
    pub ops: Vec<Op>,
}

/// An accepted program compiled for one buffer mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecPlan {
    pub name: String,
    pub collective: Collective,
    pub ngpus: usize,
    pub nchunksperloop: usize,
    pub nchannels: usize,
    /// Broadcast / reduce root (`Program::root`).
    pub root: usize,
    pub aliasing: Aliasing,
    /// Indexed by rank.
    pub ranks: Vec<RankProgram>,
}

/// Read `text` (MSCCL XML or its JSON form), refuse it unless `collsynth verify` accepts it
/// (with the same message) or it does not claim the mode, and compile it.
pub fn load(text: &str, format: read::Format, aliasing: Aliasing) -> Result<ExecPlan> {
    compile(&read::accepted(text, format)?, aliasing)
}

/// Compile `p`, which [`read::accepted`] has accepted, for `aliasing`. BadInput if `p` does not
/// declare that mode.
pub fn compile(p: &Program, aliasing: Aliasing) -> Result<ExecPlan> {
    let (claimed, other) = match aliasing {
        Aliasing::InPlace => (p.inplace, "out-of-place only (inplace=0)"),
        Aliasing::OutOfPlace => (p.outofplace, "in-place only (outofplace=0)"),
    };
    if !claimed {
        return crate::bad_input!("program '{}' is {other}", p.name);
    }
    let blocks = blocks_by_id(p)?;
    let order = linearize(&blocks)?;
    let layout = Layout::new(p, aliasing);
    let ranks = (0..p.ngpus)
        .map(|r| {
            let scratch = p.gpus.iter().find(|g| g.id == r).map_or(0, |g| g.s_chunks);
            let ops = order[r].iter().filter_map(|&(t, k)| layout.op(r, blocks[r][t], k)).collect();
            layout.rank_program(r, scratch, ops)
        })
        .collect();
    Ok(ExecPlan {
        name: p.name.clone(),
        collective: p.collective,
        ngpus: p.ngpus,
        nchunksperloop: p.nchunksperloop,
        nchannels: p.nchannels,
        root: p.root(),
        aliasing,
        ranks,
    })
}

/// Thread blocks per rank, indexed by id (accepted programs number both densely).
fn blocks_by_id(p: &Program) -> Result<Vec<Vec<&ThreadBlock>>> {
    let unchecked = || CollsynthError::internal("plan: the program was not checked (gpu or thread block ids)");
    let mut out: Vec<Vec<&ThreadBlock>> = vec![Vec::new(); p.ngpus];
    for g in &p.gpus {
        let slot = out.get_mut(g.id).ok_or_else(unchecked)?;
        let mut tbs: Vec<&ThreadBlock> = g.tbs.iter().collect();
        tbs.sort_by_key(|tb| tb.id);
        if tbs.iter().enumerate().any(|(i, tb)| tb.id != i) {
            return Err(unchecked());
        }
        *slot = tbs;
    }
    Ok(out)
}

/// Per rank, (thread block, step) in round order (see the module notes).
fn linearize(blocks: &[Vec<&ThreadBlock>]) -> Result<Vec<Vec<(usize, usize)>>> {
    let mut next: Vec<Vec<usize>> = blocks.iter().map(|tbs| vec![0; tbs.len()]).collect();
    // Messages sent and not yet received per connection (sender, receiver, channel).
    let mut in_flight: HashMap<(usize, usize, usize), usize> = HashMap::default();
    let mut left: usize = blocks.iter().flatten().map(|tb| tb.steps.len()).sum();
    let mut order: Vec<Vec<(usize, usize)>> = vec![Vec::new(); blocks.len()];
    while left > 0 {
        let mut ready = Vec::new();
        for (r, tbs) in blocks.iter().enumerate() {
            for (t, tb) in tbs.iter().enumerate() {
                let Some(st) = tb.steps.get(next[r][t]) else { continue };
                let dep_done = st.depid < 0 || next[r].get(st.depid as usize).is_some_and(|&n| n as i64 > st.deps);
                let message =
                    !st.kind.receives() || in_flight.get(&(tb.recv as usize, r, tb.chan)).is_some_and(|&m| m > 0);
                if dep_done && message {
                    ready.push((r, t));
                }
            }
        }
        if ready.is_empty() {
            return Err(CollsynthError::internal(format!(
                "plan: {left} steps can never run, but the interpreter found no deadlock"
            )));
        }
        for (r, t) in ready {
            let tb = blocks[r][t];
            let st = &tb.steps[next[r][t]];
            if st.kind.receives() {
                *in_flight.entry((tb.recv as usize, r, tb.chan)).or_default() -= 1;
            }
            if st.kind.sends() {
                *in_flight.entry((r, tb.send as usize, tb.chan)).or_default() += 1;
            }
            order[r].push((t, next[r][t]));
            next[r][t] += 1;
            left -= 1;
        }
    }
    Ok(order)
}

/// Where the program's buffers lie in the caller's memory for one mode ([`Aliasing::view_bases`]).
struct Layout {
    coll: Collective,
    aliasing: Aliasing,
    /// Logical chunk counts (declared counts may be 0 for a buffer reached through the alias;
    /// the rules bound every access by the declared ones).
    in_len: usize,
    out_len: usize,
}

impl Layout {
    fn new(p: &Program, aliasing: Aliasing) -> Layout {
        let (in_len, out_len) = super::interp::logical_lens(p);
        Layout { coll: p.collective, aliasing, in_len, out_len }
    }

    /// The first chunks of the input and output views of `rank` ([`Aliasing::view_bases`]).
    fn bases(&self, rank: usize) -> (Loc, Loc) {
        let at = |(in_recv, chunk): (bool, usize)| Loc {
            region: if in_recv { Region::RecvBuf } else { Region::SendBuf },
            chunk,
        };
        let (i, o) = self.aliasing.view_bases(self.coll, rank, (self.in_len, self.out_len));
        (at(i), at(o))
    }

    fn locate(&self, rank: usize, buf: Buf, off: i64) -> Loc {
        let (input, output) = self.bases(rank);
        let base = match buf {
            Buf::Input => input,
            Buf::Output => output,
            Buf::Scratch => Loc { region: Region::Scratch, chunk: 0 },
        };
        Loc { region: base.region, chunk: base.chunk + off.max(0) as usize }
    }

    /// The byte move of step `k` of `tb` on `rank` (None for a nop).
    fn op(&self, rank: usize, tb: &ThreadBlock, k: usize) -> Option<Op> {
        let st: &Step = &tb.steps[k];
        if st.kind == StepType::Nop {
            return None;
        }
        let src = || self.locate(rank, st.srcbuf, st.srcoff);
        let dst = || self.locate(rank, st.dstbuf, st.dstoff);
        let first = match st.kind {
            StepType::Send | StepType::Copy => Some(src()),
            StepType::LocalReduce => Some(dst()),
            _ => None,
        };
        Some(Op {
            recv_from: st.kind.receives().then_some(tb.recv as usize),
            send_to: st.kind.sends().then_some(tb.send as usize),
            chan: tb.chan,
            first,
            add: st.kind.reduces().then(src),
            store: st.kind.writes_dst().then(dst),
            cnt: st.cnt,
            tb: tb.id,
            step: k,
            kind: st.kind,
        })
    }

    fn rank_program(&self, rank: usize, scratch_chunks: usize, ops: Vec<Op>) -> RankProgram {
        let (input, output) = self.bases(rank);
        let span = |l: Loc, chunks| Span { region: l.region, first: l.chunk, chunks };
        RankProgram {
            rank,
            sendbuf_chunks: (self.aliasing == Aliasing::OutOfPlace).then_some(self.in_len),
            recvbuf_chunks: match self.aliasing {
                Aliasing::OutOfPlace => self.out_len,
                Aliasing::InPlace => self.in_len.max(self.out_len),
            },
            scratch_chunks,
            input: span(input, self.in_len),
            output: span(output, self.out_len),
            ops,
        }
    }
}
