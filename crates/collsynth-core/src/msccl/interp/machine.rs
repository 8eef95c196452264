//! The interpreter's state and scheduler: thread blocks, FIFO connections, and a worklist
//! of thread blocks whose blocking condition may have changed.

use super::clock::{Clock, History, Vc, NONE};
use super::memory::{Cell, Layout};
use super::{Aliasing, Lines};
use crate::msccl::model::{Program, Step, ThreadBlock};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// One thread block while running.
pub(super) struct Tb<'p> {
    pub rank: usize,
    pub tb: &'p ThreadBlock,
    /// Next step to run (= steps completed).
    pub pc: usize,
    pub vc: Vc,
    pub send_conn: Option<usize>,
    pub recv_conn: Option<usize>,
}

pub(super) struct Message {
    pub vals: Vec<Cell>,
    pub clock: Clock,
    /// (rank, thread block, step) of the send.
    pub from: (usize, usize, usize),
}

/// The FIFO connection (from rank, to rank, channel).
#[derive(Default)]
pub(super) struct Conn {
    pub msgs: VecDeque<Message>,
    pub recv_waiters: Vec<usize>,
    pub send_waiters: Vec<usize>,
}

/// Why a thread block cannot run its next step.
pub(super) enum Block {
    /// Needs thread block `tb` (global id) to have completed `need` steps.
    Dep {
        tb: usize,
        need: usize,
    },
    Data(usize),
    Slot(usize),
}

pub(super) struct Machine<'p> {
    pub layout: Layout,
    pub slots: Option<usize>,
    pub tbs: Vec<Tb<'p>>,
    /// Global id of thread block 0 of each rank.
    pub first_tb: Vec<usize>,
    pub conns: Vec<Conn>,
    pub mem: Vec<Vec<Cell>>,
    pub hist: Vec<Vec<History>>,
    /// `comp[t]`: vector-clock component of thread block t (clock::NONE if alone on its GPU).
    pub comp: Vec<u32>,
    /// `dep_clocks[t]`: (step, its clock once completed) for the steps of t some step
    /// depends on, sorted by step.
    pub dep_clocks: Vec<Vec<(usize, Option<Clock>)>>,
    /// `dep_waiters[t]`: (steps of t needed, waiting tb).
    dep_waiters: Vec<Vec<(usize, usize)>>,
    queue: VecDeque<usize>,
    queued: Vec<bool>,
    pub races: Lines,
    pub wrong: Lines,
    pub steps_executed: usize,
    pub messages: usize,
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
    pub fn new(p: &'p Program, aliasing: Aliasing, slots: Option<usize>) -> Result<Machine<'p>, String> {
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
        let zero: Vc = Rc::new(vec![0; comp.iter().filter(|&&c| c != NONE).count()]);
        let (mut tbs, mut conn_ids) = (Vec::with_capacity(total), HashMap::new());
        let mut conn = |from: usize, to: usize, chan: usize| {
            let k = conn_ids.len();
            *conn_ids.entry((from, to, chan)).or_insert(k)
        };
        for (rank, rank_tbs) in by_rank.iter().enumerate() {
            for &tb in rank_tbs {
                let send = peer(tb.send, rank, p.ngpus, "send")?.map(|q| conn(rank, q, tb.chan));
                let recv = peer(tb.recv, rank, p.ngpus, "recv")?.map(|q| conn(q, rank, tb.chan));
                let vc = Rc::clone(&zero);
                tbs.push(Tb { rank, tb, pc: 0, vc, send_conn: send, recv_conn: recv });
            }
        }
        let mem: Vec<Vec<Cell>> = (0..p.ngpus).map(|r| layout.initial(r)).collect();
        let mut m = Machine {
            hist: mem.iter().map(|cells| vec![History::default(); cells.len()]).collect(),
            mem,
            layout,
            slots: slots.map(|k| k.max(1)),
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
        targets.dedup();
        targets.into_iter().for_each(|(t, k)| self.dep_clocks[t].push((k, None)));
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

    /// The dependency of step `st` of thread block `u`: (global target, steps it must complete).
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

    /// The clock thread block `t` published when it completed step `k` (if it did).
    pub fn dep_clock(&self, t: usize, k: usize) -> Option<&Clock> {
        let v = &self.dep_clocks[t];
        v.binary_search_by_key(&k, |d| d.0).ok().and_then(|i| v[i].1.as_ref())
    }

    /// Run until every thread block is done or none can move; Err on an inconsistency.
    pub fn run(&mut self) -> Result<(), String> {
        while let Some(u) = self.queue.pop_front() {
            self.queued[u] = false;
            let tb: &'p ThreadBlock = self.tbs[u].tb;
            while let Some(st) = tb.steps.get(self.tbs[u].pc) {
                match self.blocker(u, st)? {
                    Some(b) => {
                        self.park(u, b);
                        break;
                    }
                    None => self.exec(u, st)?,
                }
            }
            self.wake_dep_waiters(u);
        }
        Ok(())
    }

    /// Why step `st` of `u` cannot start now (None: it can).
    pub fn blocker(&self, u: usize, st: &Step) -> Result<Option<Block>, String> {
        if let Some((tb, need)) = self.dep(u, st)? {
            if self.tbs[tb].pc < need {
                return Ok(Some(Block::Dep { tb, need }));
            }
        }
        if let (true, Some(c)) = (st.kind.receives(), self.tbs[u].recv_conn) {
            if self.conns[c].msgs.is_empty() {
                return Ok(Some(Block::Data(c)));
            }
        }
        if let (true, Some(c), Some(k)) = (st.kind.sends(), self.tbs[u].send_conn, self.slots) {
            if self.conns[c].msgs.len() >= k {
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
        let pc = self.tbs[t].pc;
        let mut waiters = std::mem::take(&mut self.dep_waiters[t]);
        waiters.retain(|&(need, w)| {
            if need <= pc {
                self.wake(w);
            }
            need > pc
        });
        self.dep_waiters[t] = waiters;
    }

    /// The thread blocks that did not finish: one line per head step with what it waits for.
    pub fn stuck(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (u, t) in self.tbs.iter().enumerate() {
            let Some(st) = t.tb.steps.get(t.pc) else { continue };
            let why = match self.blocker(u, st) {
                Ok(Some(Block::Data(_))) => "waits for data".to_string(),
                Ok(Some(Block::Slot(_))) => "waits for a free slot".to_string(),
                Ok(Some(Block::Dep { tb, need })) => self.dep_wait(tb, need),
                Ok(None) | Err(_) => "could run (scheduler stopped)".to_string(),
            };
            out.push(format!("{} {why}", self.describe(u, t.pc)));
        }
        out
    }

    fn dep_wait(&self, tb: usize, need: usize) -> String {
        let t = &self.tbs[tb];
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
