//! `--tree-shape boxes-weighted`: the two-level forest of [`super::two_level`] with its
//! in-box trees weighted by a linear program, for the bandwidth of the optimum at the height
//! of `boxes`.
//!
//! `boxes` gives every in-box tree the same share (`1/T` of its root's shard), and its local
//! search balances the links through the shapes of the trees alone: on `mi250:2` it stops at
//! 320 GB/s (T = 8) of the optimum's 5312/15 = 354.13. Here the shapes come from a pool, the
//! trees of `boxes`' local search at several T and exponents, each at most one hop higher
//! than the box's diameter, and the shares from an LP over that pool: minimise the busiest
//! link's load over bandwidth, each position's shares summing to one, the crossings' load
//! fixed. On `mi250:2` the LP's optimum over the pool is the unlimited optimum itself
//! (354.13 GB/s; 78 of the 1,043 pooled trees carry a share): low trees lose nothing in
//! bandwidth once their shares are free.
//!
//! Shares are then whole multiples of `1/K` (`--max-trees K`, default [`UNITS`]; a piece is
//! whole chunks when exported): the largest remainders first, then single units moved between
//! a position's trees while that lowers `sum over links of (load / bandwidth)^64`. A tree
//! with `m` units is one piece of `m/K` of the shard (count `m`), so the forest has at most
//! `K` trees per root and usually far fewer. Not an optimum: the forest's algbw is reported
//! exactly and is the rounding's (`mi250:2`, K = 32: 51200/147 =
//! 348.30 GB/s).

use super::boxes::Boxes;
use super::emit::Tree;
use super::two_level::{self, BoxLinks, InBox, Routes};
use crate::error::{CollsynthError, Result};
use crate::topology::Topology;
use microlp::{ComparisonOp, OptimizationDirection, Problem, Variable};
use std::collections::{BTreeMap, HashSet};

/// Units of a shard per position unless `--max-trees` says otherwise. On `mi250:2` 16, 32
/// and 64 ran within 1.2 % of each other at 1 GiB (docs/forestcoll.md); 32 keeps a piece's
/// chunks well below MSCCL's 72 per step and the program half the size of 64's.
pub const UNITS: usize = 32;

/// `boxes-direct`'s slots per position unless `--max-trees` says otherwise: 16 ran the
/// `mi250:2` reduce-scatter at 64 MiB in 319.5 us, 64 in 311.2 (interleaved 8 deep; 128
/// in 314.2: more pieces, each paying its message overhead; docs/forestcoll.md).
pub const SLOTS: usize = 64;

/// The pool: `boxes`' local search at these trees per position and load exponents.
const POOL_TREES: [usize; 6] = [4, 8, 12, 16, 24, 32];
const POOL_POWERS: [i32; 4] = [8, 16, 32, 64];

/// The exponent of the rounding's load potential and its rounds of unit moves at most.
const POWER: i32 = 64;
const ROUNDS: usize = 64;

/// The weighted two-level forest with shares in units of `1/k`, or None when `topo` is not
/// identical boxes on one switch. Trees have counts (units), k = `k`. Also returns the LP's
/// allgather algbw before rounding (GB/s, f64).
pub fn trees(topo: &Topology, k: usize) -> Result<Option<(Vec<Tree>, f64)>> {
    let Some(lp) = solve(topo, Routes::Any)? else { return Ok(None) };
    let units = balance(&lp.uses, round(&lp.shares, k), k);
    let in_box: Vec<(&InBox, i128)> = lp
        .pool
        .iter()
        .zip(&units)
        .flat_map(|(trees, m)| trees.iter().zip(m).filter(|&(_, &m)| m > 0).map(|(t, &m)| (t, m as i128)))
        .collect();
    Ok(Some((two_level::place_forest(topo, &lp.bx, &in_box), lp.algbw)))
}

/// `--tree-shape boxes-direct`'s forest: the LP over a pool of in-box trees on direct links
/// only, its shares rounded to `t` units per position, each unit a tree of its own in slot
/// j = 0..t-1 (tree `b G t + j G + p`, as [`two_level::tree_of`] numbers it). Each position
/// deals its trees round robin over the slots, the tallest first, so every slot (and every
/// window of slots the stagger runs at once) carries each tree's share evenly. None when
/// `topo` is not identical boxes on one switch.
pub fn slots(topo: &Topology, t: usize) -> Result<Option<Vec<Tree>>> {
    let Some(lp) = solve(topo, Routes::Direct)? else { return Ok(None) };
    let units = balance(&lp.uses, round(&lp.shares, t), t);
    let dealt: Vec<Vec<&InBox>> = lp.pool.iter().zip(&units).map(|(trees, m)| deal(trees, m)).collect();
    let in_box: Vec<(&InBox, i128)> = (0..t).flat_map(|j| dealt.iter().map(move |d| (d[j], 1))).collect();
    Ok(Some(two_level::place_forest(topo, &lp.bx, &in_box)))
}

/// A position's trees with `units[i]` slots each, dealt one per tree per round, the tallest
/// trees first (then the most units).
pub(super) fn deal<'a>(trees: &'a [InBox], units: &[usize]) -> Vec<&'a InBox> {
    let mut left: Vec<(usize, &InBox)> =
        trees.iter().zip(units).filter(|&(_, &m)| m > 0).map(|(t, &m)| (m, t)).collect();
    left.sort_by_key(|&(m, t)| std::cmp::Reverse((t.height(), m)));
    let mut out = Vec::with_capacity(units.iter().sum());
    while left.iter().any(|x| x.0 > 0) {
        for x in left.iter_mut().filter(|x| x.0 > 0) {
            out.push(x.1);
            x.0 -= 1;
        }
    }
    out
}

/// The pool and the LP's shares over it.
pub(super) struct Solved {
    bx: Boxes,
    pool: Vec<Vec<InBox>>,
    uses: Uses,
    /// Per position, the share of each pooled tree.
    pub(super) shares: Vec<Vec<f64>>,
    /// The LP's allgather algbw (GB/s): ranks over the busiest link's load per bandwidth.
    pub(super) algbw: f64,
}

/// Pool the in-box trees (at most the box's diameter + 1 high, by `routes`) and solve the
/// LP; None when `topo` is not identical boxes on one switch.
pub(super) fn solve(topo: &Topology, routes: Routes) -> Result<Option<Solved>> {
    let Some((bx, links)) = two_level::boxes_of(topo) else { return Ok(None) };
    let Some(height) = links.diameter().map(|d| d + 1) else { return Ok(None) };
    let pool = pool(topo, &bx, &links, height, routes);
    let uses = Uses::new(topo, &bx, &links, &pool);
    let (shares, z) = shares(&uses, &pool)?;
    Ok(Some(Solved { bx, pool, uses, shares, algbw: topo.n_ranks() as f64 / z }))
}

/// Every distinct in-box tree of `boxes`' local search over [`POOL_TREES`] x
/// [`POOL_POWERS`], by root position, in the order first found.
fn pool(topo: &Topology, bx: &Boxes, links: &BoxLinks, height: usize, routes: Routes) -> Vec<Vec<InBox>> {
    let mut pool = vec![Vec::new(); links.g];
    let mut seen = HashSet::new();
    for t in POOL_TREES {
        for power in POOL_POWERS {
            for tree in two_level::in_box_trees(topo, bx, links, t, height, power, routes) {
                if seen.insert((tree.root, tree.parent.clone())) {
                    pool[tree.root].push(tree);
                }
            }
        }
    }
    pool
}

/// The links of one box (its direct links and its ranks' switch links), their bandwidths,
/// the crossings' load on each per unit of a shard, and which pooled trees use them.
struct Uses {
    bw: Vec<f64>,
    /// Load per shard of the crossings (`boxes - 1` on every switch link of the box).
    crossing: Vec<f64>,
    /// `links[i]` of pooled tree (position, index): the box links it takes, with repeats.
    routes: Vec<Vec<Vec<usize>>>,
    /// Box links, as indices into the topology.
    box_links: Vec<usize>,
    /// Every box runs every in-box tree once per box (its own root's and each other's).
    boxes: f64,
}

impl Uses {
    fn new(topo: &Topology, bx: &Boxes, links: &BoxLinks, pool: &[Vec<InBox>]) -> Uses {
        let nb = bx.boxes().len() as f64;
        let bw: Vec<f64> = topo.links.iter().map(|l| crate::rational::to_f64(&l.bandwidth)).collect();
        let mut crossing = vec![0.0; topo.links.len()];
        let mut box_links: Vec<usize> = Vec::new();
        for p in 0..links.g {
            crossing[links.up[p]] = nb - 1.0;
            crossing[links.down[p]] = nb - 1.0;
            box_links.extend([links.up[p], links.down[p]]);
            box_links.extend((0..links.g).filter_map(|q| links.direct[p][q]));
        }
        let routes = pool.iter().map(|trees| trees.iter().map(|t| links.tree_links(t)).collect()).collect();
        Uses { bw, crossing, routes, box_links, boxes: nb }
    }
}

/// The LP's shares (each position's summing to 1) minimising z, the busiest box link's load
/// per shard over bandwidth (`microlp`, f64; rounded afterwards, so its tolerance is
/// harmless), and z.
fn shares(uses: &Uses, pool: &[Vec<InBox>]) -> Result<(Vec<Vec<f64>>, f64)> {
    let mut p = Problem::new(OptimizationDirection::Minimize);
    let z = p.add_var(1.0, (0.0, f64::INFINITY));
    let vars: Vec<Vec<Variable>> =
        pool.iter().map(|trees| trees.iter().map(|_| p.add_var(0.0, (0.0, f64::INFINITY))).collect()).collect();
    for v in &vars {
        p.add_constraint(v.iter().map(|&x| (x, 1.0)).collect::<Vec<_>>(), ComparisonOp::Eq, 1.0);
    }
    // Coefficients by link, summed: a tree may take a switch link twice (two children
    // reached through the switch from one parent).
    let mut on_link: BTreeMap<usize, BTreeMap<(usize, usize), f64>> = BTreeMap::new();
    for (pos, routes) in uses.routes.iter().enumerate() {
        for (c, route) in routes.iter().enumerate() {
            for &l in route {
                *on_link.entry(l).or_default().entry((pos, c)).or_default() += uses.boxes;
            }
        }
    }
    for &l in &uses.box_links {
        let mut e = vec![(z, -uses.bw[l])];
        if let Some(terms) = on_link.get(&l) {
            e.extend(terms.iter().map(|(&(pos, c), &w)| (vars[pos][c], w)));
        }
        p.add_constraint(e, ComparisonOp::Le, -uses.crossing[l]);
    }
    let sol = p
        .solve()
        .map_err(|e| CollsynthError::internal(format!("boxes-weighted LP: {e}")))?
        .into_solution()
        .map_err(|_| CollsynthError::internal("boxes-weighted LP: the solve was interrupted"))?;
    let shares = vars.iter().map(|v| v.iter().map(|&x| sol.var_value(x).max(0.0)).collect()).collect();
    Ok((shares, sol.var_value(z)))
}

/// Shares to whole units of `1/k` per position: floors, then the largest remainders (ties:
/// the earlier tree).
fn round(shares: &[Vec<f64>], k: usize) -> Vec<Vec<usize>> {
    shares
        .iter()
        .map(|w| {
            let scaled: Vec<f64> = w.iter().map(|x| x * k as f64).collect();
            let mut m: Vec<usize> = scaled.iter().map(|x| x.floor() as usize).collect();
            let mut order: Vec<usize> = (0..w.len()).collect();
            let frac = |i: usize| scaled[i] - scaled[i].floor();
            order.sort_by(|&a, &b| frac(b).total_cmp(&frac(a)).then(a.cmp(&b)));
            let rest = k.saturating_sub(m.iter().sum());
            for &i in order.iter().cycle().take(rest) {
                m[i] += 1;
            }
            m
        })
        .collect()
}

/// Move single units between a position's trees while that lowers the load potential.
fn balance(uses: &Uses, mut units: Vec<Vec<usize>>, k: usize) -> Vec<Vec<usize>> {
    let mut load: Vec<f64> = uses.crossing.iter().map(|c| c * k as f64).collect();
    for (pos, m) in units.iter().enumerate() {
        for (c, &m) in m.iter().enumerate() {
            uses.routes[pos][c].iter().for_each(|&l| load[l] += uses.boxes * m as f64);
        }
    }
    // Potential terms near 1 keep the 64th powers in range.
    let scale = uses.box_links.iter().map(|&l| load[l] / uses.bw[l]).fold(f64::MIN_POSITIVE, f64::max);
    let potential =
        |load: &[f64], ls: &[usize]| -> f64 { ls.iter().map(|&l| (load[l] / uses.bw[l] / scale).powi(POWER)).sum() };
    let shift = |load: &mut [f64], route: &[usize], w: f64| route.iter().for_each(|&l| load[l] += w);
    for _ in 0..ROUNDS {
        let mut moved = false;
        for (pos, routes) in uses.routes.iter().enumerate() {
            for from in 0..routes.len() {
                if units[pos][from] == 0 {
                    continue;
                }
                let mut best: Option<(f64, usize)> = None;
                for to in (0..routes.len()).filter(|&to| to != from) {
                    let mut touched: Vec<usize> = routes[from].iter().chain(&routes[to]).copied().collect();
                    touched.sort_unstable();
                    touched.dedup();
                    let before = potential(&load, &touched);
                    shift(&mut load, &routes[from], -uses.boxes);
                    shift(&mut load, &routes[to], uses.boxes);
                    let gain = before - potential(&load, &touched);
                    shift(&mut load, &routes[to], -uses.boxes);
                    shift(&mut load, &routes[from], uses.boxes);
                    if gain > before * 1e-12 && best.is_none_or(|(g, _)| gain > g) {
                        best = Some((gain, to));
                    }
                }
                if let Some((_, to)) = best {
                    shift(&mut load, &routes[from], -uses.boxes);
                    shift(&mut load, &routes[to], uses.boxes);
                    units[pos][from] -= 1;
                    units[pos][to] += 1;
                    moved = true;
                }
            }
        }
        if !moved {
            break;
        }
    }
    units
}
