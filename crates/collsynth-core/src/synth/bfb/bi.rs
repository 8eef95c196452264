//! The direct-connect paper's appendix A.6 for `bi(G)` = G ∪ G^T: the **split** allgather. With an
//! isomorphism g: G -> G^T ([`crate::zoo::transpose_iso`]) and G's allgather A (what `bfb`
//! makes on G: plain BFB, or the mapped schedule of a line / degree expansion), half of
//! every shard follows A on G's links and the other half g(A) on G^T's links, in the same
//! steps. The halves use opposite links, so each link carries half of what A's link does
//! (or, where G has a 2-cycle and the union merged u -> v with v -> u, half of both on
//! their summed bandwidth): T_L(A') = T_L(A) and T_B(A') = T_B(A), B being twice G's
//! (at most, on merged links).
//!
//! Plain BFB on the union can be better (fewer steps) or worse (more tau: shortest paths of
//! the union may cross thin links); option `bi-method` = `auto` (default) builds the split
//! and plans the union, and keeps the split only if its allgather's (tau, T_L) is
//! lexicographically smaller; `split` and `union` force one. Reduce-scatter and allreduce
//! follow the choice: the union is symmetric, so the split allgather reverses onto it
//! (`ir::transform::reverse`) and composes (`compose`). `provenance.details.bi_method` says
//! which was used.

use super::{plan, schedule_with, synthesize_as, Cap, Rat};
use crate::cost::latency_bandwidth::latency_bandwidth_costs;
use crate::error::{CollsynthError, Result};
use crate::ir::transform::{compose, relabel, reverse, side_by_side};
use crate::ir::{exact_value, Collective, Details, Schedule};
use crate::synth::Request;
use crate::topology::Topology;
use crate::zoo::from_spec;
use crate::zoo::spec::Expr;
use crate::zoo::transpose_iso::{transpose_isomorphism, TransposeMap};

/// How the schedule of a `bi(G)` topology is made (option `bi-method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BiMethod {
    /// The better of the two by the allgather's (tau, T_L); the union on ties.
    Auto,
    /// Appendix A.6's split schedule (`BadInput` without an isomorphism G -> G^T).
    Split,
    /// Plain BFB on the union.
    Union,
}

/// The `bi-method` option: `None` without it; `BadInput` for another value.
pub fn method_option(req: &Request) -> Result<Option<BiMethod>> {
    match req.options.get("bi-method").map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None => Ok(None),
        Some("auto") => Ok(Some(BiMethod::Auto)),
        Some("split") => Ok(Some(BiMethod::Split)),
        Some("union") => Ok(Some(BiMethod::Union)),
        Some(v) => Err(CollsynthError::bad(format!("--bi-method: '{v}' is not one of auto, split, union"))),
    }
}

/// The base G of `topo` if `topo` is exactly the build of `bi(G)` (a topology that merely
/// carries such a name gets `None`): G's expression and its build.
pub fn base(topo: &Topology) -> Option<(Expr, Topology)> {
    let Ok(Expr::Bi(inner)) = Expr::parse(&topo.name) else { return None };
    if !from_spec(&topo.name).is_ok_and(|t| t == *topo) {
        return None;
    }
    let g = from_spec(&inner.to_string()).ok()?;
    Some((*inner, g))
}

/// The method for `topo` and the request: `None` for a topology that is not a `bi(G)`
/// build (where `bi-method` is `BadInput`); with `chunks` / `hetero` the union (the split
/// is made of G's exact schedule; `split` is `BadInput` there).
pub fn method_for(topo: &Topology, req: &Request, plain_options: bool) -> Result<Option<BiMethod>> {
    let asked = method_option(req)?;
    if base(topo).is_none() {
        return match asked {
            Some(_) => Err(CollsynthError::bad(format!(
                "--bi-method applies to bi(G) topologies (docs/bfb.md); '{}' is not one",
                topo.name
            ))),
            None => Ok(None),
        };
    }
    match asked.unwrap_or(BiMethod::Auto) {
        BiMethod::Split if !plain_options => {
            Err(CollsynthError::bad("--bi-method split cannot be combined with --chunks or --hetero"))
        }
        _ if !plain_options => Ok(Some(BiMethod::Union)),
        m => Ok(Some(m)),
    }
}

/// `auto`'s rule, given the allgather's (T_L, tau) of the split and of BFB on the union:
/// the split iff its (tau, T_L) is lexicographically smaller (ties: the union). Public so
/// that a caller predicting `synth`'s values (the finder) applies the same rule.
pub fn prefer_split(split: (usize, Rat), union: (usize, Rat)) -> bool {
    (split.1, split.0) < (union.1, union.0)
}

/// The `bi_method` detail.
pub fn method_detail(method: &str) -> Details {
    Details::new().with("bi_method", method)
}

/// The BFB schedule of `collective` on the `bi(G)` topology `topo` by `method` (see the
/// module docs). Guarantees: verified-correct by construction; with the split, steps and
/// tau of the allgather are G's (tested), reduce-scatter its reversal, allreduce both;
/// `provenance.details` has `bi_method`.
pub fn schedule(
    topo: &Topology,
    collective: Collective,
    method: BiMethod,
    chunks: Option<Cap>,
    hetero: Option<Rat>,
) -> Result<Schedule> {
    let union = |why: Details| -> Result<Schedule> {
        let mut s = schedule_with(topo, collective, chunks, hetero)?;
        s.provenance.details.extend(method_detail("union"));
        s.provenance.details.extend(why);
        Ok(s)
    };
    if method == BiMethod::Union {
        return union(Details::new());
    }
    let (expr, g) = base(topo).ok_or_else(|| CollsynthError::internal("bi: not a bi(G) topology"))?;
    let iso = match transpose_isomorphism(&g, Some(&expr)) {
        Ok(iso) => iso,
        Err(e) if method == BiMethod::Auto => return union(Details::new().with("bi_split", e.to_string())),
        Err(e) => return Err(e),
    };
    let split = split_allgather(topo, &g, &iso)?;
    if method == BiMethod::Auto {
        let c = latency_bandwidth_costs(&split.schedule, topo);
        let p = plan(topo)?;
        let candidates = serde_json::json!({
            "split": [c.latency_steps, exact_value(&c.bandwidth_factor)],
            "union": [p.steps(), exact_value(&p.tau())],
        });
        if !prefer_split((c.latency_steps, c.bandwidth_factor), (p.steps(), p.tau())) {
            return union(Details::new().with("bi_candidates", candidates));
        }
        let mut s = split.for_collective(topo, collective)?;
        s.provenance.details.set("bi_candidates", candidates);
        return Ok(s);
    }
    split.for_collective(topo, collective)
}

/// The split allgather on `topo` = bi(`g`) and how it was made.
struct Split {
    schedule: Schedule,
    construction: String,
    isomorphism: &'static str,
}

impl Split {
    /// The collective from the split allgather (reduce-scatter by reversal onto the
    /// symmetric union, allreduce by composition), with its details.
    fn for_collective(self, topo: &Topology, collective: Collective) -> Result<Schedule> {
        let ag = self.schedule;
        let mut s = match collective {
            Collective::Allgather => ag,
            Collective::ReduceScatter => reverse(&ag, topo, topo)?,
            Collective::Allreduce => compose(&reverse(&ag, topo, topo)?, &ag, Collective::Allreduce)?,
            c => return Err(CollsynthError::bad(format!("algorithm 'bfb' does not support {}", c.name()))),
        };
        let c = latency_bandwidth_costs(&s, topo);
        s.provenance.details = method_detail("split")
            .with("bi_isomorphism", self.isomorphism)
            .with("construction", self.construction)
            .with("steps", c.latency_steps)
            .with("tau", exact_value(&c.bandwidth_factor))
            .with("bandwidth_optimal", c.bandwidth_factor == c.optimum_factor);
        Ok(s)
    }
}

/// A' on `topo` = bi(g): G's allgather A on the first half of every shard, g(A) on the
/// second, in the same steps.
fn split_allgather(topo: &Topology, g: &Topology, iso: &TransposeMap) -> Result<Split> {
    let a = synthesize_as(g, Collective::Allgather, &Request::default(), false)?;
    let construction = a
        .provenance
        .details
        .get("construction")
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("bfb({})", g.name));
    // Ranks and nodes coincide on direct-connect topologies, but say it in ranks.
    let rank_map: Vec<usize> = (0..g.n_ranks())
        .map(|r| g.rank_of(iso.map[g.rank_node(r)]).expect("an isomorphism maps ranks to ranks"))
        .collect();
    let identity: Vec<usize> = (0..g.n_ranks()).collect();
    let on_g = relabel(&a, &identity, &links_onto(topo, g, |x| x)?);
    let on_gt = relabel(&a, &rank_map, &links_onto(topo, g, |x| iso.map[x])?);
    let half = Rat::new(1, 2);
    let mut schedule = side_by_side(&[(&on_g, half), (&on_gt, half)])?;
    schedule.provenance = a.provenance;
    Ok(Split { schedule, construction: format!("A.6 split of {construction}"), isomorphism: iso.how })
}

/// For every link u -> v of `g`, the link f(u) -> f(v) of `topo` (which holds G and G^T).
fn links_onto(topo: &Topology, g: &Topology, f: impl Fn(usize) -> usize) -> Result<Vec<usize>> {
    g.links
        .iter()
        .map(|l| {
            topo.link_between(f(l.src), f(l.dst))
                .ok_or_else(|| CollsynthError::internal(format!("bi: {} has no image link", topo.name)))
        })
        .collect()
}
