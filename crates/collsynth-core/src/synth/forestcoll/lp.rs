//! The allreduce linear program of ForestColl appendix E (LP (6)), solved, made exact and
//! turned into an unequal-root allreduce schedule (§4.6 and appendix E).
//!
//! Interface used by `forestcoll/mod.rs` (keep these signatures):
//! * [`lp_algbw`]: the LP's allreduce algbw (GB/s, exact after rounding and verification),
//!   or `None` when the LP was not solved (mode `Never`, or too large for `Auto`).
//! * [`allreduce`]: the unequal-root allreduce schedule from the LP solution.
//!
//! **LP (6)**: maximize `Σ x_v` subject to, for every compute `t`, a flow of `Σ x` from a
//! super-source `s` (arcs `s -> v` of capacity `x_v`) to `t` within `c_BC`, and a flow of
//! `Σ x` from `t` to `s` (arcs `v -> s` of capacity `x_v`) within `c_RE`, with
//! `c_RE + c_BC <= b` per link; flow conservation written "inflow >= outflow".
//! With switches the links are replaced by appendix E's `b'` indirection: logical arcs between
//! compute nodes whose capacities are carried by a multi-commodity flow in the physical
//! network (aggregated by source; see `model`). `T = M / Σ x`, so algbw = `Σ x`.
//!
//! **Solver: `microlp`** (pure Rust revised simplex with sparse LU, crates.io). HiGHS
//! needs cmake and libclang at build time, which this machine and CI lack;
//! `microlp` builds anywhere `cargo` does. It answers in `f64`, so the result is then made
//! exact: every value is rounded to a multiple of `1/K` (`K` = lcm of the denominators that
//! reproduce the solver's vertex, or 1000 rounding down as the paper does when the vertex
//! has no small denominators), link capacities are re-checked in integers, and the root
//! shares are lowered until every one of the `2N` flow conditions holds in exact integer
//! max-flows. The reported algbw is that verified value: never above the LP optimum, and
//! equal to it whenever the solver's vertex has denominators <= 1000 (every topology we
//! test).
//!
//! **Schedule**: root `v` owns the shard `x_v / Σ x` (roots with `x_v = 0` own nothing).
//! With all capacities in units of `1/K`, Edmonds' theorem with root capacities (Frank;
//! ForestColl's Thm 5 with `s -> v` capacity `k_v`) packs `x_v` out-arborescences per root in
//! the BC graph and `x_v` in-arborescences per root in the RE graph (out-trees of its
//! transpose), all roots together (`super::rooted::pack`). Each piece of a shard follows
//! one in-tree (Reduce transfers child -> parent, after the child's own reductions) and then
//! one out-tree (Copy transfers, the root's after every reduction into it).
//!
//! **`auto`**: solves only when the LP has at most [`AUTO_MAX_VARIABLES`] variables; see
//! `docs/forestcoll-lp.md` for the measured times behind the threshold.

mod model;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::Result;
use crate::ir::{Collective, Op, Piece, Schedule, Transfer};
use crate::rational::Rat;
use crate::topology::Topology;
use model::{ExactSolution, Instance};

pub use model::Size;

use super::rooted::pack;

/// How `--allreduce-lp` asks for the LP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LpMode {
    Auto,
    Always,
    Never,
}

impl LpMode {
    /// `auto`, `always` or `never`.
    pub fn parse(text: &str) -> Result<LpMode> {
        match text {
            "auto" => Ok(LpMode::Auto),
            "always" => Ok(LpMode::Always),
            "never" => Ok(LpMode::Never),
            _ => crate::bad_input!("--allreduce-lp: '{text}' is not one of auto, always, never"),
        }
    }
}

/// `auto` solves LPs with at most this many variables (measured: see docs/forestcoll-lp.md).
pub const AUTO_MAX_VARIABLES: usize = 10_000;

/// When the solver's vertex has no small denominators: units of 1/100000 (rounded down).
const FALLBACK_K: i128 = 100_000;

/// The LP's size for `topo` (variables and constraints), as `auto` judges it.
pub fn size(topo: &Topology) -> Result<Size> {
    let (caps, _) = super::rooted::scaled(topo)?;
    Ok(Instance::new(topo, caps).size())
}

struct Solved {
    inst: Instance,
    sol: ExactSolution,
    sigma: Rat,
}

/// Solved LPs by (topology, mode), each solved once per process even when asked from several
/// threads at a time: `auto` builds ForestColl's allreduce in several forms on one topology,
/// and each form asked for the LP twice (its value, then its trees), seconds a solve on
/// `dgx-a100:2`. Keyed by the topology's JSON, not a hash of it: a collision would be a
/// wrong answer.
type Memo = Mutex<HashMap<(String, LpMode), Arc<OnceLock<Result<Option<Arc<Solved>>>>>>>;

fn solve(topo: &Topology, mode: LpMode) -> Result<Option<Arc<Solved>>> {
    if mode == LpMode::Never || topo.n_ranks() < 2 {
        return Ok(None);
    }
    // The LP has at least N + 2 N^2 variables (x and the source arcs of its 2N flow
    // blocks): `auto` decides on that before building an instance of N^2 arcs.
    let n = topo.n_ranks();
    if mode == LpMode::Auto && n.saturating_mul(n).saturating_mul(2).saturating_add(n) > AUTO_MAX_VARIABLES {
        return Ok(None);
    }
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let key = (crate::topology::json::write(topo), mode);
    let cell = {
        let mut memo = MEMO.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        memo.entry(key).or_default().clone()
    };
    cell.get_or_init(|| solve_once(topo, mode).map(|solved| solved.map(Arc::new))).clone()
}

/// [`solve`] without the memo.
fn solve_once(topo: &Topology, mode: LpMode) -> Result<Option<Solved>> {
    let (caps, sigma) = super::rooted::scaled(topo)?;
    let inst = Instance::new(topo, caps);
    if mode == LpMode::Auto && inst.size().variables > AUTO_MAX_VARIABLES {
        return Ok(None);
    }
    let fs = model::solve(topo, &inst)?;
    let sol = model::exact(topo, &inst, &fs, FALLBACK_K)?;
    Ok(Some(Solved { inst, sol, sigma }))
}

/// The LP's optimal allreduce algbw, `None` when not solved (mode `Never`, or too large for `Auto`).
///
/// The value is the best *exact feasible* point of LP (6) we have: the rounded and
/// verified solver solution, or the RS+AG point (equal shares, every link split between
/// reduce and broadcast in proportion; always a feasible LP point) when rounding left
/// the solver's vertex below it (the LP's optimal face is often degenerate, with vertices
/// of large denominators, on the symmetric fabrics where LP = RS+AG).
pub fn lp_algbw(topo: &Topology, mode: LpMode) -> Result<Option<Rat>> {
    let Some(solved) = solve(topo, mode)? else { return Ok(None) };
    let rounded = solved.value();
    let inv =
        crate::bound::allreduce_rs_ag_symmetric(topo, &crate::zoo::symmetry::node_generators(topo))?.inv_throughput;
    let rs_ag = Rat::from_integer(topo.n_ranks() as i128) / inv;
    Ok(Some(rounded.max(rs_ag)))
}

impl Solved {
    /// The verified rounded solution's algbw (GB/s): `Σ x / (K σ)`.
    fn value(&self) -> Rat {
        Rat::new(self.sol.total(), self.sol.k) / self.sigma
    }
}

/// The allreduce schedule built from the LP solution (unequal shards, one per root).
pub fn allreduce(topo: &Topology, mode: LpMode) -> Result<Option<Schedule>> {
    let n = topo.n_ranks();
    if n == 1 && mode != LpMode::Never {
        let mut s = Schedule::new(Collective::Allreduce, 1, 0, "forestcoll");
        s.add_piece(Piece::whole(0));
        return Ok(Some(s));
    }
    Ok(with_value(topo, mode)?.map(|(s, _)| s))
}

/// [`allreduce`] with its exact algbw (`Σ x / (K σ)` of the rounded solution it packs).
fn with_value(topo: &Topology, mode: LpMode) -> Result<Option<(Schedule, Rat)>> {
    let Some(solved) = solve(topo, mode)? else { return Ok(None) };
    Ok(Some((build(topo, &solved.inst, &solved.sol)?, solved.value())))
}

/// The trees of the exact solution as a schedule (see module docs).
fn build(topo: &Topology, inst: &Instance, sol: &ExactSolution) -> Result<Schedule> {
    let n = topo.n_ranks();
    // One packing arc per (logical arc, route) with units for BC and RE.
    let mut bc_arcs = Vec::new();
    let mut re_arcs = Vec::new();
    let mut bc_route = Vec::new();
    let mut re_route = Vec::new();
    for (arc, routes) in inst.arcs.iter().zip(&sol.routes) {
        for (route, bc, re) in routes {
            if *bc > 0 {
                bc_arcs.push(pack::Arc { src: arc.src, dst: arc.dst, cap: *bc });
                bc_route.push(route.clone());
            }
            if *re > 0 {
                re_arcs.push(pack::Arc { src: arc.dst, dst: arc.src, cap: *re });
                re_route.push(route.clone());
            }
        }
    }
    let roots: Vec<(usize, i128)> = (0..n).filter(|&v| sol.x[v] > 0).map(|v| (v, sol.x[v])).collect();
    let out_trees = pack::pack(n, &bc_arcs, &roots)?;
    let in_trees = pack::pack(n, &re_arcs, &roots)?;
    let total = sol.total();
    let mut s = Schedule::new(Collective::Allreduce, n, 0, "forestcoll");
    s.shards = roots.iter().map(|&(_, x)| Rat::new(x, total)).collect();
    for (shard, &(v, xv)) in roots.iter().enumerate() {
        let bcs: Vec<&pack::Batch> = out_trees.iter().filter(|b| b.root == v).collect();
        let res: Vec<&pack::Batch> = in_trees.iter().filter(|b| b.root == v).collect();
        // Common refinement of the two partitions of [0, x_v) into batches.
        let (mut i, mut j, mut pos, mut end_i, mut end_j) = (0, 0, 0i128, bcs[0].m, res[0].m);
        while pos < xv {
            let end = end_i.min(end_j);
            let piece = s.add_piece(Piece { shard, start: Rat::new(pos, xv), end: Rat::new(end, xv) });
            // Reduce along the in-tree: deepest edges first.
            let mut into: Vec<Vec<usize>> = vec![Vec::new(); n];
            for &e in res[j].edges.iter().rev() {
                let (parent, child) = (re_arcs[e].src, re_arcs[e].dst);
                let t = s.add(Transfer::new(
                    piece,
                    child,
                    parent,
                    re_route[e].clone(),
                    Op::Reduce,
                    into[child].clone(),
                    None,
                ));
                into[parent].push(t);
            }
            // Broadcast along the out-tree, from the root once it holds the sum.
            let mut got: Vec<Option<usize>> = vec![None; n];
            for &e in &bcs[i].edges {
                let (x, y) = (bc_arcs[e].src, bc_arcs[e].dst);
                let after = if x == v { into[v].clone() } else { got[x].into_iter().collect() };
                let t = s.add(Transfer::new(piece, x, y, bc_route[e].clone(), Op::Copy, after, None));
                got[y] = Some(t);
            }
            pos = end;
            if pos == end_i && i + 1 < bcs.len() {
                i += 1;
                end_i += bcs[i].m;
            }
            if pos == end_j && j + 1 < res.len() {
                j += 1;
                end_j += res[j].m;
            }
        }
    }
    s.provenance.details.set("trees", out_trees.len() + in_trees.len());
    s.provenance.details.set("k", crate::ir::whole_value(sol.k));
    Ok(s)
}

#[cfg(test)]
mod tests;
