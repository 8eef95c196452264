//! Executing one slice of a step. A step makes `Calls::of` send/receive calls, each of
//! `slices_per_call` slices; every slice receives one slice and sends one. The last slice
//! of a call does the call's data work: clocks first (so the race checks see the call's
//! causality), then read, receive, combine, write, and the message it sends.

use super::clock::{merge, At, Clock, Now};
use super::machine::{Machine, Message};
use super::memory::{cell_name, Cell, Value};
use crate::msccl::model::{Buf, Step, StepType};

impl<'p> Machine<'p> {
    /// Run the next slice of thread block `u` (of its current step `st`); its blocker must
    /// be clear.
    pub fn exec_slice(&mut self, u: usize, st: &'p Step) -> Result<(), String> {
        let (sends, receives) = (st.kind.sends(), st.kind.receives());
        let slices = if sends || receives { self.calls.slices_per_call.max(1) } else { 1 };
        if self.tbs[u].call == 0 && self.tbs[u].slice == 0 {
            if let Some((d, need)) = self.dep(u, st)? {
                if let Some(c) = self.take_dep_clock(d, need - 1, self.tbs[u].iter).filter(|_| self.full) {
                    let t = &mut self.tbs[u];
                    merge(&mut t.vc, &mut t.seen, &c);
                }
            }
        }
        if receives {
            let c = self.tbs[u].recv_conn.ok_or("receive without a recv peer")?;
            let unit = self.conns[c].slices.pop_front().ok_or("receive without a slice")?;
            for w in std::mem::take(&mut self.conns[c].send_waiters) {
                self.wake(w);
            }
            self.tbs[u].inbox.extend(unit);
        }
        let last = self.tbs[u].slice + 1 == slices;
        let out = if last { Some(self.exec_call(u, st)?) } else { None };
        self.tbs[u].slice = if last { 0 } else { self.tbs[u].slice + 1 };
        if sends {
            self.messages += usize::from(out.is_some());
            let Some(c) = self.tbs[u].send_conn else { return Err("send without a send peer".into()) };
            self.conns[c].slices.push_back(out);
            for w in std::mem::take(&mut self.conns[c].recv_waiters) {
                self.wake(w);
            }
        }
        Ok(())
    }

    /// The data work of the current call of `u` (chunks `c0..c0+n` of step `st`), which
    /// then counts as done; returns what the call sends.
    fn exec_call(&mut self, u: usize, st: &'p Step) -> Result<Message, String> {
        let t = &self.tbs[u];
        let (k, me): (usize, At) = (t.pc, (u as u32, t.ev));
        let (c0, n) = match self.calls.of(st) {
            1 => (0, st.cnt),
            _ => (t.call * self.calls.max_count, self.calls.max_count.min(st.cnt - t.call * self.calls.max_count)),
        };
        let inbox = std::mem::take(&mut self.tbs[u].inbox);
        if !self.full {
            // Deadlock only: which slices move does not depend on values or clocks.
            return Ok(self.finish_call(u, st, Vec::new()));
        }
        let got = if st.kind.receives() { Some(self.receive(u, k, n, inbox)) } else { None };
        let mut out = Vec::new();
        if !self.is_self_copy(u, st) {
            let (srcoff, dstoff) = (st.srcoff + c0 as i64, st.dstoff + c0 as i64);
            let src = match st.kind.reads_src() {
                true => self.read(me, st.srcbuf, srcoff, n, src_verb(st.kind))?,
                false => Vec::new(),
            };
            out = match (st.kind, got) {
                (StepType::Send | StepType::Copy, _) => src,
                (StepType::Recv | StepType::RecvCopySend, Some(got)) => got,
                (StepType::RecvReduceSend | StepType::RecvReduceCopy | StepType::RecvReduceCopySend, Some(got)) => {
                    self.add_all(me, &src, &got)
                }
                (StepType::LocalReduce, _) => {
                    let dst = self.read(me, st.dstbuf, dstoff, n, "reduces into")?;
                    self.add_all(me, &dst, &src)
                }
                _ => Vec::new(),
            };
            if st.kind.writes_dst() {
                self.write(me, st.dstbuf, dstoff, out.iter().cloned())?;
            }
        }
        Ok(self.finish_call(u, st, out))
    }

    /// A copy of chunks onto themselves (in-place aliasing): changes nothing, so it is
    /// neither a read nor a write (concurrent readers see the same bytes either way).
    fn is_self_copy(&self, u: usize, st: &Step) -> bool {
        let (rank, l) = (self.tbs[u].rank, &self.layout);
        st.kind == StepType::Copy && l.cell(rank, st.srcbuf, st.srcoff) == l.cell(rank, st.dstbuf, st.dstoff)
    }

    /// Count the current call of `u` as done (and its step, after its last call: advance,
    /// publish the dependency clock); returns the message carrying `out`.
    fn finish_call(&mut self, u: usize, st: &Step, out: Vec<Cell>) -> Message {
        let calls = self.calls.of(st);
        let iterations = self.calls.iterations;
        let t = &mut self.tbs[u];
        t.ev += 1;
        let clock = Clock::snapshot(&t.vc, self.comp[u], t.ev);
        let (k, it) = (t.pc, t.iter);
        let from = (t.rank, t.tb.id, k);
        t.call += 1;
        if t.call == calls {
            t.call = 0;
            t.pc += 1;
            if t.pc == t.tb.steps.len() {
                t.pc = 0;
                t.iter = (t.iter + 1).min(iterations);
            }
            self.steps_executed += 1;
            if let Ok(i) = self.dep_clocks[u].binary_search_by_key(&k, |d| d.0) {
                if let Some(slot) = self.dep_clocks[u][i].1.get_mut(it).filter(|_| self.full) {
                    slot.0 = Some(clock.clone());
                }
            }
        }
        Message { vals: out, clock, from }
    }

    /// The chunks the current call of `u` (step `k`) received, `cnt` of them, from the
    /// messages of its slices (one in a consistent program); clocks merged, a size
    /// mismatch reported.
    fn receive(&mut self, u: usize, k: usize, cnt: usize, inbox: Vec<Message>) -> Vec<Cell> {
        let mut vals = Vec::with_capacity(cnt);
        let mut from = None;
        for m in inbox {
            let t = &mut self.tbs[u];
            merge(&mut t.vc, &mut t.seen, &m.clock);
            from.get_or_insert(m.from);
            vals.extend(m.vals);
        }
        if vals.len() != cnt {
            let sender = from.map_or("an empty slice".to_string(), |(g, t, s)| format!("gpu {g} tb {t} step {s}"));
            let line = format!(
                "{} receives {} but the message from {sender} carries {}",
                self.at(u, k),
                chunks(cnt),
                vals.len()
            );
            self.wrong.push(line);
            vals.resize(cnt, Cell::Bad);
        }
        vals
    }

    /// Read `cnt` chunks of `buf` from `off` for step `me`, checking races; an empty cell is
    /// reported (as "`me` `verb` input chunk 3, which holds nothing") and read as `Bad`.
    fn read(&mut self, me: At, buf: Buf, off: i64, cnt: usize, verb: &str) -> Result<Vec<Cell>, String> {
        let (u, rank, it) = (me.0 as usize, self.tbs[me.0 as usize].rank, self.tbs[me.0 as usize].iter);
        let mut vals = Vec::with_capacity(cnt);
        for j in 0..cnt {
            let i = self.locate(rank, buf, off, j)?;
            let now = Now { me, vc: &self.tbs[u].vc, comp: &self.comp };
            if let Some(other) = self.hist[it][rank][i].read(&now) {
                self.race(rank, buf, off + j as i64, (other, true), (me, false));
            }
            let v = self.mem[it][rank][i].clone();
            if v == Cell::Empty {
                let name = cell_name(buf, (off + j as i64) as usize);
                let line = format!("{} {verb} {name}, which holds nothing", self.at(u, self.tbs[u].pc));
                self.wrong.push(line);
            }
            vals.push(if v == Cell::Empty { Cell::Bad } else { v });
        }
        Ok(vals)
    }

    fn write(&mut self, me: At, buf: Buf, off: i64, vals: impl Iterator<Item = Cell>) -> Result<(), String> {
        let (u, rank, it) = (me.0 as usize, self.tbs[me.0 as usize].rank, self.tbs[me.0 as usize].iter);
        for (j, v) in vals.enumerate() {
            let i = self.locate(rank, buf, off, j)?;
            let now = Now { me, vc: &self.tbs[u].vc, comp: &self.comp };
            if let Some((other, wrote)) = self.hist[it][rank][i].write(&now) {
                self.race(rank, buf, off + j as i64, (other, wrote), (me, true));
            }
            self.mem[it][rank][i] = v;
        }
        Ok(())
    }

    /// Cell index of chunk `off + j` of `buf` at `rank` (its name is built only for a report).
    fn locate(&self, rank: usize, buf: Buf, off: i64, j: usize) -> Result<usize, String> {
        let o = off + j as i64;
        self.layout.cell(rank, buf, o).ok_or_else(|| format!("rank {rank} {}[{o}] out of bounds", buf.letter()))
    }

    /// Report a race on chunk `off` of `buf` at `rank`.
    fn race(&mut self, rank: usize, buf: Buf, off: i64, (a, a_writes): (At, bool), (b, b_writes): (At, bool)) {
        let name = cell_name(buf, off as usize);
        let verb = |w: bool| if w { "writes" } else { "reads" };
        let line = format!(
            "race on rank {rank} {name}: {} {} and {} {} without a dependency between them",
            self.short(a),
            verb(a_writes),
            self.short(b),
            verb(b_writes)
        );
        self.races.push(line);
    }

    /// `base[j] + added[j]` for each j (a reduction performed by step `me`).
    fn add_all(&mut self, me: At, base: &[Cell], added: &[Cell]) -> Vec<Cell> {
        base.iter().zip(added).map(|(b, a)| self.add(me, b, a)).collect()
    }

    /// `base + added`: the same chunk, disjoint contributions; otherwise reported, `Bad`.
    fn add(&mut self, me: At, base: &Cell, added: &Cell) -> Cell {
        let (Cell::Val(b), Cell::Val(a)) = (base, added) else { return Cell::Bad };
        let (rank, at) = (self.tbs[me.0 as usize].rank, self.at(me.0 as usize, self.tbs[me.0 as usize].pc));
        if a.chunk != b.chunk {
            self.wrong.push(format!("rank {rank} reduces chunk {} into chunk {} ({at})", a.chunk, b.chunk));
            return Cell::Bad;
        }
        let both = a.contrib.intersection(&b.contrib);
        if !both.is_empty() {
            let line = format!(
                "double reduction: rank {rank} adds chunk {} of ranks {} into a value that already counts {} ({at})",
                a.chunk,
                a.contrib.show(),
                both.show_ranks()
            );
            self.wrong.push(line);
            return Cell::Bad;
        }
        Cell::Val(Value { chunk: a.chunk, contrib: a.contrib.union(&b.contrib) })
    }

    /// "gpu 1 tb 0 step 2".
    fn at(&self, u: usize, k: usize) -> String {
        format!("gpu {} tb {} step {k}", self.tbs[u].rank, self.tbs[u].tb.id)
    }

    /// "gpu 1 tb 0 step 2 (rrc)".
    fn short(&self, (u, ev): At) -> String {
        let (u, k) = (u as usize, self.tbs[u as usize].step_of(ev));
        let kind = self.tbs[u].tb.steps.get(k).map_or("?", |s| s.kind.name());
        format!("{} ({kind})", self.at(u, k))
    }
}

fn src_verb(kind: StepType) -> &'static str {
    match kind {
        StepType::Send => "sends",
        StepType::Copy => "copies",
        _ => "reduces with",
    }
}

fn chunks(n: usize) -> String {
    if n == 1 {
        "1 chunk".into()
    } else {
        format!("{n} chunks")
    }
}
