//! NCCL-faithful baselines: `nccl-ring` and `nccl-tree`, built as NCCL builds its rings
//! and trees on the topology (docs/nccl.md): the channel search of [`search`] (NCCL's
//! src/graph/search.cc), rings of [`rings`] (connect.cc), trees of [`trees`] (trees.cc,
//! connect.cc). The data is split evenly over the channels, each running its own ring or
//! tree; channel schedules are put side by side.

pub mod rings;
pub mod search;
pub mod trees;

use crate::error::{CollsynthError, Result};
use crate::ir::transform::side_by_side;
use crate::ir::{Collective, Executor, Op, Piece, Schedule, Transfer};
use crate::rational::Rat;
use crate::synth::baselines::common::{allreduce, from_copy_forms, reduction, Paths};
use crate::synth::baselines::dbt::Tree;
use crate::synth::{Algorithm, Extras, Request, Shrink};
use crate::topology::Topology;
use search::Channels;
use std::collections::VecDeque;

pub const NCCL_RING: Algorithm = Algorithm {
    name: "nccl-ring",
    help: "NCCL's rings: one per channel as NCCL's search finds them (all NICs used), data split over channels",
    collectives: Collective::FIVE,
    options: &["crossing", "max-channels"],
    synthesize: synthesize_ring,
    extras: Extras { forms: &[("crossing", "rail")], shrink: Some(FEWER_CHANNELS), ..Extras::NONE },
};

pub const NCCL_TREE: Algorithm = Algorithm {
    name: "nccl-tree",
    help: "NCCL's tree: a chain per box, double binary tree across boxes, half the channels on each tree",
    collectives: &[Collective::Allreduce],
    options: &["max-channels"],
    synthesize: synthesize_tree,
    extras: Extras { shrink: Some(FEWER_CHANNELS), ..Extras::NONE },
};

/// An exporter that cannot hold NCCL's channels gets fewer, as `NCCL_MAX_NCHANNELS` gives
/// (connect.cc `ncclTopoPostset`: `nChannels = min(ncclMaxNchannels(), nChannels)`).
const FEWER_CHANNELS: Shrink =
    Shrink { option: "max-channels", detail: "nccl_channels", what: "NCCL schedule", unit: "channels" };

/// NCCL's channels, capped by `--max-channels` (`NCCL_MAX_NCHANNELS`).
fn searched(topo: &Topology, req: &Request) -> Result<Channels> {
    let mut channels = search::search(topo)?;
    if let Some(v) = req.options.get("max-channels") {
        let max: usize =
            v.parse().ok().filter(|&m| m >= 1).ok_or_else(|| {
                CollsynthError::bad(format!("--max-channels: '{v}' is not a whole number of at least 1"))
            })?;
        channels.total = channels.total.min(max);
    }
    Ok(channels)
}

pub(crate) const ALGORITHMS: &[&Algorithm] = &[&NCCL_RING, &NCCL_TREE];

/// Most transfers a schedule may hold (channels x ranks^2 grows fast).
const MAX_TRANSFERS: usize = 1 << 23;

fn check_size(topo: &Topology, channels: &Channels, name: &str) -> Result<()> {
    let n = topo.n_ranks();
    if channels.total.saturating_mul(2).saturating_mul(n).saturating_mul(n) > MAX_TRANSFERS {
        return Err(CollsynthError::bad(format!(
            "{name}: {} channels on {n} ranks would emit more than {MAX_TRANSFERS} transfers",
            channels.total
        )));
    }
    Ok(())
}

/// Channel schedules side by side, channel c running `per_chain[c % per_chain.len()]`
/// with 1/`total` of the data.
fn channels_side_by_side(per_chain: &[Schedule], total: usize) -> Result<Schedule> {
    let w = Rat::new(1, total as i128);
    let parts: Vec<(&Schedule, Rat)> = (0..total).map(|c| (&per_chain[c % per_chain.len()], w)).collect();
    side_by_side(&parts)
}

fn synthesize_ring(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    let crossing = rings::Crossing::parse(req)?;
    let channels = searched(topo, req)?;
    check_size(topo, &channels, NCCL_RING.name)?;
    let rings = rings::rings(topo, &channels, crossing)?;
    let mut per_chain = Vec::with_capacity(rings.len());
    for ring in &rings {
        let for_topo = |t: &Topology, transposed: bool| -> Result<rings::Ring> {
            if transposed {
                ring.transposed(topo, t)
            } else {
                Ok(ring.clone())
            }
        };
        per_chain.push(from_copy_forms(
            topo,
            collective,
            req,
            NCCL_RING.name,
            &|t, tr| Ok(for_topo(t, tr)?.allgather()),
            &|t, tr, root| for_topo(t, tr)?.broadcast(root),
        )?);
    }
    let mut s = channels_side_by_side(&per_chain, channels.total)?;
    s.provenance.details = details(&channels, Some(&rings), None);
    s.provenance.executor = Executor::NcclRing;
    Ok(s)
}

fn synthesize_tree(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    if collective != Collective::Allreduce {
        return Err(CollsynthError::bad(format!("algorithm 'nccl-tree' does not support {}", collective.name())));
    }
    let channels = searched(topo, req)?;
    check_size(topo, &channels, NCCL_TREE.name)?;
    let n = topo.n_ranks();
    // channel c < dup runs tree 1 on chain c, channel dup + c tree 2 on chain c
    let trees: Vec<Tree> =
        (0..2).flat_map(|k| channels.chains.iter().map(move |ch| trees::rank_tree(n, ch, k))).collect();
    let mut per_channel = Vec::with_capacity(trees.len());
    for tree in &trees {
        let up = reduction(topo, |t| tree_broadcast(t, tree))?;
        let down = tree_broadcast(topo, tree)?;
        per_channel.push(allreduce(&up, &down)?);
    }
    let mut s = channels_side_by_side(&per_channel, channels.total)?;
    s.provenance.details = details(&channels, None, Some(&trees));
    s.provenance.executor = Executor::NcclTree;
    Ok(s)
}

/// The whole (one-shard) message from the tree's top down every edge, each edge after the
/// one into its source.
fn tree_broadcast(topo: &Topology, tree: &Tree) -> Result<Schedule> {
    let n = topo.n_ranks();
    let mut s = Schedule::new(Collective::Broadcast, n, tree.top, NCCL_TREE.name);
    let piece = s.add_piece(Piece::whole(0));
    let mut paths = Paths::new(topo);
    let mut delivered: Vec<Option<(usize, u32)>> = vec![None; n];
    let mut queue = VecDeque::from([tree.top]);
    while let Some(u) = queue.pop_front() {
        for &c in &tree.children[u] {
            let (after, step) = delivered[u].map_or((None, 0), |(t, st)| (Some(t), st + 1));
            let route = paths.route(u, c)?;
            let id = s.add(Transfer::new(piece, u, c, route, Op::Copy, after.into_iter().collect(), Some(step)));
            delivered[c] = Some((id, step));
            queue.push_back(c);
        }
    }
    Ok(s)
}

/// Provenance details (key -> JSON literal; `synth --json` merges them into its top level,
/// hence the `nccl_` prefix): channel counts, speed, and the rings or trees.
fn details(channels: &Channels, rings: Option<&[rings::Ring]>, trees: Option<&[Tree]>) -> crate::ir::Details {
    use serde_json::json;
    let mut d = vec![
        ("nccl_channels".to_string(), json!(channels.total)),
        ("nccl_search_channels".to_string(), json!(channels.searched)),
        ("nccl_channel_speed_GBps".to_string(), json!(channels.speed)),
        ("nccl_search_fallback".to_string(), json!(channels.fallback)),
        ("nccl_chains".to_string(), json!(channels.chains)),
    ];
    if let Some(rings) = rings {
        d.push(("nccl_rings".to_string(), json!(rings.iter().map(|r| &r.order).collect::<Vec<_>>())));
    }
    if let Some(trees) = trees {
        let parents: Vec<Vec<Option<usize>>> = trees.iter().map(|t| t.parent.clone()).collect();
        d.push(("nccl_tree_parents".to_string(), json!(parents)));
    }
    d.into_iter().collect()
}

#[cfg(test)]
mod tests;
