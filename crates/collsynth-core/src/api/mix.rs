//! `auto`'s mixes: two candidates run side by side, each on its own share of every shard
//! (`ir::transform::side_by_side`). Two schedules that miss the time bound for different
//! reasons can meet it together: on `hgx-h100:2` NCCL's rings load their busiest NVSwitch
//! port 14 % above the bound but fill their pipeline at once, ForestColl's forest meets the
//! bandwidth but fills slowly (every tree crosses a rail); a mix lets the rings' slices run
//! while the forest fills, and its busiest link carries a weighted mean of both (docs/simulator.md,
//! "Mixes").

use crate::cost::runtime::Protocol;
use crate::cost::tuning::{lowered, protocol_times_below, Pick};
use crate::error::Result;
use crate::ir::transform::side_by_side;
use crate::ir::Schedule;
use crate::rational::Rat;
use crate::topology::Topology;

/// The fastest candidate is paired with each of the next `PARTNERS` (every winning mix on
/// the time table's machines held the fastest).
const PARTNERS: usize = 3;

/// The candidates a mix may take: the fastest and its partners (`cost::tuning::fastest_top`
/// need time no others exactly).
pub(super) const MIXED: usize = 1 + PARTNERS;

/// A mix must be this share faster than the fastest candidate: it is a larger program (both
/// parts' thread blocks) for what would otherwise be a near-tie.
const GAIN: f64 = 0.01;

/// The share of the data the first (faster) schedule of a pair moves.
const WEIGHTS: [(i128, i128); 3] = [(1, 4), (1, 2), (3, 4)];

/// A mix that beat every candidate.
pub(super) struct Mix {
    pub schedule: Schedule,
    pub time_us: f64,
    /// The protocol it won under, when not the one NCCL's tuner picks there.
    pub protocol: Option<Protocol>,
    /// `"a (w, depth k) + b (1 - w, depth k')"`: each part's candidate, share and depth.
    pub label: String,
}

/// The fastest mix of the fastest of `picks` with one of the [`PARTNERS`] next (each part
/// lowered to its own depth) that is at least [`GAIN`] faster than `beat` us, or `None`. Candidates using
/// scratch slots are not mixed, nor two that cut the data into different shards (an
/// allreduce over one shard and one over N): `side_by_side` splits every shard alike.
pub(super) fn fastest_mix(
    made: &[(Schedule, String)],
    picks: &[Pick],
    topo: &Topology,
    size: Rat,
    beat: f64,
    check: impl Fn(&Schedule) -> Result<()>,
) -> Result<Option<Mix>> {
    let mut order: Vec<&Pick> = picks.iter().filter(|p| !made[p.index].0.uses_scratch()).collect();
    order.sort_by(|a, b| a.time_us.total_cmp(&b.time_us));
    order.truncate(1 + PARTNERS);
    let lowered: Vec<Schedule> = order
        .iter()
        .map(|p| Ok(unstepped(lowered(crate::ir::orbit::flat(&made[p.index].0)?.as_ref(), p.depth, p.interleaved)?)))
        .collect::<Result<_>>()?;
    let name = |i: usize, w: Rat| {
        let cut = if order[i].interleaved { " interleaved" } else { "" };
        format!("{} ({w}, depth {}{cut})", made[order[i].index].1, order[i].depth)
    };
    let a = 0;
    let pairs: Vec<(usize, (i128, i128))> = (1..lowered.len())
        .filter(|&b| lowered[b].shards == lowered[a].shards)
        .flat_map(|b| WEIGHTS.map(|w| (b, w)))
        .collect();
    let share = |(p, q): (i128, i128)| (Rat::new(p, q), Rat::from_integer(1) - Rat::new(p, q));
    let mix = |b: usize, weights: (i128, i128)| {
        let (w, rest) = share(weights);
        side_by_side(&[(&lowered[a], w), (&lowered[b], rest)])
    };
    // Every mix timed at once on every core, keeping only its times (a mix is as large as its
    // two parts); the winner is taken in order, as one after the other would, and made again.
    // A mix is kept only below `beat * (1 - GAIN)`: what cannot get there is not simulated.
    let cap = beat * (1.0 - GAIN);
    let times = crate::parallel::each(pairs.len(), usize::MAX, |x| {
        protocol_times_below(&mix(pairs[x].0, pairs[x].1)?, topo, size, cap)
    });
    let mut won: Option<(usize, f64, Option<Protocol>)> = None;
    for (x, timed) in times.into_iter().enumerate() {
        for (time_us, protocol) in timed? {
            if time_us < won.map_or(beat * (1.0 - GAIN), |(_, t, _)| t) {
                won = Some((x, time_us, protocol));
            }
        }
    }
    let best = match won {
        None => None,
        Some((x, time_us, protocol)) => {
            let (b, weights) = pairs[x];
            let (w, rest) = share(weights);
            let label = format!("{} + {}", name(a, w), name(b, rest));
            Some(Mix { schedule: mix(b, weights)?, time_us, protocol, label })
        }
    };
    if let Some(m) = &best {
        check(&m.schedule)?;
    }
    Ok(best)
}

/// `s` without steps: a mix of a stepped and an unstepped schedule orders its transfers by
/// their dependencies alone (steps only ever add waits, never data).
fn unstepped(mut s: Schedule) -> Schedule {
    for t in &mut s.transfers {
        t.step = None;
    }
    s
}

#[cfg(test)]
mod tests;
