//! Executing one step: clocks first (so the race checks see the step's causality), then
//! the data: read, receive, combine, write, send.

use super::clock::{merge, At, Clock, Now};
use super::machine::{Machine, Message};
use super::memory::{cell_name, Cell, Value};
use crate::msccl::model::{Buf, Step, StepType};

impl<'p> Machine<'p> {
    /// Run step `st` (the next one) of thread block `u`; its blocker must be clear.
    pub fn exec(&mut self, u: usize, st: &'p Step) -> Result<(), String> {
        let k = self.tbs[u].pc;
        let me: At = (u as u32, k as u32);
        if let Some((d, need)) = self.dep(u, st)? {
            if let Some(c) = self.dep_clock(d, need - 1).cloned() {
                merge(&mut self.tbs[u].vc, &c);
            }
        }
        if self.is_self_copy(u, st) {
            return self.finish(u, st, k, Vec::new());
        }
        let got = if st.kind.receives() { Some(self.receive(u, k, st.cnt)?) } else { None };
        let src = match st.kind.reads_src() {
            true => self.read(me, st.srcbuf, st.srcoff, st.cnt, src_verb(st.kind))?,
            false => Vec::new(),
        };
        let out = match (st.kind, got) {
            (StepType::Send | StepType::Copy, _) => src,
            (StepType::Recv | StepType::RecvCopySend, Some(got)) => got,
            (StepType::RecvReduceSend | StepType::RecvReduceCopy | StepType::RecvReduceCopySend, Some(got)) => {
                self.add_all(me, &src, &got)
            }
            (StepType::LocalReduce, _) => {
                let dst = self.read(me, st.dstbuf, st.dstoff, st.cnt, "reduces into")?;
                self.add_all(me, &dst, &src)
            }
            _ => Vec::new(),
        };
        if st.kind.writes_dst() {
            self.write(me, st.dstbuf, st.dstoff, out.iter().cloned())?;
        }
        self.finish(u, st, k, out)
    }

    /// A copy of chunks onto themselves (in-place aliasing): changes nothing, so it is
    /// neither a read nor a write (concurrent readers see the same bytes either way).
    fn is_self_copy(&self, u: usize, st: &Step) -> bool {
        let (rank, l) = (self.tbs[u].rank, &self.layout);
        st.kind == StepType::Copy && l.cell(rank, st.srcbuf, st.srcoff) == l.cell(rank, st.dstbuf, st.dstoff)
    }

    /// Complete step `k` of `u`: advance, publish the clock, send `out` if the step sends.
    fn finish(&mut self, u: usize, st: &Step, k: usize, out: Vec<Cell>) -> Result<(), String> {
        let t = &mut self.tbs[u];
        t.pc += 1;
        let clock = Clock::snapshot(&t.vc, self.comp[u], t.pc as u32);
        let from = (t.rank, t.tb.id, k);
        self.steps_executed += 1;
        if st.kind.sends() {
            self.send(u, Message { vals: out, clock: clock.clone(), from });
        }
        if let Ok(i) = self.dep_clocks[u].binary_search_by_key(&k, |d| d.0) {
            self.dep_clocks[u][i].1 = Some(clock);
        }
        Ok(())
    }

    /// Pop the head message of `u`'s receive connection, merge its clock, and return its
    /// values resized to `cnt` (a size mismatch is reported).
    fn receive(&mut self, u: usize, k: usize, cnt: usize) -> Result<Vec<Cell>, String> {
        let c = self.tbs[u].recv_conn.ok_or("receive without a recv peer")?;
        let m = self.conns[c].msgs.pop_front().ok_or("receive without a message")?;
        for w in std::mem::take(&mut self.conns[c].send_waiters) {
            self.wake(w);
        }
        merge(&mut self.tbs[u].vc, &m.clock);
        let mut vals = m.vals;
        if vals.len() != cnt {
            let (g, t, s) = m.from;
            let line = format!(
                "{} receives {} but the message from gpu {g} tb {t} step {s} carries {}",
                self.at(u, k),
                chunks(cnt),
                vals.len()
            );
            self.wrong.push(line);
            vals.resize(cnt, Cell::Bad);
        }
        Ok(vals)
    }

    fn send(&mut self, u: usize, m: Message) {
        let Some(c) = self.tbs[u].send_conn else { return };
        self.conns[c].msgs.push_back(m);
        self.messages += 1;
        for w in std::mem::take(&mut self.conns[c].recv_waiters) {
            self.wake(w);
        }
    }

    /// Read `cnt` chunks of `buf` from `off` for step `me`, checking races; an empty cell is
    /// reported (as "`me` `verb` input chunk 3, which holds nothing") and read as `Bad`.
    fn read(&mut self, me: At, buf: Buf, off: i64, cnt: usize, verb: &str) -> Result<Vec<Cell>, String> {
        let (u, rank) = (me.0 as usize, self.tbs[me.0 as usize].rank);
        let mut vals = Vec::with_capacity(cnt);
        for j in 0..cnt {
            let (i, name) = self.locate(rank, buf, off, j)?;
            let now = Now { me, vc: &self.tbs[u].vc, comp: &self.comp };
            if let Some(other) = self.hist[rank][i].read(&now) {
                self.race(rank, &name, (other, true), (me, false));
            }
            let v = self.mem[rank][i].clone();
            if v == Cell::Empty {
                let line = format!("{} {verb} {name}, which holds nothing", self.at(u, me.1 as usize));
                self.wrong.push(line);
            }
            vals.push(if v == Cell::Empty { Cell::Bad } else { v });
        }
        Ok(vals)
    }

    fn write(&mut self, me: At, buf: Buf, off: i64, vals: impl Iterator<Item = Cell>) -> Result<(), String> {
        let (u, rank) = (me.0 as usize, self.tbs[me.0 as usize].rank);
        for (j, v) in vals.enumerate() {
            let (i, name) = self.locate(rank, buf, off, j)?;
            let now = Now { me, vc: &self.tbs[u].vc, comp: &self.comp };
            if let Some((other, wrote)) = self.hist[rank][i].write(&now) {
                self.race(rank, &name, (other, wrote), (me, true));
            }
            self.mem[rank][i] = v;
        }
        Ok(())
    }

    /// Cell index and name of chunk `off + j` of `buf` at `rank`.
    fn locate(&self, rank: usize, buf: Buf, off: i64, j: usize) -> Result<(usize, String), String> {
        let o = off + j as i64;
        let i =
            self.layout.cell(rank, buf, o).ok_or_else(|| format!("rank {rank} {}[{o}] out of bounds", buf.letter()))?;
        Ok((i, cell_name(buf, o as usize)))
    }

    fn race(&mut self, rank: usize, name: &str, (a, a_writes): (At, bool), (b, b_writes): (At, bool)) {
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
        let (rank, at) = (self.tbs[me.0 as usize].rank, self.at(me.0 as usize, me.1 as usize));
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
    fn short(&self, (u, k): At) -> String {
        let (u, k) = (u as usize, k as usize);
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
