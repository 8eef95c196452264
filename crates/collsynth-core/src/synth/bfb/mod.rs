//! `bfb`: Breadth-First-Broadcast, the schedule generator of the direct-connect topologies
//! paper (Zhao et al., *Efficient Direct-Connect Topologies for Collective Communications*,
//! NSDI '25, section 6 and App. E; user docs: `docs/bfb.md`).
//!
//! Allgather in D steps (D = diameter): at step t every node u receives, from every source v
//! at distance t, the whole of v's shard, through its in-links (w, u) with w at distance
//! t - 1 from v (so w holds the whole shard since step t - 1). How much of v each such w sends
//! is the per-(u, t) problem LP (1) (weighted by link bandwidth), solved exactly by
//! [`mod@solve`]. The per-step optima give the schedule's bandwidth term exactly.
//!
//! The plain pipeline, one module per step:
//! 1. [`mod@graph`]: ranks, in-links and hop distances (BFS);
//! 2. [`mod@plan`]: every (u, t) optimum ([`mod@solve`]) and the per-source split, in
//!    parallel over u ([`crate::parallel`]), identical subproblems solved once per thread (a
//!    cache keyed with `crate::hash`); [`mod@phases`]: the plans of a collective;
//! 3. [`mod@emit`]: pieces = per shard, the common refinement of every split's cut points;
//!    one `Copy` transfer per piece along the single link (w, u), after the transfer that
//!    brought that piece to w.
//!
//! Reduce-scatter = reversal of BFB on the transposed topology (appendix B, Cor 1.1);
//! allreduce = reduce-scatter then allgather, both on the union of their pieces.
//!
//! The variants and helpers:
//! * [`mod@expand`]: on a `line^k(..)` / `degree*n(..)` topology, the allgather is the
//!   paper's mapping of the base's schedule (Def 1 / Def 2), not a new BFB.
//! * [`mod@chunked`]: option `chunks` = P, every shard in P equal chunks, each (u, t) split
//!   rounded to whole chunks (App. E.2); plain BFB topologies only.
//! * [`mod@hetero`]: option `hetero` = 1, link latencies in the (u, t) problem (App. E.3,
//!   LP (14)), for the request's size M; plain BFB topologies, not with `chunks`.
//! * [`mod@bi`]: on `bi(G)`, appendix A.6's split of G's schedule or BFB on the union
//!   (option `bi-method`).
//! * [`mod@time_only`]: the costs of a schedule from its plans alone (`--time-only`).

pub mod bi;
pub mod chunked;
mod compact;
pub mod emit;
pub mod expand;
pub mod graph;
pub mod hetero;
mod levels;
pub mod phases;
pub mod plan;
pub mod profile;
pub mod solve;
#[cfg(test)]
mod tests;
pub mod time_only;
mod transport;

pub use plan::{plan, BfbPlan};
pub use profile::{profile, profile_arcs, profile_with_automorphism, Profile, Symmetry};

use super::{Algorithm, Extras, Request};
use crate::error::{CollsynthError, Result};
use crate::flow::Cap;
use crate::ir::orbit::PER_ORBIT_FROM;
use crate::ir::transform::{compose, reverse};
use crate::ir::{Collective, Schedule};
use crate::rational::Rat;
use crate::topology::Topology;
use emit::emit;
use phases::{merge_cuts, Phases};
use std::ops::Range;

pub const BFB: Algorithm = Algorithm {
    name: "bfb",
    help: "Breadth-First-Broadcast (direct-connect paper): D-step allgather over shortest paths, \
           per-step loads balanced exactly; reduce-scatter by transposition (no switches)",
    collectives: &[Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce],
    options: &["chunks", "hetero", "bi-method"],
    synthesize,
    extras: Extras { time_only: Some(time_only::report), ..Extras::NONE },
};

pub(crate) const ALGORITHMS: &[&Algorithm] = &[&BFB];

/// Largest N: the plan keeps N^2 distances and the schedule has at least N (N - 1) transfers.
pub const MAX_RANKS: usize = 1 << plan::RANK_BITS;

/// Below this many nodes per thread the plan runs on one thread (spawning costs more).
const MIN_NODES_PER_THREAD: usize = 64;

/// `f` on ranges of `0..n` nodes, on the threads [`crate::parallel`] allows for n nodes.
fn in_parallel<T: Send>(n: usize, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    crate::parallel::in_ranges(n, MIN_NODES_PER_THREAD, f)
}

/// From [`PER_ORBIT_FROM`] ranks on, the schedule is stated with range transfers
/// (`ir::ranges`: a delivery of consecutive pieces over one link is one transfer), exactly
/// the flat schedule; smaller files stay byte-identical.
fn synthesize(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    let s = synthesize_as(topo, collective, req, true)?;
    Ok(if topo.n_ranks() >= PER_ORBIT_FROM { crate::ir::ranges::compress(&s) } else { s })
}

/// [`synthesize`]; with `compact` false the allgather is never stated per orbit (what the
/// flat transforms of [`mod@bi`] take).
fn synthesize_as(topo: &Topology, collective: Collective, req: &Request, compact: bool) -> Result<Schedule> {
    let (chunks, hetero) = options(topo, collective, req)?;
    // bi(G): appendix A.6's split schedule or BFB on the union (`bi`).
    if let Some(method) = bi::method_for(topo, req, chunks.is_none() && hetero.is_none())? {
        return bi::schedule(topo, collective, method, chunks, hetero);
    }
    match collective {
        // An expansion's allgather is mapped from its base's (§5.1-5.2), as the paper does.
        Collective::Allgather => match expand::mapped_allgather(topo)? {
            Some(s) => Ok(s),
            // Stated per orbit from PER_ORBIT_FROM ranks: below, the flat plan is cheap and its
            // files stay what they were (rank 0's cuts applied to every shard add pieces).
            None if compact && chunks.is_none() && hetero.is_none() && topo.n_ranks() >= PER_ORBIT_FROM => {
                match compact_allgather(topo)? {
                    Some(s) => Ok(s),
                    None => allgather(topo),
                }
            }
            None => allgather_with(topo, chunks, hetero),
        },
        _ => schedule_with(topo, collective, chunks, hetero),
    }
}

/// The plain allgather stated per orbit of the topology's regular group of translations
/// (rank 0 planned alone), or `None` when the topology has none.
fn compact_allgather(topo: &Topology) -> Result<Option<Schedule>> {
    let Some((group, orbits)) = compact::regular_group(topo) else { return Ok(None) };
    let (mut s, p) = compact::allgather(topo, group, &orbits)?;
    s.provenance.details = p.one_phase_details();
    Ok(Some(s))
}

/// The `chunks` and `hetero` options of `req` for `collective` on `topo`; `BadInput` when
/// they are combined or when the allgather is mapped from a base (neither applies there).
fn options(topo: &Topology, collective: Collective, req: &Request) -> Result<(Option<Cap>, Option<Rat>)> {
    let chunks = chunked::chunks_option(req)?;
    let hetero = hetero::hetero_option(req)?;
    if chunks.is_some() && hetero.is_some() {
        return Err(CollsynthError::bad("bfb: --chunks and --hetero cannot be combined"));
    }
    if collective == Collective::Allgather && expand::is_mapped(topo) {
        // The mapped schedules add their own cuts (Def 2: multiples of 1/(n d)), so P chunks
        // could not be kept without re-deriving the mappings; and the mapping (Def 1/2)
        // copies the base's splits, which know nothing of latencies.
        let option = if chunks.is_some() { Some("--chunks") } else { hetero.map(|_| "--hetero") };
        if let Some(o) = option {
            return Err(CollsynthError::bad(format!(
                "{o} applies to plain BFB topologies; the allgather of '{}' is mapped from its base",
                topo.name
            )));
        }
    }
    Ok((chunks, hetero))
}

/// The optimal BFB allgather of `topo` (no switches): D = diameter steps, each step's busiest
/// link exactly at the LP (1) optimum; verified-correct by construction.
pub fn allgather(topo: &Topology) -> Result<Schedule> {
    allgather_with(topo, None, None)
}

/// [`allgather`], or with `chunks` = P the chunked variant ([`mod@chunked`]), or with
/// `hetero` = M the latency-aware one for size M ([`mod@hetero`]).
fn allgather_with(topo: &Topology, chunks: Option<Cap>, hetero: Option<Rat>) -> Result<Schedule> {
    schedule_with(topo, Collective::Allgather, chunks, hetero)
}

/// Reduce-scatter: BFB on the transpose, reversed (same steps and bandwidth term as that
/// allgather). For a topology equal to its transpose the plan is the allgather's.
pub fn reduce_scatter(topo: &Topology) -> Result<Schedule> {
    reduce_scatter_with(topo, None, None)
}

fn reduce_scatter_with(topo: &Topology, chunks: Option<Cap>, hetero: Option<Rat>) -> Result<Schedule> {
    schedule_with(topo, Collective::ReduceScatter, chunks, hetero)
}

/// Allreduce = reduce-scatter then allgather on common pieces: 2 D steps (a topology and its
/// transpose have the same diameter); `tau` is the sum of both phases' factors.
pub fn allreduce(topo: &Topology) -> Result<Schedule> {
    allreduce_with(topo, None, None)
}

fn allreduce_with(topo: &Topology, chunks: Option<Cap>, hetero: Option<Rat>) -> Result<Schedule> {
    schedule_with(topo, Collective::Allreduce, chunks, hetero)
}

/// The plain BFB schedule of `collective` (allgather, reduce-scatter or allreduce) from its
/// [`Phases`]; `provenance.details` are [`Phases::details`], so `--time-only` (which reads
/// the same phases without emitting) reports exactly these.
fn schedule_with(
    topo: &Topology,
    collective: Collective,
    chunks: Option<Cap>,
    hetero: Option<Rat>,
) -> Result<Schedule> {
    let ph = Phases::new(topo, collective, chunks, hetero, true)?;
    let made_on = ph.made_on(topo);
    let mut s = match (ph.rs(), ph.ag()) {
        (None, Some(ag)) => emit(ag, &ag.cuts)?,
        (Some(rs), None) => reverse(&emit(rs, &rs.cuts)?, made_on, topo)?,
        (Some(rs), Some(ag)) => {
            // compose needs identical pieces: both halves on the refinement of their cuts
            // (with `chunks` = P both are multiples of 1/P, so their refinement is too).
            let cuts: Vec<Vec<Rat>> = ag.cuts.iter().zip(&rs.cuts).map(|(a, b)| merge_cuts(a, b)).collect();
            let first = reverse(&emit(rs, &cuts)?, made_on, topo)?;
            let mut s = compose(&first, &emit(ag, &cuts)?, Collective::Allreduce)?;
            s.root = 0;
            s
        }
        (None, None) => unreachable!("Phases::new plans at least one phase"),
    };
    s.provenance.details = ph.details();
    Ok(s)
}
