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
//! * [`plan`]: distances, every (u, t) optimum and the per-source split (parallel over u,
//!   identical subproblems solved once per thread).
//! * emission: pieces = per shard, the common refinement of every split's cut points; one
//!   `Copy` transfer per piece along the single link (w, u), after the transfer that brought
//!   that piece to w.
//! * reduce-scatter = reversal of BFB on the transposed topology (appendix B, Cor 1.1);
//!   allreduce = reduce-scatter then allgather, both on the union of their pieces.
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
#[cfg(test)]
mod bi_tests;
pub mod chunked;
#[cfg(test)]
mod chunked_tests;
pub mod expand;
pub mod hetero;
#[cfg(test)]
mod hetero_tests;
mod levels;
pub mod profile;
#[cfg(test)]
mod profile_tests;
pub mod solve;
mod split;
#[cfg(test)]
mod tests;
pub mod time_only;
#[cfg(test)]
mod time_only_tests;

pub use profile::{profile, profile_arcs, profile_with_automorphism, Profile, Symmetry};

use super::{Algorithm, Request};
use crate::error::{CollsynthError, Result};
use crate::flow::{integer_capacities, Cap};
use crate::ir::transform::{compose, reverse, transpose};
use crate::ir::{Collective, Op, Piece, Schedule, Transfer};
use crate::rational::{to_fraction_string, Rat};
use crate::topology::Topology;
use num_traits::{One, Zero};
use solve::{solve, split_members, Problem, Solution};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

pub const BFB: Algorithm = Algorithm {
    name: "bfb",
    help: "Breadth-First-Broadcast (direct-connect paper): D-step allgather over shortest paths, \
           per-step loads balanced exactly; reduce-scatter by transposition (no switches)",
    collectives: &[Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce],
    options: &["chunks", "hetero", "bi-method"],
    synthesize,
};

pub(crate) const ALGORITHMS: &[&Algorithm] = &[&BFB];

/// Largest N: the plan keeps N^2 distances and the schedule has at least N (N - 1) transfers.
pub const MAX_RANKS: usize = 1 << RANK_BITS;

/// Below this many nodes per thread the plan runs on one thread (spawning costs more).
const MIN_NODES_PER_THREAD: usize = 64;

fn synthesize(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    let (chunks, hetero) = options(topo, collective, req)?;
    // bi(G): appendix A.6's split schedule or BFB on the union (`bi`).
    if let Some(method) = bi::method_for(topo, req, chunks.is_none() && hetero.is_none())? {
        return bi::schedule(topo, collective, method, chunks, hetero);
    }
    match collective {
        // An expansion's allgather is mapped from its base's (§5.1-5.2), as the paper does.
        Collective::Allgather => match expand::mapped_allgather(topo)? {
            Some(s) => Ok(s),
            None => allgather_with(topo, chunks, hetero),
        },
        _ => schedule_with(topo, collective, chunks, hetero),
    }
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

/// The solved plans a plain BFB collective is made from: the reduce-scatter's (BFB on the
/// transpose, to be reversed) and / or the allgather's (on the topology itself).
struct Phases {
    plans: Vec<Plan>,
    /// Indices into `plans`; a topology equal to its transpose shares one plan for both.
    rs: Option<usize>,
    ag: Option<usize>,
    /// The transpose the reduce-scatter's plan was made on; `None`: the topology itself.
    transposed: Option<Topology>,
    chunks: Option<Cap>,
}

impl Phases {
    /// Plans `topo` (and / or its transpose) for `collective`, which must be allgather,
    /// reduce-scatter or allreduce (else `BadInput`).
    /// With `record` = false the plans cannot be emitted (see [`plan_mode`]).
    fn new(
        topo: &Topology,
        collective: Collective,
        chunks: Option<Cap>,
        hetero: Option<Rat>,
        record: bool,
    ) -> Result<Phases> {
        let (rs_wanted, ag_wanted) = match collective {
            Collective::Allgather => (false, true),
            Collective::ReduceScatter => (true, false),
            Collective::Allreduce => (true, true),
            c => return Err(CollsynthError::bad(format!("algorithm 'bfb' does not support {}", c.name()))),
        };
        let transposed = if rs_wanted { asymmetric_transpose(topo) } else { None };
        let mut ph = Phases { plans: Vec::new(), rs: None, ag: None, transposed, chunks };
        if ag_wanted {
            ph.plans.push(plan_mode(topo, chunks, hetero, record)?);
            ph.ag = Some(0);
        }
        if rs_wanted {
            match &ph.transposed {
                Some(t) => ph.plans.push(plan_mode(t, chunks, hetero, record)?),
                None if ph.ag.is_none() => ph.plans.push(plan_mode(topo, chunks, hetero, record)?),
                None => {}
            }
            ph.rs = Some(ph.plans.len() - 1);
        }
        Ok(ph)
    }

    fn rs(&self) -> Option<&Plan> {
        self.rs.map(|i| &self.plans[i])
    }

    fn ag(&self) -> Option<&Plan> {
        self.ag.map(|i| &self.plans[i])
    }

    /// The topology the reduce-scatter's plan is for: the transpose, or `topo` itself.
    fn made_on<'a>(&'a self, topo: &'a Topology) -> &'a Topology {
        self.transposed.as_ref().unwrap_or(topo)
    }

    /// `provenance.details` of the schedule made from these phases (docs/bfb.md): one
    /// phase's keys, or for allreduce the sums at the top and each half's keys prefixed
    /// `rs_` / `ag_`.
    fn details(&self) -> Vec<(String, String)> {
        let (rs, ag) = match (self.rs(), self.ag()) {
            (Some(rs), Some(ag)) => (rs, ag),
            (Some(one), None) | (None, Some(one)) => return one.one_phase_details(),
            (None, None) => return Vec::new(),
        };
        let mut details = vec![
            ("tau".to_string(), quoted(&(rs.tau() + ag.tau()))),
            ("bandwidth_optimal".to_string(), (rs.bandwidth_optimal() && ag.bandwidth_optimal()).to_string()),
        ];
        if let Some(p) = self.chunks {
            details.push(("chunks".to_string(), p.to_string()));
            details.push(("tau_fractional".to_string(), quoted(&(rs.tau_fractional() + ag.tau_fractional()))));
        }
        details.extend(ag.hetero_details(rs.time_sum() + ag.time_sum()));
        details.extend(rs.details("rs_"));
        details.extend(ag.details("ag_"));
        details
    }
}

/// The transpose of `topo`, or `None` when it has exactly the same links (then schedules
/// made on `topo` itself reverse onto it).
fn asymmetric_transpose(topo: &Topology) -> Option<Topology> {
    let t = transpose(topo);
    (t.links != topo.links).then_some(t)
}

fn merge_cuts(a: &[Rat], b: &[Rat]) -> Vec<Rat> {
    let mut all: Vec<Rat> = a.iter().chain(b).copied().collect();
    all.sort_unstable();
    all.dedup();
    all
}

fn quoted(r: &Rat) -> String {
    format!("\"{}\"", to_fraction_string(r))
}

// ---------------------------------------------------------------------------------------
// The graph in ranks, with all distances

/// An in-link (w, u) of rank u.
#[derive(Debug, Clone, Copy)]
struct InLink {
    /// Rank w.
    from: u32,
    /// Index of the link in the topology.
    link: u32,
    /// Bandwidth scaled to an integer (see [`integer_capacities`]).
    cap: Cap,
}

struct Graph {
    n: usize,
    /// In-links of each rank, by source node.
    ins: Vec<Vec<InLink>>,
    /// `dist[slot[x] * n + v]` = hops from v to x (every rank reaches every rank: validated)
    /// for the ranks x whose row was computed ([`Graph::new`]: all, in rank order).
    dist: Vec<u16>,
    slot: Vec<u32>,
    /// The largest distance in the computed rows: the diameter D, the number of steps, when
    /// every row is computed or the graph is vertex-transitive.
    steps: usize,
    /// Bandwidth = capacity / sigma.
    sigma: Rat,
    /// With `hetero`: every link's latency (µs, exact) and the scale k of [`hetero::solve`].
    hetero: Option<(Vec<Rat>, Rat)>,
    /// Every link's latency (µs) as the cost model reads it (`cost::route_latency`).
    latency: Vec<f64>,
}

impl Graph {
    /// The graph of `topo` with every distance row.
    fn new(topo: &Topology) -> Result<Graph> {
        let mut g = Graph::without_rows(topo)?;
        g.all_rows();
        Ok(g)
    }

    fn all_rows(&mut self) {
        let all: Vec<usize> = (0..self.n).collect();
        self.rows(&all);
    }

    /// The graph of `topo` with only the rows rank `u`'s subproblems read: u's own and its
    /// in-neighbours' (so [`plan_node`] works for u alone).
    fn around(topo: &Topology, u: usize) -> Result<Graph> {
        let mut g = Graph::without_rows(topo)?;
        let ins = g.ins.get(u).into_iter().flatten();
        let mut rows: Vec<usize> =
            std::iter::once(u).chain(ins.map(|i| i.from as usize)).filter(|&x| x < g.n).collect();
        rows.sort_unstable();
        rows.dedup();
        g.rows(&rows);
        Ok(g)
    }

    /// The graph of ranks `0..n` with one link of capacity 1 per arc, link ids the arcs'
    /// positions, without rows: [`Graph::without_rows`] of the topology of those links, all of
    /// one bandwidth, but for the scale sigma (1 here; the caller's values must not depend on
    /// it) and the latencies (0; only plans emitted for a cost model read them).
    fn from_arcs(n: usize, arcs: &[(usize, usize)]) -> Graph {
        let mut ins: Vec<Vec<InLink>> = vec![Vec::new(); n];
        for (l, &(u, v)) in arcs.iter().enumerate() {
            ins[v].push(InLink { from: u as u32, link: l as u32, cap: 1 });
        }
        let latency = vec![0.0; arcs.len()];
        Graph { n, ins, dist: Vec::new(), slot: Vec::new(), steps: 0, sigma: Rat::one(), hetero: None, latency }
    }

    /// Everything but the distances (checked: no switches, at most [`MAX_RANKS`] ranks).
    fn without_rows(topo: &Topology) -> Result<Graph> {
        if topo.n_switches() > 0 {
            return Err(CollsynthError::bad(format!(
                "bfb needs a direct-connect topology (no switches); '{}' has {} switch(es)",
                topo.name,
                topo.n_switches()
            )));
        }
        let n = topo.n_ranks();
        if n > MAX_RANKS {
            return Err(CollsynthError::bad(format!("bfb: at most {MAX_RANKS} ranks, '{}' has {n}", topo.name)));
        }
        let (caps, sigma) = integer_capacities(topo)?;
        let ins: Vec<Vec<InLink>> = (0..n)
            .map(|u| {
                let node = topo.rank_node(u);
                topo.in_links(node)
                    .iter()
                    .map(|&l| {
                        let from = topo.rank_of(topo.links[l].src).expect("no switches");
                        InLink { from: from as u32, link: l as u32, cap: caps[l] }
                    })
                    .collect()
            })
            .collect();
        let latency = (0..topo.links.len()).map(|l| crate::cost::route_latency(topo, &[l])).collect();
        Ok(Graph { n, ins, dist: Vec::new(), slot: Vec::new(), steps: 0, sigma, hetero: None, latency })
    }

    /// Compute the distance rows of `targets` (sorted, distinct ranks) and the steps.
    fn rows(&mut self, targets: &[usize]) {
        let ins = &self.ins;
        self.dist = in_parallel(targets.len(), |range| distances_to(ins, &targets[range])).concat();
        self.steps = self.dist.iter().copied().max().unwrap_or(0) as usize;
        self.slot = vec![u32::MAX; self.n];
        for (i, &x) in targets.iter().enumerate() {
            self.slot[x] = i as u32;
        }
    }

    /// The smallest and largest total in-link bandwidth of a rank (GB/s; from the integer
    /// capacities, one division each).
    fn ingress_bounds(&self) -> (Rat, Rat) {
        let sums = self.ins.iter().map(|ins| ins.iter().map(|i| i.cap).sum::<Cap>());
        let (min, max) = sums.fold((Cap::MAX, 0), |(lo, hi), c| (lo.min(c), hi.max(c)));
        if self.n == 0 {
            return (Rat::zero(), Rat::zero());
        }
        (Rat::from_integer(min) / self.sigma, Rat::from_integer(max) / self.sigma)
    }

    /// Hops from every rank to `x`. Panics if x's row was not computed.
    fn row(&self, x: usize) -> &[u16] {
        let i = self.slot[x] as usize;
        &self.dist[i * self.n..(i + 1) * self.n]
    }
}

/// The distance rows of `targets`: BFS backwards over in-links from each x.
fn distances_to(ins: &[Vec<InLink>], targets: &[usize]) -> Vec<u16> {
    let n = ins.len();
    let mut out = vec![u16::MAX; targets.len() * n];
    // Every node enters the queue once per BFS, so a flat array with a read index is the
    // whole queue (no ring buffer).
    let mut queue: Vec<u32> = Vec::with_capacity(n);
    for (i, &x) in targets.iter().enumerate() {
        let row = &mut out[i * n..(i + 1) * n];
        row[x] = 0;
        queue.clear();
        queue.push(x as u32);
        let mut head = 0;
        while let Some(&y) = queue.get(head) {
            head += 1;
            let next = row[y as usize] + 1;
            for inl in &ins[y as usize] {
                let z = inl.from as usize;
                if row[z] == u16::MAX {
                    row[z] = next;
                    queue.push(z as u32);
                }
            }
        }
    }
    out
}

/// `available_parallelism`, asked once: on Linux every call reads the cgroup's CPU quota
/// from files, which cost more than the small profiles a finder sweep runs by thousands.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |c| c.get()))
}

thread_local! {
    /// Set on a thread that is already one of several workers sharing the cores.
    static ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `f()` with BFB on this thread alone, for callers that keep every core busy themselves (a
/// finder sweep's workers): more threads per plan would only compete for the same cores,
/// at a spawn and a join per level of every small profile. Results are the same either way.
pub fn single_threaded<T>(f: impl FnOnce() -> T) -> T {
    /// Restores the flag however `f` ends.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ALONE.set(self.0);
        }
    }
    let _restore = Restore(ALONE.replace(true));
    f()
}

/// `f` on contiguous ranges covering `0..n`, on up to `available_parallelism` scoped threads
/// (one thread for small n, or under [`single_threaded`]); results in range order, so the
/// output never depends on the number of threads as long as `f` is a function of its range's
/// items.
fn in_parallel<T: Send>(n: usize, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    let cores = if ALONE.get() { 1 } else { cores() };
    let threads = cores.min(n / MIN_NODES_PER_THREAD).max(1);
    if threads == 1 {
        return vec![f(0..n)];
    }
    let chunk = n.div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            (0..threads).map(|i| scope.spawn(move || f(i * chunk..((i + 1) * chunk).min(n)))).collect();
        handles.into_iter().map(|h| h.join().expect("bfb worker panicked")).collect()
    })
}

// ---------------------------------------------------------------------------------------
// The plan: every (u, t) solved, every source's split decided

/// How u gets a source's shard at its step.
#[derive(Debug, Clone, Copy)]
enum Via {
    /// Whole, from rank `from` over link `link`.
    Whole { link: u32, from: u32 },
    /// In consecutive parts `parts[first..first + len]` of the node's plan.
    Split { first: u32, len: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Delivery {
    src: u32,
    via: Via,
}

/// A part of a source's shard ending at `end` (it starts where the previous part ends, or
/// at 0), from rank `from` over link `link`.
#[derive(Debug, Clone)]
struct Part {
    link: u32,
    from: u32,
    end: Rat,
}

/// Everything u receives, by step.
#[derive(Debug, Default)]
struct NodePlan {
    /// `deliveries[step_start[t - 1]..step_start[t]]`: the sources at distance t.
    step_start: Vec<u32>,
    deliveries: Vec<Delivery>,
    parts: Vec<Part>,
}

/// The solved BFB allgather of a topology, before emission (see [`plan`]).
#[derive(Debug)]
pub struct Plan {
    n: usize,
    steps: usize,
    /// `optima[u * steps + t - 1]` = U*_{u,t} in shards per GB/s; with chunks, the rounded
    /// split's busiest link instead (what the schedule takes).
    optima: Vec<Rat>,
    /// P chunks per shard, if chunked; then `fractional` holds the LP optima (else empty).
    chunks: Option<Cap>,
    fractional: Vec<Rat>,
    /// `alphas[u * steps + t - 1]`: the largest latency (µs) of an in-link of u that carries
    /// data at step t (0 without sources).
    alphas: Vec<f64>,
    /// Whether every delivery was recorded (`nodes`, `cuts`): only then can it be emitted.
    recorded: bool,
    nodes: Vec<NodePlan>,
    /// Per shard, the interior cut points (sorted, distinct) of the splits (empty when not
    /// `recorded`).
    cuts: Vec<Vec<Rat>>,
    /// Largest and smallest total in-link bandwidth of a rank (GB/s).
    max_ingress: Rat,
    min_ingress: Rat,
    /// (u, t) subproblems with sources, and how many were solved (the rest were cache hits).
    subproblems: usize,
    solved: usize,
    /// Latency-aware ([`mod@hetero`]): then `times[u * steps + t - 1]` = U_{u,t} (µs) and
    /// `dropped` the (u, t, link) whose latency reaches it.
    hetero: bool,
    times: Vec<Rat>,
    dropped: Vec<(u32, u32, u32)>,
}

/// Solve every (u, t) subproblem of `topo` (no switches; else `BadInput`). Guarantees: each
/// [`Plan::optimum`] is exactly LP (1)'s optimum (bandwidth-weighted), and the per-source
/// splits attain it.
pub fn plan(topo: &Topology) -> Result<Plan> {
    plan_full(topo, None, None)
}

/// [`plan`], or with `chunks` = P every split rounded to whole 1/P chunks ([`mod@chunked`]),
/// then the optima are the rounded splits' and [`Plan::tau_fractional`] the LP's; or with
/// `hetero` = M (bytes) the latency-aware plan ([`mod@hetero`]): then the splits minimise each
/// (u, t)'s time, [`Plan::time`], and the optima are the busiest link's load of those splits
/// (what the schedule takes, like the chunked ones).
fn plan_full(topo: &Topology, chunks: Option<Cap>, hetero: Option<Rat>) -> Result<Plan> {
    plan_mode(topo, chunks, hetero, true)
}

/// [`plan_full`]; with `record` = false the deliveries are not recorded (no `nodes`, no
/// `cuts`: the plan cannot be emitted), which skips handing every class's flow to its
/// sources when no per-source rounding or load is needed. The optima and per-step
/// latencies are the same either way (the links that carry data at (u, t) are the senders
/// with flow, or with chunks / latencies the senders with a load).
fn plan_mode(topo: &Topology, chunks: Option<Cap>, hetero: Option<Rat>, record: bool) -> Result<Plan> {
    let mut g = Graph::new(topo)?;
    if let Some(m) = hetero {
        let alpha = topo.links.iter().map(|l| hetero::latency_rat(l.latency)).collect::<Result<Vec<Rat>>>()?;
        g.hetero = Some((alpha, hetero::scale(g.sigma, m, g.n)));
    }
    let outs = in_parallel(g.n, |range| plan_range(&g, range, chunks, record));
    let mut p = Plan {
        n: g.n,
        steps: g.steps,
        optima: Vec::with_capacity(g.n * g.steps),
        chunks,
        fractional: Vec::new(),
        alphas: Vec::with_capacity(g.n * g.steps),
        recorded: record,
        nodes: Vec::with_capacity(g.n),
        cuts: vec![Vec::new(); g.n],
        max_ingress: Rat::zero(),
        min_ingress: Rat::zero(),
        subproblems: 0,
        solved: 0,
        hetero: hetero.is_some(),
        times: Vec::new(),
        dropped: Vec::new(),
    };
    for out in outs {
        p.times.extend(out.times);
        p.dropped.extend(out.dropped);
        p.optima.extend(out.optima);
        p.fractional.extend(out.fractional);
        p.alphas.extend(out.alphas);
        p.nodes.extend(out.nodes);
        for (v, c) in out.cuts {
            p.cuts[v as usize].push(c);
        }
        p.subproblems += out.subproblems;
        p.solved += out.solved;
    }
    for c in &mut p.cuts {
        c.sort_unstable();
        c.dedup();
    }
    (p.min_ingress, p.max_ingress) = g.ingress_bounds();
    Ok(p)
}

/// What one thread produces for its range of nodes.
struct RangeOut {
    nodes: Vec<NodePlan>,
    optima: Vec<Rat>,
    /// The LP optima, only when chunked.
    fractional: Vec<Rat>,
    alphas: Vec<f64>,
    cuts: Vec<(u32, Rat)>,
    /// With `hetero`: every (u, t)'s time U (µs) and its dropped links (u, t, link).
    times: Vec<Rat>,
    dropped: Vec<(u32, u32, u32)>,
    subproblems: usize,
    solved: usize,
}

/// The cache's hasher: subproblem keys are short integer vectors hashed once per (u, t), and
/// SipHash (the default, resistant to chosen keys, which these are not) cost a few percent of
/// the whole plan. Multiply-rotate per word (FxHash's scheme).
#[derive(Default)]
struct WordHasher(u64);

type Fast = BuildHasherDefault<WordHasher>;

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Per-thread scratch space and the cache of solved subproblems.
#[derive(Default)]
struct Worker {
    cache: HashMap<Problem, Solution, Fast>,
    /// Sender bitmask of every source of the current node (`words` per source).
    masks: Vec<u64>,
    /// Sources of the current node ordered by (distance, mask, rank).
    order: Vec<u32>,
    /// P chunks per shard, if chunked.
    chunks: Option<Cap>,
    /// Subproblems solved outside the cache (hetero: latencies differ per node, so no reuse).
    uncached: usize,
    /// Record every delivery (see [`plan_mode`]).
    record: bool,
}

fn plan_range(g: &Graph, range: Range<usize>, chunks: Option<Cap>, record: bool) -> RangeOut {
    let mut wk = Worker { chunks, record, ..Worker::default() };
    let mut out = RangeOut {
        nodes: Vec::with_capacity(range.len()),
        optima: Vec::new(),
        fractional: Vec::new(),
        alphas: Vec::new(),
        cuts: Vec::new(),
        times: Vec::new(),
        dropped: Vec::new(),
        subproblems: 0,
        solved: 0,
    };
    for u in range {
        let node = plan_node(g, u, &mut wk, &mut out);
        if record {
            out.nodes.push(node);
        }
    }
    out.solved = wk.cache.len() + wk.uncached;
    out
}

/// Bitmask words for a node with `senders` in-links.
fn mask_words(senders: usize) -> usize {
    senders.div_ceil(64).max(1)
}

/// Sender masks of every rank v as a source for u: bit k set iff in-neighbour k of u is one
/// hop closer to v than u is (so it holds v's shard one step before u needs it).
fn sender_masks(g: &Graph, u: usize, masks: &mut Vec<u64>) {
    let (n, ins) = (g.n, &g.ins[u]);
    let words = mask_words(ins.len());
    masks.clear();
    masks.resize(n * words, 0);
    let row = g.row(u);
    for (k, inl) in ins.iter().enumerate() {
        let (word, bit) = (k / 64, 1u64 << (k % 64));
        for (v, (&dw, &du)) in g.row(inl.from as usize).iter().zip(row).enumerate() {
            if dw as u32 + 1 == du as u32 {
                masks[v * words + word] |= bit;
            }
        }
    }
}

/// Sources of u (all ranks but u) ordered by (distance, mask, rank); returns where each
/// distance starts (`starts[t - 1]..starts[t]`).
fn order_sources(g: &Graph, u: usize, masks: &[u64], order: &mut Vec<u32>) -> Vec<usize> {
    let (n, row) = (g.n, g.row(u));
    let mut starts = vec![0usize; g.steps + 1];
    for &d in row.iter().filter(|&&d| d > 0) {
        starts[d as usize] += 1;
    }
    for t in 1..=g.steps {
        starts[t] += starts[t - 1];
    }
    order.clear();
    order.resize(n.saturating_sub(1), 0);
    // fill[t]: where the next source at distance t goes.
    let mut fill: Vec<usize> = std::iter::once(0).chain(starts.iter().copied()).take(g.steps + 1).collect();
    for (v, &d) in row.iter().enumerate().filter(|(_, &d)| d > 0) {
        order[fill[d as usize]] = v as u32;
        fill[d as usize] += 1;
    }
    for t in 1..=g.steps {
        sort_by_mask(&mut order[starts[t - 1]..starts[t]], masks, g.ins[u].len());
    }
    starts
}

/// Bits of a rank in a packed sort key: ranks are below [`MAX_RANKS`] = 2^14.
const RANK_BITS: u32 = 14;

/// Sort sources by (mask, rank), masks over `senders` in-links. One-word masks sort as packed
/// integers: u64 when mask and rank fit (up to 50 in-links, half the bytes to move and
/// compare), else u128.
fn sort_by_mask(sources: &mut [u32], masks: &[u64], senders: usize) {
    let words = mask_words(senders);
    if senders as u32 + RANK_BITS <= u64::BITS {
        let mut keys: Vec<u64> = sources.iter().map(|&v| masks[v as usize] << RANK_BITS | v as u64).collect();
        keys.sort_unstable();
        for (s, k) in sources.iter_mut().zip(keys) {
            *s = (k & ((1 << RANK_BITS) - 1)) as u32;
        }
    } else if words == 1 {
        let mut keys: Vec<u128> = sources.iter().map(|&v| (masks[v as usize] as u128) << 32 | v as u128).collect();
        keys.sort_unstable();
        for (s, k) in sources.iter_mut().zip(keys) {
            *s = k as u32;
        }
    } else {
        let mask = |v: u32| &masks[v as usize * words..(v as usize + 1) * words];
        sources.sort_unstable_by(|&a, &b| mask(a).cmp(mask(b)).then(a.cmp(&b)));
    }
}

fn plan_node(g: &Graph, u: usize, wk: &mut Worker, out: &mut RangeOut) -> NodePlan {
    let words = mask_words(g.ins[u].len());
    sender_masks(g, u, &mut wk.masks);
    let mut order = std::mem::take(&mut wk.order);
    let starts = order_sources(g, u, &wk.masks, &mut order);
    let mut node = NodePlan { step_start: Vec::with_capacity(g.steps + 1), ..Default::default() };
    if wk.record {
        node.deliveries.reserve(order.len());
    }
    for t in 1..=g.steps {
        node.step_start.push(node.deliveries.len() as u32);
        let sources = &order[starts[t - 1]..starts[t]];
        let chunked = wk.chunks.is_some();
        if sources.is_empty() {
            out.optima.push(Rat::zero());
            out.alphas.push(0.0);
            if chunked {
                out.fractional.push(Rat::zero());
            }
            if g.hetero.is_some() {
                out.times.push(Rat::zero());
            }
            continue;
        }
        out.subproblems += 1;
        let (taken, optimum, alpha) = plan_step(g, u, sources, words, wk, &mut node, &mut out.cuts);
        out.optima.push(taken * g.sigma);
        out.alphas.push(alpha);
        if chunked {
            out.fractional.push(optimum * g.sigma);
        }
        if let Some((alpha, _)) = &g.hetero {
            // The optimum is the time U; an in-link whose latency reaches it carries nothing
            // (App. E.3's removed links; see `hetero`).
            out.times.push(optimum);
            let slow = g.ins[u].iter().filter(|i| alpha[i.link as usize] >= optimum);
            out.dropped.extend(slow.map(|i| (u as u32, t as u32, i.link)));
        }
    }
    node.step_start.push(node.deliveries.len() as u32);
    wk.order = order;
    node
}

/// Classes of `sources` (sorted by mask): the runs of equal masks, as ranges.
fn classes(sources: &[u32], masks: &[u64], words: usize) -> Vec<Range<usize>> {
    let mask = |v: u32| &masks[v as usize * words..(v as usize + 1) * words];
    // One-word masks compare as integers (a slice comparison is a call to memcmp).
    let same = |a: u32, b: u32| if words == 1 { masks[a as usize] == masks[b as usize] } else { mask(a) == mask(b) };
    let mut runs = Vec::new();
    let mut begin = 0;
    for i in 1..=sources.len() {
        if i == sources.len() || !same(sources[i], sources[begin]) {
            runs.push(begin..i);
            begin = i;
        }
    }
    runs
}

/// Solve (u, t) for `sources` (sorted by mask) and record every source's delivery (unless
/// `wk.record` is off); returns (the recorded splits' busiest link, U*) in shards per unit
/// of scaled capacity: equal unless chunked, where each split is first rounded to whole
/// chunks. With `hetero`, U* is LP (14)'s time (µs) instead and the first is the
/// latency-aware split's busiest link. Third: the largest latency of a link carrying data.
fn plan_step(
    g: &Graph,
    u: usize,
    sources: &[u32],
    words: usize,
    wk: &mut Worker,
    node: &mut NodePlan,
    cuts: &mut Vec<(u32, Rat)>,
) -> (Rat, Rat, f64) {
    let ins = &g.ins[u];
    let runs = classes(sources, &wk.masks, words);
    let mut problem = Problem {
        caps: ins.iter().map(|i| i.cap).collect(),
        words,
        masks: Vec::with_capacity(runs.len() * words),
        counts: Vec::with_capacity(runs.len()),
    };
    for r in &runs {
        let v = sources[r.start] as usize;
        problem.masks.extend_from_slice(&wk.masks[v * words..(v + 1) * words]);
        problem.counts.push(r.len() as Cap);
    }
    let owned;
    let sol = match &g.hetero {
        Some((alpha, k)) => {
            let local: Vec<Rat> = ins.iter().map(|i| alpha[i.link as usize]).collect();
            owned = hetero::solve(&problem, &local, *k);
            wk.uncached += 1;
            &owned
        }
        // One lookup (hash and key comparison) per (u, t); the key is not needed afterwards.
        None => wk.cache.entry(problem).or_insert_with_key(solve),
    };
    // Chunked or hetero: per local sender, the chunks (units) it carries at this step; and one
    // source's rounding.
    let track = wk.chunks.is_some() || g.hetero.is_some();
    let mut loads: Vec<Cap> = vec![0; if track { ins.len() } else { 0 }];
    let mut rounded: Vec<(u32, Cap)> = Vec::new();
    // Without recording, the split among a class's sources matters only for per-source
    // rounding or loads.
    let runs = if wk.record || track { &runs[..] } else { &[] };
    for (k, r) in runs.iter().enumerate() {
        let members = &sources[r.clone()];
        split_members(&sol.flows[k], members.len(), sol.unit, |i, parts| {
            let v = members[i];
            let (parts, unit) = match wk.chunks {
                None => {
                    if track {
                        for &(w, y) in parts {
                            loads[w as usize] += y;
                        }
                    }
                    (parts, sol.unit)
                }
                Some(p) => {
                    chunked::round(parts, sol.unit, p, &mut rounded);
                    for &(w, y) in &rounded {
                        loads[w as usize] += y;
                    }
                    (&rounded[..], p)
                }
            };
            if !wk.record {
                return;
            }
            let via = if parts.len() == 1 {
                let inl = ins[parts[0].0 as usize];
                Via::Whole { link: inl.link, from: inl.from }
            } else {
                split_parts(ins, v, parts, unit, node, cuts)
            };
            node.deliveries.push(Delivery { src: v, via });
        });
    }
    let taken = match wk.chunks {
        None if track => {
            loads.iter().zip(ins).map(|(&y, inl)| Rat::new(y, sol.unit * inl.cap)).max().unwrap_or_default()
        }
        None => sol.optimum,
        Some(p) => loads.iter().zip(ins).map(|(&y, inl)| Rat::new(y, p * inl.cap)).max().unwrap_or_default(),
    };
    let carrying: Vec<usize> = if track {
        (0..ins.len()).filter(|&w| loads[w] > 0).collect()
    } else {
        sol.flows.iter().flatten().map(|&(w, _)| w as usize).collect()
    };
    let alpha = carrying.into_iter().map(|w| g.latency[ins[w].link as usize]).fold(0.0f64, f64::max);
    (taken, sol.optimum, alpha)
}

/// Record a split delivery of source v: consecutive intervals of lengths units / unit in
/// sender order, and their interior cut points.
fn split_parts(
    ins: &[InLink],
    v: u32,
    parts: &[(u32, Cap)],
    unit: Cap,
    node: &mut NodePlan,
    cuts: &mut Vec<(u32, Rat)>,
) -> Via {
    let first = node.parts.len() as u32;
    let mut done: Cap = 0;
    for (i, &(w, units)) in parts.iter().enumerate() {
        done += units;
        let end = Rat::new(done, unit);
        if i + 1 < parts.len() {
            cuts.push((v, end));
        }
        let inl = ins[w as usize];
        node.parts.push(Part { link: inl.link, from: inl.from, end });
    }
    Via::Split { first, len: parts.len() as u32 }
}

impl Plan {
    /// Number of steps: the diameter D.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// U*_{u,t}: LP (1)'s optimum for rank u at step t (1-based), in shards per GB/s
    /// (shards per link for unit bandwidths); 0 when no source is at distance t.
    pub fn optimum(&self, u: usize, t: usize) -> Rat {
        assert!((1..=self.steps).contains(&t) && u < self.n, "no subproblem ({u}, {t})");
        self.optima[u * self.steps + t - 1]
    }

    /// max_u U*_{u,t}: the time of step t is this times the shard size M / N.
    pub fn step_max(&self, t: usize) -> Rat {
        (0..self.n).map(|u| self.optimum(u, t)).max().unwrap_or_default()
    }

    /// The largest latency (µs) of a link that carries data at step t: what the step costs
    /// in the analytic model besides its bandwidth term.
    pub fn step_latency(&self, t: usize) -> f64 {
        (0..self.n).map(|u| self.alphas[u * self.steps + t - 1]).fold(0.0f64, f64::max)
    }

    /// Sum over steps of [`Plan::step_max`]: T_B = (M / N) * this.
    pub fn load_sum(&self) -> Rat {
        (1..=self.steps).map(|t| self.step_max(t)).sum()
    }

    /// The bandwidth factor tau = T_B / (M / B) with B the largest ingress bandwidth of a
    /// rank (the paper's node bandwidth d * b; for Kautz-type graphs whose self-loops the zoo
    /// drops, that is the loop-counted degree the paper uses). Exact.
    pub fn tau(&self) -> Rat {
        self.factor(&self.optima)
    }

    /// The LP optimum's bandwidth factor: [`Plan::tau`] of the unchunked plan. Chunked, the
    /// schedule's `tau` is at least this and at most Theorem 20's bound above it.
    pub fn tau_fractional(&self) -> Rat {
        match self.chunks {
            None => self.tau(),
            Some(_) => self.factor(&self.fractional),
        }
    }

    /// P, if every shard is in P chunks.
    pub fn chunks(&self) -> Option<Cap> {
        self.chunks
    }

    /// [`bandwidth_factor`] of `optima` (see [`Plan::tau`]).
    fn factor(&self, optima: &[Rat]) -> Rat {
        bandwidth_factor(optima, self.steps, self.max_ingress, self.n)
    }

    /// Theorem 17's BW-optimality: tau = (N - 1) / N, i.e. T_B = (N - 1)/N * M / B. Needs
    /// every rank's ingress to equal B, so it implies [`Plan::meets_ingress_bound`].
    pub fn bandwidth_optimal(&self) -> bool {
        self.n <= 1 || self.tau() == Rat::new(self.n as i128 - 1, self.n as i128)
    }

    /// Whether T_B meets the lower bound of any allgather on this topology,
    /// (N - 1)/N * M / (smallest ingress): a rank receives N - 1 shards through its in-links.
    /// Weaker than [`Plan::bandwidth_optimal`] when ingress differs between ranks (a
    /// Kautz graph whose dropped self-loops leave some ranks one in-link short).
    pub fn meets_ingress_bound(&self) -> bool {
        self.n <= 1 || self.load_sum() * self.min_ingress == Rat::from_integer(self.n as i128 - 1)
    }

    /// (u, t) subproblems with at least one source, and how many distinct ones were solved
    /// (the others were identical to one solved before on the same thread).
    pub fn subproblems(&self) -> (usize, usize) {
        (self.subproblems, self.solved)
    }

    /// Interior cut points of shard v's pieces (sorted).
    pub fn cuts(&self, v: usize) -> &[Rat] {
        &self.cuts[v]
    }

    /// `provenance.details` entries, keys prefixed with `prefix`.
    fn details(&self, prefix: &str) -> Vec<(String, String)> {
        let mut d = vec![
            (format!("{prefix}bfb_steps"), self.steps.to_string()),
            (format!("{prefix}tau"), quoted(&self.tau())),
            (format!("{prefix}bandwidth_optimal"), self.bandwidth_optimal().to_string()),
        ];
        if self.chunks.is_some() {
            d.push((format!("{prefix}tau_fractional"), quoted(&self.tau_fractional())));
        }
        d
    }

    /// With `hetero`: the time (µs) of rank u's step t, LP (14)'s optimum (0 without sources).
    pub fn time(&self, u: usize, t: usize) -> Rat {
        assert!(self.hetero && (1..=self.steps).contains(&t) && u < self.n, "no hetero subproblem ({u}, {t})");
        self.times[u * self.steps + t - 1]
    }

    /// With `hetero`: max_u U_{u,t}, the time of step t (µs).
    pub fn step_time(&self, t: usize) -> Rat {
        (0..self.n).map(|u| self.time(u, t)).max().unwrap_or_default()
    }

    /// With `hetero`: the allgather's time, sum over steps of [`Plan::step_time`] (µs); else 0.
    pub fn time_sum(&self) -> Rat {
        if !self.hetero {
            return Rat::zero();
        }
        (1..=self.steps).map(|t| self.step_time(t)).sum()
    }

    /// With `hetero`: the (u, t, link) whose latency reaches U_{u,t}, so LP (14) drops them.
    pub fn dropped(&self) -> &[(u32, u32, u32)] {
        &self.dropped
    }

    /// Every detail of a one-phase schedule (allgather or reduce-scatter) made from this plan.
    fn one_phase_details(&self) -> Vec<(String, String)> {
        let mut d = self.details("");
        d.extend(self.chunk_details());
        d.extend(self.hetero_details(self.time_sum()));
        d
    }

    /// `hetero` = true and `time_us` = `time` (exact) when latency-aware (unprefixed).
    fn hetero_details(&self, time: Rat) -> Vec<(String, String)> {
        if !self.hetero {
            return Vec::new();
        }
        vec![("hetero".to_string(), "true".to_string()), ("time_us".to_string(), quoted(&time))]
    }

    /// `chunks` = P when chunked (unprefixed: one P for a whole schedule).
    fn chunk_details(&self) -> Vec<(String, String)> {
        self.chunks.map(|p| ("chunks".to_string(), p.to_string())).into_iter().collect()
    }
}

/// sum_t max_u `optima[u * steps + t - 1]` * B / N over the ranks u whose optima are given
/// (all of them in a [`Plan`]), with B = `max_ingress` and N = `n` ranks: the bandwidth
/// factor tau (0 for a single rank).
fn bandwidth_factor(optima: &[Rat], steps: usize, max_ingress: Rat, n: usize) -> Rat {
    if n <= 1 || steps == 0 {
        return Rat::zero();
    }
    let step_max = |t: usize| optima.chunks(steps).map(|row| row[t - 1]).max().unwrap_or_default();
    let sum: Rat = (1..=steps).map(step_max).sum();
    sum * max_ingress / Rat::from_integer(n as i128)
}

// ---------------------------------------------------------------------------------------
// Emission

/// The allgather schedule of `p` with pieces cut at `cuts` (per shard, sorted, a superset of
/// the plan's own cuts). Guarantees: pieces tile every shard; each (u, v) delivery is one
/// transfer per piece of shard v over one link into u, after the piece's arrival at the sender.
fn emit(p: &Plan, cuts: &[Vec<Rat>]) -> Result<Schedule> {
    if !p.recorded {
        return Err(CollsynthError::internal("bfb: a plan without its deliveries cannot be emitted"));
    }
    let n = p.n;
    let mut e = Emitter::new(n, cuts)?;
    for t in 1..=p.steps {
        for (u, node) in p.nodes.iter().enumerate() {
            let range = node.step_start[t - 1] as usize..node.step_start[t] as usize;
            for d in &node.deliveries[range] {
                e.deliver(node, d, u, t);
            }
        }
    }
    debug_assert!(e.first.iter().enumerate().all(|(i, &f)| (f == u32::MAX) == (i / n == i % n)));
    Ok(e.s)
}

/// The schedule being emitted, with where each delivery starts.
struct Emitter {
    s: Schedule,
    /// Per shard: the piece bounds `[0, cuts.., 1]` and the index of its first piece.
    bounds: Vec<Vec<Rat>>,
    base: Vec<usize>,
    /// `first[u * n + v]`: the transfer that delivers piece 0 of shard v to u; the other
    /// pieces of that delivery follow it in piece order.
    first: Vec<u32>,
}

impl Emitter {
    fn new(n: usize, cuts: &[Vec<Rat>]) -> Result<Emitter> {
        let mut s = Schedule::new(Collective::Allgather, n, 0, BFB.name);
        let bounds: Vec<Vec<Rat>> = cuts
            .iter()
            .map(|c| std::iter::once(Rat::zero()).chain(c.iter().copied()).chain(std::iter::once(Rat::one())).collect())
            .collect();
        let mut base = Vec::with_capacity(n);
        for (v, b) in bounds.iter().enumerate() {
            base.push(s.pieces.len());
            for w in b.windows(2) {
                s.add_piece(Piece { shard: v, start: w[0], end: w[1] });
            }
        }
        let total = s.pieces.len().saturating_mul(n.saturating_sub(1));
        if total > u32::MAX as usize {
            return Err(CollsynthError::bad(format!("bfb: the schedule would have {total} transfers (too many)")));
        }
        s.transfers.reserve_exact(total);
        Ok(Emitter { s, bounds, base, first: vec![u32::MAX; n * n] })
    }

    /// The transfers of one delivery to u at step t, one per piece of the shard, in order.
    fn deliver(&mut self, node: &NodePlan, d: &Delivery, u: usize, t: usize) {
        let (n, v) = (self.s.n_ranks, d.src as usize);
        self.first[u * n + v] = self.s.transfers.len() as u32;
        let bounds = &self.bounds[v];
        let pieces = bounds.len() - 1;
        let parts = match d.via {
            Via::Whole { .. } => &[][..],
            Via::Split { first, len } => &node.parts[first as usize..(first + len) as usize],
        };
        let mut k = 0;
        for (j, start) in bounds[..pieces].iter().enumerate() {
            let (link, from) = match d.via {
                Via::Whole { link, from } => (link, from),
                Via::Split { .. } => {
                    while *start >= parts[k].end {
                        k += 1;
                    }
                    (parts[k].link, parts[k].from)
                }
            };
            // At step 1 the sender is v itself, which holds its shard from the start.
            let after = if t == 1 { Vec::new() } else { vec![self.first[from as usize * n + v] as usize + j] };
            self.s.transfers.push(Transfer::new(
                self.base[v] + j,
                from as usize,
                u,
                vec![link as usize],
                Op::Copy,
                after,
                Some(t as u32 - 1),
            ));
        }
    }
}
