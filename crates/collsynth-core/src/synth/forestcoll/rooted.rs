//! Single-root broadcast / reduce by spanning-arborescence packing (Edmonds), the Blink
//! baseline of the ForestColl paper (§5.2), exact and through switches.
//!
//! Interface used by `forestcoll/mod.rs` (keep this signature): [`broadcast`]; also
//! [`reduce`] (the reversal of a broadcast made on the transpose).
//!
//! Method:
//! 1. Scale the bandwidths to coprime integers `b_e` (factor `σ`); the broadcast rate of
//!    the bound is `λ / σ` with `λ = min over compute v of maxflow(root -> v)`.
//! 2. Remove the switches by edge splitting that keeps `λ(root, v) >= λ` (`switch_removal`): a
//!    logical arc between compute nodes carries its physical route.
//! 3. Pack `λ` spanning out-arborescences from the root on the logical multigraph by
//!    Lovász's constructive proof of Edmonds' theorem, in batches of identical trees
//!    (`pack`). A batch of multiplicity `m` carries the fraction `m / λ` of the message
//!    as one piece; its transfers follow the tree edges along their routes, each after the
//!    transfer that brought the piece to its source.
//!
//! Every physical link carries at most `b_e / λ` of the message, and the links of the
//! minimum cut carry exactly that, so the bandwidth term equals the bound's (M σ / λ).
//! Only a switch with more egress than ingress (which would have to multicast to reach
//! the cut bound) can make step 2 fail at `λ`; we then take the largest rate at which it
//! succeeds (binary search), below the bound, which cannot be reached without multicast.

pub(crate) mod pack;
pub(crate) mod switch_removal;

use crate::error::{CollsynthError, Result};
use crate::flow::{Cap, FlowNetwork};
use crate::ir::{Collective, Op, Piece, Schedule, Transfer};
use crate::rational::Rat;
use crate::topology::Topology;

/// A broadcast from `root` at the min-cut rate (exact), as weighted out-trees.
pub fn broadcast(topo: &Topology, root: usize) -> Result<Schedule> {
    let n = topo.n_ranks();
    if root >= n {
        return crate::bad_input!("root {root} is not a rank (N = {n})");
    }
    let mut s = Schedule::new(Collective::Broadcast, n, root, "forestcoll");
    if n == 1 {
        s.add_piece(Piece::whole(0));
        return Ok(s);
    }
    let (caps, _) = scaled(topo)?;
    let r = topo.rank_node(root);
    let edges: Vec<(usize, usize, Cap)> = topo.links.iter().zip(&caps).map(|(l, &c)| (l.src, l.dst, c)).collect();
    let mut net = FlowNetwork::new(topo.n_nodes(), &edges);
    let lambda = topo.ranks().iter().filter(|&&v| v != r).map(|&v| net.max_flow(r, v)).min().unwrap_or(0);
    if lambda == 0 {
        return Err(CollsynthError::Infeasible(format!("a rank is unreachable from root {root}")));
    }
    let (_, k, arcs) = match switch_removal::split_switches(topo, &caps, r, lambda) {
        Some(arcs) => (caps, lambda, arcs),
        None => fallback(topo, &caps, r, lambda)?,
    };
    let rank = |v: usize| topo.rank_of(v).expect("split arcs join compute nodes");
    let logical: Vec<pack::Arc> =
        arcs.iter().map(|a| pack::Arc { src: rank(a.src), dst: rank(a.dst), cap: a.cap }).collect();
    let batches = pack::pack(n, &logical, &[(root, k)])?;
    let mut offset = Rat::from_integer(0);
    for b in &batches {
        let end = offset + Rat::new(b.m, k);
        let piece = s.add_piece(Piece { shard: 0, start: offset, end });
        offset = end;
        let mut into: Vec<Option<usize>> = vec![None; n];
        for &e in &b.edges {
            let (x, y) = (logical[e].src, logical[e].dst);
            let t =
                s.add(Transfer::new(piece, x, y, arcs[e].route.clone(), Op::Copy, into[x].into_iter().collect(), None));
            into[y] = Some(t);
        }
    }
    s.provenance.details.set("trees", batches.len());
    s.provenance.details.set("k", k);
    Ok(s)
}

/// The best rate below the bound at which the switches split (see module docs): with the
/// capacities multiplied by `f` = 1, 2, 4, ..., 64 (finer trees), the largest `k < λ f`
/// (binary search); the first `f` that works. Returns the scaled capacities too.
type Removal = (Vec<Cap>, Cap, Vec<switch_removal::LArc>);

fn fallback(topo: &Topology, caps: &[Cap], r: usize, lambda: Cap) -> Result<Removal> {
    for f in [1, 2, 4, 8, 16, 32, 64] {
        let caps: Vec<Cap> = caps.iter().map(|c| c * f).collect();
        let (mut lo, mut hi, mut best) = (1, lambda * f - 1, None);
        while lo <= hi {
            let mid = lo + (hi - lo) / 2;
            match switch_removal::split_switches(topo, &caps, r, mid) {
                Some(a) => {
                    best = Some((mid, a));
                    lo = mid + 1;
                }
                None => hi = mid - 1,
            }
        }
        if let Some((k, arcs)) = best {
            return Ok((caps, k, arcs));
        }
    }
    Err(CollsynthError::Infeasible("the switches cannot forward a broadcast from this root".into()))
}

/// A reduce to `root`: the broadcast made on the transpose, reversed.
pub fn reduce(topo: &Topology, root: usize) -> Result<Schedule> {
    let tt = crate::ir::transform::transpose(topo);
    let b = broadcast(&tt, root)?;
    crate::ir::transform::reverse(&b, &tt, topo)
}

/// The link bandwidths as coprime integers `b_e = bandwidth_e * σ`, with `σ`.
pub(crate) fn scaled(topo: &Topology) -> Result<(Vec<Cap>, Rat)> {
    crate::flow::integer_capacities(topo)
}

#[cfg(test)]
mod tests;
