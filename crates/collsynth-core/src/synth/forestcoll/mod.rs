//! ForestColl: throughput-optimal spanning-tree schedules on any topology, switches
//! included (Zhao et al., *ForestColl: Efficient Collective Communications on Heterogeneous
//! Network Fabrics*). Everything is exact.
//!
//! The allgather pipeline, one module per step:
//! 1. [`optimality`]: `1/x*` and the bottleneck cut (the shared exact bound), then k and U
//!    of Prop. 3; or [`fixed_k`]: the best U for a given k (Alg. 3) and the k-scan;
//! 2. [`switch_removal`]: switch removal by edge splitting (Alg. 4, eq. 2), logical edges keeping
//!    their physical routes;
//! 3. [`packing`]: out-tree packing in batches (Alg. 5, eq. 5);
//! 4. [`emit`]: map back to physical routes and emit the IR.
//!
//! Reduce-scatter reverses the allgather trees made on the transpose (the topology itself
//! when every link has an equal reverse), allreduce composes reduce-scatter and allgather
//! (or uses the allreduce LP of [`lp`] when asked and better), broadcast / reduce come from
//! [`rooted`].

pub mod boxes;
pub mod emit;
pub mod fixed_k;
pub mod lp;
pub mod optimality;
pub mod packing;
pub mod rooted;
pub mod stagger;
pub mod switch_removal;
pub mod symmetric;
pub mod symmetric_switched;
#[cfg(test)]
mod tests;
pub mod two_level;
pub mod weighted;

use super::{Algorithm, Extras, Request, Shrink};
use crate::error::{CollsynthError, Result};
use crate::flow::Cap;
use crate::ir::transform::{compose, reverse, transpose};
use crate::ir::{decimal_value, exact_value, whole_value, Collective, Details, Piece, Schedule};
use crate::rational::Rat;
use crate::topology::Topology;
use emit::Tree;
use optimality::Optimum;
pub use symmetric_switched::Shape;

pub static FORESTCOLL: Algorithm = Algorithm {
    name: "forestcoll",
    help: "throughput-optimal spanning-tree forest (ForestColl), switches included; --max-trees K for at most K trees per root",
    collectives: Collective::FIVE,
    options: &["max-trees", "allreduce-lp", "tree-shape"],
    synthesize,
    extras: Extras {
        bound_hint: Some(bound_hint),
        shrink: Some(Shrink { option: "max-trees", detail: "k", what: "forest", unit: "trees per root" }),
        time_only: None,
        progress: Some(&PROGRESS),
        sized: false,
        forms: &[
            ("tree-shape", "shallow"),
            ("tree-shape", "shallow-all"),
            ("tree-shape", "boxes"),
            ("tree-shape", "boxes-staggered"),
            ("tree-shape", "boxes-weighted"),
            ("tree-shape", "boxes-direct"),
        ],
    },
};

/// The allreduce LP's algbw, where `auto` solves it (small enough; see [`lp`]): what the
/// bounds report as `lp_algbw`.
fn bound_hint(topo: &Topology, collective: Collective) -> Result<Option<Rat>> {
    match collective {
        Collective::Allreduce if topo.n_ranks() > 1 => lp::lp_algbw(topo, lp::LpMode::Auto),
        _ => Ok(None),
    }
}

pub(crate) const ALGORITHMS: &[&Algorithm] = &[&FORESTCOLL];

/// Progress of the running `forest` call, for a progress bar. Units: switches removed plus
/// tree edges packed (an edge taken by μ trees counts μ), out of `switches + N k (N - 1)`.
pub static PROGRESS: crate::progress::Progress = crate::progress::Progress::new();

/// An allgather forest on one topology, with how it was obtained.
#[derive(Debug, Clone)]
pub struct Forest {
    /// The unlimited optimum (1/x*, cut, Prop. 3's k and U).
    pub optimum: Optimum,
    /// Trees per root actually used.
    pub k: Cap,
    /// U actually used (= optimum.u when k = optimum.k): a link of b GB/s carries floor(U b) trees.
    pub u: Rat,
    /// Tree capacities per physical link, `floor(U b_e)`.
    pub caps: Vec<Cap>,
    /// The trees with their physical routes; `count`s sum to k per root.
    pub trees: Vec<Tree>,
    /// Batches of Alg. 5 before the split by route.
    pub batches: usize,
    /// With `max_trees`: (k, U*_k) for k = 1..=K.
    pub k_scan: Option<Vec<(Cap, Rat)>>,
    pub split_stats: switch_removal::Stats,
    pub packing_stats: packing::Stats,
    /// Wall-clock seconds per stage: optimality, fixed_k, symmetric, split, packing, map_back
    /// (the last three absent when the symmetric fast path built the forest).
    pub seconds: Vec<(&'static str, f64)>,
    /// The symmetry whose fast path built the forest (`Z_32 x Z_32`, `|G| = 16, 1 rank
    /// orbit`, `8 boxes x 16 ranks, one switch`), if any.
    pub symmetry: Option<String>,
    /// With a translation group (the Cayley fast path): `trees` holds rank 0's trees only,
    /// the forest being their images under the group ([`Forest::all_trees`]).
    pub orbit: Option<std::sync::Arc<crate::ir::orbit::Group>>,
}

impl Forest {
    /// Every tree of the forest: `trees`, or with `orbit` their images under every element,
    /// element by element.
    pub fn all_trees(&self) -> std::borrow::Cow<'_, [Tree]> {
        let Some(g) = &self.orbit else { return std::borrow::Cow::Borrowed(&self.trees) };
        let mut out = Vec::with_capacity(self.trees.len() * g.order());
        for e in 0..g.order() {
            for t in &self.trees {
                let edges = t
                    .edges
                    .iter()
                    .map(|(x, y, r)| (g.rank(e, *x), g.rank(e, *y), r.iter().map(|&l| g.link(e, l)).collect()))
                    .collect();
                out.push(Tree { root: g.rank(e, t.root), count: t.count, edges });
            }
        }
        std::borrow::Cow::Owned(out)
    }

    /// The forest's allgather algbw `N k / U` (GB/s, exact).
    pub fn algbw(&self, n: usize) -> Rat {
        Rat::from_integer(n as i128 * self.k) / self.u
    }
}

/// The allgather forest: optimal (Prop. 3's k) without `max_trees`; with `max_trees = K`, the
/// best k in 1..=K by Alg. 3 (smallest k on ties). Requires N >= 2.
pub fn forest(topo: &Topology, max_trees: Option<usize>) -> Result<Forest> {
    forest_with(topo, max_trees, true, Shape::Budget)
}

/// [`forest`], with the symmetric fast path allowed or not (tests compare the two) and the
/// fast path's tree shape.
pub(crate) fn forest_with(
    topo: &Topology,
    max_trees: Option<usize>,
    try_symmetric: bool,
    shape: Shape,
) -> Result<Forest> {
    forest_stated(topo, max_trees, try_symmetric, shape, false)
}

/// [`forest_with`]; with `per_orbit`, a symmetric fast path whose group is known as
/// generators keeps the representatives' trees only and says so in [`Forest::orbit`].
fn forest_stated(
    topo: &Topology,
    max_trees: Option<usize>,
    try_symmetric: bool,
    shape: Shape,
    per_orbit: bool,
) -> Result<Forest> {
    let mut clock = std::time::Instant::now();
    let mut seconds = Vec::new();
    let mut lap = |name: &'static str| {
        seconds.push((name, clock.elapsed().as_secs_f64()));
        clock = std::time::Instant::now();
    };
    let optimum = optimality::optimum(topo)?;
    lap("optimality");
    let n = topo.n_ranks();
    let (k, u, k_scan) = match max_trees {
        None => (optimum.k, optimum.u, None),
        Some(0) => return Err(CollsynthError::bad("--max-trees must be at least 1")),
        Some(max_k) => {
            let scan = fixed_k::scan(topo, max_k, optimum.inv)?;
            let algbw = |&(k, u): &(Cap, Rat)| Rat::from_integer(n as i128 * k) / u;
            let best = scan.iter().fold(scan[0], |b, c| if algbw(c) > algbw(&b) { *c } else { b });
            (best.0, best.1, Some(scan))
        }
    };
    lap("fixed_k");
    let total = topo.n_switches() as i128 + n as i128 * k * (n as i128 - 1);
    PROGRESS.start(u64::try_from(total).unwrap_or(u64::MAX));
    let caps = optimality::tree_capacities(topo, u);
    // Fast path first: rank 0's trees translated (symmetric.rs); the general packing otherwise.
    let sym = if try_symmetric { symmetric_forest(topo, k, &caps, shape, per_orbit) } else { None };
    lap("symmetric");
    let (trees, batches, split_stats, packing_stats, symmetry, orbit) = match sym {
        Some((group, trees, packing_stats, orbit)) => {
            PROGRESS.add(u64::try_from(total).unwrap_or(u64::MAX));
            let batches = trees.len();
            (trees, batches, Default::default(), packing_stats, Some(group), orbit)
        }
        None => {
            let mut g = switch_removal::Logical::from_links(topo, &caps);
            let split_stats = switch_removal::remove_switches(topo, &mut g, k)?;
            lap("split");
            // Logical capacities between ranks.
            let mut m = vec![vec![0 as Cap; n]; n];
            for (&(a, b), e) in &g.edges {
                let (ra, rb) = (topo.rank_of(a), topo.rank_of(b));
                match (ra, rb) {
                    (Some(ra), Some(rb)) => m[ra][rb] = e.cap,
                    _ => return Err(CollsynthError::internal("a switch survived switch removal")),
                }
            }
            let (batches, packing_stats) = packing::pack(n, &mut m, k)?;
            lap("packing");
            let trees = emit::map_back(topo, &batches, &mut g)?;
            lap("map_back");
            (trees, batches.len(), split_stats, packing_stats, None, None)
        }
    };
    Ok(Forest { optimum, k, u, caps, trees, batches, k_scan, split_stats, packing_stats, seconds, symmetry, orbit })
}

/// The symmetric fast paths (translations of a switch-free topology, then a group acting
/// freely on a switched one, then identical boxes on one switch): the symmetry's
/// description, the trees and the packing counters (flows of a box packing), and with a
/// translation group the group (the trees are then rank 0's only), or None.
type Symmetric = (String, Vec<Tree>, packing::Stats, Option<std::sync::Arc<crate::ir::orbit::Group>>);
fn symmetric_forest(topo: &Topology, k: Cap, caps: &[Cap], shape: Shape, per_orbit: bool) -> Option<Symmetric> {
    let none = packing::Stats::default();
    if let Some(c) = symmetric::Cayley::detect(topo) {
        if !per_orbit {
            return Some((c.describe(), symmetric::trees(topo, &c, k, caps)?, none, None));
        }
        let trees = symmetric::rank0_trees(topo, &c, k, caps)?;
        return Some((c.describe(), trees, none, Some(std::sync::Arc::new(c.group(topo)))));
    }
    if let Some(g) = symmetric_switched::Group::detect(topo) {
        let orbit = if per_orbit { symmetric_switched::Group::orbit_group(topo) } else { None };
        let trees = match orbit {
            Some(_) => symmetric_switched::rep_trees(topo, &g, k, caps, shape),
            None => symmetric_switched::trees(topo, &g, k, caps, shape),
        };
        if let Some(trees) = trees {
            return Some((g.describe(), trees, none, orbit.map(std::sync::Arc::new)));
        }
    }
    let b = boxes::Boxes::detect(topo, caps)?;
    let (trees, stats) = boxes::trees(topo, &b, k, caps)?;
    Some((b.describe(), trees, stats, None))
}

/// Largest `--max-trees`: the option scans every k in 1..=K (one tree-capacity test each).
pub const MAX_TREES: usize = 1024;

fn max_trees(req: &Request) -> Result<Option<usize>> {
    match req.options.get("max-trees") {
        None => Ok(None),
        Some(_) => match req.option_usize("max-trees", 0)? {
            k if k == 0 || k > MAX_TREES => {
                Err(CollsynthError::bad(format!("--max-trees must be in 1..={MAX_TREES}, got {k}")))
            }
            k => Ok(Some(k)),
        },
    }
}

/// The shapes of the trees that broadcast and of those that reduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shapes {
    broadcast: Shape,
    reduce: Shape,
}

/// `--tree-shape budget|shallow|shallow-all` (default budget). Shallow shapes the trees that
/// broadcast (allgather, the allgather half of allreduce), not those that reduce: a shallow
/// tree gathers more contributions at one rank, and a rank reduces its contributions one
/// after the other (the runtime model, docs/simulator.md). `shallow-all` shapes the
/// reducing trees too: where the budget greedy chains a box's GPUs, a chain's hops cost more
/// than a star's contributions (dgx-a100:2 reduce-scatter at 64 MiB: 1.25x the time bound
/// against 1.42x), so `auto` tries both. On topologies outside the switched fast path the
/// option changes nothing (the general packing already grows breadth first).
fn tree_shape(req: &Request) -> Result<Shapes> {
    let (broadcast, reduce) = match req.options.get("tree-shape").map(String::as_str) {
        None | Some("budget") => (Shape::Budget, Shape::Budget),
        Some("shallow") => (Shape::Shallow, Shape::Budget),
        Some("shallow-all") => (Shape::Shallow, Shape::Shallow),
        Some(v) => {
            return Err(CollsynthError::bad(format!(
                "--tree-shape: '{v}' is not one of budget, shallow, shallow-all, {BOXES}, {BOXES_STAGGERED}, \
                 {BOXES_WEIGHTED}, {BOXES_DIRECT}"
            )))
        }
    };
    Ok(Shapes { broadcast, reduce })
}

fn lp_mode(req: &Request) -> Result<lp::LpMode> {
    match req.options.get("allreduce-lp").map(String::as_str) {
        None | Some("auto") => Ok(lp::LpMode::Auto),
        Some("always") => Ok(lp::LpMode::Always),
        Some("never") => Ok(lp::LpMode::Never),
        Some(v) => Err(CollsynthError::bad(format!("--allreduce-lp: '{v}' is not one of auto, always, never"))),
    }
}

/// The allgather schedule of `topo` with its details (`k`, `trees`, ...), flat.
pub fn allgather(topo: &Topology, max_trees: Option<usize>) -> Result<Schedule> {
    allgather_shaped(topo, max_trees, Shape::Budget, false)
}

/// [`allgather`] with the fast path's tree shape; `compact`: stated per orbit when a
/// translation group built the forest (`ir::orbit`).
fn allgather_shaped(topo: &Topology, max_trees: Option<usize>, shape: Shape, compact: bool) -> Result<Schedule> {
    let n = topo.n_ranks();
    if n == 1 {
        let mut s = Schedule::new(Collective::Allgather, 1, 0, "forestcoll");
        s.add_piece(Piece::whole(0));
        s.provenance.details = Details::new().with("k", 1).with("trees", 1);
        return Ok(s);
    }
    let f = forest_stated(topo, max_trees, true, shape, compact)?;
    let mut s = match &f.orbit {
        Some(g) if compact => emit::allgather_compact(topo, &f.trees, f.k, g.clone())?,
        _ => emit::allgather(topo, &f.all_trees(), f.k),
    };
    let mut d = Details::new()
        .with("k", whole_value(f.k))
        .with("trees", whole_value(n as i128 * f.k))
        .with("tree_batches", f.trees.len())
        .with("inv_x_star", exact_value(&f.optimum.inv))
        .with("optimal_k", whole_value(f.optimum.k))
        .with("U", exact_value(&f.u))
        .with("forest_algbw_GBps", decimal_value(&f.algbw(n)))
        .with("forest_algbw_exact", exact_value(&f.algbw(n)))
        .with("split_flows", f.split_stats.flows)
        .with("mu_flows", f.packing_stats.mu_flows)
        .with("symmetry", f.symmetry.as_ref().map(|g| g.to_string()))
        .with("tree_shape", shape.name())
        .with(
            "stage_seconds",
            f.seconds.iter().map(|(k, v)| (k.to_string(), (*v).into())).collect::<serde_json::Map<_, _>>(),
        );
    if let Some(scan) = &f.k_scan {
        let algbw = |k: &i128, u: &Rat| Rat::from_integer(n as i128 * k) / u;
        let row = |k: &i128, v: serde_json::Value| serde_json::json!([whole_value(*k), v]);
        d.set("k_scan", scan.iter().map(|(k, u)| row(k, decimal_value(&algbw(k, u)))).collect::<Vec<_>>());
        d.set("k_scan_exact", scan.iter().map(|(k, u)| row(k, exact_value(&algbw(k, u)))).collect::<Vec<_>>());
    }
    s.provenance.details = d;
    Ok(s)
}

/// True when every link has a reverse link of the same bandwidth (then the transpose is the
/// topology itself and reduce-scatter can reverse the allgather trees directly).
fn symmetric(topo: &Topology) -> bool {
    topo.links.iter().all(|l| topo.link_between(l.dst, l.src).is_some_and(|r| topo.links[r].bandwidth == l.bandwidth))
}

/// `--tree-shape boxes` ([`two_level`]): not an optimum, for time on identical boxes on one
/// switch.
const BOXES: &str = "boxes";

/// `--tree-shape boxes-staggered` ([`stagger`]): `boxes` with the reduce-scatter's folds
/// ordered (and its own forest: [`two_level::REDUCE_TREES`] trees per position); the
/// allgather is `boxes`'.
const BOXES_STAGGERED: &str = "boxes-staggered";

/// `--tree-shape boxes-weighted` ([`weighted`]): `boxes` with its in-box trees' shares
/// from an LP, in units of `1/K`.
const BOXES_WEIGHTED: &str = "boxes-weighted";

/// `--tree-shape boxes-direct` ([`weighted::slots`], [`stagger`]): `boxes-staggered` over
/// `boxes-weighted`'s LP with in-box trees on direct links only, in
/// [`weighted::SLOTS`] equal slots per position, for Simple (a switch hop in a box pays the
/// NIC's message overhead at every fold).
const BOXES_DIRECT: &str = "boxes-direct";

/// The two-level forest's allgather, flat, with its details; `t` in-box trees per position,
/// the load potential's exponent and the height allowance ([`two_level::trees_with`]).
fn two_level_allgather(topo: &Topology, t: usize, power: i32, extra: usize, shape: &str) -> Result<Schedule> {
    two_level_emit(topo, two_level::trees_with(topo, t, power, extra), t, shape)
}

/// The allgather of a two-level forest whose trees carry `count / t` of a shard each, with
/// its details; `trees` None: `topo` is not identical boxes on one switch.
fn two_level_emit(topo: &Topology, trees: Option<Vec<Tree>>, t: usize, shape: &str) -> Result<Schedule> {
    let trees = trees.ok_or_else(|| {
        CollsynthError::Infeasible(format!("--tree-shape {shape} needs identical boxes of direct links on one switch"))
    })?;
    let k = t as Cap;
    let mut s = emit::allgather(topo, &trees, k);
    let algbw = two_level::algbw(topo, &trees, t);
    s.provenance.details = Details::new()
        .with("k", whole_value(k))
        .with("trees", trees.len())
        .with("tree_batches", trees.len())
        .with("forest_algbw_GBps", decimal_value(&algbw))
        .with("forest_algbw_exact", exact_value(&algbw))
        .with("tree_shape", shape);
    Ok(s)
}

/// `--tree-shape boxes`, `boxes-staggered`, `boxes-weighted` and `boxes-direct`: allgather,
/// reduce-scatter (the transpose's forest reversed; staggered and direct: folds ordered,
/// staggered with its own forest) and allreduce (the two composed; no LP); `--max-trees K`
/// sets the in-box trees per position (weighted: the units of a shard; direct: the slots).
fn two_level_schedule(topo: &Topology, collective: Collective, max_k: Option<usize>, shape: &str) -> Result<Schedule> {
    let t = max_k.unwrap_or(two_level::DEFAULT_TREES);
    let power = two_level::POWER;
    let slots = max_k.unwrap_or(weighted::SLOTS);
    let ag = |on: &Topology| match shape {
        BOXES_WEIGHTED => {
            let k = max_k.unwrap_or(weighted::UNITS);
            let (trees, lp) = weighted::trees(on, k)?.unzip();
            let mut s = two_level_emit(on, trees, k, shape)?;
            s.provenance.details.set("weighted_lp_algbw_GBps", lp.unwrap_or_default());
            Ok(s)
        }
        BOXES_DIRECT => two_level_emit(on, weighted::slots(on, slots)?, slots, shape),
        _ => two_level_allgather(on, t, power, 1, shape),
    };
    let rs = || -> Result<Schedule> {
        let tt = if symmetric(topo) { topo.clone() } else { transpose(topo) };
        let (t, forest, offsets) = match shape {
            BOXES_STAGGERED => {
                let t = max_k.unwrap_or(two_level::REDUCE_TREES);
                let power = two_level::REDUCE_POWER;
                (
                    t,
                    two_level_allgather(&tt, t, power, two_level::REDUCE_EXTRA_HEIGHT, shape)?,
                    stagger::Offsets::STAGGERED,
                )
            }
            BOXES_DIRECT => (slots, ag(&tt)?, stagger::Offsets::DIRECT),
            _ => return reverse(&ag(&tt)?, &tt, topo),
        };
        let mut s = reverse(&forest, &tt, topo)?;
        let layout =
            two_level::layout(&tt).ok_or_else(|| CollsynthError::internal("a two-level forest without boxes"))?;
        let added = stagger::stagger(&mut s, &layout, t, offsets);
        s.provenance.details.set("ordering_dependencies", added);
        Ok(s)
    };
    match collective {
        Collective::Allgather => ag(topo),
        Collective::ReduceScatter => rs(),
        Collective::Allreduce => {
            let mut s = compose(&rs()?, &ag(topo)?, Collective::Allreduce)?;
            s.root = 0;
            s.provenance.details.set("allreduce_method", "rs+ag");
            Ok(s)
        }
        _ => Err(CollsynthError::bad(format!(
            "--tree-shape {shape} applies to allgather, reduce-scatter and allreduce, not {}",
            collective.name()
        ))),
    }
}

/// Reduce-scatter: the allgather trees (of `shape`) of the transpose, reversed; also returns
/// the allgather when it came for free (symmetric topology).
/// Both stated per orbit when a translation group built the forest (`ir::transform::reverse`
/// keeps the group).
fn reduce_scatter(topo: &Topology, max_trees: Option<usize>, shape: Shape) -> Result<(Schedule, Option<Schedule>)> {
    if symmetric(topo) {
        let ag = allgather_shaped(topo, max_trees, shape, true)?;
        return Ok((reverse(&ag, topo, topo)?, Some(ag)));
    }
    let t = transpose(topo);
    let ag_t = allgather_shaped(&t, max_trees, shape, true)?;
    Ok((reverse(&ag_t, &t, topo)?, None))
}

fn synthesize(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    let max_k = max_trees(req)?;
    let mode = lp_mode(req)?;
    if let Some(shape @ (BOXES | BOXES_STAGGERED | BOXES_WEIGHTED | BOXES_DIRECT)) =
        req.options.get("tree-shape").map(String::as_str)
    {
        return two_level_schedule(topo, collective, max_k, shape);
    }
    let shapes = tree_shape(req)?;
    match collective {
        Collective::Allgather => allgather_shaped(topo, max_k, shapes.broadcast, true),
        Collective::ReduceScatter => Ok(reduce_scatter(topo, max_k, shapes.reduce)?.0),
        Collective::Allreduce => allreduce(topo, max_k, mode, shapes),
        Collective::Broadcast => rooted_broadcast(topo, req.root),
        Collective::Reduce => {
            let t = transpose(topo);
            reverse(&rooted_broadcast(&t, req.root)?, &t, topo)
        }
        Collective::Allgatherv => Err(CollsynthError::bad("algorithm 'forestcoll' does not support allgatherv")),
    }
}

fn rooted_broadcast(topo: &Topology, root: usize) -> Result<Schedule> {
    rooted::broadcast(topo, root).map_err(|e| e.context("forestcoll broadcast/reduce (single-root packing)"))
}

/// Allreduce: reduce-scatter then allgather; the LP's schedule instead when the mode allows
/// it, the LP is better and its schedule is available. `shapes` shape each half (see
/// [`tree_shape`]).
fn allreduce(topo: &Topology, max_k: Option<usize>, mode: lp::LpMode, shapes: Shapes) -> Result<Schedule> {
    let (rs, ag) = reduce_scatter(topo, max_k, shapes.reduce)?;
    let ag = match ag.filter(|_| shapes.broadcast == shapes.reduce) {
        Some(ag) => ag,
        None => allgather_shaped(topo, max_k, shapes.broadcast, true)?,
    };
    let mut s = compose(&rs, &ag, Collective::Allreduce)?;
    s.root = 0;
    let n = topo.n_ranks() as i128;
    let rs_ag = if n == 1 {
        None
    } else {
        let inv =
            crate::bound::allreduce_rs_ag_symmetric(topo, &crate::zoo::symmetry::node_generators(topo))?.inv_throughput;
        Some(Rat::from_integer(n) / inv)
    };
    let lp_bw = if mode == lp::LpMode::Never || n == 1 { None } else { lp::lp_algbw(topo, mode).unwrap_or(None) };
    let mut used_lp = false;
    if let (Some(lpb), Some(rsb)) = (lp_bw, rs_ag) {
        if lpb > rsb {
            if let Ok(Some(lp_s)) = lp::allreduce(topo, mode) {
                s = lp_s;
                used_lp = true;
            }
        }
    }
    let details = &mut s.provenance.details;
    details.set("rs_ag_algbw_GBps", rs_ag.as_ref().map(decimal_value));
    details.set("rs_ag_algbw_exact", rs_ag.as_ref().map(exact_value));
    details.set("lp_algbw_GBps", lp_bw.as_ref().map(decimal_value));
    details.set("lp_algbw_exact", lp_bw.as_ref().map(exact_value));
    details.set("allreduce_method", if used_lp { "lp" } else { "rs+ag" });
    Ok(s)
}
