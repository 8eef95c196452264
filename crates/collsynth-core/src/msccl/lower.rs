//! Lowering: a verified schedule becomes an MSCCL program that the runtimes accept.
//!
//! Every transfer is a send on its source and a receive on its destination; there is no
//! routing in MSCCL (the runtime's connection between two ranks crosses whatever switches
//! the route does). Deadlock freedom comes from one rule: all thread blocks run their
//! operations in one global order T (a linear extension of the schedule's DAG in which a
//! send comes before its receive), and every dependency points backwards in T. Then the
//! pending operation earliest in T can always run, even with one-slot connections
//! (`docs/msccl.md` has the argument).
//!
//! The value of each (rank, piece) lives at one place at a time: the input buffer while it
//! is the rank's own initial data, then the output buffer if the rank must end with it, or
//! scratch. Accesses to one place are chained in T (a read waits for the last write, a
//! write for the last write and every read since), which is what keeps thread blocks of one
//! GPU race-free and reads exact; the verifier proved those accesses are ordered in the
//! schedule, so the chain changes no value.
//!
//! Scratch slots (the census's partial sum and receive buffer) are places of their own, in
//! scratch, chained like data; a local transfer between two slots is a `cpy` or `re` step
//! on a thread block of its rank without peers (a `re` into a value that is still in the
//! input buffer first copies it to where it will be written, so in-place and out-of-place
//! runs agree).

mod assign;
mod emit;
pub mod grid;

use crate::error::{CollsynthError, Result};
use crate::ir::{transform, Collective, Schedule};
/// Channels a program may have (the runtimes' limit).
pub use crate::msccl::model::MAX_CHANNELS;
use crate::msccl::model::{Program, Protocol, Runtime};
use crate::msccl::rules;
pub use assign::Spread;
pub use grid::MAX_GRID;

/// How to lower (the CLI's `--msccl-runtime`, `--protocol`, `--channels`, `--unfused`,
/// `--pipeline`, `--size-range`).
#[derive(Debug, Clone)]
pub struct Options {
    pub runtime: Runtime,
    pub proto: Protocol,
    /// Exactly this many channels; `None`: the fewest that fit the runtime's limits.
    pub channels: Option<usize>,
    /// `rcs`, `rrs`, `rrcs` where a receive feeds the next send (otherwise only `s`, `r`,
    /// `rrc`, `nop`: what ASTRA-sim's converter reads; such programs are in-place only
    /// when the collective needs a local copy).
    pub fused: bool,
    /// Sub-chunks per piece, so that trees stream within one loop of the runtime.
    pub pipeline: usize,
    /// `minBytes`, `maxBytes`; `None`: the defaults of `default_size_range`.
    pub size_range: Option<(u64, u64)>,
    /// T given outright (every send and receive once, each send before its receive and
    /// every dependency's receive before its dependent): the order a timing chose
    /// (`cost::runtime::order::timed_operations`). `None`: T from the schedule's numbering.
    /// Applies to the schedule as given (no `pipeline`).
    pub order: Option<Vec<Operation>>,
    /// The spread of transfers over channels tried first (then by piece, then by connection,
    /// as without one).
    pub spread: Option<Spread>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            runtime: Runtime::MscclNccl,
            proto: Protocol::Simple,
            channels: None,
            fused: true,
            pipeline: 1,
            size_range: None,
            order: None,
            spread: None,
        }
    }
}

/// Why a lowering failed: the runtime's limits (more channels might help) or anything else.
#[derive(Debug)]
pub(crate) enum Failure {
    Limit(String),
    Other(CollsynthError),
}

impl From<CollsynthError> for Failure {
    fn from(e: CollsynthError) -> Self {
        Failure::Other(e)
    }
}

/// One send or receive: (transfer, is the send).
pub type Operation = (usize, bool);

/// Lower `s` (verified) to an MSCCL program within every limit of the runtime of
/// `o.runtime`. Errors with `Infeasible` (saying which limit) when no channel count fits.
pub fn lower(s: &Schedule, o: &Options) -> Result<Program> {
    lower_with(s, o, o.fused)
}

/// `lower`, fusing receive–send pairs only if `fuse` (a fused-runtime program without
/// fused steps is what `export` falls back to when fusion needs more connection slots
/// than the runtime has).
pub fn lower_with(s: &Schedule, o: &Options, fuse: bool) -> Result<Program> {
    // Every rank's program is written, so a schedule stated per orbit is expanded here.
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    if s.collective == Collective::Allgatherv {
        return Err(CollsynthError::bad("allgatherv has no MSCCL collective (coll); export allgather instead"));
    }
    if let Some(c) = o.channels.filter(|&c| c == 0 || c > MAX_CHANNELS) {
        return Err(CollsynthError::bad(format!("--channels {c}: the runtimes take 1 to {MAX_CHANNELS} channels")));
    }
    match o.size_range {
        Some((_, 0)) if o.runtime == Runtime::MscclLegacy => {
            return Err(CollsynthError::bad("--size-range: maxBytes 0 means never in the old runtime; give a bound"))
        }
        // The parsers read minBytes and maxBytes with strtoll into an int64_t: a larger value
        // would be written, then clamped on load (and refused by `verify`).
        Some((lo, hi)) if lo.max(hi) > i64::MAX as u64 => {
            return Err(CollsynthError::bad(format!(
                "--size-range: {} is above {}, the largest minBytes/maxBytes the runtimes read (strtoll into int64_t)",
                lo.max(hi),
                i64::MAX
            )))
        }
        Some((lo, hi)) if hi != 0 && lo > hi => {
            return Err(CollsynthError::bad(format!("--size-range: minBytes {lo} is above maxBytes {hi}")))
        }
        _ => {}
    }
    let s = transform::pipelined(s, o.pipeline.max(1))?;
    fit(&s, o, fuse).map(|(p, _, _)| p)
}

/// The first channel count and spread whose program fits the runtime's limits: the program,
/// its thread-block assignment and T.
fn fit(s: &Schedule, o: &Options, fuse: bool) -> Result<(Program, assign::TbAssignment, Vec<Operation>)> {
    let grid = grid::Grid::new(s)?;
    let ops = match &o.order {
        Some(order) => given_order(s, order)?,
        None => operations(s, fuse)?,
    };
    let tries: Vec<usize> = match o.channels {
        Some(c) => vec![c],
        None => (1..=MAX_CHANNELS).collect(),
    };
    let prep = assign::Prepared::new(s, &ops, fuse);
    let max = o.runtime.max_steps_per_tb();
    let mut why = String::new();
    for c in tries {
        for spread in o.spread.into_iter().chain([Spread::ByPiece, Spread::ByConnection]) {
            let chan = assign::TbAssignment::channels_of(s, c, spread);
            // A try that cannot fit the step limit is known from a count, before assigning.
            if let Some(floor) = assign::TbAssignment::step_floor(s, c, &chan).filter(|f| f.steps > max) {
                why = format!("{floor} (limit {max} steps)");
                continue;
            }
            let plan = assign::TbAssignment::new(s, &grid, &ops, &prep, c, &chan, fuse);
            // The emitter adds at most one block per rank (initial copies): a count over the
            // runtime's is known before emitting.
            let too_many =
                plan.tbs.iter().enumerate().find_map(|(r, tbs)| rules::too_many_blocks(r, tbs.len(), o.runtime));
            if let Some(problem) = too_many {
                why = problem;
                continue;
            }
            match emit::program(s, &grid, &ops, &plan, o) {
                Ok(p) => return Ok((p, plan, ops)),
                Err(Failure::Limit(m)) => why = m,
                Err(Failure::Other(e)) => return Err(e),
            }
        }
    }
    let tried = o.channels.map_or(format!("up to {MAX_CHANNELS} channels"), |c| format!("{c} channels"));
    Err(CollsynthError::Infeasible(format!(
        "the schedule does not fit the {} runtime's limits with {tried}: {why}",
        o.runtime.name()
    )))
}

/// The thread blocks [`lower`] emits for `s` and the transfers each runs, in the order it runs
/// them: what the runtime model executes (`cost::runtime::sim`), from the same assignment as
/// the XML. `s` is taken as it is (`o.pipeline` is not applied: the runtime's slices are the
/// model's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPlan {
    pub channels: usize,
    /// Every communication or local thread block (rank by rank, in id order): its steps'
    /// transfers as (transfer, is the send). A fused step is its receive then its send; a
    /// local transfer is one receive.
    pub blocks: Vec<Vec<Operation>>,
    /// Each block's rank (its id is its place among its rank's).
    pub ranks: Vec<usize>,
}

/// [`BlockPlan`] of `s` under `o`: errors as [`lower`] does when no channel count fits.
pub fn block_plan(s: &Schedule, o: &Options) -> Result<BlockPlan> {
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    let (_, plan, ops) = fit(s, o, o.fused)?;
    let mut base = Vec::with_capacity(plan.tbs.len());
    let mut ranks = Vec::new();
    let mut total = 0;
    for (r, tbs) in plan.tbs.iter().enumerate() {
        base.push(total);
        total += tbs.len();
        ranks.extend(std::iter::repeat_n(r, tbs.len()));
    }
    let mut blocks: Vec<Vec<Operation>> = vec![Vec::new(); total];
    for &(t, is_send) in &ops {
        let tr = &s.transfers[t];
        match is_send {
            true if !plan.sent_early[t] => blocks[base[tr.src] + plan.send_tb[t]].push((t, true)),
            true => {}
            false => {
                let b = base[tr.dst] + plan.recv_tb[t];
                blocks[b].push((t, false));
                if let Some(y) = plan.fused[t] {
                    blocks[b].push((y, true));
                }
            }
        }
    }
    Ok(BlockPlan { channels: plan.channels, blocks, ranks })
}

/// T, the order every thread block follows: by step in a step schedule, then by
/// topological position, each send right before its receive. That order is deadlock-free
/// even with one-slot connections. With fusion, a step's sends come before its receives
/// instead (a rank forwards in step k+1 right after it receives in k, so the two fuse):
/// the runtime's 2-slot connections then carry it, and `export` checks that they do.
fn operations(s: &Schedule, fused: bool) -> Result<Vec<Operation>> {
    let topo = transform::topological_order(s)?;
    let stepped = s.transfers.iter().all(|t| t.step.is_some());
    let mut ops: Vec<(u32, usize, usize, Operation)> = Vec::with_capacity(2 * topo.len());
    for (k, &t) in topo.iter().enumerate() {
        let step = if stepped { s.transfers[t].step.unwrap_or(0) } else { 0 };
        // A local transfer (between two slots of one rank) is one operation, on the
        // receive side's place in T.
        let local = s.transfers[t].is_local();
        for (recv, op) in [(0, (t, true)), (1, (t, false))] {
            if local && op.1 {
                continue;
            }
            ops.push(if stepped && fused { (step, recv, k, op) } else { (step, k, recv, op) });
        }
    }
    ops.sort_unstable();
    Ok(ops.into_iter().map(|(_, _, _, op)| op).collect())
}

/// `order` as T, checked: each transfer's operations once (a local transfer only its
/// receive), each send before its receive, receives between two ranks in the order of their
/// sends, every dependency received before its dependent is sent (or, local, received).
fn given_order(s: &Schedule, order: &[Operation]) -> Result<Vec<Operation>> {
    let bad = |why: &str| Err(CollsynthError::bad(format!("the given operation order: {why}")));
    let n = s.transfers.len();
    let (mut sent, mut received) = (vec![false; n], vec![false; n]);
    // Connections are FIFO: between two ranks, receives in the order of their sends.
    let mut in_flight: crate::hash::FastMap<(usize, usize), std::collections::VecDeque<usize>> = Default::default();
    for &(t, is_send) in order {
        let Some(tr) = s.transfers.get(t) else { return bad("a transfer out of range") };
        let local = tr.is_local();
        if is_send {
            if local || sent[t] {
                return bad("a send twice, or of a local transfer");
            }
            if tr.after.iter().any(|&a| !received[a]) {
                return bad("a send before its dependencies are received");
            }
            sent[t] = true;
            in_flight.entry((tr.src, tr.dst)).or_default().push_back(t);
        } else {
            if received[t] || !(sent[t] || local) {
                return bad("a receive twice, or before its send");
            }
            if !local && in_flight.get_mut(&(tr.src, tr.dst)).and_then(|q| q.pop_front()) != Some(t) {
                return bad("a receive out of its connection's order (connections are FIFO)");
            }
            if local && tr.after.iter().any(|&a| !received[a]) {
                return bad("a local transfer before its dependencies");
            }
            received[t] = true;
        }
    }
    if received.iter().any(|&r| !r) {
        return bad("a transfer missing");
    }
    Ok(order.to_vec())
}

/// `minBytes`/`maxBytes` when the user gives none: from 0 to 1 TiB (what ForestColl's
/// exporter uses), except that the old runtime sizes scratch as maxBytes * s_chunks /
/// nchunksperloop, so there maxBytes is lowered until scratch stays within 1 GiB.
pub fn default_size_range(runtime: Runtime, nchunksperloop: usize, max_s_chunks: usize) -> (u64, u64) {
    let tib: u64 = 1 << 40;
    if runtime == Runtime::MscclLegacy && max_s_chunks > 0 {
        let cap = (1u64 << 30).saturating_mul(nchunksperloop as u64) / max_s_chunks as u64;
        return (0, cap.min(tib));
    }
    (0, tib)
}

#[cfg(test)]
mod tests;
