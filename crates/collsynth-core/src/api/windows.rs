//! Sized MSCCL exports: one XML file set that covers a range of sizes with the fastest
//! variant per size window (docs/msccl.md, "Size windows").
//!
//! The runtime picks the file by size: the MSCCL scheduler (Azure/msccl-scheduler,
//! `nccl/scheduler.cc`, `mscclSchedulerSelectAlgo`) takes the first loaded algorithm whose
//! `minBytes <= nBytes <= maxBytes` (`maxBytes` 0: unbounded), whose `ngpus`, `coll` and
//! in-place / out-of-place flags match and whose element count is a multiple of its
//! `nchunksperloop`; `nBytes` is count × element size × `ngpus` for allgather and
//! reduce-scatter (the executor's `mscclGetAlgoMetaFromXmlFile` sets that `sizeMultiplier`),
//! that is the nccl-tests size M of every collective. Files are read in directory order, so
//! the windows written here never overlap: each size is in exactly one.
//!
//! A variant is a verified schedule of a registered algorithm with a pipeline depth (sub-
//! chunks per piece, for schedules without steps) and, for an algorithm that can shrink
//! (`synth::Shrink`: ForestColl's trees per root), its smallest form too (fewer pieces, less
//! latency). Algorithms whose schedule depends on the size (`Extras::sized`) are synthesized
//! at every power of 4 of the range. The runtime model (`cost::Model::Runtime`, calibrated:
//! docs/calibration.md) times every variant at
//! every power of 2 of the range; where the fastest changes between two such sizes, the
//! exact crossover byte count is found by bisection.

use super::{synthesize, Synthesized};
use crate::cost::{time_us, Model};
use crate::error::{CollsynthError, Result};
use crate::ir::{Collective, Schedule};
use crate::rational::Rat;
use crate::synth::{self, Request};
use crate::topology::Topology;

/// The requests `algorithm` is tried with: `req`; each of its [`synth::Extras::forms`] the
/// user did not set; and, for one that can shrink and was not given the option, the smallest
/// form (`--max-trees 1`) of each of those. The suffix names what was added.
pub(super) fn requests(algorithm: &str, req: &Request) -> Vec<(Request, String)> {
    let mut out = vec![(req.clone(), String::new())];
    let Ok(a) = synth::find(algorithm) else { return out };
    for &(option, value) in a.extras.forms.iter().filter(|(o, _)| !req.options.contains_key(*o)) {
        let mut r = req.clone();
        r.options.insert(option.to_string(), value.to_string());
        out.push((r, format!(" --{option} {value}")));
    }
    if let Some(shrink) = a.extras.shrink.filter(|s| !req.options.contains_key(s.option)) {
        for i in 0..out.len() {
            let (mut small, suffix) = out[i].clone();
            small.options.insert(shrink.option.to_string(), "1".into());
            out.push((small, format!("{suffix} --{} 1", shrink.option)));
        }
    }
    out
}

/// A window keeps its variant while that is within this share of the fastest: near-ties
/// (ForestColl with and without its extra trees at 2 GiB) would otherwise cut the range into
/// windows that gain nothing and cost the old runtime its four files.
pub const TOLERANCE: f64 = 0.01;

/// The most windows one file set may hold: the old runtime (microsoft/msccl, `src/include/
/// msccl.h`) loads at most `MSCCL_MAX_NUM_ALGOS` = 4 algorithms; the executor 1024.
pub const MAX_WINDOWS_OLD: usize = 4;

/// One candidate: a verified schedule and how it is lowered.
#[derive(Clone)]
pub struct Variant {
    pub schedule: Schedule,
    pub pipeline: usize,
    /// How the user would ask for it: `forestcoll --max-trees 1 (pipeline 4)`.
    pub label: String,
}

/// A size window `[min_bytes, max_bytes]` (inclusive) and the variant that is fastest in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub min_bytes: u64,
    pub max_bytes: u64,
    /// Index into the variants.
    pub variant: usize,
    /// The runtime model's time of that variant at both ends (µs).
    pub time_us_at_min: f64,
    pub time_us_at_max: f64,
    /// The variant's time over the fastest variant's, at worst over the window's sample sizes
    /// (its ends and the powers of 2 inside): within [`TOLERANCE`] of 1 unless windows were
    /// merged for the old runtime ([`merge_windows`]).
    pub slowdown: f64,
}

/// The variants of `collective` on `topo` for `algorithm` (`auto`: every registered
/// algorithm that applies), each verified, for sizes `lo..=hi` bytes.
pub fn variants(
    topo: &Topology,
    collective: Collective,
    algorithm: &str,
    req: &Request,
    lo: u64,
    hi: u64,
) -> Result<Vec<Variant>> {
    let names: Vec<&str> = if algorithm == "auto" {
        synth::algorithms().into_iter().filter(|a| a.collectives.contains(&collective)).map(|a| a.name).collect()
    } else {
        vec![synth::find(algorithm)?.name]
    };
    let mut out: Vec<Variant> = Vec::new();
    for name in names {
        let alg = synth::find(name)?;
        let sizes = if alg.extras.sized { powers(lo, hi, 4) } else { vec![hi] };
        for (r, suffix) in &requests(name, req) {
            for &size in &sizes {
                let made = match synthesize(topo, collective, name, r, Rat::from_integer(size as i128)) {
                    Ok(Synthesized { schedule, .. }) => super::as_exported(schedule)?,
                    // with `auto`, an algorithm that does not apply is skipped, as `auto` does
                    Err(CollsynthError::BadInput(_) | CollsynthError::Infeasible(_)) if algorithm == "auto" => continue,
                    Err(e) => return Err(e),
                };
                if out.iter().any(|v| super::same_program(&v.schedule, &made)) {
                    continue;
                }
                let at = if alg.extras.sized { format!(" at {size} B") } else { String::new() };
                // The cuts `auto` tries: a plain depth is the exporter's `pipeline`; an
                // interleaved cut is made here, and the exporter writes its sub-pieces as listed.
                for (depth, interleaved) in crate::cost::tuning::lowerings(&made) {
                    let label = format!("{name}{suffix}{at}");
                    out.push(match (interleaved, depth) {
                        (false, 1) => Variant { schedule: made.clone(), pipeline: 1, label },
                        (false, _) => Variant {
                            schedule: made.clone(),
                            pipeline: depth,
                            label: format!("{label} (pipeline {depth})"),
                        },
                        (true, _) => {
                            let cut = crate::cost::tuning::lowered(&made, depth, true)?;
                            super::check(&cut, topo)?;
                            Variant { schedule: cut, pipeline: 1, label: format!("{label} (interleaved {depth})") }
                        }
                    });
                }
            }
        }
    }
    if out.is_empty() {
        return Err(CollsynthError::bad(format!(
            "no registered algorithm applies to {} on this topology",
            collective.name()
        )));
    }
    Ok(out)
}

/// Powers of `base` from `lo` to `hi`, with `lo` and `hi` themselves (sorted, distinct).
fn powers(lo: u64, hi: u64, base: u64) -> Vec<u64> {
    let mut out = vec![lo];
    let mut p = 1u64;
    while p <= hi {
        if p > lo {
            out.push(p);
        }
        p = match p.checked_mul(base) {
            Some(q) => q,
            None => break,
        };
    }
    if *out.last().unwrap() != hi {
        out.push(hi);
    }
    out
}

/// The runtime model's time of `v` at `bytes` (the tuner's judge, `cost::tuning`).
fn time_of(v: &Variant, topo: &Topology, bytes: u64) -> Result<f64> {
    time_us(Model::Runtime, &v.schedule, topo, Rat::from_integer(bytes as i128), v.pipeline)
}

/// The windows of `lo..=hi` (1 <= lo <= hi): at every power of 2 in the range and at both
/// ends, the variant of the window so far while it is within [`TOLERANCE`] of the fastest,
/// else the fastest; between two sizes with different choices, the first byte count at which
/// the later one beats the earlier by more than the tolerance, by bisection (one crossover
/// per interval: the window edge).
pub fn windows(variants: &[Variant], topo: &Topology, lo: u64, hi: u64) -> Result<Vec<Window>> {
    windows_timed(variants, topo, lo, hi, &mut Times::default())
}

/// [`windows`] with the times already known in `times` (and those it takes added to them).
fn windows_timed(variants: &[Variant], topo: &Topology, lo: u64, hi: u64, times: &mut Times) -> Result<Vec<Window>> {
    if lo == 0 || lo > hi {
        return Err(CollsynthError::bad(format!("size windows: need 1 <= MIN <= MAX bytes, got {lo}-{hi}")));
    }
    let points = powers(lo, hi, 2);
    // a beats b at `bytes` by more than the tolerance
    let beats = |times: &mut Times, a: usize, b: usize, bytes: u64| -> Result<bool> {
        let [ta, tb] = times.some(variants, topo, [a, b], bytes)?;
        Ok(ta < (1.0 - TOLERANCE) * tb)
    };
    let mut chosen = vec![times.fastest(variants, topo, lo)?];
    for &b in &points[1..] {
        let prev = *chosen.last().unwrap();
        let best = times.fastest(variants, topo, b)?;
        chosen.push(if beats(times, best, prev, b)? { best } else { prev });
    }
    let mut edges: Vec<(u64, usize)> = vec![(lo, chosen[0])];
    for i in 1..points.len() {
        let (prev, next) = (chosen[i - 1], chosen[i]);
        if prev == next {
            continue;
        }
        // the first size in (points[i-1], points[i]] where `next` beats `prev`
        let (mut a, mut b) = (points[i - 1], points[i]);
        while b - a > 1 {
            let mid = a + (b - a) / 2;
            if beats(times, next, prev, mid)? {
                b = mid;
            } else {
                a = mid;
            }
        }
        edges.push((b, next));
    }
    let mut out: Vec<Window> = Vec::new();
    for (k, &(start, variant)) in edges.iter().enumerate() {
        let end = edges.get(k + 1).map_or(hi, |&(next, _)| next - 1);
        out.push(window(variants, topo, (start, end), variant, times)?);
    }
    Ok(out)
}

/// Runtime-model times by (variant, bytes), each simulated once, and kept across the
/// choices of one export (a variant replaced or dropped forgets only its own). The variants
/// missing at a size are simulated on every core at once (`parallel::each`): a size window
/// export of `mi250:2` runs thousands of simulations of up to 10^5 transfers each.
#[derive(Default)]
struct Times {
    of: std::collections::HashMap<(usize, u64), f64>,
}

impl Times {
    fn get(&mut self, variants: &[Variant], topo: &Topology, v: usize, bytes: u64) -> Result<f64> {
        Ok(self.some(variants, topo, [v], bytes)?[0])
    }

    /// The times of the variants `vs` at `bytes`.
    fn some<const N: usize>(
        &mut self,
        variants: &[Variant],
        topo: &Topology,
        vs: [usize; N],
        bytes: u64,
    ) -> Result<[f64; N]> {
        self.fill(variants, topo, &vs, bytes)?;
        Ok(vs.map(|v| self.of[&(v, bytes)]))
    }

    /// Simulate the variants of `vs` whose time at `bytes` is not known yet.
    fn fill(&mut self, variants: &[Variant], topo: &Topology, vs: &[usize], bytes: u64) -> Result<()> {
        let mut missing: Vec<usize> = vs.iter().copied().filter(|&v| !self.of.contains_key(&(v, bytes))).collect();
        missing.dedup();
        let times = crate::parallel::each(missing.len(), usize::MAX, |i| time_of(&variants[missing[i]], topo, bytes));
        for (v, t) in missing.into_iter().zip(times) {
            self.of.insert((v, bytes), t?);
        }
        Ok(())
    }

    /// The fastest variant at `bytes` (ties: the first).
    fn fastest(&mut self, variants: &[Variant], topo: &Topology, bytes: u64) -> Result<usize> {
        let all: Vec<usize> = (0..variants.len()).collect();
        self.fill(variants, topo, &all, bytes)?;
        let mut best = (0, f64::INFINITY);
        for v in all {
            let t = self.of[&(v, bytes)];
            if t < best.1 {
                best = (v, t);
            }
        }
        Ok(best.0)
    }

    fn best(&mut self, variants: &[Variant], topo: &Topology, bytes: u64) -> Result<f64> {
        let v = self.fastest(variants, topo, bytes)?;
        Ok(self.of[&(v, bytes)])
    }

    /// Variant v is no longer what it was: forget its times.
    fn replaced(&mut self, v: usize) {
        self.of.retain(|&(u, _), _| u != v);
    }

    /// Variant v was dropped from the list: the ones after it move down by one.
    fn removed(&mut self, v: usize) {
        self.of = std::mem::take(&mut self.of)
            .into_iter()
            .filter(|&((u, _), _)| u != v)
            .map(|((u, b), t)| ((if u > v { u - 1 } else { u }, b), t))
            .collect();
    }

    /// Variant v's worst time over the fastest's on `lo..=hi`'s sample sizes.
    fn slowdown(&mut self, variants: &[Variant], topo: &Topology, v: usize, (lo, hi): (u64, u64)) -> Result<f64> {
        let mut worst = 1.0f64;
        for b in powers(lo, hi, 2) {
            let best = self.best(variants, topo, b)?;
            if best > 0.0 {
                worst = worst.max(self.get(variants, topo, v, b)? / best);
            }
        }
        Ok(worst)
    }
}

fn window(
    variants: &[Variant],
    topo: &Topology,
    range: (u64, u64),
    variant: usize,
    times: &mut Times,
) -> Result<Window> {
    Ok(Window {
        min_bytes: range.0,
        max_bytes: range.1,
        variant,
        time_us_at_min: times.get(variants, topo, variant, range.0)?,
        time_us_at_max: times.get(variants, topo, variant, range.1)?,
        slowdown: times.slowdown(variants, topo, variant, range)?,
    })
}

/// At most `max` windows for a runtime that loads no more (the old one: [`MAX_WINDOWS_OLD`]):
/// while there are more, the two adjacent windows whose union loses least are merged, the
/// union served by the one variant with the smallest [`Window::slowdown`] there (any variant,
/// not only the two). Greedy, and the loss is reported rather than hidden: each window keeps
/// its `slowdown`.
pub fn merge_windows(ws: Vec<Window>, variants: &[Variant], topo: &Topology, max: usize) -> Result<Vec<Window>> {
    merge_windows_timed(ws, variants, topo, max, &mut Times::default())
}

/// [`merge_windows`] with the times already known in `times`.
fn merge_windows_timed(
    mut ws: Vec<Window>,
    variants: &[Variant],
    topo: &Topology,
    max: usize,
    times: &mut Times,
) -> Result<Vec<Window>> {
    while ws.len() > max.max(1) {
        let mut best: Option<(f64, usize, usize)> = None;
        for i in 0..ws.len() - 1 {
            let range = (ws[i].min_bytes, ws[i + 1].max_bytes);
            for v in 0..variants.len() {
                let loss = times.slowdown(variants, topo, v, range)?;
                if best.is_none_or(|(l, _, _)| loss < l) {
                    best = Some((loss, i, v));
                }
            }
        }
        let (_, i, v) = best.expect("at least two windows");
        let merged = window(variants, topo, (ws[i].min_bytes, ws[i + 1].max_bytes), v, times)?;
        ws.splice(i..=i + 1, [merged]);
    }
    Ok(ws)
}

/// The protocol the runtime model picks for `v` in the middle (geometric) of window `w`.
fn window_protocol(v: &Variant, topo: &Topology, w: &Window) -> Result<crate::protocol::Protocol> {
    let s = crate::ir::transform::pipelined(&v.schedule, v.pipeline)?;
    protocol_for(&s, topo, (w.min_bytes, w.max_bytes))
}

/// The protocol the runtime model (NCCL's tuner, `cost::runtime::choose_protocol`) picks for
/// `s` at the geometric middle of `lo..=hi` bytes: what a file serving that range is written
/// in when the user does not name one (`--protocol auto`, the size windows).
pub fn protocol_for(s: &Schedule, topo: &Topology, (lo, hi): (u64, u64)) -> Result<crate::protocol::Protocol> {
    let mid = ((lo as f64) * (hi as f64)).sqrt().round().max(1.0) as u64;
    crate::cost::runtime::choose_protocol(s, topo, Rat::from_integer(mid as i128))
}

/// The size (bytes) at which `collsynth export` judges its lowerings for a file serving
/// `range` (`minBytes`, `maxBytes`; 0 for `maxBytes`: unbounded): the range's geometric
/// middle, as for the protocol ([`protocol_for`]); 1 GiB without a bounded range (the
/// default of `--protocol auto`).
pub fn judged_bytes(range: Option<(u64, u64)>) -> u64 {
    match range {
        Some((lo, hi)) if hi != 0 => ((lo.max(1) as f64) * (hi as f64)).sqrt().round().max(1.0) as u64,
        _ => 1 << 30,
    }
}

/// One window of an export: what runs there and its XML.
pub struct WindowExport {
    pub window: Window,
    pub label: String,
    pub pipeline: usize,
    pub export: super::MscclExport,
}

/// Export `collective` on `topo` for sizes `lo..=hi` as one XML per window (`o` gives the
/// runtime, channels and fusion; its pipeline and size range are the windows'). With
/// `protocol` `None`, each window's file is written in the protocol the runtime model assumed
/// for it (`cost::runtime::choose_protocol` at the window's geometric middle), else in the
/// one given.
/// A variant the runtime's limits refuse is dropped, one the exporter had to shrink is
/// replaced by what it exported, and the windows are chosen again, until every window's
/// variant is exactly what its file holds.
pub fn export_windows(
    topo: &Topology,
    collective: Collective,
    algorithm: &str,
    req: &Request,
    range: (u64, u64),
    o: &crate::msccl::lower::Options,
    protocol: Option<crate::protocol::Protocol>,
) -> Result<Vec<WindowExport>> {
    export_windows_with(topo, collective, algorithm, req, range, o, protocol, true)
}

/// [`export_windows`]; `text` false: no window's XML is built (`msccl::export_streamed`),
/// each is left to its `Exported::write_xml`, which streams the same bytes.
#[allow(clippy::too_many_arguments)]
pub fn export_windows_with(
    topo: &Topology,
    collective: Collective,
    algorithm: &str,
    req: &Request,
    (lo, hi): (u64, u64),
    o: &crate::msccl::lower::Options,
    protocol: Option<crate::protocol::Protocol>,
    text: bool,
) -> Result<Vec<WindowExport>> {
    if req.options.contains_key("ranks") {
        return Err(CollsynthError::bad("--ranks does not apply to size windows (one topology for every file)"));
    }
    if lo == 0 || lo > hi {
        return Err(CollsynthError::bad(format!("--size-windows: need 1 <= MIN <= MAX bytes, got {lo}-{hi}")));
    }
    let mut vs = variants(topo, collective, algorithm, req, lo, hi)?;
    let mut times = Times::default();
    'choose: loop {
        if vs.is_empty() {
            return Err(CollsynthError::Infeasible(format!(
                "no variant of {} fits the runtime's limits",
                collective.name()
            )));
        }
        let old = o.runtime == crate::msccl::Runtime::MscclLegacy;
        let mut ws = windows_timed(&vs, topo, lo, hi, &mut times)?;
        if old && ws.len() > MAX_WINDOWS_OLD {
            ws = merge_windows_timed(ws, &vs, topo, MAX_WINDOWS_OLD, &mut times)?;
        }
        // Every window's file is made at once, on every core (an `mi250:2` forest's export
        // judges its lowerings for a minute); the results are taken in window order, so the
        // first window whose variant changes decides, as one after the other would.
        let plans = ws
            .iter()
            .map(|w| {
                let v = &vs[w.variant];
                // the old runtime's maxBytes is exclusive
                let max = if old { w.max_bytes.saturating_add(1) } else { w.max_bytes };
                let proto = match protocol {
                    Some(p) => p,
                    None => window_protocol(v, topo, w)?,
                };
                Ok(crate::msccl::lower::Options {
                    proto,
                    pipeline: v.pipeline,
                    size_range: Some((w.min_bytes, max)),
                    ..o.clone()
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let made = crate::parallel::each(ws.len(), usize::MAX, |i| {
            super::export_msccl_with(&vs[ws[i].variant].schedule, topo, &plans[i], false, text)
        });
        let mut out = Vec::new();
        for (w, result) in ws.into_iter().zip(made) {
            let v = &vs[w.variant];
            match result {
                Ok(e) if e.schedule != v.schedule => {
                    let label = format!("{} (shrunk to fit the runtime)", v.label);
                    vs[w.variant] = Variant { schedule: e.schedule, pipeline: v.pipeline, label };
                    times.replaced(w.variant);
                    continue 'choose;
                }
                Ok(export) => {
                    out.push(WindowExport { label: v.label.clone(), pipeline: v.pipeline, window: w, export })
                }
                Err(CollsynthError::Infeasible(_)) => {
                    vs.remove(w.variant);
                    times.removed(w.variant);
                    continue 'choose;
                }
                Err(e) => return Err(e),
            }
        }
        return Ok(out);
    }
}

#[cfg(test)]
mod tests;
