//! Symbolic execution of a plan with the kernel's semantics (`execution_kernel.hpp`,
//! `executeDeviceFunction` and its `handle*` functions), judged for three things:
//!
//! * **the postcondition**: every chunk of every output holds the right data (allgather: the
//!   owner's shard; reduce-scatter and allreduce: the sum of every rank's contribution, each
//!   exactly once), at the granularity of tbg slices;
//! * **deadlock**: every `wait`, `sem_acquire`, `barrier` and LL packet read is eventually
//!   satisfied (signals and waits pair per channel: the j-th channel of one type of rank a to
//!   rank b with the j-th of that type of b to a, as the executor's per-peer connection tags
//!   pair them, docs/mscclpp.md);
//! * **races**: every read and write of a cell is ordered after the last write and every
//!   read since by happens-before, built from vector clocks over thread blocks: within a
//!   block only `nop` / `barrier` (`__syncthreads`) order different ops (threads differ),
//!   a `signal` releases what its block completed before its last sync, a `wait` acquires
//!   only at its block's next sync (only thread t waits), relaxed signals and waits carry no
//!   data, and LL packets carry their own flag. A rank's output must also be written before
//!   that rank's kernel ends.
//!
//! `pipeline` runs its nested ops once over the whole range (the iteration count depends on
//! the message size; the effect on the data is the same). `gstore`/`gstorepkt` are not
//! modelled (a plan using them is refused as unjudged).

use super::model::*;
use num_integer::Integer;
use std::collections::{HashMap, VecDeque};

/// At most this many sub-chunk cells over all ranks and buffers (about 100 bytes each).
pub const MAX_CELLS: usize = 1 << 22;
/// At most this many thread blocks over all ranks (each holds a vector clock over all).
pub const MAX_BLOCKS: usize = 4096;
/// Problems reported at most (the first ones in execution order).
const MAX_PROBLEMS: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Val {
    Undef,
    /// Data of global position `pos` (in units) summed over `ranks`.
    Data {
        pos: usize,
        ranks: Vec<u64>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Access {
    tb: usize,
    epoch: u32,
    op: u64,
}

#[derive(Debug, Clone)]
struct Cell {
    val: Val,
    packet: bool,
    write: Option<Access>,
    reads: Vec<Access>,
}

struct Tb {
    rank: usize,
    local: usize,
    ops: Vec<Op>,
    pc: usize,
    epoch: u32,
    vc: Vec<u32>,
    pending: Vec<u32>,
}

impl Tb {
    fn snapshot(&self, me: usize) -> Vec<u32> {
        let mut c = self.vc.clone();
        c[me] = self.epoch;
        c
    }
    fn sync(&mut self) {
        self.epoch += 1;
        let pending = std::mem::take(&mut self.pending);
        join(&mut self.vc, &pending);
    }
}

fn join(into: &mut Vec<u32>, other: &[u32]) {
    if into.len() < other.len() {
        into.resize(other.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(other) {
        *a = (*a).max(*b);
    }
}

/// A resolved reference: rank, buffer and unit range (after tbg slicing, before aliasing).
#[derive(Debug, Clone, Copy)]
struct Span {
    rank: usize,
    buf: Buf,
    start: usize,
    len: usize,
}

/// (channel type, signalling rank, waiting rank, j-th channel between them).
type ChannelKey = (Chan, usize, usize, usize);
/// Signals not yet waited for, each with the clock it publishes (None: relaxed).
type Arrivals = VecDeque<Option<Vec<u32>>>;
/// A barrier: blocks arrived (with their clocks), and blocks released with the joined clock.
type Barrier = (Vec<(usize, Vec<u32>)>, HashMap<usize, Vec<u32>>);

enum Outcome {
    Done,
    Blocked(String),
}

struct Machine<'a> {
    p: &'a Plan,
    n: usize,
    /// Units (cells) per chunk: the lcm of every tbg size.
    l: usize,
    cells: Vec<[Vec<Cell>; 3]>,
    tbs: Vec<Tb>,
    channels: HashMap<ChannelKey, Arrivals>,
    sems: Vec<Vec<Arrivals>>,
    barriers: HashMap<(usize, usize), Barrier>,
    problems: Vec<String>,
    op_seq: u64,
}

/// Judge `p` (which passed `rules::check`): the problems in execution order, empty if the
/// plan computes its collective, cannot hang and has no race.
pub fn check(p: &Plan) -> Vec<String> {
    let n = p.gpus.len();
    if !matches!(p.collective.as_str(), "allgather" | "reducescatter" | "allreduce") {
        return vec![format!(
            "collective '{}': the interpreter judges allgather, reducescatter and allreduce",
            p.collective
        )];
    }
    let mut l = 1usize;
    let mut unsupported = None;
    for o in p.gpus.iter().flat_map(|g| &g.threadblocks).flat_map(|t| flat(&t.ops)) {
        if let Some((_, s)) = o.tbg {
            l = l.lcm(&s.max(1));
        }
        if matches!(o.code, Code::MultiStore | Code::MultiStorePackets) {
            unsupported = Some(o.code.name());
        }
        if l > 1024 {
            return vec!["tbg_info sizes need more than 1024 slices per chunk".into()];
        }
    }
    if let Some(name) = unsupported {
        return vec![format!("op {name}: not modelled by the interpreter, the plan is not judged")];
    }
    let blocks: usize = p.gpus.iter().map(|g| g.threadblocks.len()).sum();
    if blocks > MAX_BLOCKS {
        return vec![format!("{blocks} thread blocks: beyond the {MAX_BLOCKS} the interpreter follows")];
    }
    let units: usize = p.gpus.iter().map(|g| g.input_chunks + g.output_chunks + g.scratch_chunks).sum();
    if units.saturating_mul(l) > MAX_CELLS {
        return vec![format!("{units} chunks x {l} slices: beyond the {MAX_CELLS} cells the interpreter holds")];
    }
    let empty = Cell { val: Val::Undef, packet: false, write: None, reads: Vec::new() };
    let cells = p
        .gpus
        .iter()
        .map(|g| [Buf::Input, Buf::Output, Buf::Scratch].map(|b| vec![empty.clone(); g.chunks(b) * l]))
        .collect();
    let mut tbs = Vec::new();
    for (r, g) in p.gpus.iter().enumerate() {
        for (t, tb) in g.threadblocks.iter().enumerate() {
            tbs.push(Tb {
                rank: r,
                local: t,
                ops: flat(&tb.ops),
                pc: 0,
                epoch: 1,
                vc: Vec::new(),
                pending: Vec::new(),
            });
        }
    }
    let total = tbs.len();
    for t in &mut tbs {
        t.vc = vec![0; total];
    }
    let sems = p
        .gpus
        .iter()
        .map(|g| g.semaphores.iter().map(|&v| (0..v.min(1 << 20)).map(|_| None).collect()).collect())
        .collect();
    let mut m = Machine {
        p,
        n,
        l,
        cells,
        tbs,
        channels: HashMap::new(),
        sems,
        barriers: HashMap::new(),
        problems: Vec::new(),
        op_seq: 0,
    };
    m.initialize();
    m.run();
    if m.problems.is_empty() {
        m.postcondition();
    }
    m.problems.truncate(MAX_PROBLEMS);
    m.problems
}

/// The ops a thread block runs: a pipeline's nested ops in place of it.
fn flat(ops: &[Op]) -> Vec<Op> {
    let mut out = Vec::new();
    for o in ops {
        match &o.pipeline {
            Some(pl) => out.extend(pl.ops.iter().cloned()),
            None => out.push(o.clone()),
        }
    }
    out
}

fn bits_one(n: usize, r: usize) -> Vec<u64> {
    let mut b = vec![0u64; n.div_ceil(64)];
    b[r / 64] |= 1 << (r % 64);
    b
}

fn bits_all(n: usize) -> Vec<u64> {
    let mut b = vec![0u64; n.div_ceil(64)];
    for r in 0..n {
        b[r / 64] |= 1 << (r % 64);
    }
    b
}

fn ranks_text(b: &[u64]) -> String {
    let rs: Vec<String> =
        (0..b.len() * 64).filter(|&r| b[r / 64] >> (r % 64) & 1 == 1).map(|r| r.to_string()).collect();
    format!("{{{}}}", rs.join(","))
}

impl Machine<'_> {
    fn chunks(&self, r: usize, b: Buf) -> usize {
        self.p.gpus[r].chunks(b)
    }

    /// Where (rank's buffer, unit) lives: in-place plans alias input and output the way the
    /// caller passes them (allreduce: one buffer; allgather: the input is the rank's slice
    /// of the output; reduce-scatter: the output is the rank's slice of the input).
    fn alias(&self, r: usize, b: Buf, u: usize) -> (Buf, usize) {
        if !self.p.inplace {
            return (b, u);
        }
        let g = &self.p.gpus[r];
        match (self.p.collective.as_str(), b) {
            ("allreduce", Buf::Input) => (Buf::Output, u),
            ("allgather", Buf::Input) => (Buf::Output, r * g.input_chunks * self.l + u),
            ("reducescatter", Buf::Output) => (Buf::Input, r * g.output_chunks * self.l + u),
            _ => (b, u),
        }
    }

    fn cell(&mut self, r: usize, b: Buf, u: usize) -> Option<&mut Cell> {
        let (b, u) = self.alias(r, b, u);
        self.cells[r][b.index()].get_mut(u)
    }

    fn initialize(&mut self) {
        for r in 0..self.n {
            let ic = self.chunks(r, Buf::Input) * self.l;
            for u in 0..ic {
                let pos = if self.p.collective == "allgather" { r * ic + u } else { u };
                let v = Val::Data { pos, ranks: bits_one(self.n, r) };
                if let Some(c) = self.cell(r, Buf::Input, u) {
                    c.val = v;
                }
            }
        }
    }

    fn problem(&mut self, text: String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(text);
        }
    }

    fn run(&mut self) {
        loop {
            let mut progress = false;
            for t in 0..self.tbs.len() {
                while self.tbs[t].pc < self.tbs[t].ops.len() {
                    match self.step(t) {
                        Outcome::Done => {
                            self.tbs[t].pc += 1;
                            progress = true;
                        }
                        Outcome::Blocked(_) => break,
                    }
                    if !self.problems.is_empty() {
                        return;
                    }
                }
            }
            if self.tbs.iter().all(|t| t.pc >= t.ops.len()) {
                for t in &mut self.tbs {
                    t.sync();
                }
                return;
            }
            if !progress {
                let t = self.tbs.iter().position(|t| t.pc < t.ops.len()).expect("some block is pending");
                let why = match self.step(t) {
                    Outcome::Blocked(why) => why,
                    Outcome::Done => "?".into(),
                };
                let tb = &self.tbs[t];
                let stuck = self.tbs.iter().filter(|t| t.pc < t.ops.len()).count();
                self.problems.clear();
                self.problem(format!(
                    "deadlock: rank {} thread block {} ops[{}] {} forever ({stuck} thread blocks stuck)",
                    tb.rank, tb.local, tb.pc, why
                ));
                return;
            }
        }
    }

    /// The spans of `refs` for the op of thread block `t` (tbg-sliced).
    fn spans(&self, t: usize, o: &Op, refs: &[Ref]) -> Vec<Vec<Span>> {
        let tb = &self.tbs[t];
        let g = &self.p.gpus[tb.rank];
        let tbdef = &g.threadblocks[tb.local];
        refs.iter()
            .map(|rf| {
                let (index, size) = rf.span();
                let targets: Vec<(usize, Buf)> = match *rf {
                    Ref::Local { buf, .. } => vec![(tb.rank, buf)],
                    Ref::Remote { buffer_id, .. } => {
                        let rb = &g.remote_buffers[tbdef.remote_list(o.chan)[buffer_id]];
                        vec![(rb.rank, rb.buf)]
                    }
                    Ref::Switch { channel, .. } => {
                        let (buf, group) = g.switch_channels()[tbdef.channel_list(Chan::Switch)[channel]];
                        group.iter().map(|&r| (r, buf)).collect()
                    }
                };
                let (mut start, mut len) = (index * self.l, size * self.l);
                if let Some((id, s)) = o.tbg {
                    len /= s;
                    start += id * len;
                }
                targets.into_iter().map(|(rank, buf)| Span { rank, buf, start, len }).collect()
            })
            .collect()
    }

    fn ordered(&self, t: usize, a: &Access) -> bool {
        if a.tb == t {
            a.epoch < self.tbs[t].epoch || a.op == self.op_seq
        } else {
            self.tbs[t].vc[a.tb] > a.epoch
        }
    }

    fn where_(&self, s: &Span, u: usize) -> String {
        format!("rank {} {} chunk {}", s.rank, s.buf.code(), (s.start + u) / self.l)
    }

    fn who(&self, a: &Access) -> String {
        let tb = &self.tbs[a.tb];
        format!("rank {} thread block {}", tb.rank, tb.local)
    }

    /// Read unit `u` of span `s` (`packets`: as LL packets). None: blocked on a packet.
    fn read(&mut self, t: usize, s: &Span, u: usize, packets: bool, what: &str) -> Option<Val> {
        let acc = Access { tb: t, epoch: self.tbs[t].epoch, op: self.op_seq };
        let cell = self.cell(s.rank, s.buf, s.start + u)?.clone();
        if packets {
            return cell.packet.then_some(cell.val);
        }
        if cell.packet {
            self.problem(format!("{what} reads LL packets in {} as plain data", self.where_(s, u)));
        }
        if let Some(w) = cell.write.filter(|w| !self.ordered(t, w)) {
            self.problem(format!(
                "race: {what} reads {} while {} may still be writing it (no signal/wait or nop orders them)",
                self.where_(s, u),
                self.who(&w)
            ));
        }
        if let Some(c) = self.cell(s.rank, s.buf, s.start + u) {
            c.reads.retain(|r| r.tb != t);
            c.reads.push(acc);
        }
        Some(cell.val)
    }

    fn write(&mut self, t: usize, s: &Span, u: usize, v: Val, packets: bool, what: &str) {
        let acc = Access { tb: t, epoch: self.tbs[t].epoch, op: self.op_seq };
        let Some(cell) = self.cell(s.rank, s.buf, s.start + u).cloned() else { return };
        if !packets {
            let clash = cell.write.iter().chain(cell.reads.iter()).find(|a| !self.ordered(t, a)).copied();
            if let Some(a) = clash {
                self.problem(format!(
                    "race: {what} writes {} while {} may still be accessing it",
                    self.where_(s, u),
                    self.who(&a)
                ));
            }
        }
        if let Some(c) = self.cell(s.rank, s.buf, s.start + u) {
            *c = Cell { val: v, packet: packets, write: Some(acc), reads: Vec::new() };
        }
    }

    fn sum(&mut self, a: Val, b: Val, what: &str) -> Val {
        match (a, b) {
            (Val::Data { pos: p, ranks: x }, Val::Data { pos: q, ranks: y }) => {
                if p != q {
                    self.problem(format!(
                        "{what} adds data of position {} to data of position {} (wrong chunk)",
                        q / self.l,
                        p / self.l
                    ));
                    return Val::Undef;
                }
                if x.iter().zip(&y).any(|(a, b)| a & b != 0) {
                    self.problem(format!(
                        "{what} adds contributions {} and {} of chunk {}: a rank counted twice",
                        ranks_text(&x),
                        ranks_text(&y),
                        p / self.l
                    ));
                }
                Val::Data { pos: p, ranks: x.iter().zip(&y).map(|(a, b)| a | b).collect() }
            }
            _ => {
                self.problem(format!("{what} reduces data that was never written"));
                Val::Undef
            }
        }
    }

    fn channel_key(&self, t: usize, o: &Op, i: usize, sending: bool) -> ChannelKey {
        let tb = &self.tbs[t];
        let g = &self.p.gpus[tb.rank];
        let c = g.threadblocks[tb.local].channel_list(o.chan)[o.channel_ids[i]];
        let peers = g.peer_channels(o.chan);
        let peer = peers[c];
        let j = peers[..c].iter().filter(|&&x| x == peer).count();
        if sending {
            (o.chan, tb.rank, peer, j)
        } else {
            (o.chan, peer, tb.rank, j)
        }
    }

    fn signal(&mut self, t: usize, o: &Op, relaxed: bool) {
        let clock = (!relaxed).then(|| self.tbs[t].snapshot(t));
        for i in 0..o.channel_ids.len() {
            let key = self.channel_key(t, o, i, true);
            self.channels.entry(key).or_default().push_back(clock.clone());
        }
    }

    fn step(&mut self, t: usize) -> Outcome {
        self.op_seq += 1;
        let o = self.tbs[t].ops[self.tbs[t].pc].clone();
        let (rank, local) = (self.tbs[t].rank, self.tbs[t].local);
        let what = format!("rank {rank} thread block {local} {}", o.code.name());
        match o.code {
            Code::Nop => self.tbs[t].sync(),
            Code::Flush => {}
            Code::Signal | Code::RelaxedSignal => self.signal(t, &o, o.code == Code::RelaxedSignal),
            Code::Wait | Code::RelaxedWait => {
                let keys: Vec<_> = (0..o.channel_ids.len()).map(|i| self.channel_key(t, &o, i, false)).collect();
                if let Some(k) = keys.iter().find(|k| self.channels.get(k).is_none_or(VecDeque::is_empty)) {
                    return Outcome::Blocked(format!("waits on its {} channel from rank {}", k.0.code(), k.1));
                }
                for k in keys {
                    let clock = self.channels.get_mut(&k).and_then(VecDeque::pop_front).flatten();
                    if let (Some(c), Code::Wait) = (clock, o.code) {
                        join(&mut self.tbs[t].pending, &c);
                    }
                }
            }
            Code::SemRelease => {
                let clock = self.tbs[t].snapshot(t);
                for &s in &o.semaphore_ids {
                    self.sems[rank][s].push_back(Some(clock.clone()));
                }
            }
            Code::SemAcquire => {
                if let Some(&s) = o.semaphore_ids.iter().find(|&&s| self.sems[rank][s].is_empty()) {
                    return Outcome::Blocked(format!("acquires semaphore {s}"));
                }
                for &s in &o.semaphore_ids {
                    if let Some(Some(c)) = self.sems[rank][s].pop_front() {
                        join(&mut self.tbs[t].pending, &c);
                    }
                }
            }
            Code::Barrier => {
                let (id, count) = o.barrier.unwrap_or((0, 1));
                let entry = self.barriers.entry((rank, id)).or_default();
                if let Some(c) = entry.1.remove(&t) {
                    let tb = &mut self.tbs[t];
                    join(&mut tb.vc, &c);
                    return Outcome::Done;
                }
                if !entry.0.iter().any(|(x, _)| *x == t) {
                    self.tbs[t].sync();
                    let snap = self.tbs[t].snapshot(t);
                    let entry = self.barriers.entry((rank, id)).or_default();
                    entry.0.push((t, snap));
                    if entry.0.len() >= count {
                        let arrived = std::mem::take(&mut entry.0);
                        let mut all = Vec::new();
                        for (_, c) in &arrived {
                            join(&mut all, c);
                        }
                        for (x, _) in arrived {
                            entry.1.insert(x, all.clone());
                        }
                        return self.step_again(t);
                    }
                }
                return Outcome::Blocked(format!("waits at barrier {id} for {count} thread blocks"));
            }
            _ => return self.data(t, &o, &what),
        }
        Outcome::Done
    }

    /// Re-run the current op (a barrier that just filled releases its own arrival too).
    fn step_again(&mut self, t: usize) -> Outcome {
        self.step(t)
    }

    fn data(&mut self, t: usize, o: &Op, what: &str) -> Outcome {
        let src = self.spans(t, o, &o.src);
        let dst = self.spans(t, o, &o.dst);
        let len = src.iter().chain(&dst).flatten().map(|s| s.len).next().unwrap_or(0);
        if src.iter().chain(&dst).flatten().any(|s| s.len != len) {
            self.problem(format!("{what}: buffers of different sizes in one op"));
            return Outcome::Done;
        }
        let need = |k: usize, d: usize| src.len() < k || dst.len() < d;
        use Code::*;
        // (source groups read as packets?, how many dst entries are local results)
        let packets_in: &[bool] = match o.code {
            ReadPutPackets | UnpackPackets => &[true],
            ReducePackets | ReduceSendPackets | ReduceCopyPackets | ReduceCopySendPackets => &[false, true],
            _ => &[false],
        };
        if need(1, 1) {
            self.problem(format!("{what}: needs a source and a destination"));
            return Outcome::Done;
        }
        // Packet reads block until the flag arrives.
        for (k, group) in src.iter().enumerate() {
            let pk = *packets_in.get(k).unwrap_or(packets_in.last().unwrap_or(&false));
            if pk {
                for s in group {
                    for u in 0..len {
                        let ready = self.cell(s.rank, s.buf, s.start + u).is_some_and(|c| c.packet);
                        if !ready {
                            return Outcome::Blocked(format!(
                                "reads LL packets in {} that never arrive",
                                self.where_(s, u)
                            ));
                        }
                    }
                }
            }
        }
        if o.code == Get {
            for (s, d) in src.iter().zip(&dst) {
                if s[0].start != d[0].start {
                    self.problem(format!(
                        "{what}: handleGet addresses the local buffer with the remote offset; \
                         src and dst indexes must be equal"
                    ));
                }
            }
        }
        if matches!(o.code, Put | PutWithSignal | PutWithSignalAndFlush) {
            let b0 = o.src.first().map(|r| match r {
                Ref::Local { buf, .. } => Some(*buf),
                _ => None,
            });
            if o.src.iter().any(|r| {
                Some(match r {
                    Ref::Local { buf, .. } => Some(*buf),
                    _ => None,
                }) != b0
            }) {
                self.problem(format!("{what}: handlePut reads every source from src_buff[0]'s buffer type"));
            }
        }
        for u in 0..len {
            let read = |m: &mut Self, s: &Span, pk: bool| m.read(t, s, u, pk, what);
            match o.code {
                Copy
                | Put
                | PutWithSignal
                | PutWithSignalAndFlush
                | Get
                | PutPackets
                | ReadPutPackets
                | CopyPackets
                | UnpackPackets => {
                    let pk_in = matches!(o.code, ReadPutPackets | UnpackPackets);
                    let pk_out = matches!(o.code, PutPackets | ReadPutPackets | CopyPackets);
                    for (i, d) in dst.iter().enumerate() {
                        let s = src[i.min(src.len() - 1)][0];
                        let v = read(self, &s, pk_in).unwrap_or(Val::Undef);
                        for ds in d {
                            self.write(t, ds, u, v.clone(), pk_out, what);
                        }
                    }
                }
                Reduce
                | ReduceSend
                | ReadReduce
                | ReadReduceSend
                | ReducePackets
                | ReduceSendPackets
                | ReduceCopyPackets
                | ReduceCopySendPackets
                | MultiLoadReduceStore => {
                    let pk_rest =
                        matches!(o.code, ReducePackets | ReduceSendPackets | ReduceCopyPackets | ReduceCopySendPackets);
                    let mut acc: Option<Val> = None;
                    for (k, group) in src.iter().enumerate() {
                        for s in group {
                            let v = read(self, s, k > 0 && pk_rest).unwrap_or(Val::Undef);
                            acc = Some(match acc {
                                None => v,
                                Some(a) => self.sum(a, v, what),
                            });
                        }
                    }
                    let v = acc.unwrap_or(Val::Undef);
                    for (i, d) in dst.iter().enumerate() {
                        let send =
                            matches!(o.code, ReduceSend | ReadReduceSend | ReduceSendPackets | ReduceCopySendPackets);
                        let copy_pkt = matches!(o.code, ReduceCopyPackets | ReduceCopySendPackets);
                        let pk = match i {
                            0 => false,
                            1 if copy_pkt => true,
                            _ => matches!(o.code, ReduceSendPackets | ReduceCopySendPackets),
                        };
                        let wanted = i == 0 || o.code == MultiLoadReduceStore || send || (i == 1 && copy_pkt);
                        if wanted {
                            for ds in d {
                                self.write(t, ds, u, v.clone(), pk, what);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if matches!(o.code, PutWithSignal | PutWithSignalAndFlush) {
            // The proxy puts, then signals (FIFO): the signal covers the put.
            self.tbs[t].epoch += 1;
            self.signal(t, o, false);
        }
        Outcome::Done
    }

    fn postcondition(&mut self) {
        let n = self.n;
        let all = bits_all(n);
        // Each rank's end: its blocks' clocks after their last sync.
        let mut ends: Vec<Vec<u32>> = vec![vec![0; self.tbs.len()]; n];
        for (i, tb) in self.tbs.iter().enumerate() {
            let snap = tb.snapshot(i);
            join(&mut ends[tb.rank], &snap);
        }
        for (r, end) in ends.iter().enumerate() {
            let oc = self.chunks(r, Buf::Output) * self.l;
            let ic = self.chunks(r, Buf::Input) * self.l;
            for u in 0..oc {
                let want = match self.p.collective.as_str() {
                    "allgather" => Val::Data { pos: u, ranks: bits_one(n, u / ic.max(1)) },
                    "reducescatter" => Val::Data { pos: r * oc + u, ranks: all.clone() },
                    _ => Val::Data { pos: u, ranks: all.clone() },
                };
                let Some(cell) = self.cell(r, Buf::Output, u).cloned() else { continue };
                let chunk = u / self.l;
                if cell.packet {
                    self.problem(format!("rank {r} output chunk {chunk} holds LL packets, not data"));
                } else if cell.val != want {
                    let got = match &cell.val {
                        Val::Undef => "nothing".to_string(),
                        Val::Data { pos, ranks } => {
                            format!("chunk {} summed over ranks {}", pos / self.l, ranks_text(ranks))
                        }
                    };
                    let expected = match &want {
                        Val::Data { pos, ranks } => {
                            format!("chunk {} summed over ranks {}", pos / self.l, ranks_text(ranks))
                        }
                        Val::Undef => String::new(),
                    };
                    self.problem(format!("rank {r} output chunk {chunk} holds {got}, expected {expected}"));
                } else if let Some(w) = cell.write.filter(|w| end[w.tb] <= w.epoch && self.tbs[w.tb].rank != r) {
                    self.problem(format!(
                        "rank {r} can finish before {} writes its output chunk {chunk} (no signal reaches rank {r} after it)",
                        self.who(&w)
                    ));
                }
            }
        }
    }
}
