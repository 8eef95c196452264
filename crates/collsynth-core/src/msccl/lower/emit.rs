//! Emission: thread-block programs in T, with the access chain of every (rank, slot, piece)
//! turned into dependencies (`depid`/`deps`, extra ones in `nop` carriers).

use super::assign::{TbAssignment, TbSpec};
use super::grid::Grid;
use super::{default_size_range, Failure, Operation, Options};
use crate::error::CollsynthError;
use crate::hash::FastMap as HashMap;
use crate::ir::{Op, Schedule, DATA};
use crate::msccl::model::*;

/// Where a (rank, slot, piece) value is: the rank's input, its output, or scratch at an
/// offset (scratch slots are always in scratch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loc {
    Input,
    Output,
    Scratch(usize),
}

/// Accesses of one (rank, slot, piece) so far: its place, the last write and the reads since.
#[derive(Default)]
struct Chain {
    loc: Option<Loc>,
    last_write: Option<(usize, usize)>,
    reads: Vec<(usize, usize)>,
}

struct Emitter<'a> {
    s: &'a Schedule,
    grid: &'a Grid,
    gpus: Vec<Gpu>,
    chains: HashMap<(usize, u8, usize), Chain>,
    /// The (block, step) of each transfer's receive, once emitted.
    received: Vec<Option<(usize, usize)>>,
    /// Steps a block may hold: emission stops at the first block past it, as a program that
    /// does not fit is thrown away (`lower::fit` tries up to 64 assignments).
    max_steps: usize,
}

/// One operation for `steps`: type, source and destination (buffer, chunk offset), chunks.
struct StepOp {
    kind: StepType,
    src: (Buf, i64),
    dst: (Buf, i64),
    cnt: usize,
}

/// What one emitted operation does to its (rank, piece).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

/// Build the program for `plan`; `Failure::Limit` if a runtime limit is exceeded.
pub(super) fn program(
    s: &Schedule,
    grid: &Grid,
    ops: &[Operation],
    plan: &TbAssignment,
    o: &Options,
) -> Result<Program, Failure> {
    let mut e = Emitter::new(s, grid, plan, o.runtime.max_steps_per_tb());
    let kept = kept_unreceived(s, grid);
    let copies = o.fused || kept.iter().all(Vec::is_empty);
    if copies {
        e.initial_copies(kept)?;
    }
    for &(t, is_send) in ops {
        match is_send {
            true if !plan.sent_early[t] => e.send(t, plan.send_tb[t])?,
            true => {}
            false if s.transfers[t].is_local() => e.local(t, plan.recv_tb[t])?,
            false => e.receive(t, plan.recv_tb[t], plan.fused[t], plan.no_store[t])?,
        }
    }
    let p = e.finish(o, plan.channels, copies);
    check_limits(&p, o.runtime)?;
    Ok(p)
}

/// Per rank, the pieces it holds from the start, must end with and never receives (each needs
/// a local copy input -> output), sorted by their place in the buffer.
fn kept_unreceived(s: &Schedule, grid: &Grid) -> Vec<Vec<usize>> {
    let written: crate::hash::FastSet<(usize, usize)> =
        s.transfers.iter().filter(|t| t.dst_slot == DATA).map(|t| (t.dst, t.piece)).collect();
    (0..s.n_ranks)
        .map(|r| {
            let mut pieces: Vec<usize> = (0..s.pieces.len())
                .filter(|&p| grid.initially_held(r, p) && grid.final_at(r, p) && !written.contains(&(r, p)))
                .collect();
            pieces.sort_by_key(|&p| grid.range[p].0);
            pieces
        })
        .collect()
}

impl<'a> Emitter<'a> {
    fn new(s: &'a Schedule, grid: &'a Grid, plan: &TbAssignment, max_steps: usize) -> Self {
        let (i_chunks, o_chunks) = grid.io_chunks();
        let gpus = (0..s.n_ranks)
            .map(|r| Gpu {
                id: r,
                i_chunks,
                o_chunks,
                s_chunks: 0,
                tbs: plan.tbs[r].iter().enumerate().map(|(id, spec)| tb(id, spec)).collect(),
            })
            .collect();
        Emitter { s, grid, gpus, chains: HashMap::default(), received: vec![None; s.transfers.len()], max_steps }
    }

    fn chain(&mut self, r: usize, slot: u8, p: usize) -> &mut Chain {
        let grid = self.grid;
        self.chains.entry((r, slot, p)).or_insert_with(|| Chain {
            loc: (slot == DATA && grid.initially_held(r, p)).then_some(Loc::Input),
            ..Chain::default()
        })
    }

    /// The (buffer, chunk offset) of a place.
    fn at(&self, r: usize, p: usize, loc: Loc) -> (Buf, i64) {
        match loc {
            Loc::Input => (Buf::Input, self.grid.offset(r, p, Buf::Input) as i64),
            Loc::Output => (Buf::Output, self.grid.offset(r, p, Buf::Output) as i64),
            Loc::Scratch(off) => (Buf::Scratch, off as i64),
        }
    }

    /// Where a write of (r, slot, p) goes: its current place once it has left the input,
    /// else the output if r must end with it (data only), else fresh scratch.
    fn write_place(&mut self, r: usize, slot: u8, p: usize) -> Loc {
        let cur = self.chain(r, slot, p).loc;
        match cur {
            Some(loc @ (Loc::Output | Loc::Scratch(_))) => loc,
            _ if slot == DATA && self.grid.final_at(r, p) => Loc::Output,
            _ => {
                let off = self.gpus[r].s_chunks;
                self.gpus[r].s_chunks += self.grid.range[p].1;
                Loc::Scratch(off)
            }
        }
    }

    /// Local copies input -> output of the pieces a rank holds, keeps and never receives
    /// (allgather's own shard, the broadcast root's data), first, merged where contiguous.
    fn initial_copies(&mut self, kept: Vec<Vec<usize>>) -> Result<(), Failure> {
        for (r, pieces) in kept.into_iter().enumerate() {
            if pieces.is_empty() {
                continue;
            }
            let tb = self.gpus[r].tbs.len();
            self.gpus[r].tbs.push(ThreadBlock { id: tb, send: -1, recv: -1, chan: 0, steps: vec![], comment: None });
            for run in contiguous_runs(&pieces, &self.grid.range) {
                let (first, last) = (run[0], run[run.len() - 1]);
                let cnt = self.grid.range[last].0 + self.grid.range[last].1 - self.grid.range[first].0;
                let src = self.at(r, first, Loc::Input);
                let dst = self.at(r, first, Loc::Output);
                let step = self.steps(r, tb, StepOp { kind: StepType::Copy, src, dst, cnt }, vec![])?;
                for &p in run {
                    self.record(r, DATA, p, (tb, step), Some(Loc::Output));
                }
            }
        }
        Ok(())
    }

    /// The send of transfer t on its own step.
    fn send(&mut self, t: usize, tb: usize) -> Result<(), Failure> {
        let tr = &self.s.transfers[t];
        let (r, slot, p) = (tr.src, tr.src_slot, tr.piece);
        let loc = self.chain(r, slot, p).loc.ok_or_else(|| internal(t, "sends a piece its source does not hold"))?;
        let at = self.at(r, p, loc);
        let mut deps = self.write_deps(r, slot, p, false);
        deps.extend(self.order_deps(t));
        let step =
            self.steps(r, tb, StepOp { kind: StepType::Send, src: at, dst: at, cnt: self.grid.range[p].1 }, deps)?;
        self.record(r, slot, p, (tb, step), None);
        Ok(())
    }

    /// The receive of transfer t, fused with the send of `fused` when given.
    fn receive(&mut self, t: usize, tb: usize, fused: Option<usize>, no_store: bool) -> Result<(), Failure> {
        let tr = &self.s.transfers[t];
        let (r, slot, p, reduce) = (tr.dst, tr.dst_slot, tr.piece, tr.op == Op::Reduce);
        let cur = self.chain(r, slot, p).loc;
        let kind = match (reduce, fused.is_some(), no_store) {
            (false, false, _) => StepType::Recv,
            (false, true, _) => StepType::RecvCopySend,
            (true, false, _) => StepType::RecvReduceCopy,
            (true, true, false) => StepType::RecvReduceCopySend,
            (true, true, true) => StepType::RecvReduceSend,
        };
        let access = if kind == StepType::RecvReduceSend { Access::Read } else { Access::Write };
        if reduce && cur.is_none() {
            return Err(internal(t, "reduces into a piece its destination does not hold"));
        }
        let dst_loc = if access == Access::Write { self.write_place(r, slot, p) } else { cur.unwrap_or(Loc::Input) };
        let src = cur.map_or(self.at(r, p, dst_loc), |l| self.at(r, p, l));
        let dst = self.at(r, p, dst_loc);
        let mut deps = self.write_deps(r, slot, p, access == Access::Write);
        deps.extend(fused.map(|u| self.order_deps(u)).unwrap_or_default());
        let step = self.steps(r, tb, StepOp { kind, src, dst, cnt: self.grid.range[p].1 }, deps)?;
        self.record(r, slot, p, (tb, step), (access == Access::Write).then_some(dst_loc));
        self.received[t] = Some((tb, step));
        Ok(())
    }

    /// A local transfer: `cpy` or `re` from one slot's place to another's on block `tb`.
    /// A `re` adds into the destination where it is; if that value is still where it will
    /// not stay (the input), a `cpy` moves it first.
    fn local(&mut self, t: usize, tb: usize) -> Result<(), Failure> {
        let tr = &self.s.transfers[t];
        let (r, p, cnt) = (tr.src, tr.piece, self.grid.range[tr.piece].1);
        let (from, to) = (tr.src_slot, tr.dst_slot);
        let src_loc = self.chain(r, from, p).loc.ok_or_else(|| internal(t, "reads a slot that holds nothing"))?;
        let src = self.at(r, p, src_loc);
        let place = self.write_place(r, to, p);
        let mut kind = StepType::Copy;
        if tr.op == Op::Reduce {
            let cur = self.chain(r, to, p).loc.ok_or_else(|| internal(t, "reduces into a slot that holds nothing"))?;
            if cur != place {
                let (a, b) = (self.at(r, p, cur), self.at(r, p, place));
                let deps = self.write_deps(r, to, p, true);
                let step = self.steps(r, tb, StepOp { kind: StepType::Copy, src: a, dst: b, cnt }, deps)?;
                self.record(r, to, p, (tb, step), Some(place));
            }
            kind = StepType::LocalReduce;
        }
        let mut deps = self.write_deps(r, to, p, true);
        deps.extend(self.write_deps(r, from, p, false));
        let step = self.steps(r, tb, StepOp { kind, src, dst: self.at(r, p, place), cnt }, deps)?;
        self.record(r, from, p, (tb, step), None);
        self.record(r, to, p, (tb, step), Some(place));
        self.received[t] = Some((tb, step));
        Ok(())
    }

    /// The receives transfer t's send waits for beyond its piece's own accesses: its
    /// dependencies on other pieces delivered to its source (ordering dependencies, such as
    /// `--tree-shape boxes-staggered`'s), already emitted since T lists them first.
    fn order_deps(&self, t: usize) -> Vec<(usize, usize)> {
        let tr = &self.s.transfers[t];
        let other = |a: &usize| {
            let d = &self.s.transfers[*a];
            d.dst == tr.src && d.piece != tr.piece
        };
        tr.after.iter().filter(|a| other(a)).filter_map(|&a| self.received[a]).collect()
    }

    /// What an access of (r, slot, p) waits for: the last write, and for a write (`write`)
    /// also every read since.
    fn write_deps(&mut self, r: usize, slot: u8, p: usize, write: bool) -> Vec<(usize, usize)> {
        let chain = self.chain(r, slot, p);
        let mut deps: Vec<(usize, usize)> = chain.last_write.into_iter().collect();
        if write {
            deps.extend(chain.reads.iter().copied());
        }
        deps
    }

    /// Record an access at `at`: a read, or (with `wrote`) a write that leaves the value there.
    fn record(&mut self, r: usize, slot: u8, p: usize, at: (usize, usize), wrote: Option<Loc>) {
        let chain = self.chain(r, slot, p);
        match wrote {
            None => chain.reads.push(at),
            Some(loc) => {
                chain.loc = Some(loc);
                chain.last_write = Some(at);
                chain.reads.clear();
            }
        }
    }

    /// Append one operation of `cnt` chunks to block `tb` of rank `r` (several steps when
    /// `cnt` reaches the runtime's limit), waiting for `deps` (blocks of the same rank;
    /// extra ones on `nop` carriers). Returns the index of its last step.
    fn steps(&mut self, r: usize, tb: usize, op: StepOp, deps: Vec<(usize, usize)>) -> Result<usize, Failure> {
        let StepOp { kind, src, dst, cnt } = op;
        let mut latest: Vec<(usize, usize)> = Vec::new();
        for (b, st) in deps.into_iter().filter(|&(b, _)| b != tb) {
            match latest.iter_mut().find(|(lb, _)| *lb == b) {
                Some(entry) => entry.1 = entry.1.max(st),
                None => latest.push((b, st)),
            }
        }
        latest.sort_unstable();
        for &(b, st) in &latest {
            self.gpus[r].tbs[b].steps[st].hasdep = true;
        }
        let mut first_dep = latest.pop();
        for (b, st) in latest {
            self.push(r, tb, StepType::Nop, (Buf::Input, -1), (Buf::Output, -1), 0, Some((b, st)));
        }
        let mut done = 0;
        while done < cnt {
            let k = (cnt - done).min(MAX_COUNT - 1);
            let shift = |(buf, off): (Buf, i64)| (buf, off + done as i64);
            self.push(r, tb, kind, shift(src), shift(dst), k, first_dep.take());
            done += k;
        }
        let len = self.gpus[r].tbs[tb].steps.len();
        if len > self.max_steps {
            let max = self.max_steps;
            return Err(Failure::Limit(format!(
                "rank {r} thread block {tb} needs more than {max} steps (limit {max})"
            )));
        }
        Ok(len - 1)
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        r: usize,
        tb: usize,
        kind: StepType,
        src: (Buf, i64),
        dst: (Buf, i64),
        cnt: usize,
        dep: Option<(usize, usize)>,
    ) {
        let steps = &mut self.gpus[r].tbs[tb].steps;
        steps.push(Step {
            s: steps.len(),
            kind,
            srcbuf: src.0,
            srcoff: src.1,
            dstbuf: dst.0,
            dstoff: dst.1,
            cnt,
            depid: dep.map_or(-1, |d| d.0 as i64),
            deps: dep.map_or(-1, |d| d.1 as i64),
            hasdep: false,
        });
    }

    fn finish(self, o: &Options, channels: usize, outofplace: bool) -> Program {
        let max_s = self.gpus.iter().map(|g| g.s_chunks).max().unwrap_or(0);
        let (min_bytes, max_bytes) =
            o.size_range.unwrap_or_else(|| default_size_range(o.runtime, self.grid.chunks, max_s));
        let used = self.gpus.iter().flat_map(|g| g.tbs.iter().map(|t| t.chan + 1)).max().unwrap_or(1);
        Program {
            name: format!("collsynth {} {} n{}", self.s.provenance.algorithm, self.s.collective.name(), self.s.n_ranks),
            proto: o.proto,
            nchannels: used.min(channels.max(1)),
            nchunksperloop: self.grid.chunks,
            ngpus: self.s.n_ranks,
            collective: self.s.collective,
            inplace: true,
            outofplace,
            min_bytes,
            max_bytes,
            nthreads: None,
            gpus: self.gpus,
        }
    }
}

fn tb(id: usize, spec: &TbSpec) -> ThreadBlock {
    let peer = |p: Option<usize>| p.map_or(-1, |x| x as i64);
    ThreadBlock { id, send: peer(spec.send), recv: peer(spec.recv), chan: spec.chan, steps: vec![], comment: None }
}

/// Maximal runs of pieces (sorted by first chunk) that are adjacent in the buffer.
fn contiguous_runs<'p>(pieces: &'p [usize], range: &[(usize, usize)]) -> Vec<&'p [usize]> {
    let mut runs = Vec::new();
    let mut start = 0;
    for k in 1..=pieces.len() {
        if k == pieces.len() || range[pieces[k - 1]].0 + range[pieces[k - 1]].1 != range[pieces[k]].0 {
            runs.push(&pieces[start..k]);
            start = k;
        }
    }
    runs
}

fn internal(t: usize, what: &str) -> Failure {
    Failure::Other(CollsynthError::internal(format!(
        "MSCCL lowering: transfer {t} {what} (the schedule is not verified?)"
    )))
}

/// The runtime's limits on the finished program (`rules::check_limits`: blocks, channels,
/// peers and every stored value; steps per block are checked as they are emitted).
fn check_limits(p: &Program, runtime: Runtime) -> Result<(), Failure> {
    match crate::msccl::rules::check_limits(p, runtime).into_iter().next() {
        Some(why) => Err(Failure::Limit(why)),
        None => Ok(()),
    }
}
