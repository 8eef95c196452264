//! What the topology finder needs of a BFB plan: its steps and exact bandwidth factor, without
//! the per-source splits that emission needs (no deliveries, parts or cuts are recorded).
//!
//! On a vertex-transitive topology (for every rank u an automorphism, bandwidths included,
//! maps rank 0 to u) the subproblem of u at step t is rank 0's relabelled, so it has the same
//! optimum: max_u U*_{u,t} = U*_{0,t}, and rank 0 alone gives the exact profile — one BFS per
//! in-neighbour of rank 0 and D subproblems instead of N BFS and N D subproblems. Whether a
//! topology is vertex-transitive is the caller's knowledge (the zoo's, by construction: see
//! `zoo::vertex_transitive`); no automorphism search is run here.

use super::graph::Graph;
use super::plan::{bandwidth_factor, plan_range};
use super::solve::{disjoint_optimum, optimum, Subproblem};
use super::{in_parallel, levels, MAX_RANKS};
use crate::error::Result;
use crate::flow::Cap;
use crate::rational::Rat;
use crate::topology::Topology;
use num_integer::Integer;
use num_traits::Zero;

/// A BFB allgather's two performance numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// D, the diameter: [`super::BfbPlan::steps`].
    pub steps: usize,
    /// The exact bandwidth factor: [`super::BfbPlan::tau`].
    pub tau: Rat,
}

/// What the caller knows of the topology's symmetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symmetry {
    /// Nothing: every rank's subproblems are solved.
    Unknown,
    /// Vertex-transitive (links and bandwidths): rank 0's subproblems are solved alone.
    VertexTransitive,
}

/// The steps and tau of `plan(topo)` (no switches; else `BadInput`). Guarantees: equal to
/// [`fn@super::plan`]'s `steps()` and `tau()` — for [`Symmetry::VertexTransitive`] provided the
/// topology is vertex-transitive, which is not checked.
pub fn profile(topo: &Topology, symmetry: Symmetry) -> Result<Profile> {
    match symmetry {
        Symmetry::VertexTransitive => {
            // Rank 0's optima, as if it were the busiest rank at every step.
            let g = Graph::around(topo, 0)?;
            let optima = plan_range(&g, 0..g.n.min(1), None, false).optima;
            let (_, max_ingress) = g.ingress_bounds();
            Ok(Profile { steps: g.steps, tau: bandwidth_factor(&optima, g.steps, max_ingress, g.n) })
        }
        Symmetry::Unknown => general(topo, None),
    }
}

/// [`profile`] with [`Symmetry::Unknown`], where `sigma` (rank u to rank `sigma[u]`) may be
/// an automorphism (links and bandwidths; the zoo's `x -> N - 1 - x` of Kautz and de Bruijn
/// graphs): then U*_{u,t} = U*_{sigma(u),t} (the subproblems are relabelled), and the level
/// sets solve one rank per orbit of sigma. It is checked, one lookup per link; if it is not
/// one, every rank is solved. Guarantees: equal to [`profile`]'s steps and tau.
pub fn profile_with_automorphism(topo: &Topology, sigma: &[usize]) -> Result<Profile> {
    let reps = is_automorphism(topo, sigma).then(|| orbit_representatives(sigma));
    general(topo, reps)
}

/// [`profile_with_automorphism`] of the topology on ranks `0..n` with one link per arc (the
/// arcs distinct, sorted, without self-loops), all of one bandwidth, without building it: the
/// graph is made from the arcs directly (tau does not depend on the common bandwidth, which
/// scales its two factors inversely). Guarantees: equal to `profile` on that topology. None
/// where the zoo would not build it (some rank does not reach every other) or BFB refuses it
/// (more than [`MAX_RANKS`] ranks).
pub fn profile_arcs(n: usize, arcs: &[(usize, usize)], sigma: &[usize]) -> Option<Profile> {
    if !(1..=MAX_RANKS).contains(&n) || !strongly_connected(n, arcs) {
        return None;
    }
    let reps = arcs_automorphism(arcs, sigma).then(|| orbit_representatives(sigma));
    Some(profile_of(Graph::from_arcs(n, arcs), reps))
}

/// The general path: level sets (solving the ranks `solved` marks, all without), else every
/// rank's plan.
fn general(topo: &Topology, solved: Option<Vec<bool>>) -> Result<Profile> {
    Ok(profile_of(Graph::without_rows(topo)?, solved))
}

/// [`general`] on a graph without rows.
fn profile_of(mut g: Graph, solved: Option<Vec<bool>>) -> Profile {
    let (steps, optima) = match levels::step_maxima(&g, solved.as_deref()) {
        // One row of step maxima: as if one rank were the busiest at every step.
        Some(maxima) => (maxima.len(), maxima),
        None => {
            g.all_rows();
            let outs = in_parallel(g.n, |range| plan_range(&g, range, None, false));
            (g.steps, outs.into_iter().flat_map(|o| o.optima).collect())
        }
    };
    let (_, max_ingress) = g.ingress_bounds();
    Profile { steps, tau: bandwidth_factor(&optima, steps, max_ingress, g.n) }
}

/// Whether every rank of `0..n` reaches every other along the arcs: from rank 0 forwards and
/// backwards (what the topology builder checks).
fn strongly_connected(n: usize, arcs: &[(usize, usize)]) -> bool {
    let reaches_all = |edges: &mut dyn Iterator<Item = (usize, usize)>| {
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (u, v) in edges {
            next[u].push(v);
        }
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        let mut count = 1;
        while let Some(u) = stack.pop() {
            for &v in &next[u] {
                if !seen[v] {
                    seen[v] = true;
                    count += 1;
                    stack.push(v);
                }
            }
        }
        count == n
    };
    reaches_all(&mut arcs.iter().copied()) && reaches_all(&mut arcs.iter().map(|&(u, v)| (v, u)))
}

/// Whether `sigma` permutes `0..n` mapping every arc of the sorted `arcs` to an arc.
fn arcs_automorphism(arcs: &[(usize, usize)], sigma: &[usize]) -> bool {
    if !is_permutation(sigma) {
        return false;
    }
    let image = |x: usize| sigma.get(x).copied();
    arcs.iter().all(|&(u, v)| {
        let (Some(a), Some(b)) = (image(u), image(v)) else { return false };
        arcs.binary_search(&(a, b)).is_ok()
    })
}

/// Whether `sigma` permutes the ranks of `topo` (no switches) mapping every link to a link
/// of the same bandwidth (so, links being as many, onto the links).
pub(crate) fn is_automorphism(topo: &Topology, sigma: &[usize]) -> bool {
    let n = topo.n_ranks();
    if topo.n_switches() > 0 || sigma.len() != n || !is_permutation(sigma) {
        return false;
    }
    let image = |v: usize| topo.rank_node(sigma[topo.rank_of(v).expect("no switches")]);
    topo.links
        .iter()
        .all(|l| topo.link_between(image(l.src), image(l.dst)).is_some_and(|m| topo.links[m].bandwidth == l.bandwidth))
}

/// Whether `sigma` maps `0..len` one-to-one onto itself.
fn is_permutation(sigma: &[usize]) -> bool {
    let mut hit = vec![false; sigma.len()];
    sigma.iter().all(|&x| x < sigma.len() && !std::mem::replace(&mut hit[x], true))
}

/// The least rank of every cycle of the permutation `sigma`, marked.
fn orbit_representatives(sigma: &[usize]) -> Vec<bool> {
    let mut seen = vec![false; sigma.len()];
    let mut reps = vec![false; sigma.len()];
    for u in 0..sigma.len() {
        if !seen[u] {
            reps[u] = true;
            let mut x = u;
            while !seen[x] {
                seen[x] = true;
                x = sigma[x];
            }
        }
    }
    reps
}

/// The profile of the circulant on Z_n with the arcs i -> i + s (mod n) for every s in
/// `shifts` (each in 1..n; a repeated shift is one link of the summed bandwidth, as the zoo
/// merges parallel arcs), all of one bandwidth, without building the topology: [`profile`]
/// with [`Symmetry::VertexTransitive`] solves rank 0's subproblems, and here every distance
/// they read comes from one BFS from 0, since i -> i + c is an automorphism:
/// dist(v -> x) = dist(0 -> x - v). Guarantees: equal to [`profile`] on the built topology
/// (whose bandwidth scales tau's two factors inversely, so it does not matter). None when
/// the graph is disconnected, has more than [`MAX_RANKS`] ranks or rank 0 more than 64
/// in-neighbours (masks are one word here).
pub fn circulant(n: usize, shifts: &[usize]) -> Option<Profile> {
    // Rank 0's in-links: one from -s per distinct shift s, of capacity its multiplicity.
    let mut sorted: Vec<usize> = shifts.iter().map(|&s| s % n).collect();
    sorted.sort_unstable();
    let mut senders: Vec<(usize, Cap)> = Vec::new();
    for s in sorted {
        match senders.last_mut() {
            Some((last, m)) if *last == s => *m += 1,
            _ => senders.push((s, 1)),
        }
    }
    if !(2..=MAX_RANKS).contains(&n) || senders.len() > 64 || senders.iter().any(|&(s, _)| s == 0) {
        return None;
    }
    // Capacities as `integer_capacities` scales them: the multiplicities over their gcd.
    let g = senders.iter().fold(0, |g, &(_, m)| g.gcd(&m));
    let caps: Vec<Cap> = senders.iter().map(|&(_, m)| m / g).collect();
    let dist = circulant_distances(n, senders.iter().map(|&(s, _)| s))?;
    let steps = dist.iter().copied().max().unwrap_or(0) as usize;
    // Source v of rank 0 at step t = dist(v -> 0) = dist(0 -> -v); in-neighbour -s holds it
    // one step earlier iff dist(v -> -s) = dist(0 -> -v - s) = t - 1. Indexed by y = -v.
    let mut masks: Vec<Vec<u64>> = vec![Vec::new(); steps + 1];
    for y in 1..n {
        let t = dist[y];
        let mask = senders
            .iter()
            .enumerate()
            .fold(0u64, |mask, (j, &(s, _))| mask | u64::from(dist[(y + n - s) % n] + 1 == t) << j);
        masks[t as usize].push(mask);
    }
    let mut sum = Rat::zero();
    let mut classes: Vec<(u64, Cap)> = Vec::new();
    for step in masks.iter_mut().skip(1) {
        step.sort_unstable();
        classes.clear();
        classes.extend(step.chunk_by(|a, b| a == b).map(|run| (run[0], run.len() as Cap)));
        // Rank 0's optimum at this step, without the flows a plan keeps.
        sum += disjoint_optimum(&classes, |k| caps[k])
            .unwrap_or_else(|| optimum(&Subproblem::of_classes(caps.clone(), &classes)));
    }
    // tau = sum_t U*_t sigma x max ingress / n, max ingress = sum of caps / sigma.
    let ingress: Cap = caps.iter().sum();
    Some(Profile { steps, tau: sum * Rat::from_integer(ingress) / Rat::from_integer(n as i128) })
}

/// Hops from 0 to every residue of Z_n along the arcs x -> x + s (one BFS); None if some
/// residue is unreachable.
pub fn circulant_distances(n: usize, shifts: impl Iterator<Item = usize> + Clone) -> Option<Vec<u32>> {
    let mut dist = vec![u32::MAX; n];
    dist[0] = 0;
    let mut queue = Vec::with_capacity(n);
    queue.push(0usize);
    let mut head = 0;
    while let Some(&x) = queue.get(head) {
        head += 1;
        for s in shifts.clone() {
            let y = (x + s) % n;
            if dist[y] == u32::MAX {
                dist[y] = dist[x] + 1;
                queue.push(y);
            }
        }
    }
    (queue.len() == n).then_some(dist)
}
