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
//! Connection buffers are counted as the runtimes count them (`docs/msccl.md`, "Connection
//! buffers", has the source references): a step of `cnt` chunks is ceil(cnt / m) send or
//! receive calls, m = maxAllowedCount; a Simple call is 2 slices and a connection holds 4
//! (2 calls), an LL or LL128 call is 1 slice and a connection holds 8. Every slice of a step
//! that receives needs its data and every slice of a step that sends needs room, so a step
//! can stop midway; its dependency flag is published when all its calls are done. With
//! m = 1 the runtime loops over slices of the buffer with no barrier, so the program runs
//! `iterations` times, interleaved, on shared connections and each on its own copy of the
//! buffers.
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
mod tests;

use super::model::{connection_slots, Program, Protocol, MAX_COUNT};
use crate::ir::{Collective, Router};
use crate::rational::Rat;
use crate::topology::Topology;
use machine::{Calls, Machine};
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

impl Aliasing {
    /// First chunk of `rank`'s input and output views in the caller's memory, each as (in the
    /// receive buffer?, chunk): out of place the input is the send buffer and the output the
    /// receive buffer; in place both are the one buffer, where NCCL puts allgather's input at
    /// `recvbuff + rank*count` and reduce-scatter's output at `sendbuff + rank*count`. The one
    /// statement of this rule, used by the interpreter and the MPI plan compiler.
    pub fn view_bases(self, coll: Collective, rank: usize, lens: (usize, usize)) -> ((bool, usize), (bool, usize)) {
        let (in_len, out_len) = lens;
        match (self, coll) {
            (Aliasing::OutOfPlace, _) => ((false, 0), (true, 0)),
            (Aliasing::InPlace, Collective::Allgather) => ((true, rank * in_len), (true, 0)),
            (Aliasing::InPlace, Collective::ReduceScatter) => ((true, 0), (true, rank * out_len)),
            (Aliasing::InPlace, _) => ((true, 0), (true, 0)),
        }
    }
}

/// Logical chunk counts of the input and output buffers: from nchunksperloop, since a
/// generator may declare 0 for a buffer it reaches only through the in-place alias.
pub fn logical_lens(p: &Program) -> (usize, usize) {
    let share = |c: Collective| if p.collective == c { p.ngpus.max(1) } else { 1 };
    (p.nchunksperloop / share(Collective::Allgather), p.nchunksperloop / share(Collective::ReduceScatter))
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

/// The runtime's connection buffers for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buffers {
    pub proto: Protocol,
    /// maxAllowedCount: chunks per send/receive call (at least 1).
    pub max_count: usize,
    /// Interleaved iterations of the runtime's loop over the buffer (at least 1).
    pub iterations: usize,
}

impl Buffers {
    /// What the runtime does for a buffer size that gives maxAllowedCount `m`: several
    /// iterations of the buffer loop happen only when m = 1 (`docs/msccl.md`), and we run
    /// `ITERATIONS` of them then.
    pub fn at(proto: Protocol, m: usize) -> Buffers {
        Buffers { proto, max_count: m.max(1), iterations: if m <= 1 { ITERATIONS } else { 1 } }
    }
    /// Slices per call: Simple moves a call in 2 slices of 2 of the connection's 8 NCCL
    /// steps, LL and LL128 in one step.
    pub fn slices_per_call(&self) -> usize {
        match self.proto {
            Protocol::Simple => 2,
            Protocol::LL | Protocol::LL128 => 1,
        }
    }
    fn calls(&self) -> Calls {
        let slices_per_call = self.slices_per_call();
        Calls {
            max_count: self.max_count.max(1),
            slices_per_call,
            capacity: Some(connection_slots(self.proto) * slices_per_call),
            iterations: self.iterations.max(1),
        }
    }
    /// "Simple (2 calls per connection), maxAllowedCount 1, 2 iterations".
    pub fn describe(&self) -> String {
        let its =
            if self.iterations == 1 { "1 iteration".to_string() } else { format!("{} iterations", self.iterations) };
        format!(
            "{} ({} calls per connection), maxAllowedCount {}, {its}",
            self.proto.name(),
            connection_slots(self.proto),
            self.max_count
        )
    }
}

/// Iterations of the buffer loop run when maxAllowedCount is 1.
pub const ITERATIONS: usize = 2;

/// "unbounded buffers" or the runtime's buffers.
fn buffers(b: Option<Buffers>) -> String {
    match b {
        None => "unbounded buffers".into(),
        Some(b) => b.describe(),
    }
}

/// Execute `p` under `aliasing` with the runtime's `buffers` (None: unbounded connections,
/// one call per step, one iteration). Never panics: a structurally inconsistent program
/// (bad ids, peers, offsets, chunk counts) yields one line in `wrong`.
pub fn run(p: &Program, aliasing: Aliasing, buffers: Option<Buffers>) -> Outcome {
    run_as(p, aliasing, buffers, true)
}

/// [`run`]; `full` false: only the deadlock verdict (no clocks, races or values: the
/// slices that move do not depend on them), for runs whose other lines `check` would drop.
fn run_as(p: &Program, aliasing: Aliasing, buffers: Option<Buffers>, full: bool) -> Outcome {
    let calls = match buffers {
        Some(b) => b.calls(),
        None => Calls { max_count: usize::MAX, slices_per_call: 1, capacity: None, iterations: 1 },
    };
    let mut m = match Machine::new(p, aliasing, calls) {
        Ok(m) => m,
        Err(e) => return Outcome { wrong: vec![e], ..Outcome::default() },
    };
    m.full = full;
    let result = m.run();
    let mut deadlock = None;
    match result {
        Err(e) => m.wrong.push(e),
        Ok(()) => {
            let stuck = m.stuck();
            if stuck.is_empty() && full {
                let mut lines = Vec::new();
                for mem in &m.mem {
                    (0..p.ngpus).for_each(|r| m.layout.check_final(r, &mem[r], &mut lines));
                }
                let mut seen = crate::hash::FastSet::default();
                lines.into_iter().filter(|l| seen.insert(l.clone())).for_each(|l| m.wrong.push(l));
            } else if !stuck.is_empty() {
                deadlock = Some(deadlock_line(buffers, &stuck));
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

fn deadlock_line(b: Option<Buffers>, stuck: &[String]) -> String {
    let mut shown = stuck[..stuck.len().min(MAX_STUCK)].join("; ");
    if stuck.len() > MAX_STUCK {
        shown += &format!("; and {} more", stuck.len() - MAX_STUCK);
    }
    format!("deadlock with {}: {shown}", buffers(b))
}

/// The values of maxAllowedCount that `check` runs: one m per distinct vector of call
/// counts ceil(cnt / m) over the program's steps that use a connection (the run depends on
/// m only through those counts, and through the iterations, which differ only at m = 1),
/// from 1 up to the largest `cnt` (every larger m gives one call per step). Ascending.
pub fn distinct_max_counts(p: &Program) -> Vec<usize> {
    let mut cnts: Vec<usize> = p
        .gpus
        .iter()
        .flat_map(|g| &g.tbs)
        .flat_map(|t| &t.steps)
        .filter(|s| s.kind.sends() || s.kind.receives())
        .map(|s| s.cnt.clamp(1, MAX_COUNT))
        .collect();
    cnts.sort_unstable();
    cnts.dedup();
    let top = cnts.last().copied().unwrap_or(1);
    let mut out: Vec<usize> = vec![1];
    let calls = |m: usize| cnts.iter().map(|c| c.div_ceil(m)).collect::<Vec<_>>();
    let mut last = calls(1);
    for m in 2..=top {
        let now = calls(m);
        if now != last {
            out.push(m);
            last = now;
        }
    }
    out
}

/// Run every mode `p` claims (in-place, out-of-place), each with unbounded buffers and with
/// the runtime's buffers for its protocol at every maxAllowedCount of
/// [`distinct_max_counts`], and return every problem prefixed with its mode, e.g.
/// "in-place, unbounded buffers: ..." or "out-of-place: deadlock with Simple (2 calls per
/// connection), maxAllowedCount 1, 2 iterations: ...". Bounded runs add value and race lines
/// only when the unbounded run had none; a deadlock is reported at its smallest m, naming
/// the other m that deadlock. Empty means the program is correct in every claimed mode.
pub fn check(p: &Program) -> Vec<String> {
    check_with(p, false)
}

/// `check(p)`'s first line, or None: what an exporter needs to accept or refuse a program.
/// It stops after the first mode with a problem, and once the first line is known the runs
/// left only decide which maxAllowedCount values deadlock (named in that line).
pub fn check_first(p: &Program) -> Option<String> {
    check_with(p, true).into_iter().next()
}

/// [`check`], or with `first` only as much of it as decides its first line. Runs whose
/// race and value lines `check` drops (after the mode's first such lines, or any run when
/// the unbounded one had problems) only look for a deadlock. The bounded runs go in
/// batches of one per core (`parallel::threads`); the lines do not depend on the batching.
fn check_with(p: &Program, first: bool) -> Vec<String> {
    if !p.inplace && !p.outofplace {
        return vec!["the program claims neither in-place nor out-of-place use".into()];
    }
    let mut out = Vec::new();
    let modes = [(p.inplace, Aliasing::InPlace, "in-place"), (p.outofplace, Aliasing::OutOfPlace, "out-of-place")];
    let ms = distinct_max_counts(p);
    let batch = crate::parallel::threads(usize::MAX);
    for (_, aliasing, mode) in modes.into_iter().filter(|m| m.0) {
        let free = run(p, aliasing, None);
        report(&mut out, mode, &free, None, None);
        if free.deadlock.is_some() || first && !out.is_empty() {
            if first && !out.is_empty() {
                return out;
            }
            continue;
        }
        let (pos, mut deadlocks, mut values) = (out.len(), Vec::new(), free.is_ok());
        for ms in ms.chunks(batch) {
            // Lines still to be reported: value and race lines (the first bounded run with
            // any, when the unbounded run was clean) unless a deadlock already comes first.
            let full = values && (!first || deadlocks.is_empty());
            let runs = crate::parallel::in_ranges(ms.len(), 1, |r| {
                ms[r].iter().map(|&m| (m, run_as(p, aliasing, Some(Buffers::at(p.proto, m)), full))).collect::<Vec<_>>()
            });
            for (m, tight) in runs.into_iter().flatten() {
                if let Some(d) = &tight.deadlock {
                    deadlocks.push((m, d.clone()));
                }
                if full && values {
                    let b = Buffers::at(p.proto, m);
                    report(&mut out, mode, &Outcome { deadlock: None, ..tight }, Some(b), Some(&free));
                    values = out.len() == pos;
                }
            }
        }
        if let Some((_, d)) = deadlocks.first() {
            let mut d = format!("{mode}: {d}");
            if deadlocks.len() > 1 {
                let also: Vec<String> = deadlocks[1..].iter().map(|(m, _)| m.to_string()).collect();
                d += &format!(" (also deadlocks at maxAllowedCount {})", also.join(", "));
            }
            out.insert(pos, d);
        }
        if first && !out.is_empty() {
            return out;
        }
    }
    out
}

/// Append `o`'s problems, skipping those `seen` (the unbounded run) already reported.
fn report(out: &mut Vec<String>, mode: &str, o: &Outcome, b: Option<Buffers>, seen: Option<&Outcome>) {
    if let Some(d) = &o.deadlock {
        if seen.is_none_or(|s| s.deadlock.is_none()) {
            out.push(format!("{mode}: {d}"));
        }
    }
    for line in o.wrong.iter().chain(&o.races) {
        if seen.is_none_or(|s| !s.wrong.contains(line) && !s.races.contains(line)) {
            out.push(format!("{mode}, {}: {line}", buffers(b)));
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
