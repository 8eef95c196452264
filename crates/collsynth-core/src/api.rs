//! The pipeline in one place: synthesize -> verify -> evaluate. Every schedule that leaves
//! the core through this module has passed the verifier. The CLI and the Python API call
//! these functions; nothing here knows about any particular algorithm.

use crate::bound;
use crate::cost;
use crate::error::{CollsynthError, Result};
use crate::ir::{Collective, Schedule};
use crate::rational::Rat;
use crate::synth::{self, Request};
use crate::topology::Topology;
use crate::verify;
use std::time::Instant;

mod mix;
mod msccl_ask;
pub mod windows;

pub use msccl_ask::MscclAsk;

/// A verified schedule, the topology it runs on and how long synthesis alone took.
pub struct Synthesized {
    pub schedule: Schedule,
    /// The input topology, or with `--ranks` its restriction to those ranks (the other
    /// compute nodes become forward-only switches), which the schedule is for.
    pub topology: Topology,
    pub synthesis_seconds: f64,
}

/// Synthesize with `algorithm` (or `auto`: the fastest by the simulator at `size` among the
/// registered algorithms that apply), then verify. A schedule that fails verification is an
/// internal error: it is never returned. A `ranks` option makes a sub-collective, for the
/// algorithms that declare the option.
pub fn synthesize(
    topo: &Topology,
    collective: Collective,
    algorithm: &str,
    req: &Request,
    size: Rat,
) -> Result<Synthesized> {
    // `auto` synthesizes every candidate through here: Ctrl-C stops it between two.
    crate::budget::check_cancelled()?;
    synthesize_then(topo, collective, algorithm, req, size, |_, _| ()).map(|(done, ())| done)
}

/// [`synthesize`], with `then` run on the schedule and its topology while the verifier checks
/// it (on a large schedule the two take a core each: from 100,000 transfers), so that the
/// evaluation printed next to a schedule does not wait for the verdict. The verdict still
/// decides: a schedule that fails verification is the same internal error, and what `then`
/// returned is dropped unseen. Both walk one topological order (`ir::transform::with_order`).
/// `then` must not fail the call: it hands back its own result, errors included.
pub fn synthesize_then<T: Send>(
    topo: &Topology,
    collective: Collective,
    algorithm: &str,
    req: &Request,
    size: Rat,
    then: impl FnOnce(&Schedule, &Topology) -> T + Send,
) -> Result<(Synthesized, T)> {
    two_ranks(topo)?;
    least_memory(topo, collective)?;
    let req = Request { size: Some(size), ..req.clone() };
    if algorithm == "auto" {
        synth::check_root(topo, req.root)?;
        // Every candidate is verified as it is made.
        let done = auto(topo, collective, &req, size, Ranking::Schedule)?;
        let after = then(&done.schedule, &done.topology);
        return Ok((done, after));
    }
    let (topology, mut req) = sub_collective(topo, algorithm, req)?;
    // A sized synthesizer plans for the bytes the collective moves on its own ranks.
    req.0.size = Some(moved_size(collective, topology.n_ranks(), size).moved);
    let start = Instant::now();
    let mut schedule =
        synth::run(&topology, collective, algorithm, &req.0).map_err(|e| does_not_apply(e, algorithm, collective))?;
    let synthesis_seconds = start.elapsed().as_secs_f64();
    if let Some(ranks) = req.1 {
        schedule.provenance.options.push(("ranks".into(), ranks));
    }
    let after = verified_then(&schedule, &topology, then)?;
    Ok((Synthesized { schedule, topology, synthesis_seconds }, after))
}

/// [`check`] `s` while `then` runs on it (side by side from [`PARALLEL_EVALUATION`]
/// transfers), both in one topological order; the verdict decides what comes back.
fn verified_then<T: Send>(
    s: &Schedule,
    topo: &Topology,
    then: impl FnOnce(&Schedule, &Topology) -> T + Send,
) -> Result<T> {
    use crate::ir::transform::{shared_order, with_order, SharedOrder};
    // A compact schedule or one with range transfers is ordered on its expansion or quotient
    // (another schedule): nothing to share.
    let flat = s.symmetry.is_none() && !crate::ir::ranges::has_ranges(s);
    let order = flat.then(|| shared_order(s));
    fn in_order<T>(s: &Schedule, order: Option<&SharedOrder>, f: impl FnOnce() -> T) -> T {
        match order {
            Some(order) => with_order(s, order, f),
            None => f(),
        }
    }
    let side_by_side = s.transfers.len() >= PARALLEL_EVALUATION && crate::parallel::threads(2) > 1;
    let (verdict, after) = crate::parallel::join(
        side_by_side,
        || in_order(s, order.as_ref(), || check(s, topo)),
        || in_order(s, order.as_ref(), || then(s, topo)),
    );
    verdict.map(|()| after)
}

/// With a `ranks` option (and an algorithm that takes it): the restricted topology and the
/// request without `ranks`; otherwise the topology and request unchanged.
fn sub_collective(topo: &Topology, algorithm: &str, mut req: Request) -> Result<(Topology, (Request, Option<String>))> {
    let Some(text) = req.options.remove("ranks") else { return Ok((topo.clone(), (req, None))) };
    if !synth::find(algorithm)?.options.contains(&"ranks") {
        return Err(CollsynthError::bad(format!("option --ranks does not apply to algorithm '{algorithm}'")));
    }
    let ranks = crate::topology::restrict::parse_ranks(&text)?;
    Ok((crate::topology::restrict::restrict_ranks(topo, &ranks)?, (req, Some(text))))
}

/// An `Infeasible` from a synthesizer, said as what it means to the user: this algorithm
/// does not apply to this collective here (one line; the CLI exits 2).
fn does_not_apply(e: CollsynthError, algorithm: &str, collective: Collective) -> CollsynthError {
    match e {
        CollsynthError::Infeasible(why) => CollsynthError::Infeasible(format!(
            "algorithm '{algorithm}' does not apply to {} on this topology because {why}",
            collective.name()
        )),
        e => e,
    }
}

/// Verify a schedule the tool produced; a violation is a bug (internal error).
fn check(s: &Schedule, topo: &Topology) -> Result<()> {
    verify::verify(s, topo)
        .map(|_| ())
        .map_err(|v| CollsynthError::internal(format!("{} schedule failed verification: {v}", s.provenance.algorithm)))
}

/// `auto`: every registered algorithm for the collective that accepts the request is
/// synthesized and verified, each also in its smallest form where it can shrink
/// (`windows::requests`), and timed by the runtime model at `size` at every pipeline depth its
/// shape allows and under every protocol (`cost::tuning`); the fastest wins and is returned
/// lowered to its depth (sub-chunks materialized, verified again), with `auto_choice` and
/// `auto_pipeline` in its details (and `auto_pipeline_order: "interleaved"` when its
/// sub-chunks are listed round by round, `ir::transform::interleaved`), and `auto_protocol` when it won under a protocol NCCL's
/// tuner would not pick (`cost::runtime::PINNED_PROTOCOL`). The reported synthesis time is
/// the sum over all candidates.
fn auto(topo: &Topology, collective: Collective, req: &Request, size: Rat, ranking: Ranking) -> Result<Synthesized> {
    let names = synth::algorithms().into_iter().filter(|a| a.collectives.contains(&collective)).map(|a| a.name);
    fastest_candidate(topo, collective, size, names, req, ranking, |name, r| {
        synthesize(topo, collective, name, r, size)
    })
}

/// `auto` for a program written as MSCCL XML as `ask` says (`synth -a auto --format
/// msccl-xml`): of the [`EXPORTED_TOP`] candidates fastest as schedules, the one whose
/// exported program, in its own thread blocks and packed into the runtime's limits, the runtime
/// model times fastest at `ask`'s judge size. A candidate whose program does not fit the
/// runtime is passed over (its schedule may still be the fastest); mixes are not exported.
/// The schedule's details say `auto_ranking: "exported"`. Verified as [`synthesize`]'s.
pub fn synthesize_for_msccl(
    topo: &Topology,
    collective: Collective,
    req: &Request,
    size: Rat,
    ask: &MscclAsk,
) -> Result<Synthesized> {
    two_ranks(topo)?;
    least_memory(topo, collective)?;
    let req = Request { size: Some(size), ..req.clone() };
    synth::check_root(topo, req.root)?;
    // Judged where `synth` judges the program it writes: at the bytes nccl-tests moves.
    let moved = moved_size(collective, topo.n_ranks(), size).moved.floor().to_integer();
    let bytes = ask.bytes.or_else(|| u64::try_from(moved).ok());
    auto(topo, collective, &req, size, Ranking::Exported(&MscclAsk { bytes, ..ask.clone() }))
}

/// How `auto` ranks its candidates: by the runtime model of each schedule (every transfer on
/// a connection of its own), or by that of the MSCCL program each exports to.
#[derive(Clone, Copy)]
enum Ranking<'a> {
    Schedule,
    Exported(&'a MscclAsk),
}

/// The candidates `auto` exports and judges when it ranks exported programs: the fastest as
/// schedules. Judging a program costs about an export (15 lowerings timed in thread blocks),
/// so the few that can win, not all: on the time table's machines the exported winner is
/// always among the first three.
pub const EXPORTED_TOP: usize = 4;

/// `s` as what `auto` and the size windows hand out: a program for MSCCL's interpreter (and
/// the exporters), whoever the synthesizer said runs it. NCCL's rings are a fine candidate
/// as an MSCCL program; NCCL's own kernels running them (`ir::Executor::NcclRing`) are the
/// baseline `auto` is measured against, not something it can return.
/// Flat: the exporters write every rank's program (and candidates compare as schedules).
fn as_exported(s: Schedule) -> Result<Schedule> {
    let mut s = if s.is_flat() { s } else { crate::ir::orbit::expand(&s)? };
    s.provenance.executor = crate::ir::Executor::Msccl;
    Ok(s)
}

/// Two candidates that move the same pieces the same way and run alike (their options may
/// differ: `--tree-shape shallow-all` is `shallow` on an allgather): `auto` and the size
/// windows time one of them. The executor and the details the runtime model reads are part of
/// how a schedule runs (NCCL's ring kernel and MSCCL cost the same transfers differently).
fn same_program(a: &Schedule, b: &Schedule) -> bool {
    let runs = |s: &Schedule| {
        let d = &s.provenance.details;
        let read = [cost::runtime::order::DETAIL, cost::runtime::PINNED_PROTOCOL].map(|k| d.get(k).cloned());
        (s.provenance.executor, read)
    };
    a.collective == b.collective
        && a.shards == b.shards
        && a.pieces == b.pieces
        && a.transfers == b.transfers
        && a.symmetry == b.symmetry
        && runs(a) == runs(b)
}

/// Candidates synthesized out of those `auto` (or a size window) tries, for a bar: on a
/// thousand ranks they take minutes.
pub static AUTO_PROGRESS: crate::progress::Progress = crate::progress::Progress::new();

/// The fastest at `size` of the schedules `candidate` makes for `names` (and their shrunk
/// forms), over pipeline depths. A candidate that does not apply (`BadInput`: an option it
/// does not take; `Infeasible`: a topology it cannot handle) is skipped; any other error (a
/// bug, a schedule that failed verification) is returned, naming the algorithm: one broken
/// synthesizer must not hide behind the others.
fn fastest_candidate<'a>(
    topo: &Topology,
    collective: Collective,
    size: Rat,
    names: impl IntoIterator<Item = &'a str>,
    req: &Request,
    ranking: Ranking,
    candidate: impl Fn(&str, &Request) -> Result<Synthesized> + Sync,
) -> Result<Synthesized> {
    let mut made: Vec<(Schedule, String)> = Vec::new();
    let mut seconds = 0.0;
    let mut topology = topo.clone();
    let tries: Vec<(&str, Request, String)> = names
        .into_iter()
        .flat_map(|name| windows::requests(name, req).into_iter().map(move |(r, x)| (name, r, x)))
        .collect();
    // Every candidate synthesized at once on every core; taken in order, as one after the
    // other would (the first of two alike programs is kept, the first error returned).
    AUTO_PROGRESS.start(tries.len() as u64);
    let results = crate::parallel::each(tries.len(), usize::MAX, |i| {
        let made = candidate(tries[i].0, &tries[i].1);
        AUTO_PROGRESS.add(1);
        made
    });
    // Why the first candidate was refused, said when none is left (the memory budget, say).
    let mut first_refusal: Option<String> = None;
    for ((name, _, suffix), result) in tries.iter().zip(results) {
        match result {
            Ok(done) => {
                seconds += done.synthesis_seconds;
                let schedule = as_exported(done.schedule)?;
                topology = done.topology;
                if !made.iter().any(|(s, _)| same_program(s, &schedule)) {
                    made.push((schedule, format!("{name}{suffix}")));
                }
            }
            Err(e @ (CollsynthError::BadInput(_) | CollsynthError::Infeasible(_))) => {
                first_refusal.get_or_insert_with(|| format!(" ({name}: {e})"));
            }
            Err(e) => return Err(e.context(&format!("auto: algorithm '{name}'"))),
        }
    }
    let size = moved_size(collective, topology.n_ranks(), size).moved;
    let none_applies = |why: Option<String>| {
        CollsynthError::bad(format!(
            "no registered algorithm applies to {} on this topology{}",
            collective.name(),
            why.unwrap_or_default()
        ))
    };
    if let Ranking::Exported(ask) = ranking {
        // The first EXPORTED_TOP of every candidate need their exact picks.
        let eligible = vec![true; made.len()];
        let (picks, _) =
            cost::tuning::fastest_top(made.iter().map(|(s, _)| s), &topology, size, &eligible, EXPORTED_TOP)?;
        if picks.is_empty() {
            return Err(none_applies(first_refusal));
        }
        let schedule = fastest_exported(&made, picks, &topology, ask)?;
        return Ok(Synthesized { schedule, topology, synthesis_seconds: seconds });
    }
    // Only the fastest and the mixes' candidates (no scratch slots) need their exact picks.
    let eligible: Vec<bool> = made.iter().map(|(s, _)| !s.uses_scratch()).collect();
    let (picks, _) = cost::tuning::fastest_top(made.iter().map(|(s, _)| s), &topology, size, &eligible, mix::MIXED)?;
    let Some(pick) = cost::tuning::fastest(&picks) else {
        return Err(none_applies(first_refusal));
    };
    if let Some(m) = mix::fastest_mix(&made, &picks, &topology, size, pick.time_us, |s| check(s, &topology))? {
        debug_assert!(m.time_us < pick.time_us, "a mix is kept only when it beats every candidate");
        let mut schedule = m.schedule;
        schedule.provenance.details.set("auto_choice", m.label.clone());
        schedule.provenance.details.set("auto_pipeline", 1);
        schedule.provenance.details.set("auto_mix", m.label);
        if let Some(p) = m.protocol {
            schedule.provenance.details.set(cost::runtime::PINNED_PROTOCOL, p.name());
        }
        return Ok(Synthesized { schedule, topology, synthesis_seconds: seconds });
    }
    let (schedule, label) = made.swap_remove(pick.index);
    let schedule = picked(schedule, label, &pick, &topology)?;
    Ok(Synthesized { schedule, topology, synthesis_seconds: seconds })
}

/// Candidate `schedule` as `pick` runs it: lowered to its depth (verified again), with the
/// details that say what `auto` chose.
fn picked(schedule: Schedule, label: String, pick: &cost::tuning::Pick, topology: &Topology) -> Result<Schedule> {
    let (k, interleaved) = (pick.depth, pick.interleaved);
    let mut schedule = schedule;
    if k > 1 || interleaved {
        schedule = cost::tuning::lowered(&schedule, k, interleaved)?;
        check(&schedule, topology)?;
    }
    schedule.provenance.details.set("auto_choice", label);
    schedule.provenance.details.set("auto_pipeline", k);
    if interleaved {
        schedule.provenance.details.set("auto_pipeline_order", "interleaved");
    }
    if let Some(p) = pick.protocol {
        schedule.provenance.details.set(cost::runtime::PINNED_PROTOCOL, p.name());
    }
    Ok(schedule)
}

/// Of the [`EXPORTED_TOP`] fastest `picks`, the candidate whose program exported as `ask` says
/// is judged fastest; one exported but too large to judge (`JUDGED_TRANSFERS`) counts after
/// every judged one; one that does not fit the runtime (`BadInput`, `Infeasible`) is passed
/// over, and when none fits, the first one's reason is the refusal.
fn fastest_exported(
    made: &[(Schedule, String)],
    mut picks: Vec<cost::tuning::Pick>,
    topology: &Topology,
    ask: &MscclAsk,
) -> Result<Schedule> {
    picks.sort_by(|a, b| a.time_us.total_cmp(&b.time_us).then(a.index.cmp(&b.index)));
    picks.truncate(EXPORTED_TOP);
    let bytes = Rat::from_integer(ask.judged_bytes() as i128);
    // (judged time, or infinity when exported unjudged; the schedule)
    let mut best: Option<(f64, Schedule)> = None;
    let mut refusal: Option<String> = None;
    for pick in &picks {
        crate::budget::check_cancelled()?;
        let (schedule, label) = &made[pick.index];
        let schedule = picked(schedule.clone(), label.clone(), pick, topology)?;
        // Not exported when its busiest link alone is no faster than a program judged: an
        // export costs seconds, and this floor bounds the program's time wherever the runtime
        // routes as the schedule does (it costs the schedule's own routes).
        let floors = cost::runtime::sim::floors_us(crate::ir::orbit::flat(&schedule)?.as_ref(), topology, bytes)?;
        let floor = match ask.protocol {
            Some(p) => floors[p.index()],
            None => floors.into_iter().fold(f64::INFINITY, f64::min),
        };
        if best.as_ref().is_some_and(|(t, _)| floor * (1.0 - 1e-9) >= *t) {
            continue;
        }
        match ask.export(&schedule, topology, false) {
            Ok(e) => {
                let time = e.judged.map_or(f64::INFINITY, |j| j.time_us);
                if best.as_ref().is_none_or(|(t, _)| time < *t) {
                    best = Some((time, schedule));
                }
            }
            Err(e @ (CollsynthError::BadInput(_) | CollsynthError::Infeasible(_))) => {
                refusal.get_or_insert_with(|| format!("{label}: {e}"));
            }
            Err(e) => return Err(e.context(&format!("auto: exporting '{label}'"))),
        }
    }
    let Some((_, mut schedule)) = best else {
        let why = refusal.unwrap_or_default();
        return Err(CollsynthError::bad(format!(
            "no candidate of auto exports to {} within its limits ({why})",
            ask.runtime.name()
        )));
    };
    schedule.provenance.details.set("auto_ranking", "exported");
    Ok(schedule)
}

/// A collective's size: M as asked (the nccl-tests size, schedule-format.md) and the bytes
/// every cost is on.
#[derive(Debug, Clone, PartialEq)]
pub struct MovedSize {
    pub asked: Rat,
    /// What nccl-tests moves ([`Collective::bytes_moved`]: allgather and reduce-scatter trim
    /// each rank's part to 16 bytes), or M where that would be nothing (see `note`).
    pub moved: Rat,
    /// One line when M is below 16 N bytes for allgather or reduce-scatter: nccl-tests moves
    /// nothing there, and the costs are on M as asked instead of on zero bytes.
    pub note: Option<String>,
}

/// The bytes a `collective` of size `size` (M) on `n_ranks` ranks is costed at: every `api`
/// function that takes a size of a collective (synthesize and `auto`'s search, evaluate,
/// simulate, runtime, time_bound, time_only) costs this, so a caller passes M as the user gave
/// it. Idempotent: the moved size moves itself.
pub fn moved_size(collective: Collective, n_ranks: usize, size: Rat) -> MovedSize {
    let moved = collective.bytes_moved(size, n_ranks);
    if moved == Rat::from_integer(0) && size > moved {
        let note = format!(
            "below 16 N = {} bytes nccl-tests moves nothing ({} on {n_ranks} ranks: each rank's part is \
             trimmed to a multiple of 16 bytes); costed at the size asked",
            16 * n_ranks,
            collective.name()
        );
        return MovedSize { asked: size, moved: size, note: Some(note) };
    }
    MovedSize { asked: size, moved, note: None }
}

/// The bounds reported next to every schedule.
#[derive(Clone)]
pub struct Bounds {
    /// Time per byte (see `inv_throughput` in docs/contracts.md), exact.
    pub inv_throughput: Rat,
    /// Best known optimal algbw in GB/s, exact.
    pub algbw: Rat,
    /// Node indices of the bottleneck cut.
    pub cut: Vec<usize>,
    /// Allreduce only: optimal reduce-scatter then allgather.
    pub rs_ag_algbw: Option<Rat>,
    /// Allreduce only: the best algbw a registered algorithm's bound hint gives beyond the
    /// cut bound (ForestColl's allreduce LP; None where none applies or it is too large).
    pub lp_algbw: Option<Rat>,
    /// Bandwidth term (us per byte of M) of the bound, exact: T_B = M * this.
    pub time_per_byte_us: Rat,
}

/// Exact bounds for `collective` (root used by broadcast / reduce).
pub fn bounds(topo: &Topology, collective: Collective, root: usize) -> Result<Bounds> {
    let key = bounds_key(topo, collective, root);
    let memo = bounds_memo();
    if let Some(b) = memo.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(b);
    }
    let b = compute_bounds(topo, collective, root)?;
    if let Ok(mut m) = memo.lock() {
        m.insert(key, b.clone());
    }
    Ok(b)
}

/// Bounds are pure functions of (topology, collective, root) and the allreduce LP can take
/// seconds: `compare` and `evaluate` ask for the same bounds once per size and algorithm.
/// Keyed by the topology's JSON, as ForestColl's LP memo is, not a hash of it: a collision
/// would be a wrong answer.
type BoundsMemo = std::sync::Mutex<std::collections::HashMap<BoundsKey, Bounds>>;

type BoundsKey = (String, Collective, usize);

fn bounds_key(topo: &Topology, collective: Collective, root: usize) -> BoundsKey {
    (crate::topology::json::write(topo), collective, root)
}

fn bounds_memo() -> &'static BoundsMemo {
    static MEMO: std::sync::OnceLock<BoundsMemo> = std::sync::OnceLock::new();
    MEMO.get_or_init(Default::default)
}

/// A collective moves data between ranks: a topology with one rank has nothing to schedule,
/// and its bandwidths (M / 0 us) would be infinite.
/// Bytes per flat transfer that every schedule costs at least on its way through the
/// pipeline, compact ones included (ring:16384's ring allgather, stated per orbit, peaks at
/// 12 bytes per flat transfer).
const LEAST_BYTES_PER_TRANSFER: u128 = 12;

/// Refuse a collective whose fewest transfers cannot fit the memory budget, before any
/// synthesizer starts: every rank receives each of the N - 1 other shards at least once in an
/// allgather, a reduce-scatter or an allreduce (pieces never span two shards).
fn least_memory(topo: &Topology, collective: Collective) -> Result<()> {
    let n = topo.n_ranks() as u128;
    if !matches!(collective, Collective::Allgather | Collective::ReduceScatter | Collective::Allreduce) {
        return Ok(());
    }
    let least = n * (n - 1);
    crate::budget::check_memory(
        &format!("{} on {n} ranks ({least} transfers at least)", collective.name()),
        Some(least),
        LEAST_BYTES_PER_TRANSFER,
    )
}

pub fn two_ranks(topo: &Topology) -> Result<()> {
    match topo.n_ranks() {
        0 | 1 => Err(CollsynthError::bad(format!(
            "{} has {} rank: a collective needs at least 2",
            topo.name,
            topo.n_ranks()
        ))),
        _ => Ok(()),
    }
}

fn compute_bounds(topo: &Topology, collective: Collective, root: usize) -> Result<Bounds> {
    two_ranks(topo)?;
    synth::check_root(topo, root)?;
    let n = Rat::from_integer(topo.n_ranks() as i128);
    // The zoo's symmetry cuts the bound's max flows to one per rank orbit (same result).
    let symmetry = crate::zoo::symmetry::node_generators(topo);
    let cb = match collective {
        Collective::Allgather | Collective::Allgatherv => bound::allgather_symmetric(topo, &symmetry)?,
        Collective::ReduceScatter => bound::reduce_scatter_symmetric(topo, &symmetry)?,
        Collective::Allreduce => bound::allreduce_rs_ag_symmetric(topo, &symmetry)?,
        Collective::Broadcast => bound::broadcast(topo, root)?,
        Collective::Reduce => bound::reduce(topo, root)?,
    };
    // Per-shard bounds (allgather family) cover M/N bytes; rooted ones the whole message.
    let per_byte = if collective.is_rooted() { cb.inv_throughput } else { cb.inv_throughput / n };
    let mut algbw = bound::algbw(collective, topo.n_ranks(), cb.inv_throughput).unwrap_or_default();
    let rs_ag = (collective == Collective::Allreduce).then_some(algbw);
    let (mut inv_throughput, mut per_byte) = (cb.inv_throughput, per_byte);
    // Allreduce: the best known optimum is the larger of RS+AG and the algorithms' hints
    // (ForestColl's LP, solved only when small enough; see synth/forestcoll/lp.rs).
    let lp_algbw = bound_hint(topo, collective)?;
    if let Some(lp) = lp_algbw.filter(|lp| *lp > algbw) {
        algbw = lp;
        inv_throughput = n / lp;
        per_byte = Rat::from_integer(1) / lp;
    }
    Ok(Bounds {
        inv_throughput,
        algbw,
        cut: cb.cut,
        rs_ag_algbw: rs_ag,
        lp_algbw,
        time_per_byte_us: per_byte / Rat::from_integer(1000),
    })
}

/// The largest algbw the registered algorithms' bound hints give for `collective`.
fn bound_hint(topo: &Topology, collective: Collective) -> Result<Option<Rat>> {
    let mut best: Option<Rat> = None;
    for alg in synth::algorithms().into_iter().filter(|a| a.collectives.contains(&collective)) {
        if let Some(hint) = alg.extras.bound_hint {
            best = best.max(hint(topo, collective)?);
        }
    }
    Ok(best)
}

/// An algorithm's own account of a collective's time at `size`, without the schedule
/// (`synth --time-only`): nothing to verify, since nothing is built.
pub struct Timed {
    pub report: synth::TimeReport,
    pub synthesis_seconds: f64,
    pub algbw_gbps: f64,
    pub busbw_gbps: f64,
    /// The size asked and the bytes timed ([`moved_size`]).
    pub size: MovedSize,
}

/// `--time-only` with `algorithm`, after the checks the full path makes; `BadInput` for an
/// algorithm that has no time-only path (naming those that do).
pub fn time_only(topo: &Topology, collective: Collective, algorithm: &str, req: &Request, size: Rat) -> Result<Timed> {
    two_ranks(topo)?;
    let req = Request { size: Some(size), ..req.clone() };
    let Some(time_only) = synth::find(algorithm)?.extras.time_only else {
        let names: Vec<&str> =
            synth::algorithms().into_iter().filter(|a| a.extras.time_only.is_some()).map(|a| a.name).collect();
        return Err(CollsynthError::bad(format!("--time-only applies to --algorithm {} only", names.join(" or "))));
    };
    let alg = synth::checked(topo, collective, algorithm, &req)?;
    let n = match req.options.get("ranks") {
        Some(ranks) => crate::topology::restrict::parse_ranks(ranks)?.len(),
        None => topo.n_ranks(),
    };
    let size = moved_size(collective, n, size);
    let req = Request { size: Some(size.moved), ..req };
    let start = Instant::now();
    let report = time_only(topo, collective, &req).map_err(|e| does_not_apply(e, alg.name, collective))?;
    let synthesis_seconds = start.elapsed().as_secs_f64();
    // Zero time means zero bytes: 0 GB/s, as in `evaluate`.
    let bytes = crate::rational::to_f64(&size.moved);
    let (algbw_gbps, busbw_gbps) = bandwidths(collective, report.n_ranks, bytes, report.time_us);
    Ok(Timed { report, synthesis_seconds, algbw_gbps, busbw_gbps, size })
}

/// Everything `synth`, `simulate` and `compare` report for one schedule and size.
pub struct Evaluation {
    /// The calibrated runtime model's time of the schedule, every transfer on its own
    /// connection (`runtime.time_us`): the one clock every printed time and bandwidth reads.
    pub time_us: f64,
    /// The store-and-forward event simulator's unpipelined time (`cost::simulate`): printed
    /// nowhere, in `--json` as `sf_time_us` only.
    pub sf_time_us: f64,
    pub alpha_beta_us: f64,
    pub latency_us: f64,
    pub bandwidth_us: f64,
    pub algbw_gbps: f64,
    pub busbw_gbps: f64,
    /// Bound bandwidth term / schedule bandwidth term (exact), capped at 1 (see README).
    pub optimality: Rat,
    pub steps: usize,
    /// The direct-connect paper's T_L / alpha and T_B / (M/B) (`cost::latency_bandwidth`).
    pub direct: cost::LatencyBandwidthCosts,
    /// The runtime-faithful model (`cost::runtime`): time, protocol, slices per piece.
    pub runtime: cost::runtime::RuntimeEstimate,
    /// Lower bound on any schedule's time in the runtime model (us), see [`time_bound`].
    pub time_bound_us: f64,
    /// `time_bound_us / runtime.time_us` (1 for a zero time).
    pub time_optimality: f64,
    /// The size asked and the bytes every value above is for ([`moved_size`]).
    pub size: MovedSize,
}

/// (algbw, busbw) in GB/s of `bytes` (the moved size) in `time_us`, as nccl-tests computes
/// them. Zero time means zero bytes (every link has a finite bandwidth): 0 GB/s, as
/// nccl-tests prints for size 0, never an infinity that JSON cannot hold.
pub fn bandwidths(collective: Collective, n_ranks: usize, bytes: f64, time_us: f64) -> (f64, f64) {
    let algbw = if time_us > 0.0 { bytes / time_us / 1e3 } else { 0.0 };
    (algbw, algbw * collective.busbw_factor(n_ranks))
}

/// Lower bound (us) on the runtime model's time of any `collective` schedule on `topo` of size
/// `size` (at the bytes it moves, [`moved_size`]), and the protocol attaining it (`cost::runtime::bound`): the latency floor
/// and the exact cut bound on the effective link bandwidths.
pub fn time_bound(
    topo: &Topology,
    collective: Collective,
    root: usize,
    size: Rat,
) -> Result<(f64, cost::runtime::Protocol)> {
    use cost::runtime::bound;
    let size = moved_size(collective, topo.n_ranks(), size).moved;
    let b = bounds(&bound::effective_topology(topo), collective, root)?;
    let floor = bound::latency_floor(topo, collective, root);
    let cut = bound::cut_term(topo, collective, &b.cut);
    Ok(bound::time_bound_us(&floor, b.time_per_byte_us, cut.as_ref(), size))
}

/// `f()`, for a caller that evaluates what `f` synthesizes on `topo` next: meanwhile a second
/// core computes the bounds [`time_bound`] reads (on the runtime model's effective topology,
/// memoized by [`bounds`]), which no synthesizer asks for. On `dgx-a100:2` that is an
/// allreduce LP of seconds beside the synthesizer's own LP on the raw topology. A
/// sub-collective (`ranks=`) is evaluated on another topology: nothing to compute ahead. An
/// error there is dropped: the evaluation meets it again and reports it.
pub fn with_time_bound_ahead<T: Send>(
    topo: &Topology,
    collective: Collective,
    req: &Request,
    f: impl FnOnce() -> T + Send,
) -> T {
    // What `f` refuses at once (too few ranks, more transfers than memory) is not waited for.
    let refused = || two_ranks(topo).is_err() || least_memory(topo, collective).is_err();
    if req.options.contains_key("ranks") || crate::parallel::threads(2) < 2 || refused() {
        return f();
    }
    let ahead = || {
        let _ = bounds(&cost::runtime::bound::effective_topology(topo), collective, req.root);
    };
    crate::parallel::join(true, f, ahead).0
}

/// Transfers from which [`evaluate`] runs its two simulators side by side, and
/// [`synthesize_then`] its follow-up beside the verifier.
const PARALLEL_EVALUATION: usize = 100_000;

/// Cost a verified schedule of size `size` (M as asked) with `pipeline` sub-chunks per piece,
/// at the bytes it moves ([`moved_size`]).
///
/// A compact schedule (`ir::orbit`) is costed on its quotient by the group, which gives the
/// flat schedule's answers exactly ([`cost_view`]).
pub fn evaluate(s: &Schedule, topo: &Topology, size: Rat, pipeline: usize, b: &Bounds) -> Result<Evaluation> {
    let moved = moved_size(s.collective, s.n_ranks, size);
    let size = moved.moved;
    let (q, copies) = cost_view(s, topo, size)?;
    let s = q.as_ref();
    // The two simulators are independent and each walks every transfer: on a large schedule
    // the runtime model runs on a second core meanwhile (same results, same errors first).
    // The flat passes after the simulator (alpha-beta, link loads, steps, hop costs), each
    // also a walk over every transfer, run on the first core while the runtime model runs.
    // Every model below walks the dependencies in one topological order: computed once.
    let order = crate::ir::transform::shared_order(s);
    let models = || {
        crate::ir::transform::with_order(s, &order, || {
            let sim = cost::simulate(s, topo, size, pipeline)?;
            let ab = cost::alpha_beta(s, topo, size, pipeline)?;
            Ok((sim, ab, cost::bandwidth_term_us(s, topo, size), s.steps(), cost::latency_bandwidth_costs(s, topo)))
        })
    };
    let runtime =
        || crate::ir::transform::with_order(s, &order, || cost::runtime::runtime_copies(s, topo, size, copies));
    let side_by_side = s.transfers.len() >= PARALLEL_EVALUATION && crate::parallel::threads(2) > 1;
    let (runtime, models) = crate::parallel::join(side_by_side, runtime, models);
    let (sim, ab, sched_bw, steps, direct) = models?;
    let bound_bw = b.time_per_byte_us * size;
    let one = Rat::from_integer(1);
    let optimality = if sched_bw == Rat::from_integer(0) { one } else { (bound_bw / sched_bw).min(one) };
    let bytes = crate::rational::to_f64(&size);
    let runtime = runtime?;
    let (algbw_gbps, busbw_gbps) = bandwidths(s.collective, s.n_ranks, bytes, runtime.time_us);
    let (time_bound_us, _) = time_bound(topo, s.collective, s.root, size)?;
    let time_optimality = time_optimality(time_bound_us, runtime.time_us);
    let times = [runtime.time_us, sim.time_us, ab.total_us, time_bound_us];
    if times.iter().any(|t| !t.is_finite()) {
        // Latencies near 1e308 us are valid, but their sums are past what a double holds.
        return Err(CollsynthError::bad(format!(
            "the collective's times on {} are past what a double holds (1.8e308 us): its link latencies add up beyond it",
            topo.name
        )));
    }
    Ok(Evaluation {
        time_us: runtime.time_us,
        sf_time_us: sim.time_us,
        alpha_beta_us: ab.total_us,
        latency_us: ab.latency_us,
        bandwidth_us: ab.bandwidth_us,
        algbw_gbps,
        busbw_gbps,
        optimality,
        steps,
        direct,
        runtime,
        time_bound_us,
        time_optimality,
        size: moved,
    })
}

/// What the cost models read for `s` at `size` bytes: `s` itself (1 copy), or for a compact
/// schedule its quotient by the group (`ir::orbit::quotient`: one queue per link orbit) and
/// |G|, the flat transfers each quotient transfer stands for. The models take the quotient
/// as a schedule on the same topology, so no cost rule is written twice. When the whole
/// bytes of the pieces do not move with the group (`ir::orbit::bytes_move_with_group`: a
/// size that does not split into whole-byte shards) or the group mixes link classes of the
/// runtime model (which reads node names: a file's group may map an NVSwitch port onto a
/// generic link of the same bandwidth), the flat form, so that every answer is the flat
/// schedule's exactly.
pub fn cost_view<'a>(s: &'a Schedule, topo: &Topology, size: Rat) -> Result<(std::borrow::Cow<'a, Schedule>, usize)> {
    use crate::ir::orbit;
    // Thread blocks are per rank: a schedule run in them is costed on its expansion.
    if crate::ir::ranges::has_ranges(s) {
        // Ranges are expanded (a compact schedule's representatives only): one queue per piece.
        let expanded = crate::ir::ranges::flat(s)?.into_owned();
        let (q, copies) = cost_view(&expanded, topo, size)?;
        let q = match q {
            std::borrow::Cow::Owned(q) => Some(q),
            std::borrow::Cow::Borrowed(_) => None,
        };
        return Ok((std::borrow::Cow::Owned(q.unwrap_or(expanded)), copies));
    }
    let blocks = cost::runtime::order::has_thread_block_order(s);
    match &s.symmetry {
        None => Ok((std::borrow::Cow::Borrowed(s), 1)),
        Some(g) if !blocks && orbit::bytes_move_with_group(s, size) && classes_move_with_group(g, s, topo) => {
            Ok((std::borrow::Cow::Owned(orbit::quotient(s, topo)?), g.order()))
        }
        Some(_) => Ok((std::borrow::Cow::Owned(orbit::expand(s)?), 1)),
    }
}

/// The event simulator on `s` (flat or compact, [`cost_view`]) at the bytes it moves
/// ([`moved_size`]): the flat schedule's time,
/// chunk transfers and busiest link (the quotient's busiest link is the smallest of its orbit,
/// which is the flat answer: every link of an orbit is equally busy).
pub fn simulate(s: &Schedule, topo: &Topology, size: Rat, pipeline: usize) -> Result<cost::SimResult> {
    let size = moved_size(s.collective, s.n_ranks, size).moved;
    let (q, copies) = cost_view(s, topo, size)?;
    let r = cost::simulate(&q, topo, size, pipeline)?;
    Ok(cost::SimResult { transfers: r.transfers * copies, ..r })
}

/// The runtime model's time of `s` (flat or compact, [`cost::runtime::runtime`]) at the bytes
/// it moves ([`moved_size`]).
pub fn runtime(s: &Schedule, topo: &Topology, size: Rat) -> Result<cost::runtime::RuntimeEstimate> {
    let size = moved_size(s.collective, s.n_ranks, size).moved;
    let (q, copies) = cost_view(s, topo, size)?;
    // The protocol estimate and the simulation walk one topological order.
    let order = crate::ir::transform::shared_order(&q);
    crate::ir::transform::with_order(&q, &order, || cost::runtime::runtime_copies(&q, topo, size, copies))
}

/// Every generator maps each link onto a link of the same runtime-model class (for a group
/// on used links, each link the schedule uses: no other link carries anything).
fn classes_move_with_group(g: &crate::ir::orbit::Group, s: &Schedule, topo: &Topology) -> bool {
    let classes = cost::runtime::classify(topo);
    let links: Vec<usize> = if g.used_links_only() {
        match crate::ir::orbit::used_links(g, s, topo.links.len()) {
            Ok(used) => used,
            Err(_) => return false,
        }
    } else {
        (0..topo.links.len()).collect()
    };
    g.gens.iter().all(|gen| links.iter().all(|&l| classes.get(gen.links[l]) == Some(&classes[l])))
}

/// An MSCCL++ plan and, when the schedule as synthesized did not fit the executor (its
/// resident thread blocks), the schedule exported instead and what it costs.
pub struct MscclppExport {
    pub exported: crate::mscclpp::Exported,
    pub schedule: Schedule,
    pub fallback: Option<String>,
}

/// Export `s` as an MSCCL++ plan ([`crate::mscclpp::export`], `text` false: streamed), fitted:
/// a schedule whose plan needs more thread blocks than stay resident is resynthesized with
/// fewer trees or channels (the algorithm's shrink option, bisected), as MSCCL exports are.
pub fn export_mscclpp(s: &Schedule, topo: &Topology, group: Option<usize>, text: bool) -> Result<MscclppExport> {
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    let export = |s: &Schedule| match text {
        true => crate::mscclpp::export(s, topo, group),
        false => crate::mscclpp::export_streamed(s, topo, group),
    };
    match export(s) {
        Ok(exported) => Ok(MscclppExport { exported, schedule: s.clone(), fallback: None }),
        Err(why) => {
            let (schedule, exported, note) = shrink_to_fit(s, topo, why, &export)?;
            Ok(MscclppExport { exported, schedule, fallback: Some(note) })
        }
    }
}

/// An MSCCL export and, when the schedule as synthesized did not fit the runtime's limits,
/// the schedule exported instead and what it costs.
pub struct MscclExport {
    pub exported: crate::msccl::Exported,
    pub schedule: Schedule,
    /// One line: what did not fit and what was exported instead (algbw lost).
    pub fallback: Option<String>,
    /// The runtime model's time of the program written, run in its own thread blocks, at the
    /// size export judged it (None: not judged above [`JUDGED_TRANSFERS`]).
    pub judged: Option<JudgedExport>,
}

/// What the runtime model predicts for an exported MSCCL program in its own thread blocks
/// (docs/simulator.md, "Thread blocks"): the number a user running the XML should expect,
/// next to the schedule's own `runtime_time_us` (every transfer on its own connection).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedExport {
    pub bytes: u64,
    pub protocol: &'static str,
    pub time_us: f64,
    /// nccl-tests' algbw and busbw of `bytes` in `time_us` ([`bandwidths`]).
    pub algbw_gbps: f64,
    pub busbw_gbps: f64,
    /// The time bound at `bytes` over `time_us` (1 for a zero time).
    pub time_optimality: f64,
}

/// Export a verified schedule as MSCCL XML (see `msccl::export`). A schedule too large for
/// the runtime's limits, from an algorithm that can shrink (`synth::Shrink`: ForestColl's k
/// trees per root), is replaced by the largest shrunk one that fits, found by bisection on
/// the shrink option; the note says how much bandwidth that costs.
pub fn export_msccl(
    s: &Schedule,
    topo: &Topology,
    o: &crate::msccl::lower::Options,
    auto_pipeline: bool,
) -> Result<MscclExport> {
    export_msccl_with(s, topo, o, auto_pipeline, true)
}

/// [`export_msccl`]; `text` false: the XML is left to `Exported::write_xml`
/// (`msccl::export_streamed`).
pub fn export_msccl_with(
    s: &Schedule,
    topo: &Topology,
    o: &crate::msccl::lower::Options,
    auto_pipeline: bool,
    text: bool,
) -> Result<MscclExport> {
    export_msccl_at(s, topo, o, auto_pipeline, text, windows::judged_bytes(o.size_range))
}

/// [`judge_program`] of `p` for a collective of size `size` (the nccl-tests size, 1 GiB when
/// not given: what `export` judges by default), costed at the bytes nccl-tests moves
/// ([`moved_size`]), as `synth` does: `verify FILE.xml --topology T --size S` of a program
/// `synth --size S` wrote prints synth's numbers.
pub fn judge_program_at(p: &crate::msccl::Program, topo: &Topology, size: Option<Rat>) -> Result<JudgedExport> {
    let size = size.unwrap_or_else(|| Rat::from_integer(1 << 30));
    let moved = moved_size(p.collective, p.ngpus, size).moved.floor().to_integer();
    let bytes = u64::try_from(moved).map_err(|_| CollsynthError::bad(format!("--size {size}: not a buffer size")))?;
    judge_program(p, topo, bytes)
}

/// The runtime model's time of an MSCCL program as written ([`cost::runtime::program`]) for a
/// buffer of `bytes`, with the bandwidths and time optimality a user reads beside it (the
/// same rules as [`evaluate`]'s): what `synth` and `export` print for the XML they write, and
/// `verify FILE.xml --topology` for any XML.
pub fn judge_program(p: &crate::msccl::Program, topo: &Topology, bytes: u64) -> Result<JudgedExport> {
    let t = cost::runtime::program::time(p, topo, bytes)?;
    let time_us = t.time_us;
    let (algbw_gbps, busbw_gbps) = bandwidths(p.collective, p.ngpus, bytes as f64, time_us);
    let (bound, _) = time_bound(topo, p.collective, p.root(), Rat::from_integer(bytes as i128))?;
    Ok(JudgedExport {
        bytes,
        protocol: t.protocol.name(),
        time_us,
        algbw_gbps,
        busbw_gbps,
        time_optimality: time_optimality(bound, time_us),
    })
}

/// The time bound over a time (1 for a zero time).
fn time_optimality(bound_us: f64, time_us: f64) -> f64 {
    if time_us > 0.0 {
        bound_us / time_us
    } else {
        1.0
    }
}

/// The most flat transfers for which export judges its lowerings in MSCCL's thread blocks
/// ([`export_msccl_at`]); above it the numbered lowering is written unjudged. It covers the
/// machines of the time targets up to NCCL's rings on hgx-h100:2 (15,360) and dgx-a100:4's
/// ForestColl allreduce (15,872).
pub const JUDGED_TRANSFERS: usize = 20_000;

/// [`export_msccl_with`], the lowering chosen at `bytes`: of the exporter's candidates
/// (`cost::runtime::order::exported_lowering`), the fastest in MSCCL's thread blocks there.
pub fn export_msccl_at(
    s: &Schedule,
    topo: &Topology,
    o: &crate::msccl::lower::Options,
    auto_pipeline: bool,
    text: bool,
    bytes: u64,
) -> Result<MscclExport> {
    let size = Rat::from_integer(bytes.max(1) as i128);
    // The (sub-chunk depth, fused) of each candidate judged, to time the one written.
    let judged_runs = std::cell::RefCell::new(Vec::new());
    let choose = |p: &Schedule, o: &crate::msccl::lower::Options| {
        let e = cost::runtime::exported(p, topo, size, o)?;
        if e.is_some() {
            judged_runs.borrow_mut().push((o.pipeline, o.fused));
        }
        Ok(e.map(|(e, time)| (e.options, time.time_us)))
    };
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    // Judging runs the block model on every candidate (5 lowerings x 3 sub-chunk depths);
    // above the budget that costs more time and memory than the export itself, so a large
    // schedule is written as numbered, unjudged (docs/msccl.md).
    let judged = s.transfers.len() <= JUDGED_TRANSFERS;
    let export = |s: &Schedule| {
        judged_runs.borrow_mut().clear();
        let e = match judged {
            true => crate::msccl::export_chosen(s, o, auto_pipeline, text, &choose),
            false if text => crate::msccl::export(s, o, auto_pipeline),
            false => crate::msccl::export_streamed(s, o, auto_pipeline),
        }?;
        // A program the chooser judged is timed as written (its depth, and fused unless
        // export dropped the fused steps: then the unfused lowering export chose and judged).
        let fused = o.fused && e.unfused_because.is_none();
        let run = e.chosen && judged_runs.borrow().contains(&(e.pipeline, fused));
        let j = match run {
            true => Some(judge_program(&e.program, topo, bytes)?),
            false => None,
        };
        Ok((e, j))
    };
    let why = match export(s) {
        Ok((exported, judged)) => {
            let fallback = exported.unfused_because.clone();
            return Ok(MscclExport { exported, schedule: s.clone(), fallback, judged });
        }
        Err(e) => e,
    };
    let (fixed, (exported, judged), note) = shrink_to_fit(s, topo, why, &export)?;
    let note = match &exported.unfused_because {
        Some(why) => format!("{note}; {why}"),
        None => note,
    };
    Ok(MscclExport { exported, schedule: fixed, fallback: Some(note), judged })
}

/// A schedule that does not fit a runtime (`why`, Infeasible) resynthesized with fewer trees
/// (its algorithm's shrink option, bisected) until `export` takes it: the schedule exported,
/// what `export` made of it and a one-line note with the algbw it costs. Other errors, or an
/// algorithm without a shrink option, are returned as they are.
fn shrink_to_fit<T>(
    s: &Schedule,
    topo: &Topology,
    why: CollsynthError,
    export: &dyn Fn(&Schedule) -> Result<T>,
) -> Result<(Schedule, T, String)> {
    let shrink = synth::find(&s.provenance.algorithm).ok().and_then(|a| a.extras.shrink);
    let (why, shrink) = match (why, shrink) {
        (CollsynthError::Infeasible(why), Some(shrink)) => (why, shrink),
        (e, _) => return Err(e),
    };
    let k: usize = s.provenance.details.usize(shrink.detail).unwrap_or(1);
    let mut options: std::collections::BTreeMap<String, String> = s.provenance.options.iter().cloned().collect();
    let (mut lo, mut hi, mut best) = (1usize, k.saturating_sub(1), None);
    while lo <= hi {
        let mid = (lo + hi) / 2;
        options.insert(shrink.option.into(), mid.to_string());
        let req = Request { root: s.root, options: options.clone(), size: None };
        let fixed = synth::run(topo, s.collective, &s.provenance.algorithm, &req)?;
        check(&fixed, topo)?;
        match export(&fixed) {
            Ok(e) => {
                best = Some((mid, fixed, e));
                lo = mid + 1;
            }
            Err(CollsynthError::Infeasible(_)) => hi = mid - 1,
            Err(e) => return Err(e),
        }
    }
    let Some((kk, fixed, exported)) = best else {
        return Err(CollsynthError::Infeasible(format!(
            "{why}; no {} with fewer {} fits either",
            shrink.what, shrink.unit
        )));
    };
    let one = Rat::from_integer(1);
    // Link loads are taken on every rank's transfers (a resynthesized schedule may be stated
    // per orbit).
    let (s, flat_fixed) = (crate::ir::orbit::flat(s)?, crate::ir::orbit::flat(&fixed)?);
    let (opt, got) = (cost::bandwidth_term_us(&s, topo, one), cost::bandwidth_term_us(&flat_fixed, topo, one));
    let share = crate::rational::to_f64(&(opt / got));
    let (what, detail, unit) = (shrink.what, shrink.detail, shrink.unit);
    let note = format!(
        "the {what} with {detail} = {k} {unit} does not fit ({why}); exported the best {what} with at most \
         {kk} {unit} instead, at {:.1}% of the optimal algbw",
        100.0 * share
    );
    Ok((fixed, exported, note))
}

#[cfg(test)]
mod tests;
