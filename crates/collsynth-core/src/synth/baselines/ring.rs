//! `ring`: the classic ring. Allgather in N-1 steps (at step t, the i-th rank of the ring
//! order sends the shard of the (i-t)-th to the (i+1)-th), bidirectional (each shard in two
//! halves, one each way) when every hop of the ring has a reverse route of the same length;
//! broadcast as a chain from the root along the ring. Reductions by the shared reversal,
//! allreduce = reduce-scatter then allgather.
//!
//! The ring order is a Hamiltonian cycle of *adjacent* ranks (a shortest route with no
//! compute node in between) when one is found: the natural order if it is one, else a
//! bounded backtracking search. Otherwise, as NCCL does, ranks go group by group
//! (`node.group`) in rank order, joined by shortest routes.

use super::common::{from_copy_forms, part, Paths, ALL_FIVE};
use crate::error::Result;
use crate::ir::orbit::{Generator, Group};
use crate::ir::{Collective, Op, Schedule, Transfer};
use crate::synth::{Algorithm, Extras, Request};
use crate::topology::Topology;
use std::sync::Arc;

pub const RING: Algorithm = Algorithm {
    name: "ring",
    help: "ring over a Hamiltonian cycle of adjacent ranks (else group by group), bidirectional when routes allow",
    collectives: ALL_FIVE,
    options: &[],
    synthesize,
    extras: Extras::NONE,
};

/// Largest number of (rank, adjacent rank) pairs the cycle search will collect.
const MAX_ADJACENCY: usize = 1 << 22;
/// Work budget of the cycle search (neighbour-list entries scanned).
const SEARCH_BUDGET: usize = 1 << 24;

/// The ring of a topology: order of the ranks (starting at rank 0) and direction(s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingPlan {
    pub order: Vec<usize>,
    /// Every consecutive pair of `order` is adjacent (a Hamiltonian cycle was found).
    pub hamiltonian: bool,
    /// Pieces go both ways (N >= 3 and every hop's reverse route is as long as the hop).
    pub bidirectional: bool,
}

impl RingPlan {
    /// The plan for the transpose of the topology: the same cycle, walked backwards.
    fn transposed(&self) -> RingPlan {
        let mut order = self.order.clone();
        order[1..].reverse();
        RingPlan { order, ..self.clone() }
    }
}

use crate::ir::orbit::PER_ORBIT_FROM;

fn synthesize(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    synthesize_ring(topo, collective, req, topo.n_ranks() >= PER_ORBIT_FROM)
}

/// The ring for `collective`; `per_orbit`: stated per orbit of its rotation where it can be
/// (reduce-scatter and allreduce then too, by `ir::transform`).
pub fn synthesize_ring(topo: &Topology, collective: Collective, req: &Request, per_orbit: bool) -> Result<Schedule> {
    let plan = plan(topo)?;
    let for_topo = |transposed: bool| if transposed { plan.transposed() } else { plan.clone() };
    let compact = |t: &Topology, transposed: bool| match per_orbit {
        true => allgather_per_orbit(t, &for_topo(transposed), &plan.order),
        false => Ok(None),
    };
    from_copy_forms(
        topo,
        collective,
        req,
        RING.name,
        &|t, transposed| match compact(t, transposed)? {
            Some(s) => Ok(s),
            None => allgather(t, &for_topo(transposed)),
        },
        &|t, transposed, root| broadcast(t, &for_topo(transposed), root),
    )
}

/// The ring order of `topo` and whether it can run both ways.
pub fn plan(topo: &Topology) -> Result<RingPlan> {
    let mut paths = Paths::new(topo);
    let (order, hamiltonian) = match hamiltonian_order(&mut paths)? {
        Some(order) => (order, true),
        None => (group_order(topo), false),
    };
    let n = order.len();
    let mut bidirectional = n >= 3;
    for i in 0..n {
        if !bidirectional {
            break;
        }
        let (a, b) = (order[i], order[(i + 1) % n]);
        bidirectional = paths.distance(a, b)? == paths.distance(b, a)?;
    }
    Ok(RingPlan { order, hamiltonian, bidirectional })
}

/// A cycle of adjacent ranks from rank 0: the natural order if it is one, else the first
/// one a bounded backtracking search finds (`None` if none was found within the budget).
fn hamiltonian_order(paths: &mut Paths) -> Result<Option<Vec<usize>>> {
    let n = paths.topology().n_ranks();
    if n <= 2 {
        return Ok(Some((0..n).collect()));
    }
    let mut natural = true;
    for i in 0..n {
        if !paths.adjacent(i, (i + 1) % n)? {
            natural = false;
            break;
        }
    }
    if natural {
        return Ok(Some((0..n).collect()));
    }
    let mut adj = Vec::with_capacity(n);
    let mut total = 0;
    for a in 0..n {
        let nb = paths.neighbors(a)?;
        total += nb.len();
        if total > MAX_ADJACENCY || nb.is_empty() {
            return Ok(None);
        }
        adj.push(nb);
    }
    if unbalanced_bipartite(&adj) {
        return Ok(None);
    }
    Ok(search_cycle(paths.topology(), &adj))
}

/// Whether the (undirected) graph of `adj` is bipartite with sides of different sizes:
/// then no cycle through every rank exists (it would alternate sides), e.g. odd meshes.
fn unbalanced_bipartite(adj: &[Vec<(usize, usize)>]) -> bool {
    let n = adj.len();
    let mut undirected = vec![Vec::new(); n];
    for (a, nb) in adj.iter().enumerate() {
        for &(b, _) in nb {
            undirected[a].push(b);
            undirected[b].push(a);
        }
    }
    let mut side = vec![None; n];
    let mut count = [0usize; 2];
    for start in 0..n {
        if side[start].is_some() {
            continue;
        }
        side[start] = Some(0);
        count[0] += 1;
        let mut stack = vec![start];
        while let Some(u) = stack.pop() {
            let su = side[u].expect("coloured");
            for &v in &undirected[u] {
                match side[v] {
                    None => {
                        side[v] = Some(1 - su);
                        count[1 - su] += 1;
                        stack.push(v);
                    }
                    Some(sv) if sv == su => return false,
                    Some(_) => {}
                }
            }
        }
    }
    count[0] != count[1]
}

/// Backtracking search for a Hamiltonian cycle from rank 0 in the directed graph `adj`
/// (sorted by rank, with route lengths). Candidates are tried staying in the same group
/// first, then by shorter route, then by fewest onward choices (Warnsdorff), then by rank.
fn search_cycle(topo: &Topology, adj: &[Vec<(usize, usize)>]) -> Option<Vec<usize>> {
    let n = adj.len();
    let group = |r: usize| topo.nodes[topo.rank_node(r)].group.as_deref();
    let closes = |a: usize| adj[a].binary_search_by_key(&0, |&(b, _)| b).is_ok();
    let mut visited = vec![false; n];
    let mut work = 0usize;
    // Candidates after `u`, best last (popped first).
    let candidates = |u: usize, visited: &[bool], work: &mut usize| -> Vec<usize> {
        let mut c: Vec<(bool, usize, usize, usize)> = adj[u]
            .iter()
            .filter(|&&(v, _)| !visited[v])
            .map(|&(v, d)| {
                *work += adj[v].len();
                let onward = adj[v].iter().filter(|&&(w, _)| !visited[w]).count();
                (group(v) != group(u), d, onward, v)
            })
            .collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c.into_iter().map(|(_, _, _, v)| v).collect()
    };
    let mut path = vec![0usize];
    visited[0] = true;
    let mut stack = vec![candidates(0, &visited, &mut work)];
    while let Some(cands) = stack.last_mut() {
        if work > SEARCH_BUDGET {
            return None;
        }
        if path.len() == n {
            if closes(*path.last().expect("non-empty")) {
                return Some(path);
            }
            cands.clear();
        }
        match cands.pop() {
            Some(v) => {
                visited[v] = true;
                path.push(v);
                let next = candidates(v, &visited, &mut work);
                stack.push(next);
            }
            None => {
                stack.pop();
                if let Some(v) = path.pop() {
                    visited[v] = false;
                }
            }
        }
    }
    None
}

/// NCCL-style order: ranks group by group (see [`groups`]).
fn group_order(topo: &Topology) -> Vec<usize> {
    groups(topo).concat()
}

/// The ranks of each group (groups in order of first appearance, ungrouped ranks as one
/// group), by rank inside a group: NCCL's nodes.
pub(crate) fn groups(topo: &Topology) -> Vec<Vec<usize>> {
    let mut groups: Vec<(Option<&str>, Vec<usize>)> = Vec::new();
    for r in 0..topo.n_ranks() {
        let g = topo.nodes[topo.rank_node(r)].group.as_deref();
        match groups.iter_mut().find(|(h, _)| *h == g) {
            Some((_, members)) => members.push(r),
            None => groups.push((g, vec![r])),
        }
    }
    groups.into_iter().map(|(_, m)| m).collect()
}

/// Ring allgather on `topo` along `plan` (pieces: shard s whole, or its halves 2s, 2s+1
/// with half 0 going forward and half 1 backward).
pub fn allgather(topo: &Topology, plan: &RingPlan) -> Result<Schedule> {
    let order = &plan.order;
    let n = order.len();
    let mut s = Schedule::new(Collective::Allgather, n, 0, RING.name);
    let parts = if plan.bidirectional { 2 } else { 1 };
    for shard in 0..n {
        for k in 0..parts {
            s.add_piece(part(shard, k, parts));
        }
    }
    let mut paths = Paths::new(topo);
    // delivered[k][i]: the transfer that brought position i the piece it forwards next.
    let mut delivered = vec![vec![None; n]; parts];
    for t in 0..n.saturating_sub(1) {
        for (k, delivered) in delivered.iter_mut().enumerate() {
            // direction +1 for half 0, -1 (i.e. + n - 1) for half 1
            let dir = if k == 0 { 1 } else { n - 1 };
            let mut next = vec![None; n];
            for i in 0..n {
                let (src, dst) = (order[i], order[(i + dir) % n]);
                let shard = order[(i + n * n - t * dir) % n];
                let id = paths.send(&mut s, shard * parts + k, src, dst, delivered[i], t as u32)?;
                next[(i + dir) % n] = Some(id);
            }
            *delivered = next;
        }
    }
    Ok(s)
}

/// [`allgather`] stated per orbit (`ir::orbit`) of the rotation along the ring `forward`
/// (rank `forward[i]` to `forward[i + 1]`, every other node fixed), a group of automorphisms
/// of the links the ring uses only ([`Group::on_used_links`]: a snake through a torus follows
/// no automorphism of the torus): the representatives are the sends of the ring's first rank,
/// one per step and direction. `None` when the ring is not that regular: not a cycle of
/// adjacent ranks, a hop's route not the rotation of the first one's, or the used links
/// unequal in bandwidth or latency. `plan` runs `forward` either way (`RingPlan::transposed`
/// on the transpose, which reduce-scatter reverses), so reduce-scatter and allgather share
/// the group and allreduce composes them orbit by orbit.
pub fn allgather_per_orbit(topo: &Topology, plan: &RingPlan, forward: &[usize]) -> Result<Option<Schedule>> {
    let order = &plan.order;
    let n = order.len();
    if !plan.hamiltonian || n < 3 || forward.len() != n || forward[0] != order[0] {
        return Ok(None);
    }
    let mut nodes: Vec<usize> = (0..topo.n_nodes()).collect();
    for i in 0..n {
        nodes[topo.rank_node(forward[i])] = topo.rank_node(forward[(i + 1) % n]);
    }
    let Ok(gen) = Generator::from_nodes_on_used_links(topo, nodes) else { return Ok(None) };
    let Ok(group) = Group::on_used_links(vec![gen]) else { return Ok(None) };
    let mut at = vec![0usize; n];
    for (i, &r) in forward.iter().enumerate() {
        at[r] = i;
    }
    // The element moving the first rank to position i of `plan`.
    let element = |i: usize| at[order[i % n]];
    let parts = if plan.bidirectional { 2 } else { 1 };
    let mut paths = Paths::new(topo);
    let mut first = Vec::with_capacity(parts);
    for k in 0..parts {
        let dir = if k == 0 { 1 } else { n - 1 };
        // Every hop's route must be the image of the first one's, as the flat ring routes it.
        let route = paths.route(order[0], order[dir % n])?;
        for i in 0..n {
            let moved: Vec<usize> = route.iter().map(|&l| group.link(element(i), l)).collect();
            if paths.route(order[i], order[(i + dir) % n])? != moved {
                return Ok(None);
            }
        }
        first.push(route);
    }
    let mut s = Schedule::new(Collective::Allgather, n, 0, RING.name);
    for shard in 0..n {
        for k in 0..parts {
            s.add_piece(part(shard, k, parts));
        }
    }
    for t in 0..n - 1 {
        for (k, route) in first.iter().enumerate() {
            let dir = if k == 0 { 1 } else { n - 1 };
            let shard = order[(n * n - t * dir) % n];
            // Waits for the send into the first rank one step earlier (from position -dir).
            let after = (t > 0).then(|| ((t - 1) * parts + k) * n + element(n - dir));
            let dst = order[dir % n];
            s.add(Transfer::new(
                shard * parts + k,
                order[0],
                dst,
                route.clone(),
                Op::Copy,
                after.into_iter().collect(),
                Some(t as u32),
            ));
        }
    }
    s.symmetry = Some(Arc::new(group));
    if s.symmetry.as_ref().expect("set").check_for(topo, &s).is_err() {
        return Ok(None);
    }
    Ok(Some(s))
}

/// Chain broadcast from `root` along the ring order (one piece).
pub fn broadcast(topo: &Topology, plan: &RingPlan, root: usize) -> Result<Schedule> {
    crate::synth::check_root(topo, root)?;
    let order = &plan.order;
    let n = order.len();
    let mut s = Schedule::new(Collective::Broadcast, n, root, RING.name);
    let piece = s.add_piece(part(0, 0, 1));
    let p0 = order.iter().position(|&r| r == root).expect("the order holds every rank");
    let mut paths = Paths::new(topo);
    let mut last = None;
    for k in 0..n.saturating_sub(1) {
        let (src, dst) = (order[(p0 + k) % n], order[(p0 + k + 1) % n]);
        last = Some(paths.send(&mut s, piece, src, dst, last, k as u32)?);
    }
    Ok(s)
}

#[cfg(test)]
mod tests;
