//! The exact cut bounds, in integers.
//!
//! **Scaling.** The bandwidths are multiplied once by `k = lcm(denominators) / gcd(scaled
//! numerators)`, which makes them coprime integers `b_e = bandwidth_e * k`. A cut ratio in
//! original units is `|S ∩ Vc| / B+(S) = k * |S ∩ Vc| / B+_int(S)`; a flow value in original
//! units is `flow_int / k`.
//!
//! **Allgather (Newton / Dinkelbach on ForestColl's auxiliary network, Alg. 1 and §4.2 of the paper).** Let
//! `τ = p/q` (lowest terms) be a candidate `max |S ∩ Vc| / B+_int(S)`, i.e. `x = 1/τ`. The
//! auxiliary network adds a super-source `s` with an edge `s -> u` for every compute `u`; with
//! every capacity multiplied by `p`, `s -> u` has capacity `q` and link `e` has `p * b_e`.
//! For `A = S + s` (`v ∉ S`), `cap(A) = p * B+_int(S) + q * |Vc - S|`, which is below `N q`
//! iff `|S ∩ Vc| / B+_int(S) > τ` (Theorem 1). So `τ` is the maximum iff every
//! `maxflow(s -> v) >= N q`, compared in integers. The iteration:
//! 1. start at `τ = max_v (N-1) / B-_int(v)`, attained by `S = V - {v}`;
//! 2. run the `N` flows (one network, only the sink changes; each flow stops as soon as it
//!    reaches `N q`, which proves that sink has no violating cut);
//! 3. if none is below `N q`, `τ` is attained by the current cut and is the maximum; else take
//!    the violating sink with the smallest flow (the most violated, i.e. the Dinkelbach
//!    minimizer of `B+(S) - x |S ∩ Vc|`), its minimal min-cut side `A`, set `S = A - s` and
//!    `τ <- |S ∩ Vc| / B+_int(S)` (strictly larger), and repeat.
//!
//! Exact skip: a sink whose flow reached `N q` at some `x` has `B+(S) >= x |S ∩ Vc|` for every
//! `S` not containing it, hence also for every smaller `x` (larger `τ`). So after the first
//! round only the sinks that were violated in the previous round are tested again.

use super::CutBound;
use crate::error::{CollsynthError, Result};
use crate::flow::{Cap, FlowNetwork};
use crate::rational::Rat;
use crate::topology::automorphism::{link_pairs, maps_links};
use crate::topology::Topology;

/// The link bandwidths as coprime integers: `b[e] = links[e].bandwidth * k`.
pub(super) struct Scaled {
    pub b: Vec<Cap>,
    pub k: Rat,
}

fn overflow() -> CollsynthError {
    CollsynthError::internal("integer overflow while scaling bandwidths for the cut bound")
}

pub(super) fn scaled(topo: &Topology) -> Result<Scaled> {
    let (b, k) = crate::flow::integer_capacities(topo)?;
    Ok(Scaled { b, k })
}

/// Counters of one allgather bound computation (for timing reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Oracle rounds (values of τ tested), the last one being the successful check.
    pub rounds: usize,
    /// Max-flow computations in total.
    pub flows: usize,
}

pub(super) fn allgather(topo: &Topology, symmetry: &[Vec<usize>]) -> Result<CutBound> {
    allgather_with_stats(topo, symmetry).map(|(b, _)| b)
}

/// The first rank (in rank order) of every rank's orbit under the node permutations in
/// `symmetry` that are automorphisms of `topo` (the others are ignored: they are candidates
/// only), as nodes in rank order.
fn orbit_representatives(topo: &Topology, symmetry: &[Vec<usize>]) -> Vec<usize> {
    let pairs = link_pairs(topo);
    let ranks = topo.ranks();
    let mut rank_of = vec![usize::MAX; topo.n_nodes()];
    for (r, &v) in ranks.iter().enumerate() {
        rank_of[v] = r;
    }
    fn find(parent: &mut [usize], mut r: usize) -> usize {
        while parent[r] != r {
            parent[r] = parent[parent[r]];
            r = parent[r];
        }
        r
    }
    let mut parent: Vec<usize> = (0..ranks.len()).collect();
    for g in symmetry.iter().filter(|g| maps_links(topo, &pairs, g, false)) {
        for (r, &v) in ranks.iter().enumerate() {
            let (a, b) = (find(&mut parent, r), find(&mut parent, rank_of[g[v]]));
            // The earlier rank becomes the root, so a root is its orbit's first rank.
            parent[a.max(b)] = a.min(b);
        }
    }
    (0..ranks.len()).filter(|&r| find(&mut parent, r) == r).map(|r| ranks[r]).collect()
}

/// [`allgather`] with its counters. Requires N >= 2.
///
/// `symmetry`: candidate automorphisms (node permutations). The auxiliary network (links plus
/// the source's equal edges to every rank) is invariant under an automorphism, so the max
/// flow into a rank equals the flow into each rank of its orbit: only the smallest rank of
/// each orbit is a sink. Ranks are visited in rank order and the first smallest flow wins, so
/// the bound and its cut are the same as without `symmetry` (an orbit's representative is
/// its first rank).
pub(crate) fn allgather_with_stats(topo: &Topology, symmetry: &[Vec<usize>]) -> Result<(CutBound, Stats)> {
    let n = topo.n_ranks();
    debug_assert!(n >= 2);
    let nn = topo.n_nodes();
    let sc = scaled(topo)?;
    let s = nn;
    let mut edges: Vec<(usize, usize, Cap)> = topo.links.iter().map(|l| (l.src, l.dst, 0)).collect();
    edges.extend(topo.ranks().iter().map(|&u| (s, u, 0)));
    let n_links = topo.links.len();
    let mut net = FlowNetwork::new(nn + 1, &edges);

    // Start: the single-node cut S = V - {v} of the compute node with the least ingress.
    let ingress = |v: usize| -> Cap { topo.in_links(v).iter().map(|&e| sc.b[e]).sum() };
    let vmin = *topo.ranks().iter().min_by_key(|&&v| ingress(v)).expect("N >= 2");
    let mut tau = Rat::new((n - 1) as i128, ingress(vmin));
    let mut cut: Vec<bool> = (0..nn).map(|v| v != vmin).collect();
    let mut candidates: Vec<usize> =
        if symmetry.is_empty() { topo.ranks().to_vec() } else { orbit_representatives(topo, symmetry) };
    let mut stats = Stats::default();
    loop {
        stats.rounds += 1;
        let (p, q) = (*tau.numer(), *tau.denom());
        for (e, &b) in sc.b.iter().enumerate() {
            net.set_capacity(e, p.checked_mul(b).ok_or_else(overflow)?);
        }
        for r in 0..n {
            net.set_capacity(n_links + r, q);
        }
        let need = q.checked_mul(n as i128).ok_or_else(overflow)?;
        let mut best: Option<(Cap, Vec<bool>)> = None;
        let mut violated = Vec::new();
        for &v in &candidates {
            stats.flows += 1;
            let f = net.max_flow_polled(s, v, need, crate::budget::check_cancelled)?;
            if f < need {
                violated.push(v);
                if best.as_ref().is_none_or(|(bf, _)| f < *bf) {
                    best = Some((f, net.min_cut_source_side(s)));
                }
            }
        }
        let Some((_, side)) = best else { break };
        let members = &side[..nn];
        let count = topo.ranks().iter().filter(|&&u| members[u]).count() as i128;
        let out: Cap =
            topo.links.iter().zip(&sc.b).filter(|(l, _)| members[l.src] && !members[l.dst]).map(|(_, &b)| b).sum();
        if count == 0 || out == 0 {
            return Err(CollsynthError::internal("violating cut without compute node or egress"));
        }
        let next = Rat::new(count, out);
        if next <= tau {
            return Err(CollsynthError::internal("Dinkelbach step did not increase the cut ratio"));
        }
        tau = next;
        cut = members.to_vec();
        candidates = violated;
    }
    let bound = CutBound { inv_throughput: tau * sc.k, cut: (0..nn).filter(|&v| cut[v]).collect() };
    Ok((bound, stats))
}

/// Broadcast from rank `root` (N >= 2): `k / min_v maxflow_int(root -> v)`.
pub(super) fn broadcast(topo: &Topology, root: usize) -> Result<CutBound> {
    let sc = scaled(topo)?;
    let edges: Vec<(usize, usize, Cap)> = topo.links.iter().zip(&sc.b).map(|(l, &b)| (l.src, l.dst, b)).collect();
    let mut net = FlowNetwork::new(topo.n_nodes(), &edges);
    let r = topo.rank_node(root);
    let mut best: Option<(Cap, Vec<bool>)> = None;
    for &v in topo.ranks().iter().filter(|&&v| v != r) {
        // A sink that reaches the best value so far cannot improve it: stop its flow there.
        let limit = best.as_ref().map_or(Cap::MAX, |(f, _)| *f);
        let f = net.max_flow_polled(r, v, limit, crate::budget::check_cancelled)?;
        if f < limit {
            best = Some((f, net.min_cut_source_side(r)));
        }
    }
    let (f, side) = best.expect("N >= 2");
    if f == 0 {
        return Err(CollsynthError::internal("a rank is unreachable from the root"));
    }
    Ok(CutBound {
        inv_throughput: sc.k / Rat::from_integer(f),
        cut: (0..topo.n_nodes()).filter(|&v| side[v]).collect(),
    })
}
