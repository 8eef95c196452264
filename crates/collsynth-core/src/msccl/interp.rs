//! Symbolic interpreter of an MSCCL program with the runtimes' semantics.
//!
//! Every chunk holds a symbolic value (which logical chunk of the M-sized buffer, summed over
//! which ranks); thread blocks run concurrently, each executing its steps in order, talking
//! through FIFO connections (sender, receiver, channel) that may hold a bounded number of
//! unreceived messages. The run reports a deadlock (with the stuck steps), races between
//! thread blocks of one GPU that no dependency or message orders (vector clocks over all
//! thread blocks), and wrong values (bad reductions, reads of empty chunks, final buffers
//! that do not match the collective).
//!
//! A message is one slice: a step that receives and sends (`rcs`, `rrs`, `rrcs`) starts only
//! when its data has arrived and its outgoing connection has a free slot, as NCCL's
//! primitives wait for both before each slice (so a ring allreduce deadlocks with
//! 1-slice connections).
//!
//! Choices: a dependency (`depid`, `deps`) is satisfied once thread block `depid` has
//! completed step `deps` (`hasdep` is a rule for `rules.rs`, not modeled); broadcast and
//! reduce use `Program::root` (the XML has no root attribute); after a deadlock the final buffers are
//! not checked (they are incomplete by construction). The outcome does not depend on the
//! scheduling order: each connection has one reader and one writer and all waits are
//! monotone, so the program is a Kahn network.

mod clock;
mod machine;
mod memory;
mod step;

#[cfg(test)]
#[path = "interp_tests.rs"]
mod tests;

use super::model::Program;
use crate::ir::Router;
use crate::rational::Rat;
use crate::topology::Topology;
use machine::Machine;
use std::collections::BTreeMap;

/// How the input and output buffers of a call relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Aliasing {
    /// Input, output and scratch are separate memory.
    OutOfPlace,
    /// Input and output overlap as NCCL's in-place calls lay them out: allgather's input is
    /// output chunks `rank*count..`, reduce-scatter's output is input chunks `rank*count..`,
    /// the others share the whole buffer.
    InPlace,
}

/// What one run found. A clean run has no deadlock, no races and nothing wrong.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// One line naming the stuck steps and what each waits for.
    pub deadlock: Option<String>,
    /// One line per raced cell (at most 10, then a summary line).
    pub races: Vec<String>,
    /// Wrong values and inconsistencies, one line each (at most 10, then a summary line).
    pub wrong: Vec<String>,
    pub steps_executed: usize,
    /// Messages sent.
    pub messages: usize,
}

impl Outcome {
    /// No deadlock, no race, nothing wrong.
    pub fn is_ok(&self) -> bool {
        self.deadlock.is_none() && self.races.is_empty() && self.wrong.is_empty()
    }
}

/// Lines shown in full per category; the rest are counted.
const MAX_LINES: usize = 10;
/// Stuck steps named in a deadlock line.
const MAX_STUCK: usize = 8;

/// A capped list of report lines.
pub(super) struct Lines {
    what: &'static str,
    lines: Vec<String>,
    more: usize,
}

impl Lines {
    fn new(what: &'static str) -> Lines {
        Lines { what, lines: Vec::new(), more: 0 }
    }
    fn push(&mut self, line: String) {
        if self.lines.len() < MAX_LINES {
            self.lines.push(line);
        } else {
            self.more += 1;
        }
    }
    fn finish(mut self) -> Vec<String> {
        if self.more > 0 {
            self.lines.push(format!("... and {} more {}", self.more, self.what));
        }
        self.lines
    }
}

/// "unbounded buffers" or "2-slice connections" (a connection holds at least one slice).
fn buffers(slots: Option<usize>) -> String {
    match slots {
        None => "unbounded buffers".into(),
        Some(k) => format!("{}-slice connections", k.max(1)),
    }
}

/// Execute `p` under `aliasing` with connections holding at most `slots` unreceived
/// messages (None: unbounded; `Some(0)` acts as `Some(1)`). Never panics: a structurally
/// inconsistent program (bad ids, peers, offsets, chunk counts) yields one line in `wrong`.
pub fn run(p: &Program, aliasing: Aliasing, slots: Option<usize>) -> Outcome {
    let mut m = match Machine::new(p, aliasing, slots) {
        Ok(m) => m,
        Err(e) => return Outcome { wrong: vec![e], ..Outcome::default() },
    };
    let result = m.run();
    let mut deadlock = None;
    match result {
        Err(e) => m.wrong.push(e),
        Ok(()) => {
            let stuck = m.stuck();
            if stuck.is_empty() {
                let mut lines = Vec::new();
                (0..p.ngpus).for_each(|r| m.layout.check_final(r, &m.mem[r], &mut lines));
                lines.into_iter().for_each(|l| m.wrong.push(l));
            } else {
                deadlock = Some(deadlock_line(slots, &stuck));
            }
        }
    }
    Outcome {
        deadlock,
        races: m.races.finish(),
        wrong: m.wrong.finish(),
        steps_executed: m.steps_executed,
        messages: m.messages,
    }
}

fn deadlock_line(slots: Option<usize>, stuck: &[String]) -> String {
    let mut shown = stuck[..stuck.len().min(MAX_STUCK)].join("; ");
    if stuck.len() > MAX_STUCK {
        shown += &format!("; and {} more", stuck.len() - MAX_STUCK);
    }
    format!("deadlock with {}: {shown}", buffers(slots))
}

/// Run every mode `p` claims (in-place, out-of-place), each with unbounded buffers and with
/// `topo_slots`-slice connections, and return every problem prefixed with its mode, e.g.
/// "in-place, unbounded buffers: ..." or "out-of-place: deadlock with 2-slice connections:
/// ...". The bounded run only adds what the unbounded one did not already report. Empty
/// means the program is correct in every claimed mode.
pub fn check(p: &Program, topo_slots: usize) -> Vec<String> {
    if !p.inplace && !p.outofplace {
        return vec!["the program claims neither in-place nor out-of-place use".into()];
    }
    let mut out = Vec::new();
    let modes = [(p.inplace, Aliasing::InPlace, "in-place"), (p.outofplace, Aliasing::OutOfPlace, "out-of-place")];
    for (_, aliasing, mode) in modes.into_iter().filter(|m| m.0) {
        let free = run(p, aliasing, None);
        let tight = run(p, aliasing, Some(topo_slots));
        report(&mut out, mode, &free, None, None);
        report(&mut out, mode, &tight, Some(topo_slots), Some(&free));
    }
    out
}

/// Append `o`'s problems, skipping those `seen` (the unbounded run) already reported.
fn report(out: &mut Vec<String>, mode: &str, o: &Outcome, slots: Option<usize>, seen: Option<&Outcome>) {
    if let Some(d) = &o.deadlock {
        if seen.is_none_or(|s| s.deadlock.is_none()) {
            out.push(format!("{mode}: {d}"));
        }
    }
    for line in o.wrong.iter().chain(&o.races) {
        if seen.is_none_or(|s| !s.wrong.contains(line) && !s.races.contains(line)) {
            out.push(format!("{mode}, {}: {line}", buffers(slots)));
        }
    }
}

/// Link loads of `p` on `topo`. Each message of `cnt` chunks carries `cnt / nchunksperloop`
/// of M, the nccl-tests size (allgather: the gathered output; reduce-scatter: each rank's
/// whole input; others: the buffer), along the shortest route of [`Router`] (through
/// switches). Returns the load of every link (indexed like `topo.links`, as exact fractions
/// of M) and the bandwidth time max(load / bandwidth) in ns per byte of M, i.e. in
/// 1/(GB/s): multiply by M in bytes to get nanoseconds. The loads are static (every send
/// step once), so they do not depend on aliasing or buffer bounds.
pub fn link_loads(p: &Program, topo: &Topology) -> Result<(Vec<Rat>, Rat), String> {
    if topo.n_ranks() != p.ngpus {
        return Err(format!("the program has {} ranks but the topology {}", p.ngpus, topo.n_ranks()));
    }
    if p.nchunksperloop == 0 {
        return Err("nchunksperloop is 0".into());
    }
    let mut pairs: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for g in &p.gpus {
        for tb in &g.tbs {
            let cnt: usize = tb.steps.iter().filter(|s| s.kind.sends()).map(|s| s.cnt).sum();
            if cnt == 0 {
                continue;
            }
            let to = usize::try_from(tb.send).ok().filter(|&d| d < p.ngpus && d != g.id && g.id < p.ngpus);
            let to = to.ok_or_else(|| format!("gpu {} tb {} sends to invalid peer {}", g.id, tb.id, tb.send))?;
            *pairs.entry((g.id, to)).or_default() += cnt;
        }
    }
    let mut router = Router::new(topo);
    let mut loads = vec![Rat::from_integer(0); topo.links.len()];
    for ((src, dst), cnt) in pairs {
        let share = Rat::new(cnt as i128, p.nchunksperloop as i128);
        for l in router.route(src, dst).map_err(|e| e.to_string())? {
            loads[l] += share;
        }
    }
    let time = loads.iter().zip(&topo.links).map(|(x, l)| x / l.bandwidth).max().unwrap_or_default();
    Ok((loads, time))
}
