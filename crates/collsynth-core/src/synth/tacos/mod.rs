//! TACOS (Won et al., "TACOS: Topology-Aware Collective Algorithm Synthesizer"): greedy
//! link-chunk matching on an event-driven time-expanded network, for heterogeneous and
//! asymmetric topologies, fast enough for tens of thousands of NPUs.
//!
//! * `engine`: the matching (random order of unsatisfied postconditions per event,
//!   lower-link-cost-first, random ties, chunk replacement);
//! * `network`: the virtual links it matches on (direct links; switches as shared ports or
//!   unwound into point-to-point links);
//! * this file: options, the collectives (allgather and broadcast natively; reduce-scatter
//!   and reduce by reversal of the one made on the transpose; allreduce = reduce-scatter then
//!   allgather), restarts, and the IR.
//!
//! Link costs depend on the chunk size, so synthesis needs the collective size: the
//! option `size` (default 1GiB; the CLI's `--size` is not passed to synthesizers), or the
//! explicit size of [`synthesize_sized`] / [`time_only`]. On topologies whose links all
//! cost the same the schedule does not depend on it.

mod arrive;
pub mod engine;
pub mod network;
pub mod rng;
mod sets;
#[cfg(test)]
mod tests;

use super::{Algorithm, Extras, Request, TimeReport};
use crate::error::{CollsynthError, Result};
use crate::ir::transform::{compose, reverse, transpose};
use crate::ir::{Collective, Details, Op, Piece, Schedule, Transfer};
use crate::rational::{to_f64, Rat};
use crate::topology::restrict::{parse_ranks, restrict_ranks};
use crate::topology::Topology;
use crate::units::parse_size;
use engine::Sampler;
use network::{Net, SwitchMode};

/// `auto` picks [`Sampler::Direct`] on networks with shared switch ports from this many
/// ranks on (below it, and on point-to-point networks, the reference-identical lists; see
/// docs/tacos.md "Samplers").
pub const DIRECT_FROM: usize = 512;

/// `auto` picks [`Sampler::Sets`] on point-to-point networks whose links all cost the same
/// from this many ranks on (below it every pinned mesh result keeps the lists' value; see
/// docs/tacos.md "Samplers").
pub const SETS_FROM: usize = 8192;

/// The `sampler` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplerChoice {
    Auto,
    Fixed(Sampler),
}

impl SamplerChoice {
    pub fn parse(text: &str) -> Result<SamplerChoice> {
        match text {
            "auto" => Ok(SamplerChoice::Auto),
            "lists" => Ok(SamplerChoice::Fixed(Sampler::Lists)),
            "direct" => Ok(SamplerChoice::Fixed(Sampler::Direct)),
            "sets" => Ok(SamplerChoice::Fixed(Sampler::Sets)),
            _ => Err(CollsynthError::bad(format!("--sampler must be auto, lists, direct or sets, got '{text}'"))),
        }
    }

    /// The sampler for `net`.
    pub fn on(self, net: &Net) -> Sampler {
        match self {
            SamplerChoice::Fixed(s) => s,
            SamplerChoice::Auto if net.shared && net.n >= DIRECT_FROM => Sampler::Direct,
            SamplerChoice::Auto if !net.shared && net.uniform && net.n >= SETS_FROM => Sampler::Sets,
            SamplerChoice::Auto => Sampler::Lists,
        }
    }
}

fn sampler_name(s: Sampler) -> &'static str {
    match s {
        Sampler::Lists => "lists",
        Sampler::Direct => "direct",
        Sampler::Sets => "sets",
    }
}

pub const TACOS: Algorithm = Algorithm {
    name: "tacos",
    help: "TACOS greedy link-chunk matching on the time-expanded network (heterogeneous, asymmetric, large)",
    collectives: Collective::FIVE,
    options: &["chunks-per-npu", "seed", "restarts", "ranks", "switch-mode", "sampler", "size"],
    synthesize,
    extras: Extras { time_only: Some(time_report), sized: true, ..Extras::NONE },
};

/// [`time_only`] at the request's size, as the registry reports it: `events` and, per part,
/// its best seed and time.
fn time_report(topo: &Topology, collective: Collective, req: &Request) -> Result<TimeReport> {
    let t = time_only(topo, collective, req, req.size)?;
    let parts: Vec<serde_json::Value> = t
        .parts
        .iter()
        .map(|(part, seed, time_us)| serde_json::json!({"part": part, "seed": seed, "time_us": time_us}))
        .collect();
    Ok(TimeReport {
        n_ranks: t.n_ranks,
        time_us: t.time_us,
        time_model: "tacos",
        keys: Details::new().with("events", t.events).with("parts", parts),
    })
}

pub(crate) const ALGORITHMS: &[&Algorithm] = &[&TACOS];

/// Parsed options.
#[derive(Debug, Clone)]
pub struct Options {
    pub chunks: usize,
    pub seed: u64,
    pub restarts: usize,
    pub mode: SwitchMode,
    pub sampler: SamplerChoice,
    /// Collective size M in bytes.
    pub size: Rat,
    pub ranks: Option<Vec<usize>>,
}

impl Options {
    pub fn from_request(req: &Request, size: Option<Rat>) -> Result<Options> {
        let chunks = req.option_usize("chunks-per-npu", 1)?;
        let restarts = req.option_usize("restarts", 1)?;
        if chunks == 0 || chunks > 1 << 16 {
            return Err(CollsynthError::bad(format!("--chunks-per-npu must be in 1..=65536, got {chunks}")));
        }
        if restarts == 0 {
            return Err(CollsynthError::bad("--restarts must be at least 1"));
        }
        let seed = match req.options.get("seed") {
            None => 0,
            Some(v) => v.parse().map_err(|_| CollsynthError::bad(format!("--seed: '{v}' is not a whole number")))?,
        };
        let mode = SwitchMode::parse(req.options.get("switch-mode").map(String::as_str).unwrap_or("ports"))?;
        let sampler = SamplerChoice::parse(req.options.get("sampler").map(String::as_str).unwrap_or("auto"))?;
        let size = match (size, req.options.get("size")) {
            (Some(s), _) => s,
            (None, Some(v)) => parse_size(v).map_err(|e| e.context("--size"))?,
            (None, None) => Rat::from_integer(1 << 30),
        };
        if size <= Rat::from_integer(0) {
            return Err(CollsynthError::bad("--size must be positive"));
        }
        let ranks = req.options.get("ranks").map(|v| parse_ranks(v)).transpose()?;
        Ok(Options { chunks, seed, restarts, mode, sampler, size, ranks })
    }
}

/// What one copy part (allgather or broadcast) is.
#[derive(Debug, Clone, Copy)]
enum Part {
    Allgather,
    Broadcast(usize),
}

impl Part {
    /// Chunk sources: allgather chunk `j N + r` starts at rank r (the reference's
    /// numbering), broadcast chunk j at the root.
    fn sources(self, n: usize, k: usize) -> Vec<u32> {
        match self {
            Part::Allgather => (0..k * n).map(|c| (c % n) as u32).collect(),
            Part::Broadcast(root) => vec![root as u32; k],
        }
    }

    fn chunk_bytes(self, n: usize, k: usize, size: Rat) -> f64 {
        let per = match self {
            Part::Allgather => size / Rat::from_integer((n * k) as i128),
            Part::Broadcast(_) => size / Rat::from_integer(k as i128),
        };
        to_f64(&per).floor()
    }
}

/// The best seed of a part and its time (by the synthesizer's own clock, which for
/// point-to-point topologies is the simulator's time of the schedule: tested).
struct Best {
    seed: u64,
    time_us: f64,
}

fn best_seed(net: &Net, sources: &[u32], o: &Options) -> Result<Best> {
    let (best, _) = restarts(net, sources, o)?;
    Ok(best)
}

/// Run every restart in time-only mode (in ranges on all cores, each run on one thread: the
/// runs are independent); the first fastest (as one after the other would keep) and the
/// total number of events.
fn restarts(net: &Net, sources: &[u32], o: &Options) -> Result<(Best, usize)> {
    let run = |i: usize| {
        crate::budget::check_cancelled()?;
        let seed = rng::restart_seed(o.seed, i);
        engine::run(net, sources, seed, false, o.sampler.on(net)).map(|out| (seed, out.time_us, out.events))
    };
    // Each range keeps only its first fastest run: memory stays flat for any --restarts.
    let best_of = |range: std::ops::Range<usize>| -> Result<(Option<Best>, usize)> {
        let (mut best, mut events): (Option<Best>, usize) = (None, 0);
        for i in range {
            let (seed, time_us, e) = run(i)?;
            events += e;
            if best.as_ref().is_none_or(|b| time_us < b.time_us) {
                best = Some(Best { seed, time_us });
            }
        }
        Ok((best, events))
    };
    let ranges = if o.restarts == 1 {
        vec![best_of(0..1)] // one run: all cores for its own parallel parts
    } else {
        crate::parallel::in_ranges(o.restarts, 1, |range| crate::parallel::single_threaded(|| best_of(range)))
    };
    let mut best: Option<Best> = None;
    let mut events = 0;
    for range in ranges {
        let (b, e) = range?;
        events += e;
        // Ranges in order, strictly faster only: the first fastest, as one after the other would keep.
        if let Some(b) = b.filter(|b| best.as_ref().is_none_or(|x| b.time_us < x.time_us)) {
            best = Some(b);
        }
    }
    Ok((best.expect("restarts >= 1"), events))
}

/// `a()` and `b()` (two independent parts) on two threads, each running its own parallel
/// parts on one thread; one after the other where the policy gives one thread. The results
/// are the same either way.
fn both<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    if crate::parallel::threads(2) < 2 {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let first = scope.spawn(|| crate::parallel::single_threaded(a));
        let second = crate::parallel::single_threaded(b);
        (first.join().expect("a TACOS part panicked"), second)
    })
}

/// Synthesize one copy part on `topo` into IR.
fn copy_part(topo: &Topology, part: Part, o: &Options, details: &mut Details, tag: &str) -> Result<Schedule> {
    let n = topo.n_ranks();
    let net = network::build(topo, part.chunk_bytes(n, o.chunks, o.size), o.mode)?;
    let sources = part.sources(n, o.chunks);
    let seed = if o.restarts > 1 { best_seed(&net, &sources, o)?.seed } else { o.seed };
    let sampler = o.sampler.on(&net);
    let out = engine::run(&net, &sources, seed, true, sampler)?;
    details.set(format!("{tag}tacos_time_us"), out.time_us);
    // Only the new process is named: a schedule made by the lists keeps its bytes.
    if sampler != Sampler::Lists {
        details.set(format!("{tag}sampler"), sampler_name(sampler));
    }
    details.set(format!("{tag}seed"), seed);
    details.set(format!("{tag}replacements"), out.replacements);
    to_ir(topo, &net, part, o.chunks, &out)
}

fn to_ir(topo: &Topology, net: &Net, part: Part, k: usize, out: &engine::Outcome) -> Result<Schedule> {
    let n = topo.n_ranks();
    let (collective, root) = match part {
        Part::Allgather => (Collective::Allgather, 0),
        Part::Broadcast(r) => (Collective::Broadcast, r),
    };
    let mut s = Schedule::new(collective, n, root, TACOS.name);
    let kk = k as i128;
    let n_chunks = match part {
        Part::Allgather => n * k,
        Part::Broadcast(_) => k,
    };
    for c in 0..n_chunks {
        let (shard, j) = match part {
            Part::Allgather => (c % n, (c / n) as i128),
            Part::Broadcast(_) => (0, c as i128),
        };
        s.add_piece(Piece { shard, start: Rat::new(j, kk), end: Rat::new(j + 1, kk) });
    }
    // Sequential pass: `before[i]` = kept matches before match i (a kept match's transfer id,
    // and a range's first id and count), and (point-to-point networks) the transfer before
    // each on its virtual link, whose order the simulator must keep.
    const NONE: u32 = u32::MAX;
    let mut before = Vec::with_capacity(out.matches.len() + 1);
    let mut prev = vec![NONE; if net.shared { 0 } else { out.matches.len() }];
    let mut last_on = vec![NONE; net.vlinks.len()];
    let mut kept = 0u32;
    for (i, m) in out.matches.iter().enumerate() {
        before.push(kept);
        if m.wasted {
            continue;
        }
        if !net.shared {
            prev[i] = std::mem::replace(&mut last_on[m.vlink as usize], kept);
        }
        kept += 1;
    }
    before.push(kept);
    // The transfers' array, routes and dependencies (at most two), estimated before any is made.
    let each = std::mem::size_of::<Transfer>() + 2 * std::mem::size_of::<usize>();
    let bytes: u128 = out
        .matches
        .iter()
        .filter(|m| !m.wasted)
        .map(|m| (each + net.routes[m.vlink as usize].len() * std::mem::size_of::<usize>()) as u128)
        .sum();
    crate::budget::check_memory(&format!("tacos' schedule of {kept} transfers"), Some(bytes), 1)?;
    // Then the transfers, in parallel over ranges of matches (each is independent now).
    let transfer = |i: usize| -> Transfer {
        let m = &out.matches[i];
        let v = &net.vlinks[m.vlink as usize];
        let mut after = Vec::with_capacity(2);
        let d = out.deliver[m.chunk as usize * n + v.src as usize];
        if d != NONE {
            after.push(before[d as usize] as usize);
        }
        if let Some(&p) = prev.get(i).filter(|&&p| p != NONE && !after.contains(&(p as usize))) {
            after.push(p as usize);
        }
        let route = net.routes[m.vlink as usize].clone();
        Transfer::new(m.chunk as usize, v.src as usize, v.dst as usize, route, Op::Copy, after, None)
    };
    // Written in place: at millions of transfers, page faults (a few microseconds each in
    // a VM) cost more than the work, so the array is touched once, never regrown or copied.
    let per = out.matches.len().div_ceil(engine::threads()).max(1);
    s.transfers = Vec::with_capacity(kept as usize);
    let mut jobs = Vec::new();
    let mut rest = &mut s.transfers.spare_capacity_mut()[..kept as usize];
    for lo in (0..out.matches.len()).step_by(per) {
        let hi = (lo + per).min(out.matches.len());
        let (here, tail) = std::mem::take(&mut rest).split_at_mut((before[hi] - before[lo]) as usize);
        rest = tail;
        jobs.push((lo..hi, here));
    }
    engine::on_threads(jobs, |(range, here)| {
        let first = before[range.start];
        for i in range.filter(|&i| !out.matches[i].wasted) {
            here[(before[i] - first) as usize].write(transfer(i));
        }
    });
    // SAFETY: the kept matches' ids are exactly 0..kept (`before` counts them in order), each
    // job wrote the ids of its range, and `on_threads` joined every thread (a panic there
    // propagates before this line).
    unsafe { s.transfers.set_len(kept as usize) };
    Ok(s)
}

fn synthesize(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    let (t, s) = synthesize_sized(topo, collective, req, req.size)?;
    if t.n_ranks() != topo.n_ranks() {
        return Err(CollsynthError::bad(
            "--ranks: a sub-collective's schedule runs on the restricted topology (the other ranks become \
             switches); synthesize it through api::synthesize, which restricts the topology first",
        ));
    }
    Ok(s)
}

/// The options of a request, the topology they apply to (`topo`, or with `--ranks` its
/// restriction to those ranks) and the root, checked against that topology.
fn prologue(topo: &Topology, req: &Request, size: Option<Rat>) -> Result<(Options, Topology, usize)> {
    let o = Options::from_request(req, size)?;
    let topo = match &o.ranks {
        Some(r) => restrict_ranks(topo, r)?,
        None => topo.clone(),
    };
    crate::synth::check_root(&topo, req.root)?;
    Ok((o, topo, req.root))
}

/// Synthesize (unverified) with an explicit size (else the `size` option); returns the
/// topology the schedule is for: `topo`, or with `--ranks` its restriction to those ranks.
pub fn synthesize_sized(
    topo: &Topology,
    collective: Collective,
    req: &Request,
    size: Option<Rat>,
) -> Result<(Topology, Schedule)> {
    let (o, topo, root) = prologue(topo, req, size)?;
    let mut details = Details::new().with("switch_mode", o.mode.name()).with("chunks_per_npu", o.chunks);
    let s = match collective {
        Collective::Allgather => copy_part(&topo, Part::Allgather, &o, &mut details, "")?,
        Collective::Broadcast => copy_part(&topo, Part::Broadcast(root), &o, &mut details, "")?,
        Collective::ReduceScatter => reduction_part(&topo, Part::Allgather, &o, &mut details, "")?,
        Collective::Reduce => reduction_part(&topo, Part::Broadcast(root), &o, &mut details, "")?,
        Collective::Allreduce => {
            // The two halves are independent: synthesized side by side.
            let (mut rs_details, mut ag_details) = (Details::new(), Details::new());
            let (rs, ag) = both(
                || reduction_part(&topo, Part::Allgather, &o, &mut rs_details, "rs_"),
                || copy_part(&topo, Part::Allgather, &o, &mut ag_details, "ag_"),
            );
            let (rs, ag) = (rs?, ag?);
            details.extend(rs_details);
            details.extend(ag_details);
            let mut ar = compose(&rs, &ag, Collective::Allreduce)?;
            link_barrier(&mut ar, rs.transfers.len(), topo.links.len());
            ar
        }
        c => return Err(CollsynthError::bad(format!("tacos does not support {}", c.name()))),
    };
    let mut s = s;
    s.provenance.details = details;
    Ok((topo, s))
}

/// The reduction whose reversal is `part` (reduce-scatter for allgather, reduce for
/// broadcast): `part` synthesized on the transpose, reversed.
fn reduction_part(topo: &Topology, part: Part, o: &Options, details: &mut Details, tag: &str) -> Result<Schedule> {
    let tt = transpose(topo);
    let made = copy_part(&tt, part, o, details, tag)?;
    reverse(&made, &tt, topo)
}

/// In a composed allreduce, the first allgather transfer on each link waits for the last
/// reduce-scatter transfer on it, so the simulator never lets the allgather overtake the
/// reduce-scatter on a link (it would break the synthesized link order). With per-link
/// chains (point-to-point and unwound networks), the reduce-scatter transfer with the
/// smallest index on a link is its last in time (reversal keeps indices, flips time).
fn link_barrier(s: &mut Schedule, n_rs: usize, n_links: usize) {
    let mut last_rs = vec![usize::MAX; n_links];
    for (i, t) in s.transfers[..n_rs].iter().enumerate().rev() {
        for &l in &t.route {
            last_rs[l] = i;
        }
    }
    for i in n_rs..s.transfers.len() {
        let route = s.transfers[i].route.clone();
        for l in route {
            let r = std::mem::replace(&mut last_rs[l], usize::MAX);
            if r != usize::MAX && !s.transfers[i].after.contains(&r) {
                s.transfers[i].after.push(r);
            }
        }
    }
}

/// `--time-only`: the collective time by the synthesizer's clock, without materializing
/// the IR (allreduce: reduce-scatter time + allgather time).
#[derive(Debug, Clone)]
pub struct TimeOnly {
    pub time_us: f64,
    pub n_ranks: usize,
    /// Per part: (name, best seed, time).
    pub parts: Vec<(String, u64, f64)>,
    pub events: usize,
}

pub fn time_only(topo: &Topology, collective: Collective, req: &Request, size: Option<Rat>) -> Result<TimeOnly> {
    let (o, topo, root) = prologue(topo, req, size)?;
    let n = topo.n_ranks();
    let mut parts: Vec<(&str, Part, bool)> = Vec::new();
    match collective {
        Collective::Allgather => parts.push(("allgather", Part::Allgather, false)),
        Collective::Broadcast => parts.push(("broadcast", Part::Broadcast(root), false)),
        Collective::ReduceScatter => parts.push(("reduce-scatter", Part::Allgather, true)),
        Collective::Reduce => parts.push(("reduce", Part::Broadcast(root), true)),
        Collective::Allreduce => {
            parts.push(("reduce-scatter", Part::Allgather, true));
            parts.push(("allgather", Part::Allgather, false));
        }
        c => return Err(CollsynthError::bad(format!("tacos does not support {}", c.name()))),
    }
    let run_part = |(part, on_transpose): (Part, bool)| -> Result<(Best, usize)> {
        let t = if on_transpose { transpose(&topo) } else { topo.clone() };
        let net = network::build(&t, part.chunk_bytes(n, o.chunks, o.size), o.mode)?;
        restarts(&net, &part.sources(n, o.chunks), &o)
    };
    let runs = match parts[..] {
        [(_, a, ta), (_, b, tb)] => {
            let (x, y) = both(|| run_part((a, ta)), || run_part((b, tb)));
            vec![x, y]
        }
        _ => parts.iter().map(|&(_, p, tr)| run_part((p, tr))).collect(),
    };
    let mut out = TimeOnly { time_us: 0.0, n_ranks: n, parts: Vec::new(), events: 0 };
    for ((name, _, _), run) in parts.into_iter().zip(runs) {
        let (best, events) = run?;
        out.events += events;
        out.time_us += best.time_us;
        out.parts.push((name.to_string(), best.seed, best.time_us));
    }
    Ok(out)
}
