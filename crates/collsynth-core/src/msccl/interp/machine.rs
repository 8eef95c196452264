//! The interpreter's state and scheduler: thread blocks, FIFO connections, and a worklist
//! of thread blocks whose blocking condition may have changed.

use super::clock::{Clock, History, Seen, Vc, NONE};
use super::memory::{Cell, Layout};
use super::{Aliasing, Lines};
use crate::hash::FastMap as HashMap;
use crate::msccl::model::{Program, Step, ThreadBlock};
use std::collections::VecDeque;

/// One thread block while running: in iteration `iter` of the buffer loop, at step `pc`,
/// with `call` send/receive calls of that step done and `slice` slices of the next one.
pub(super) struct Tb<'p> {
    pub rank: usize,
    pub tb: &'p ThreadBlock,
    pub iter: usize,
    /// Next step to run (= steps of this iteration completed).
    pub pc: usize,
    pub call: usize,
    pub slice: usize,
    /// Events (calls, or steps without peers) completed over all iterations: the thread
    /// block's own vector-clock component, and the second half of an access's `At`.
    pub ev: u32,
    pub vc: Vc,
    pub seen: Seen,
    pub send_conn: Option<usize>,
    pub recv_conn: Option<usize>,
    /// Messages received by the call in progress (one per call in a consistent program).
    pub inbox: Vec<Message>,
    /// `starts[k]`: events of one iteration before step k (last entry: per iteration).
    pub starts: Vec<u32>,
}

impl Tb<'_> {
    /// The last step completed as a flag (iteration, step + 1), ordered like the runtime's
    /// flags (0: none yet).
    pub fn progress(&self) -> u64 {
        match (self.iter, self.pc) {
            (0, 0) => 0,
            (it, 0) => flag(it - 1, self.tb.steps.len()),
            (it, pc) => flag(it, pc),
        }
    }
    /// The step (index in the thread block) that event `ev` belongs to.
    pub fn step_of(&self, ev: u32) -> usize {
        let per = *self.starts.last().unwrap_or(&1);
        let e = if per == 0 { 0 } else { ev % per };
        self.starts.partition_point(|&s| s <= e).saturating_sub(1)
    }
}

/// What the last slice of a call carries: the call's chunks.
pub(super) struct Message {
    pub vals: Vec<Cell>,
    pub clock: Clock,
    /// (rank, thread block, step) of the send.
    pub from: (usize, usize, usize),
}

/// The FIFO connection (from rank, to rank, channel), shared by all iterations: one entry
/// per slice, the last slice of each call carrying its message.
#[derive(Default)]
pub(super) struct Conn {
    pub slices: VecDeque<Option<Message>>,
    pub recv_waiters: Vec<usize>,
    pub send_waiters: Vec<usize>,
}

/// A dependency target's clock in one iteration, and the dependent steps yet to merge it.
pub(super) type DepSlot = (Option<Clock>, usize);

/// Why a thread block cannot run its next slice.
pub(super) enum Block {
    /// Needs thread block `tb` (global id) to reach progress `need` (see `Tb::progress`).
    Dep {
        tb: usize,
        need: u64,
    },
    Data(usize),
    Slot(usize),
}

/// How the runtime moves a step's chunks (see `Buffers` in `interp.rs`), resolved.
#[derive(Debug, Clone, Copy)]
pub(super) struct Calls {
    /// Chunks per call (maxAllowedCount); `usize::MAX`: one call per step.
    pub max_count: usize,
    pub slices_per_call: usize,
    /// Unreceived slices a connection holds; None: unbounded.
    pub capacity: Option<usize>,
    pub iterations: usize,
}

impl Calls {
    /// Calls a step of `st` makes: ceil(cnt / max_count) when it uses a connection (at
    /// least one), one otherwise (a local step's calls are invisible to other blocks).
    pub fn of(&self, st: &Step) -> usize {
        match st.kind.sends() || st.kind.receives() {
            true => st.cnt.div_ceil(self.max_count).max(1),
            false => 1,
        }
    }
}

pub(super) struct Machine<'p> {
    pub layout: Layout,
    pub calls: Calls,
    pub tbs: Vec<Tb<'p>>,
    /// Global id of thread block 0 of each rank.
    pub first_tb: Vec<usize>,
    pub conns: Vec<Conn>,
    /// `mem[iteration][rank]`: each iteration works on its own slice of the buffers.
    pub mem: Vec<Vec<Vec<Cell>>>,
    pub hist: Vec<Vec<Vec<History>>>,
    /// `comp[t]`: vector-clock component of thread block t (clock::NONE if alone on its GPU).
    pub comp: Vec<u32>,
    /// `dep_clocks[t]`: (step, its clock once completed and the steps yet to merge it, per
    /// iteration) for the steps of t some step depends on, sorted by step. A clock is dropped
    /// once its last dependent merged it (clocks are as long as the thread blocks are many).
    pub dep_clocks: Vec<Vec<(usize, Vec<DepSlot>)>>,
    /// `dep_waiters[t]`: (steps of t needed, waiting tb).
    dep_waiters: Vec<Vec<(u64, usize)>>,
    queue: VecDeque<usize>,
    queued: Vec<bool>,
    pub races: Lines,
    pub wrong: Lines,
    /// Track clocks, races and values; false: only which slices move (a deadlock verdict).
    pub full: bool,
    pub steps_executed: usize,
    pub messages: usize,
}

/// The flag of (iteration, steps completed in it), ordered lexicographically.
fn flag(iter: usize, steps: usize) -> u64 {
    ((iter as u64) << 32) | steps.min(u32::MAX as usize) as u64
}

/// `p.gpus` indexed by rank, each with its thread blocks indexed by id.
fn index(p: &Program) -> Result<Vec<Vec<&ThreadBlock>>, String> {
    if p.gpus.len() != p.ngpus {
        return Err(format!("the program has {} gpus but ngpus is {}", p.gpus.len(), p.ngpus));
    }
    let mut by_rank: Vec<Option<Vec<&ThreadBlock>>> = vec![None; p.ngpus];
    for g in &p.gpus {
        let slot = by_rank.get_mut(g.id).ok_or_else(|| format!("gpu id {} is not below ngpus {}", g.id, p.ngpus))?;
        if slot.is_some() {
            return Err(format!("gpu {} appears twice", g.id));
        }
        let mut tbs: Vec<Option<&ThreadBlock>> = vec![None; g.tbs.len()];
        for tb in &g.tbs {
            match tbs.get_mut(tb.id) {
                Some(s @ None) => *s = Some(tb),
                _ => return Err(format!("gpu {}: thread block ids are not 0..{} without repeats", g.id, g.tbs.len())),
            }
        }
        *slot = Some(tbs.into_iter().flatten().collect());
    }
    Ok(by_rank.into_iter().map(|t| t.unwrap_or_default()).collect())
}

/// Vector-clock components: one per thread block that shares its GPU with another.
fn components(by_rank: &[Vec<&ThreadBlock>]) -> Vec<u32> {
    let mut comp = Vec::new();
    let mut next = 0;
    for tbs in by_rank {
        if tbs.len() == 1 {
            comp.push(NONE);
        } else {
            comp.extend(next..next + tbs.len() as u32);
            next += tbs.len() as u32;
        }
    }
    comp
}

/// `-1` or a peer rank other than `rank`.
fn peer(v: i64, rank: usize, n: usize, what: &str) -> Result<Option<usize>, String> {
    match v {
        -1 => Ok(None),
        v if v >= 0 && (v as usize) < n && v as usize != rank => Ok(Some(v as usize)),
        _ => Err(format!("gpu {rank}: {what} peer {v} is not another rank below {n}")),
    }
}

impl<'p> Machine<'p> {
    /// A machine at the initial state of `p`, or the first structural inconsistency.
    pub fn new(p: &'p Program, aliasing: Aliasing, calls: Calls) -> Result<Machine<'p>, String> {
        if p.collective == crate::ir::Collective::Allgatherv {
            return Err("allgatherv is not expressible in MSCCL XML".into());
        }
        let by_rank = index(p)?;
        let mut s_len = vec![0; p.ngpus];
        p.gpus.iter().for_each(|g| s_len[g.id] = g.s_chunks);
        let layout = Layout::new(p, aliasing, s_len)?;
        let first_tb: Vec<usize> = by_rank.iter().scan(0, |n, t| Some(std::mem::replace(n, *n + t.len()))).collect();
        let total = by_rank.iter().map(Vec::len).sum();
        let comp = components(&by_rank);
        let zero = Vc::zeros(comp.iter().filter(|&&c| c != NONE).count());
        let (mut tbs, mut conn_ids) = (Vec::with_capacity(total), HashMap::default());
        let mut conn = |from: usize, to: usize, chan: usize| {
            let k = conn_ids.len();
            *conn_ids.entry((from, to, chan)).or_insert(k)
        };
        for (rank, rank_tbs) in by_rank.iter().enumerate() {
            for &tb in rank_tbs {
                let send = peer(tb.send, rank, p.ngpus, "send")?.map(|q| conn(rank, q, tb.chan));
                let recv = peer(tb.recv, rank, p.ngpus, "recv")?.map(|q| conn(q, rank, tb.chan));
                let vc = zero.clone();
                let starts = std::iter::once(0)
                    .chain(tb.steps.iter().scan(0u32, |n, st| {
                        *n = n.saturating_add(calls.of(st).min(u32::MAX as usize) as u32);
                        Some(*n)
                    }))
                    .collect();
                tbs.push(Tb {
                    rank,
                    tb,
                    iter: 0,
                    pc: 0,
                    call: 0,
                    slice: 0,
                    ev: 0,
                    vc,
                    seen: Seen::default(),
                    send_conn: send,
                    recv_conn: recv,
                    inbox: Vec::new(),
                    starts,
                });
            }
        }
        let mem: Vec<Vec<Cell>> = (0..p.ngpus).map(|r| layout.initial(r)).collect();
        let hist: Vec<Vec<History>> = mem.iter().map(|cells| vec![History::default(); cells.len()]).collect();
        let iterations = calls.iterations.max(1);
        let mut m = Machine {
            hist: vec![hist; iterations],
            mem: vec![mem; iterations],
            layout,
            calls: Calls { iterations, ..calls },
            conns: (0..conn_ids.len()).map(|_| Conn::default()).collect(),
            dep_clocks: vec![Vec::new(); total],
            comp,
            dep_waiters: vec![Vec::new(); total],
            queue: (0..total).collect(),
            queued: vec![true; total],
            first_tb,
            tbs,
            races: Lines::new("races"),
            wrong: Lines::new("wrong values"),
            full: true,
            steps_executed: 0,
            messages: 0,
        };
        m.check_steps()?;
        Ok(m)
    }

    /// Steps are numbered 0.., use their peers, stay in bounds, and name existing thread
    /// blocks as dependencies; registers dependency targets for clock snapshots.
    fn check_steps(&mut self) -> Result<(), String> {
        let mut targets = Vec::new();
        for (u, t) in self.tbs.iter().enumerate() {
            for (k, st) in t.tb.steps.iter().enumerate() {
                let at = format!("gpu {} tb {} step {k}", t.rank, t.tb.id);
                if st.s != k {
                    return Err(format!("{at} is numbered s={}", st.s));
                }
                if st.kind.sends() && t.send_conn.is_none() || st.kind.receives() && t.recv_conn.is_none() {
                    return Err(format!("{at} ({}) needs a peer its thread block does not have", st.kind.name()));
                }
                self.check_range(t.rank, st, &at)?;
                if let Some((d, need)) = self.dep(u, st).map_err(|e| format!("{at}: {e}"))? {
                    targets.push((d, need - 1));
                }
            }
        }
        targets.sort_unstable();
        let iterations = self.calls.iterations;
        for (t, k) in targets {
            match self.dep_clocks[t].last_mut() {
                Some((j, slots)) if *j == k => slots.iter_mut().for_each(|s| s.1 += 1),
                _ => self.dep_clocks[t].push((k, vec![(None, 1); iterations])),
            }
        }
        Ok(())
    }

    /// The chunks a step reads and writes exist (the views are contiguous cell ranges).
    fn check_range(&self, rank: usize, st: &Step, at: &str) -> Result<(), String> {
        let sides = [(st.kind.reads_src(), st.srcbuf, st.srcoff), (st.kind.writes_dst(), st.dstbuf, st.dstoff)];
        for (used, buf, off) in sides {
            let last = off.checked_add(st.cnt as i64 - 1).unwrap_or(-1);
            let cell = |o| self.layout.cell(rank, buf, o);
            if used && st.cnt > 0 && (cell(off).is_none() || cell(last).is_none()) {
                let len = self.layout.len(rank, buf);
                return Err(format!("{at}: {}[{off}..+{}] is outside its {len} chunks", buf.letter(), st.cnt));
            }
        }
        Ok(())
    }

    /// The dependency of step `st` of thread block `u`: (global target, steps it must
    /// complete within one iteration).
    pub fn dep(&self, u: usize, st: &Step) -> Result<Option<(usize, usize)>, String> {
        match (st.depid, st.deps) {
            (-1, _) => Ok(None),
            (d, k) if d >= 0 && k >= 0 => {
                let rank = self.tbs[u].rank;
                let n = self.first_tb.get(rank + 1).unwrap_or(&self.tbs.len()) - self.first_tb[rank];
                if d as usize >= n {
                    return Err(format!("depid {d} is not a thread block of gpu {rank}"));
                }
                Ok(Some((self.first_tb[rank] + d as usize, k as usize + 1)))
            }
            (d, k) => Err(format!("invalid dependency depid={d} deps={k}")),
        }
    }

    /// The dependency of `u`'s current step as (target, its progress needed): the runtime's
    /// flags are (iteration, step) compared lexicographically (`COMPUTE_FLAG`), so step `k`
    /// of the current iteration is done once the target has completed it or any later step.
    fn dep_now(&self, u: usize, st: &Step) -> Result<Option<(usize, u64)>, String> {
        let it = self.tbs[u].iter;
        Ok(self.dep(u, st)?.map(|(t, need)| (t, flag(it, need))))
    }

    /// The clock thread block `t` published when it completed step `k` of iteration `it`,
    /// for one of the steps that depend on it (the last one takes it).
    pub fn take_dep_clock(&mut self, t: usize, k: usize, it: usize) -> Option<Clock> {
        let v = &mut self.dep_clocks[t];
        let i = v.binary_search_by_key(&k, |d| d.0).ok()?;
        let (clock, users) = v[i].1.get_mut(it)?;
        *users = users.saturating_sub(1);
        match users {
            0 => clock.take(),
            _ => clock.clone(),
        }
    }

    /// Run until every thread block is done or none can move; Err on an inconsistency.
    pub fn run(&mut self) -> Result<(), String> {
        while let Some(u) = self.queue.pop_front() {
            self.queued[u] = false;
            while self.slice(u)? {}
            self.wake_dep_waiters(u);
        }
        Ok(())
    }

    /// Run the next slice of `u` if it can; false when `u` is done or parked.
    fn slice(&mut self, u: usize) -> Result<bool, String> {
        let t = &self.tbs[u];
        if t.iter >= self.calls.iterations {
            return Ok(false);
        }
        let tb: &'p ThreadBlock = t.tb;
        let Some(st) = tb.steps.get(t.pc) else { return Ok(false) };
        if let Some(b) = self.blocker(u, st)? {
            self.park(u, b);
            return Ok(false);
        }
        self.exec_slice(u, st)?;
        Ok(true)
    }

    /// Why the next slice of `u` (of step `st`) cannot run now (None: it can). The
    /// dependency is waited for before the step's first call; every slice of a step that
    /// receives needs its data, and every slice of a step that sends needs room.
    pub fn blocker(&self, u: usize, st: &Step) -> Result<Option<Block>, String> {
        let t = &self.tbs[u];
        if t.call == 0 && t.slice == 0 {
            if let Some((tb, need)) = self.dep_now(u, st)? {
                if self.tbs[tb].progress() < need {
                    return Ok(Some(Block::Dep { tb, need }));
                }
            }
        }
        if let (true, Some(c)) = (st.kind.receives(), t.recv_conn) {
            if self.conns[c].slices.is_empty() {
                return Ok(Some(Block::Data(c)));
            }
        }
        if let (true, Some(c), Some(k)) = (st.kind.sends(), t.send_conn, self.calls.capacity) {
            if self.conns[c].slices.len() >= k {
                return Ok(Some(Block::Slot(c)));
            }
        }
        Ok(None)
    }

    fn park(&mut self, u: usize, b: Block) {
        match b {
            Block::Dep { tb, need } => self.dep_waiters[tb].push((need, u)),
            Block::Data(c) => self.conns[c].recv_waiters.push(u),
            Block::Slot(c) => self.conns[c].send_waiters.push(u),
        }
    }

    pub fn wake(&mut self, u: usize) {
        if !self.queued[u] {
            self.queued[u] = true;
            self.queue.push_back(u);
        }
    }

    fn wake_dep_waiters(&mut self, t: usize) {
        let done = self.tbs[t].progress();
        let mut waiters = std::mem::take(&mut self.dep_waiters[t]);
        waiters.retain(|&(need, w)| {
            if need <= done {
                self.wake(w);
            }
            need > done
        });
        self.dep_waiters[t] = waiters;
    }

    /// The thread blocks that did not finish: one line per head step with what it waits for.
    pub fn stuck(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (u, t) in self.tbs.iter().enumerate() {
            if t.iter >= self.calls.iterations {
                continue;
            }
            let Some(st) = t.tb.steps.get(t.pc) else { continue };
            let why = match self.blocker(u, st) {
                Ok(Some(Block::Data(_))) => "waits for data".to_string(),
                Ok(Some(Block::Slot(_))) => "waits for room on its send connection".to_string(),
                Ok(Some(Block::Dep { tb, need })) => self.dep_wait(tb, need),
                Ok(None) | Err(_) => "could run (scheduler stopped)".to_string(),
            };
            let n = self.calls.of(st);
            let mut at = self.describe(u, t.pc);
            if t.call > 0 || t.slice > 0 {
                at += &format!(" call {} of {n}", t.call + 1);
            }
            if self.calls.iterations > 1 {
                at += &format!(" in iteration {}", t.iter);
            }
            out.push(format!("{at} {why}"));
        }
        out
    }

    /// "waits for gpu 0 tb 2 step 3" (of the waiter's iteration, `need` as in `dep_now`).
    fn dep_wait(&self, tb: usize, need: u64) -> String {
        let t = &self.tbs[tb];
        let need = (need & u64::from(u32::MAX)) as usize;
        let target = format!("gpu {} tb {} step {}", t.rank, t.tb.id, need - 1);
        match t.tb.steps.len() {
            1 if need > 1 => format!("waits for {target}, which does not exist (tb {} has 1 step)", t.tb.id),
            n if n < need => format!("waits for {target}, which does not exist (tb {} has {n} steps)", t.tb.id),
            _ => format!("waits for {target}"),
        }
    }

    /// "gpu 0 tb 1 step 3 (rcs from 2 to 1, chan 0)".
    pub fn describe(&self, u: usize, k: usize) -> String {
        let t = &self.tbs[u];
        let Some(st) = t.tb.steps.get(k) else { return format!("gpu {} tb {} step {k}", t.rank, t.tb.id) };
        let mut what = st.kind.name().to_string();
        if st.kind.receives() {
            what += &format!(" from {}", t.tb.recv);
        }
        if st.kind.sends() {
            what += &format!(" to {}", t.tb.send);
        }
        if st.kind.receives() || st.kind.sends() {
            what += &format!(", chan {}", t.tb.chan);
        }
        format!("gpu {} tb {} step {k} ({what})", t.rank, t.tb.id)
    }
}
