//! Choosing an algorithm per size (`--algorithm auto`, size windows), like NCCL's
//! `tuning.cc`: the cost model judges every candidate at every pipeline depth its shape
//! allows; no synthesizer decides for itself.

use super::runtime::{self, Protocol};
use crate::error::Result;
use crate::ir::Schedule;
use crate::rational::Rat;
use crate::topology::Topology;

/// Pipeline depths tried for schedules without steps (trees): what the MSCCL exporter can
/// write (it cuts trees into at most 4 sub-chunks when it chooses itself).
const PIPELINES: [usize; 4] = [1, 2, 4, 8];

/// Interleaved depths tried for schedules without steps ([`crate::ir::transform::interleaved()`]:
/// sub-pieces listed round by round, the longest chain first, ramped 1, 2, .., 2, 1): the
/// depths whose first and last sub-pieces are smaller than the others.
const INTERLEAVED: [usize; 2] = [4, 8];

/// Interleaving is tried while the cut schedule has at most this many transfers: each try
/// is up to three simulations. 2^19 takes in `boxes-direct`'s 63,488 transfers on `mi250:2`
/// cut 8 deep (its reduce-scatter at 64 MiB: 311.2 us interleaved, 331.4 at its best plain
/// depth); 2^16 before.
const INTERLEAVED_TRANSFERS: usize = 1 << 19;

/// The depths a schedule is tried at: 1, 2, 4 and 8 for one without steps (a tree pipelines
/// its pieces down the tree), 1 for a step schedule (its steps already are the pipeline).
pub fn depths(s: &Schedule) -> &'static [usize] {
    if s.n_steps().is_none() {
        &PIPELINES
    } else {
        &[1]
    }
}

/// A schedule's times (us) by protocol, `None` for the tuner's ([`protocol_times`]).
pub type ProtocolTimes = Vec<(f64, Option<Protocol>)>;

/// What [`fastest`] picked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pick {
    /// Index of the candidate.
    pub index: usize,
    /// Pipeline depth (sub-chunks per piece).
    pub depth: usize,
    /// Cut by [`crate::ir::transform::interleaved()`] rather than
    /// [`crate::ir::transform::pipelined`].
    pub interleaved: bool,
    pub time_us: f64,
    /// The protocol it won under, when not the one NCCL's tuner picks there.
    pub protocol: Option<Protocol>,
}

/// The fastest of [`fastest_each`]'s picks: the fastest candidate at `size` by the
/// runtime-faithful model ([`super::Model::Runtime`], the calibrated one), over [`depths`] and
/// protocols. Each (candidate, depth) is simulated under the tuner's protocol and under the
/// two others (an MSCCL XML fixes its protocol, so `auto` may choose it; the tuner's estimate
/// only ranks protocols). Ties go to the earlier candidate, the shallower depth and the
/// tuner's protocol. `None` without candidates.
///
/// Besides the depths, every schedule without steps is tried interleaved ([`lowerings`]):
/// on `dgx-a100:2` that is what brings its reduce-scatter at 64 MiB within 1.15x of the time
/// bound (docs/simulator.md, "Interleaved pipelining").
pub fn fastest(picks: &[Pick]) -> Option<Pick> {
    picks.iter().copied().reduce(|best, p| if p.time_us < best.time_us { p } else { best })
}

/// Every candidate's fastest (depth, protocol) at `size`, as [`fastest`] judges them, in
/// the candidates' order.
pub fn fastest_each<'a>(
    candidates: impl IntoIterator<Item = &'a Schedule>,
    topo: &Topology,
    size: Rat,
) -> Result<Vec<Pick>> {
    let candidates: Vec<&Schedule> = candidates.into_iter().collect();
    // Every candidate in the top: no cap, every pick exact.
    let eligible = vec![true; candidates.len()];
    fastest_top(candidates, topo, size, &eligible, usize::MAX).map(|(picks, _)| picks)
}

/// [`fastest_each`] for a caller that reads only the fastest pick and the `top` fastest of
/// the candidates marked `eligible` (`auto`: its mixes pair the fastest candidate without
/// scratch slots with the next three): those picks are exact, any other candidate's may be
/// slower than its best or missing. A cut is simulated only under the protocols whose floor
/// ([`protocol_times_below`]) is below the `top`-th fastest eligible time known so far, which
/// only ever bounds the final one from above: what is left out could not reach the top.
/// Candidates with the lowest floor go first, so that the bar is set early. Also returns how
/// many (cut, protocol) runs were simulated.
pub fn fastest_top<'a>(
    candidates: impl IntoIterator<Item = &'a Schedule>,
    topo: &Topology,
    size: Rat,
    eligible: &[bool],
    top: usize,
) -> Result<(Vec<Pick>, usize)> {
    let flats = candidates.into_iter().map(crate::ir::orbit::flat).collect::<Result<Vec<_>>>()?;
    let cuts: Vec<(usize, usize, bool)> = flats
        .iter()
        .enumerate()
        .flat_map(|(i, f)| lowerings(f.as_ref()).into_iter().map(move |(d, il)| (i, d, il)))
        .collect();
    // A candidate's floor under its best protocol (a cut moves the same bytes); an error is
    // met again, in order, when the cut is timed.
    let floor_of: Vec<f64> = flats
        .iter()
        .map(|f| {
            runtime::sim::floors_us(f, topo, size)
                .map_or(f64::INFINITY, |fl| fl.into_iter().fold(f64::INFINITY, f64::min))
        })
        .collect();
    let mut order: Vec<usize> = (0..cuts.len()).collect();
    order.sort_by(|&a, &b| floor_of[cuts[a].0].total_cmp(&floor_of[cuts[b].0]).then(a.cmp(&b)));
    let known = std::sync::Mutex::new(vec![f64::INFINITY; flats.len()]);
    let bar = |known: &[f64]| {
        let mut t: Vec<f64> = known.iter().zip(eligible).filter(|(_, &e)| e).map(|(&t, _)| t).collect();
        t.sort_by(f64::total_cmp);
        top.checked_sub(1).and_then(|k| t.get(k).copied()).unwrap_or(f64::INFINITY)
    };
    // Every (candidate, cut) simulated at once on every core (`auto` on `mi250:2` times ~50
    // of them); the picks are then made in cut order, so ties fall as they always did.
    let timed = crate::parallel::each(order.len(), usize::MAX, |y| {
        let (i, depth, interleaved) = cuts[order[y]];
        let cap = bar(&known.lock().expect("a worker thread panicked"));
        let times = protocol_times_below(&lowered(flats[i].as_ref(), depth, interleaved)?, topo, size, cap)?;
        let fastest = times.iter().map(|t| t.0).fold(f64::INFINITY, f64::min);
        let mut known = known.lock().expect("a worker thread panicked");
        known[i] = known[i].min(fastest);
        Ok(times)
    });
    let mut by_cut: Vec<Option<Result<ProtocolTimes>>> = (0..cuts.len()).map(|_| None).collect();
    for (y, t) in timed.into_iter().enumerate() {
        by_cut[order[y]] = Some(t);
    }
    let mut best: Vec<Option<Pick>> = vec![None; flats.len()];
    let mut simulated = 0;
    for (&(index, depth, interleaved), timed) in cuts.iter().zip(by_cut) {
        let timed = timed.expect("every cut ran")?;
        simulated += timed.len();
        for (time_us, protocol) in timed {
            if best[index].is_none_or(|b| time_us < b.time_us) {
                best[index] = Some(Pick { index, depth, interleaved, time_us, protocol });
            }
        }
    }
    Ok((best.into_iter().flatten().collect(), simulated))
}

/// The (depth, interleaved) cuts `s` (flat) is tried at: [`depths`], then for a schedule
/// without steps the `INTERLEAVED` depths that keep it within `INTERLEAVED_TRANSFERS`.
pub fn lowerings(s: &Schedule) -> Vec<(usize, bool)> {
    let mut out: Vec<(usize, bool)> = depths(s).iter().map(|&d| (d, false)).collect();
    if s.n_steps().is_none() {
        let fits = |&&k: &&usize| s.transfers.len().saturating_mul(k) <= INTERLEAVED_TRANSFERS;
        out.extend(INTERLEAVED.iter().filter(fits).map(|&k| (k, true)));
    }
    out
}

/// `s` (flat) cut as a [`Pick`] says: `depth` sub-chunks per piece, interleaved or not.
pub fn lowered(s: &Schedule, depth: usize, interleaved: bool) -> Result<Schedule> {
    if interleaved {
        crate::ir::transform::interleaved(s, depth)
    } else {
        crate::ir::transform::pipelined(s, depth)
    }
}

/// `s`'s time under the tuner's protocol (`None`), then under each other protocol that could
/// be faster.
///
/// A protocol whose base latency plus busiest link ([`runtime::sim::busiest_link_us`]) is
/// already no faster than the fastest time so far is left out, not simulated: it could not
/// be picked (picks take the first strictly faster time), and at large sizes it is LL, whose
/// 32 KiB slices made its simulation most of `auto`'s time.
pub fn protocol_times(s: &Schedule, topo: &Topology, size: Rat) -> Result<ProtocolTimes> {
    protocol_times_below(s, topo, size, f64::INFINITY)
}

/// [`protocol_times`] for a caller that keeps only a time below `cap`: a protocol whose floor
/// is no faster than `cap` is left out too, the tuner's included (`auto`'s mixes must beat
/// the fastest candidate by 1 %: most of them cannot, and at 1 GiB their simulations were
/// two thirds of `auto`'s time). With an infinite cap the tuner's protocol is always timed.
pub fn protocol_times_below(s: &Schedule, topo: &Topology, size: Rat, cap: f64) -> Result<ProtocolTimes> {
    let tuned = runtime::choose_protocol(s, topo, size)?;
    let floors = runtime::sim::floors_us(s, topo, size)?;
    let others = Protocol::ALL.into_iter().filter(|&p| p != tuned).map(Some);
    let mut times = Vec::new();
    let mut best = cap;
    for p in std::iter::once(None).chain(others) {
        let protocol = p.unwrap_or(tuned);
        // The margin covers the simulator's float sums over up to 2^21 slices a link (an
        // empty schedule takes 0 under every protocol: nothing more to simulate).
        if floors[protocol.index()] * (1.0 - 1e-9) >= best {
            continue;
        }
        let time_us = runtime::runtime_time(s, topo, size, protocol)?.time_us;
        best = best.min(time_us);
        times.push((time_us, p));
    }
    Ok(times)
}
