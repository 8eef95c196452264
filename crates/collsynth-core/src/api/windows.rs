//! Sized MSCCL exports: one XML file set that covers a range of sizes with the fastest
//! variant per size window (issue 19, "sized schedules").
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
                    Ok(Synthesized { schedule, .. }) => schedule,
                    // with `auto`, an algorithm that does not apply is skipped, as `auto` does
                    Err(CollsynthError::BadInput(_) | CollsynthError::Infeasible(_)) if algorithm == "auto" => continue,
                    Err(e) => return Err(e),
                };
                if out.iter().any(|v| v.schedule == made) {
                    continue;
                }
                let at = if alg.extras.sized { format!(" at {size} B") } else { String::new() };
                for &pipeline in crate::cost::tuning::depths(&made) {
                    let depth = if pipeline > 1 { format!(" (pipeline {pipeline})") } else { String::new() };
                    out.push(Variant { schedule: made.clone(), pipeline, label: format!("{name}{suffix}{at}{depth}") });
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

/// The fastest of `variants` at `bytes` (ties: the first) and its time.
fn fastest(variants: &[Variant], topo: &Topology, bytes: u64) -> Result<(usize, f64)> {
    let mut best = (0, f64::INFINITY);
    for (i, v) in variants.iter().enumerate() {
        let t = time_of(v, topo, bytes)?;
        if t < best.1 {
            best = (i, t);
        }
    }
    Ok(best)
}

/// The windows of `lo..=hi` (1 <= lo <= hi): at every power of 2 in the range and at both
/// ends, the variant of the window so far while it is within [`TOLERANCE`] of the fastest,
/// else the fastest; between two sizes with different choices, the first byte count at which
/// the later one beats the earlier by more than the tolerance, by bisection (one crossover
/// per interval: the window edge).
pub fn windows(variants: &[Variant], topo: &Topology, lo: u64, hi: u64) -> Result<Vec<Window>> {
    if lo == 0 || lo > hi {
        return Err(CollsynthError::bad(format!("size windows: need 1 <= MIN <= MAX bytes, got {lo}-{hi}")));
    }
    let points = powers(lo, hi, 2);
    let beats = |a: usize, b: usize, bytes: u64| -> Result<bool> {
        Ok(time_of(&variants[a], topo, bytes)? < (1.0 - TOLERANCE) * time_of(&variants[b], topo, bytes)?)
    };
    let mut chosen = vec![fastest(variants, topo, lo)?.0];
    for &b in &points[1..] {
        let prev = *chosen.last().unwrap();
        let best = fastest(variants, topo, b)?.0;
        chosen.push(if beats(best, prev, b)? { best } else { prev });
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
            if beats(next, prev, mid)? {
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
        let v = &variants[variant];
        out.push(Window {
            min_bytes: start,
            max_bytes: end,
            variant,
            time_us_at_min: time_of(v, topo, start)?,
            time_us_at_max: time_of(v, topo, end)?,
        });
    }
    Ok(out)
}

/// The protocol the runtime model picks for `v` in the middle (geometric) of window `w`.
fn window_protocol(v: &Variant, topo: &Topology, w: &Window) -> Result<crate::protocol::Protocol> {
    let s = crate::ir::transform::pipelined(&v.schedule, v.pipeline);
    protocol_for(&s, topo, (w.min_bytes, w.max_bytes))
}

/// The protocol the runtime model (NCCL's tuner, `cost::runtime::choose_protocol`) picks for
/// `s` at the geometric middle of `lo..=hi` bytes: what a file serving that range is written
/// in when the user does not name one (`--protocol auto`, the size windows).
pub fn protocol_for(s: &Schedule, topo: &Topology, (lo, hi): (u64, u64)) -> Result<crate::protocol::Protocol> {
    let mid = ((lo as f64) * (hi as f64)).sqrt().round().max(1.0) as u64;
    crate::cost::runtime::choose_protocol(s, topo, Rat::from_integer(mid as i128))
}

/// One window of an export: what runs there and its XML.
pub struct WindowExport {
    pub window: Window,
    pub label: String,
    pub pipeline: usize,
    pub export: super::MscclExport,
}

/// Export `collective` on `topo` for sizes `lo..=hi` as one XML per window (`o` gives the
/// dialect, channels and fusion; its pipeline and size range are the windows'). With
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
    (lo, hi): (u64, u64),
    o: &crate::msccl::lower::Options,
    protocol: Option<crate::protocol::Protocol>,
) -> Result<Vec<WindowExport>> {
    if req.options.contains_key("ranks") {
        return Err(CollsynthError::bad("--ranks does not apply to size windows (one topology for every file)"));
    }
    if lo == 0 || lo > hi {
        return Err(CollsynthError::bad(format!("--size-windows: need 1 <= MIN <= MAX bytes, got {lo}-{hi}")));
    }
    let mut vs = variants(topo, collective, algorithm, req, lo, hi)?;
    'choose: loop {
        if vs.is_empty() {
            return Err(CollsynthError::Infeasible(format!(
                "no variant of {} fits the runtime's limits",
                collective.name()
            )));
        }
        let ws = windows(&vs, topo, lo, hi)?;
        let old = o.dialect == crate::msccl::Dialect::Old;
        if old && ws.len() > MAX_WINDOWS_OLD {
            return Err(CollsynthError::bad(format!(
                "--size-windows: {} windows, and the old runtime loads at most {MAX_WINDOWS_OLD} algorithms; \
                 use the new dialect or a narrower range",
                ws.len()
            )));
        }
        let mut out = Vec::new();
        for w in ws {
            let v = &vs[w.variant];
            // the old runtime's maxBytes is exclusive
            let max = if old { w.max_bytes.saturating_add(1) } else { w.max_bytes };
            let proto = match protocol {
                Some(p) => p,
                None => window_protocol(v, topo, &w)?,
            };
            let opts = crate::msccl::lower::Options {
                proto,
                pipeline: v.pipeline,
                size_range: Some((w.min_bytes, max)),
                ..o.clone()
            };
            match super::export_msccl(&v.schedule, topo, &opts, false) {
                Ok(e) if e.schedule != v.schedule => {
                    let label = format!("{} (shrunk to fit the runtime)", v.label);
                    vs[w.variant] = Variant { schedule: e.schedule, pipeline: v.pipeline, label };
                    continue 'choose;
                }
                Ok(export) => {
                    out.push(WindowExport { label: v.label.clone(), pipeline: v.pipeline, window: w, export })
                }
                Err(CollsynthError::Infeasible(_)) => {
                    vs.remove(w.variant);
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
