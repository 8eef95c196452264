//! Lowering: a verified schedule becomes an MSCCL++ execution plan (choices and why:
//! docs/mscclpp.md).
//!
//! * Every rank runs its share of the schedule's transfers as one sequence of ops in T, the
//!   order the MSCCL lowering uses (a linear extension of the DAG, by step in a step
//!   schedule, each send before its receive): the pending op earliest in T can always run,
//!   so no plan deadlocks.
//! * A send is `put` into the receiver's memory, `nop`, `signal`; a receive is `wait`, `nop`,
//!   then (unless the put landed where the value lives) `copy` or `re` from the staging
//!   chunk into place, `nop`. Puts land directly in the receiver's output when the receiver
//!   never held the piece (allgather), else in a scratch chunk of their own that nothing
//!   else writes, so no write ever races a read on another rank.
//! * Memory channels between ranks of one box (same `group` label, or a topology without
//!   labels); port channels between boxes. A port put's source is first copied to a
//!   scratch chunk of its own, so no later write can overwrite data the proxy has not yet
//!   read (we never emit `flush`).
//! * The sequence is cut into segments of at most `MAX_OPERATION` ops and `MAX_CHANNEL`
//!   peers per channel type, one group of thread
//!   blocks per segment chained by device semaphores (`sem_release` at the end of one,
//!   `sem_acquire` at the start of the next). Each group has G thread blocks that run the
//!   same ops on slice k of every data op (`tbg_info`), each with its own channel per peer,
//!   so the slices never share a byte and need no synchronisation between them.

use super::model::*;
use crate::error::{CollsynthError, Result};
use crate::ir::{transform, Collective, Op as IrOp, Schedule, DATA};
use crate::msccl::lower::grid::Grid;
use crate::msccl::Buf as MBuf;
use crate::topology::Topology;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Thread blocks per rank at most: every block of a plan must be resident at once (blocks
/// spin on semaphores and signals), and an A100 has 108 SMs, an H100 132, one block each
/// at 1024 threads.
pub const MAX_TBS_PER_RANK: usize = 64;
/// Thread-block group sizes tried, largest first.
pub const GROUP_SIZES: [usize; 3] = [4, 2, 1];

/// The plan's `collective` string for ours.
pub fn collective_name(c: Collective) -> Option<&'static str> {
    match c {
        Collective::Allgather => Some("allgather"),
        Collective::ReduceScatter => Some("reducescatter"),
        Collective::Allreduce => Some("allreduce"),
        _ => None,
    }
}

/// The channel type between two ranks: memory within a box, port across boxes.
pub fn channel_between(topo: &Topology, a: usize, b: usize) -> Chan {
    let group = |r: usize| &topo.nodes[topo.rank_node(r)].group;
    if group(a) == group(b) {
        Chan::Memory
    } else {
        Chan::Port
    }
}

/// One rank's op in T, before thread blocks: channels name the peer, remote refs index
/// the rank's remote-buffer list.
type Script = Vec<Op>;

struct Builder<'a> {
    s: &'a Schedule,
    topo: &'a Topology,
    grid: Grid,
    scripts: Vec<Script>,
    scratch: Vec<usize>,
    remote: Vec<Vec<RemoteBuffer>>,
    loc: HashMap<(usize, u8, usize), Ref>,
    homes: HashMap<(usize, u8, usize), Ref>,
    /// Per transfer: where its put landed at the receiver, and whether that is its home.
    landed: Vec<Option<(Ref, bool)>>,
}

/// Lower `s` (verified, on `topo`) with thread-block groups of `group` blocks.
pub fn lower(s: &Schedule, topo: &Topology, group: usize) -> Result<Plan> {
    let name = collective_name(s.collective).ok_or_else(|| {
        CollsynthError::bad(format!(
            "{}: MSCCL++ plans are written for allgather, reduce-scatter and allreduce",
            s.collective.name()
        ))
    })?;
    if group == 0 || group > MAX_TBS_PER_RANK {
        return Err(CollsynthError::bad(format!("thread-block group of {group}: 1 to {MAX_TBS_PER_RANK}")));
    }
    let n = s.n_ranks;
    let grid = Grid::new(s)?;
    let mut b = Builder {
        s,
        topo,
        grid,
        scripts: vec![Vec::new(); n],
        scratch: vec![0; n],
        remote: vec![Vec::new(); n],
        loc: HashMap::new(),
        homes: HashMap::new(),
        landed: vec![None; s.transfers.len()],
    };
    b.initial();
    for (t, is_send) in order(s)? {
        let tr = &s.transfers[t];
        if tr.is_local() {
            b.local(t);
        } else if is_send {
            b.send(t);
        } else {
            b.receive(t);
        }
    }
    let (ic, oc) = b.grid.io_chunks();
    let mut gpus = Vec::with_capacity(n);
    for r in 0..n {
        gpus.push(b.gpu(r, ic, oc, group)?);
    }
    let blocks: usize = gpus.iter().map(|g| g.threadblocks.len()).sum();
    let cells: usize = gpus.iter().map(|g| (g.input_chunks + g.output_chunks + g.scratch_chunks) * group).sum();
    if blocks > super::interp::MAX_BLOCKS || cells > super::interp::MAX_CELLS {
        return Err(CollsynthError::Infeasible(format!(
            "the plan has {blocks} thread blocks and {cells} chunk slices, beyond what the judge follows \
             ({} and {}); export a coarser schedule",
            super::interp::MAX_BLOCKS,
            super::interp::MAX_CELLS
        )));
    }
    Ok(Plan {
        name: format!("collsynth-{name}-{}", s.provenance.algorithm),
        collective: name.into(),
        protocol: "Simple".into(),
        inplace: false,
        reuse_resources: false,
        double_scratch: false,
        buffer_alignment: 16,
        min_message_size: 0,
        max_message_size: u64::MAX,
        threads_per_block: 1024,
        gpus,
    })
}

/// The script cut into segments: at most `MAX_OPERATION` - 4 ops each (room for the
/// chaining ops), and a new segment before an op that would give a thread block more than
/// `MAX_CHANNEL` peers or remote buffers of one channel type.
fn segments(script: &[Op]) -> Vec<&[Op]> {
    let mut out = Vec::new();
    let (mut start, mut peers, mut buffers) = (0, HashSet::new(), HashSet::new());
    for (i, o) in script.iter().enumerate() {
        let new_peers: Vec<(Chan, usize)> = o.channel_ids.iter().map(|&p| (o.chan, p)).collect();
        let new_buffers: Vec<(Chan, usize)> = o
            .src
            .iter()
            .chain(&o.dst)
            .filter_map(|r| match r {
                Ref::Remote { buffer_id, .. } => Some((o.chan, *buffer_id)),
                _ => None,
            })
            .collect();
        let over = |set: &HashSet<(Chan, usize)>, new: &[(Chan, usize)]| {
            new.iter().any(|&(kind, _)| {
                let mut n = set.iter().filter(|(k, _)| *k == kind).count();
                n += new.iter().filter(|x| x.0 == kind && !set.contains(*x)).count();
                n > MAX_CHANNEL
            })
        };
        if i > start && (i - start == MAX_OPERATION - 4 || over(&peers, &new_peers) || over(&buffers, &new_buffers)) {
            out.push(&script[start..i]);
            start = i;
            peers.clear();
            buffers.clear();
        }
        peers.extend(new_peers);
        buffers.extend(new_buffers);
    }
    if start < script.len() {
        out.push(&script[start..]);
    }
    out
}

/// T: (transfer, is the send), by step then topological position, each send right before
/// its receive (a local transfer once).
fn order(s: &Schedule) -> Result<Vec<(usize, bool)>> {
    let topo = transform::topological_order(s)?;
    let stepped = s.transfers.iter().all(|t| t.step.is_some());
    let mut keyed: Vec<(u32, usize, usize, bool)> = Vec::with_capacity(2 * topo.len());
    for (k, &t) in topo.iter().enumerate() {
        let step = if stepped { s.transfers[t].step.unwrap_or(0) } else { 0 };
        if !s.transfers[t].is_local() {
            keyed.push((step, k, 0, true));
        }
        keyed.push((step, k, 1, false));
    }
    keyed.sort_unstable();
    Ok(keyed.into_iter().map(|(_, k, _, send)| (topo[k], send)).collect())
}

fn nop() -> Op {
    Op::new(Code::Nop)
}

fn local(buf: Buf, index: usize, size: usize) -> Ref {
    Ref::Local { buf, index, size }
}

impl Builder<'_> {
    fn size(&self, p: usize) -> usize {
        self.grid.range[p].1
    }

    fn emit(&mut self, r: usize, o: Op) {
        let script = &mut self.scripts[r];
        let redundant = o.code == Code::Nop && script.last().is_none_or(|l| l.code == Code::Nop);
        if !redundant {
            script.push(o);
        }
    }

    fn alloc(&mut self, r: usize, size: usize) -> Ref {
        let at = self.scratch[r];
        self.scratch[r] += size;
        local(Buf::Scratch, at, size)
    }

    /// Where the value of (rank, slot, piece) is written: the output if the rank ends with
    /// it, else a scratch chunk of its own.
    fn home(&mut self, r: usize, slot: u8, p: usize) -> Ref {
        if let Some(h) = self.homes.get(&(r, slot, p)) {
            return *h;
        }
        let h = if slot == DATA && self.grid.final_at(r, p) {
            local(Buf::Output, self.grid.offset(r, p, MBuf::Output), self.size(p))
        } else {
            self.alloc(r, self.size(p))
        };
        self.homes.insert((r, slot, p), h);
        h
    }

    /// Initial values in the input; a piece the rank ends with and never receives is
    /// copied to its output first.
    fn initial(&mut self) {
        let written: HashSet<(usize, u8, usize)> =
            self.s.transfers.iter().map(|t| (t.dst, t.dst_slot, t.piece)).collect();
        for r in 0..self.s.n_ranks {
            for p in 0..self.s.pieces.len() {
                if !self.grid.initially_held(r, p) {
                    continue;
                }
                let input = local(Buf::Input, self.grid.offset(r, p, MBuf::Input), self.size(p));
                self.loc.insert((r, DATA, p), input);
                if self.grid.final_at(r, p) && !written.contains(&(r, DATA, p)) {
                    let home = self.home(r, DATA, p);
                    self.emit(r, Op { src: vec![input], dst: vec![home], ..Op::new(Code::Copy) });
                    self.loc.insert((r, DATA, p), home);
                }
            }
            self.emit(r, nop());
        }
    }

    fn remote_id(&mut self, r: usize, owner: usize, buf: Buf, kind: Chan) -> usize {
        let list = &mut self.remote[r];
        match list.iter().position(|b| b.rank == owner && b.buf == buf && b.access == [kind]) {
            Some(i) => i,
            None => {
                list.push(RemoteBuffer { rank: owner, buf, access: vec![kind] });
                list.len() - 1
            }
        }
    }

    fn send(&mut self, t: usize) {
        let tr = &self.s.transfers[t];
        let (a, b, p) = (tr.src, tr.dst, tr.piece);
        let (ds, copy) = (tr.dst_slot, tr.op == IrOp::Copy);
        let kind = channel_between(self.topo, a, b);
        let mut src = self.loc[&(a, tr.src_slot, p)];
        if kind == Chan::Port {
            let staged = self.alloc(a, self.size(p));
            self.emit(a, Op { src: vec![src], dst: vec![staged], ..Op::new(Code::Copy) });
            self.emit(a, nop());
            src = staged;
        }
        let direct = copy && !self.loc.contains_key(&(b, ds, p)) && {
            let h = self.home(b, ds, p);
            matches!(h, Ref::Local { buf: Buf::Output, .. })
        };
        let target = if direct { self.home(b, ds, p) } else { self.alloc(b, self.size(p)) };
        let Ref::Local { buf, index, size } = target else { unreachable!("targets are local refs") };
        let buffer_id = self.remote_id(a, b, buf, kind);
        self.landed[t] = Some((target, direct));
        let put = Op {
            chan: kind,
            channel_ids: vec![b],
            src: vec![src],
            dst: vec![Ref::Remote { buffer_id, index, size }],
            ..Op::new(Code::Put)
        };
        self.emit(a, put);
        self.emit(a, nop());
        self.emit(a, Op { chan: kind, channel_ids: vec![b], ..Op::new(Code::Signal) });
    }

    fn receive(&mut self, t: usize) {
        let tr = &self.s.transfers[t];
        let (a, b, p, ds) = (tr.src, tr.dst, tr.piece, tr.dst_slot);
        let kind = channel_between(self.topo, a, b);
        self.emit(b, Op { chan: kind, channel_ids: vec![a], ..Op::new(Code::Wait) });
        self.emit(b, nop());
        let (target, direct) = self.landed[t].expect("the send comes first in T");
        if direct {
            self.loc.insert((b, ds, p), target);
            return;
        }
        self.settle(b, ds, p, target, tr.op);
    }

    /// Put `value` (a chunk range at rank r) into (r, slot, p)'s home: copied, or added to
    /// what the rank holds.
    fn settle(&mut self, r: usize, slot: u8, p: usize, value: Ref, op: IrOp) {
        let home = self.home(r, slot, p);
        match (op, self.loc.get(&(r, slot, p)).copied()) {
            (IrOp::Reduce, Some(cur)) => {
                let re = Op {
                    src: vec![cur, value],
                    dst: vec![home],
                    reduce_op: Some("sum".into()),
                    ..Op::new(Code::Reduce)
                };
                self.emit(r, re);
            }
            _ => self.emit(r, Op { src: vec![value], dst: vec![home], ..Op::new(Code::Copy) }),
        }
        self.emit(r, nop());
        self.loc.insert((r, slot, p), home);
    }

    fn local(&mut self, t: usize) {
        let tr = &self.s.transfers[t];
        let value = self.loc[&(tr.src, tr.src_slot, tr.piece)];
        self.settle(tr.src, tr.dst_slot, tr.piece, value, tr.op);
    }

    /// Rank r's GPU entry: channels, remote buffers, and thread blocks (segments of the
    /// script x `group` slices).
    fn gpu(&self, r: usize, ic: usize, oc: usize, group: usize) -> Result<Gpu> {
        let script = &self.scripts[r];
        // Peers per channel type, ascending; GPU channel of (kind, peer, slice k).
        let mut peers: BTreeMap<Chan, BTreeSet<usize>> = BTreeMap::new();
        for o in script.iter().filter(|o| !o.channel_ids.is_empty()) {
            peers.entry(o.chan).or_default().extend(o.channel_ids.iter().copied());
        }
        // Receivers of our puts also need a channel back: pairing needs both ends.
        for (q, tr) in self.s.transfers.iter().enumerate() {
            let _ = q;
            if tr.is_local() {
                continue;
            }
            if tr.src == r {
                peers.entry(channel_between(self.topo, r, tr.dst)).or_default().insert(tr.dst);
            }
            if tr.dst == r {
                peers.entry(channel_between(self.topo, tr.src, r)).or_default().insert(tr.src);
            }
        }
        let gpu_channel = |kind: Chan, peer: usize, k: usize| {
            let pos = peers[&kind].iter().position(|&x| x == peer).expect("listed above");
            pos * group + k
        };
        let segments = segments(script);
        if segments.len() * group > MAX_TBS_PER_RANK {
            return Err(CollsynthError::Infeasible(format!(
                "rank {r} needs {} operations: {} thread blocks of {MAX_OPERATION} operations (the executor's \
                 MAX_OPERATION) in groups of {group}, above the {MAX_TBS_PER_RANK} blocks that stay resident",
                script.len(),
                segments.len() * group
            )));
        }
        let mut threadblocks = Vec::new();
        for (si, seg) in segments.iter().enumerate() {
            for k in 0..group {
                let sem = |boundary: usize| boundary * group + k;
                let mut ops = Vec::with_capacity(seg.len() + 4);
                if si > 0 {
                    ops.push(Op { semaphore_ids: vec![sem(si - 1)], ..Op::new(Code::SemAcquire) });
                    ops.push(nop());
                }
                let mut chans: BTreeMap<Chan, Vec<usize>> = BTreeMap::new();
                let mut rems: BTreeMap<Chan, Vec<usize>> = BTreeMap::new();
                for o in seg.iter() {
                    let mut o = o.clone();
                    if o.code == Code::Nop && ops.last().is_some_and(|l: &Op| l.code == Code::Nop) {
                        continue;
                    }
                    let list = chans.entry(o.chan).or_default();
                    for c in o.channel_ids.iter_mut() {
                        let g = gpu_channel(o.chan, *c, k);
                        *c = list.iter().position(|&x| x == g).unwrap_or_else(|| {
                            list.push(g);
                            list.len() - 1
                        });
                    }
                    for rf in o.dst.iter_mut().chain(o.src.iter_mut()) {
                        if let Ref::Remote { buffer_id, .. } = rf {
                            let list = rems.entry(o.chan).or_default();
                            *buffer_id = list.iter().position(|&x| x == *buffer_id).unwrap_or_else(|| {
                                list.push(*buffer_id);
                                list.len() - 1
                            });
                        }
                    }
                    if group > 1 && !o.code.is_sync() && o.code != Code::Nop {
                        o.tbg = Some((k, group));
                    }
                    ops.push(o);
                }
                if si + 1 < segments.len() {
                    if ops.last().is_none_or(|l| l.code != Code::Nop) {
                        ops.push(nop());
                    }
                    ops.push(Op { semaphore_ids: vec![sem(si)], ..Op::new(Code::SemRelease) });
                }
                chans.retain(|c, l| *c != Chan::None && !l.is_empty());
                if let Some((kind, l)) = chans.iter().chain(rems.iter()).find(|(_, l)| l.len() > MAX_CHANNEL) {
                    return Err(CollsynthError::Infeasible(format!(
                        "rank {r} talks to {} peers over {} channels within {MAX_OPERATION} operations, above the \
                         {MAX_CHANNEL} channels and remote buffers a thread block holds (MAX_CHANNEL)",
                        l.len(),
                        kind.code()
                    )));
                }
                threadblocks.push(ThreadBlock {
                    id: threadblocks.len(),
                    ops,
                    channels: chans.into_iter().collect(),
                    remote_refs: rems.into_iter().collect(),
                });
            }
        }
        let channels = peers
            .iter()
            .map(|(&kind, ps)| ChannelDecl::Peer {
                kind,
                connected_to: ps.iter().flat_map(|&p| std::iter::repeat_n(p, group)).collect(),
            })
            .collect();
        let n_sems = segments.len().saturating_sub(1) * group;
        Ok(Gpu {
            id: r,
            input_chunks: ic,
            output_chunks: oc,
            scratch_chunks: self.scratch[r],
            threadblocks,
            channels,
            remote_buffers: self.remote[r].clone(),
            semaphores: vec![0; n_sems],
        })
    }
}
