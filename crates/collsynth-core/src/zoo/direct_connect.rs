//! Direct-connect graphs of the direct-connect paper (§6.2, App. F, Tables 8-9): `complete`,
//! `bipartite`, `circulant`, `dcirculant`, `kautz`, `debruijn`, `dbjmod`, `diamond`, and
//! `traff` (the circulant of Träff's round-optimal broadcast).
//!
//! Every family here is compute nodes `n0..` only, joined by directed links of one `bw=` /
//! `lat=` (default 100 GB/s, 1 us); undirected graphs are two directed links per edge. Arcs
//! that are self-loops in a definition are dropped; arcs that coincide merge into one link
//! whose bandwidth is the sum (the paper's multi-edges).

use super::clusters::check_size;
use super::{node_name, Family, Spec};
use crate::error::{CollsynthError, Result};
use crate::topology::{Topology, TopologyBuilder};
use num_integer::Integer;
use std::collections::{HashSet, VecDeque};

pub(super) const FAMILIES: &[&Family] = &[
    &Family {
        name: "complete",
        args: "N",
        help: "complete digraph K_N: every ordered pair linked",
        options: &[],
        build: complete,
    },
    &Family {
        name: "bipartite",
        args: "M,N",
        help: "complete bipartite K_{M,N}: ranks 0..M-1 on one side, every cross pair linked both ways",
        options: &[],
        build: bipartite,
    },
    &Family {
        name: "circulant",
        args: "N:S1,S2,..",
        help: "circulant C(N,S): i <-> i+s (mod N), gcd(N,S) = 1; coinciding links add bandwidth",
        options: &[],
        build: circulant,
    },
    &Family {
        name: "dcirculant",
        args: "N:S1,S2,..",
        help: "directed circulant: i -> i+s (mod N), gcd(N,S) = 1",
        options: &[],
        build: dcirculant,
    },
    &Family {
        name: "kautz",
        args: "D:N",
        help: "generalized Kautz digraph (Imase-Itoh): x -> -Dx-a (mod N), a = 1..D, loops dropped",
        options: &[],
        build: kautz,
    },
    &Family {
        name: "debruijn",
        args: "D:N",
        help: "generalized de Bruijn digraph: x -> Dx+a (mod N), a = 0..D-1, loops dropped; DBJ(D,n) = debruijn:D:D^n",
        options: &[],
        build: debruijn,
    },
    &Family {
        name: "dbjmod",
        args: "D:n",
        help: "modified de Bruijn DBJMod(D,n): DBJ(D,n)'s loops and 2-cycles rewired into one cycle (searched)",
        options: &[],
        build: dbjmod,
    },
    &Family {
        name: "diamond",
        args: "",
        help: "the Diamond (N=8, d=2, diameter 3, not reverse-symmetric), reconstructed by search",
        options: &[],
        build: diamond,
    },
    &Family {
        name: "traff",
        args: "p",
        help: "circulant of Traff's round-optimal broadcast: i -> i + skips[k] (mod p), k < ceil(log2 p)",
        options: &[],
        build: traff,
    },
];

/// Largest node count of the families built from arc lists.
pub(super) const MAX_NODES: usize = 1 << 20;

/// Largest node count of `dbjmod` (its rewiring search costs N BFS per trial).
const MAX_DBJMOD_NODES: usize = 1024;

/// Largest degree `D` of `kautz` / `debruijn`.
const MAX_DEGREE: usize = 4096;

/// A bad-input error about spec `s`.
pub(super) fn bad(s: &Spec, msg: impl std::fmt::Display) -> CollsynthError {
    CollsynthError::bad(format!("{}: {msg}", s.text))
}

/// Refuse more than [`MAX_NODES`] nodes, or more than `n * degree` links beyond the zoo's
/// link limit. Call before generating arcs.
pub(super) fn check_nodes(s: &Spec, n: usize, degree: usize) -> Result<()> {
    if n > MAX_NODES {
        return Err(bad(s, format!("too many nodes ({n}, at most {MAX_NODES})")));
    }
    check_size(s, n.saturating_mul(degree))
}

/// `n` compute nodes `n0..` and one link per arc, all with the spec's single `bw=` / `lat=`.
/// Self-loops are dropped; repeated arcs merge into one link (bandwidths add). Refuses more
/// than [`MAX_NODES`] nodes; `build()` refuses a graph that is not strongly connected.
pub(super) fn from_arcs(s: &Spec, n: usize, arcs: impl IntoIterator<Item = (usize, usize)>) -> Result<Topology> {
    check_nodes(s, n, 0)?;
    let p = s.uniform_params(1)?[0];
    let mut b = TopologyBuilder::new(&s.text);
    for i in 0..n {
        b.compute(node_name("n", i), None);
    }
    for (u, v) in arcs.into_iter().filter(|(u, v)| u != v) {
        b.link(u, v, p.bw, p.lat);
    }
    b.build()
}

/// [`from_arcs`] with every edge {u, v} as the two arcs u -> v and v -> u.
pub(super) fn from_edges(s: &Spec, n: usize, edges: impl IntoIterator<Item = (usize, usize)>) -> Result<Topology> {
    from_arcs(s, n, edges.into_iter().flat_map(|(u, v)| [(u, v), (v, u)]))
}

/// `complete:N` (N >= 2): K_N, degree N-1, diameter 1.
fn complete(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "complete:N")?;
    let n = s.int(0, "N", 2, MAX_NODES)?;
    check_nodes(s, n, n - 1)?;
    from_arcs(s, n, (0..n).flat_map(|i| (0..n).map(move |j| (i, j))))
}

/// `bipartite:M,N` (M, N >= 1): K_{M,N}, ranks 0..M-1 on one side and M..M+N-1 on the other,
/// every cross pair linked both ways. K_{d,d} is d-regular with diameter 2 (d >= 2).
fn bipartite(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "bipartite:M,N")?;
    let v = s.ints(0, "M,N")?;
    let &[m, n] = v.as_slice() else {
        return Err(bad(s, "expected bipartite:M,N (two side sizes)"));
    };
    s.check_range(m, "M", 1, MAX_NODES)?;
    s.check_range(n, "N", 1, MAX_NODES)?;
    check_nodes(s, m + n, m.max(n))?;
    from_edges(s, m + n, (0..m).flat_map(|a| (m..m + n).map(move |b| (a, b))))
}

/// `circulant:N:S1,..`: the undirected circulant C(N, S), degree 2|S| counting multi-edges.
fn circulant(s: &Spec) -> Result<Topology> {
    let (n, offsets) = circulant_args(s, "circulant:N:S1,S2,..")?;
    circulant_graph(s, n, &offsets, true)
}

/// `dcirculant:N:S1,..`: the directed circulant i -> i+s (mod N), out-degree |S|.
fn dcirculant(s: &Spec) -> Result<Topology> {
    let (n, offsets) = circulant_args(s, "dcirculant:N:S1,S2,..")?;
    circulant_graph(s, n, &offsets, false)
}

/// N and the offsets of `[d]circulant:N:S1,..`: N >= 2, each offset in 1..N-1, and
/// gcd(N, S) = 1 (otherwise the graph falls apart into gcd components: "disconnected").
fn circulant_args(s: &Spec, usage: &str) -> Result<(usize, Vec<usize>)> {
    s.expect_args(2, 2, usage)?;
    let n = s.int(0, "N", 2, MAX_NODES)?;
    let offsets = s.ints(1, "offsets")?;
    for &o in &offsets {
        s.check_range(o, "each offset", 1, n - 1)?;
    }
    let g = offsets.iter().fold(n, |g, o| g.gcd(o));
    if g != 1 {
        return Err(bad(s, format!("disconnected: gcd(N, offsets) = {g}, must be 1")));
    }
    check_nodes(s, n, 2 * offsets.len())?;
    Ok((n, offsets))
}

/// The circulant on Z_n: i -> i+o (mod n) for every offset o, and also i -> i-o when `both`
/// (the undirected C(n, S)). Arcs that coincide (o = n/2, o = ±o' mod n, a repeated offset)
/// merge into one link with the summed bandwidth, the paper's multi-edges.
pub(super) fn circulant_graph(s: &Spec, n: usize, offsets: &[usize], both: bool) -> Result<Topology> {
    let mut shifts = offsets.to_vec();
    if both {
        shifts.extend(offsets.iter().map(|o| n - o % n));
    }
    let shifts = &shifts;
    from_arcs(s, n, (0..n).flat_map(|i| shifts.iter().map(move |t| (i, (i + t) % n))))
}

/// Träff's skips (Algorithm 1 of Träff's paper): skips[k] = ceil(p / 2^(q-k)) for
/// k = 0..=q, q = ceil(log2 p); skips[0] = 1, skips[q] = p, strictly increasing (p >= 1).
pub(super) fn traff_skips(p: usize) -> Vec<usize> {
    crate::synth::traff::Skips::new(p).skips().to_vec()
}

/// `traff:p` (p >= 2): the directed circulant i -> i + skips[k] (mod p), k = 0..q-1 — the
/// edges of Träff's round-optimal broadcast (round i uses skip i mod q). Out-degree q.
fn traff(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "traff:p")?;
    let p = s.int(0, "p", 2, MAX_NODES)?;
    let skips = traff_skips(p);
    check_nodes(s, p, skips.len())?;
    circulant_graph(s, p, &skips[..skips.len() - 1], false)
}

/// Degree D (2 ..= [`MAX_DEGREE`]) and node count N (>= `min_n(D)`) of `kautz:D:N` and
/// `debruijn:D:N`.
fn degree_and_size(s: &Spec, usage: &str, min_n: fn(usize) -> usize) -> Result<(usize, usize)> {
    s.expect_args(2, 2, usage)?;
    let d = s.int(0, "degree D", 2, MAX_DEGREE)?;
    let n = s.int(1, "N", min_n(d), MAX_NODES)?;
    check_nodes(s, n, d)?;
    Ok((d, n))
}

/// Arcs x -> f(x, a) for every node x < n and digit a in `digits`.
fn arcs_by_digit(n: usize, digits: std::ops::Range<usize>, f: impl Fn(usize, usize) -> usize) -> Vec<(usize, usize)> {
    let f = &f;
    (0..n).flat_map(|x| digits.clone().map(move |a| (x, f(x, a)))).collect()
}

/// `kautz:D:N` (N >= D+1): the generalized Kautz digraph Π_{D,N} (Imase–Itoh), arcs
/// x -> (-Dx - a) mod N for a = 1..D. The D heads of a node are distinct; self-loops (when
/// (D+1) does not divide N) are dropped, so such nodes have out-degree D-1. Diameter at most
/// ceil(log_D N); Π_{D,D+1} = K_{D+1}, Π_{D,D^(n+1)+D^n} is the Kautz graph K(D,n).
fn kautz(s: &Spec) -> Result<Topology> {
    let (d, n) = degree_and_size(s, "kautz:D:N", |d| d + 1)?;
    from_arcs(s, n, arcs_by_digit(n, 1..d + 1, |x, a| (n - (d * x + a) % n) % n))
}

/// Whether `kautz:D:N` (N > D) drops self-loops, i.e. has fewer than D N links: x is a loop
/// of digit a iff (D + 1) x = -a (mod N), solvable for some a in 1..=D iff
/// gcd(D + 1, N) <= D, i.e. unless D + 1 divides N. (Heads of one node are distinct, so
/// no arcs merge.) Lets the finder skip building Kautz graphs that cannot be simple.
pub fn kautz_drops_loops(d: usize, n: usize) -> bool {
    !n.is_multiple_of(d + 1)
}

/// Arcs of the generalized de Bruijn digraph on Z_n: x -> (dx + a) mod n, a = 0..d-1.
fn debruijn_arcs(d: usize, n: usize) -> Vec<(usize, usize)> {
    arcs_by_digit(n, 0..d, |x, a| (d * x + a) % n)
}

/// `debruijn:D:N` (N >= D): the generalized de Bruijn digraph, arcs x -> (Dx + a) mod N,
/// a = 0..D-1, self-loops dropped (the D heads of a node are distinct). `debruijn:D:D^n` is
/// DBJ(D, n) (strings of length n, shift left and append), diameter n.
fn debruijn(s: &Spec) -> Result<Topology> {
    let (d, n) = degree_and_size(s, "debruijn:D:N", |d| d)?;
    from_arcs(s, n, debruijn_arcs(d, n))
}

/// `dbjmod:D:n` (D >= 2, n >= 2, D^n <= 1024): the modified de Bruijn graph DBJMod(D, n)
/// (the direct-connect paper's Table 9, Fig. 20): DBJ(D, n) with its D self-loops and both arcs of each of its D(D-1)/2
/// 2-cycles removed, and the D^2 affected nodes (each lost exactly one out- and one in-arc)
/// closed into one directed cycle chosen by [`best_cycle`]. Every node has in- and
/// out-degree exactly D, no loops, no multi-edges. Diameters: (2,3) 3, (2,4) 4, (3,2) 2,
/// (4,2) 3 — at most the paper's T_L (4, 5, 3, 3).
fn dbjmod(s: &Spec) -> Result<Topology> {
    s.expect_args(2, 2, "dbjmod:D:n")?;
    let d = s.int(0, "degree D", 2, 32)?;
    let len = s.int(1, "n (string length)", 2, 10)?;
    let n = d.checked_pow(len as u32).filter(|&n| n <= MAX_DBJMOD_NODES);
    let n = n.ok_or_else(|| bad(s, format!("too many nodes (D^n at most {MAX_DBJMOD_NODES})")))?;
    let arcs = rewire_into_cycle(&debruijn_arcs(d, n), n);
    from_arcs(s, n, arcs.ok_or_else(|| CollsynthError::internal(format!("{}: no valid rewiring", s.text)))?)
}

/// Remove the self-loops and both arcs of every 2-cycle of `arcs` and add one directed cycle
/// through the affected nodes, ordered by [`best_cycle`]. Keeps every degree when each
/// affected node lost exactly one out- and one in-arc. None if no valid cycle exists.
fn rewire_into_cycle(arcs: &[(usize, usize)], n: usize) -> Option<Vec<(usize, usize)>> {
    let all: HashSet<(usize, usize)> = arcs.iter().copied().collect();
    let (removed, mut kept): (Vec<_>, Vec<_>) =
        arcs.iter().copied().partition(|&(x, y)| x == y || all.contains(&(y, x)));
    let mut affected: Vec<usize> = removed.iter().map(|a| a.0).collect();
    affected.sort_unstable();
    affected.dedup();
    let order = best_cycle(n, &kept, &affected)?;
    kept.extend(cycle_arcs(&order));
    Some(kept)
}

/// Work budget of [`best_cycle`] in node and arc visits (a fraction of a second).
const SEARCH_BUDGET: usize = 20_000_000;

/// The order of `nodes` (k >= 2 of them; `nodes[0]` stays first, a cycle has no start) whose
/// cycle of arcs, added to `base`, gives the smallest (diameter, total distance); orders
/// whose cycle repeats an arc of `base` are invalid, ties keep the first. The candidates are
/// all (k-1)! orders, in lexicographic order, when the budget allows that many trials of N
/// BFS; otherwise that many [`random_cycle`]s from a SplitMix64 seeded with a constant. The
/// result is deterministic either way; None when no candidate is valid and strongly connected.
fn best_cycle(n: usize, base: &[(usize, usize)], nodes: &[usize]) -> Option<Vec<usize>> {
    if nodes.len() < 2 {
        return None;
    }
    let base_set: HashSet<(usize, usize)> = base.iter().copied().collect();
    let trials = (SEARCH_BUDGET / (n * (n + base.len() + nodes.len()))).max(4);
    let candidates: Box<dyn Iterator<Item = Vec<usize>>> = if factorial_at_most(nodes.len() - 1, trials) {
        let mut first = nodes.to_vec();
        first[1..].sort_unstable();
        Box::new(std::iter::successors(Some(first), |o| {
            let mut next = o.clone();
            next_permutation(&mut next[1..]).then_some(next)
        }))
    } else {
        let mut rng = SplitMix64(0x5EED);
        let base_set = base_set.clone();
        let nodes = nodes.to_vec();
        Box::new((0..trials).filter_map(move |_| random_cycle(&nodes, &base_set, &mut rng)))
    };
    candidates
        .filter(|order| cycle_arcs(order).iter().all(|a| !base_set.contains(a)))
        .filter_map(|order| Some((distance_stats(&adjacency(n, base.iter().chain(&cycle_arcs(&order))))?, order)))
        .min_by_key(|(score, _)| *score)
        .map(|(_, order)| order)
}

/// A random order of `nodes` (`nodes[0]` first) whose cycle avoids the arcs of `base`: the
/// path grows by a uniformly chosen remaining node it may step to. None when it gets stuck or
/// the closing arc is in `base` (rare when `base` is sparse).
fn random_cycle(nodes: &[usize], base: &HashSet<(usize, usize)>, rng: &mut SplitMix64) -> Option<Vec<usize>> {
    let mut order = vec![nodes[0]];
    let mut rest = nodes[1..].to_vec();
    while !rest.is_empty() {
        let last = order[order.len() - 1];
        let allowed: Vec<usize> = (0..rest.len()).filter(|&i| !base.contains(&(last, rest[i]))).collect();
        if allowed.is_empty() {
            return None;
        }
        order.push(rest.swap_remove(allowed[rng.below(allowed.len())]));
    }
    (!base.contains(&(order[order.len() - 1], order[0]))).then_some(order)
}

/// The arcs of the directed cycle `order[0] -> order[1] -> .. -> order[0]`.
fn cycle_arcs(order: &[usize]) -> Vec<(usize, usize)> {
    (0..order.len()).map(|i| (order[i], order[(i + 1) % order.len()])).collect()
}

/// True when m! <= limit.
fn factorial_at_most(m: usize, limit: usize) -> bool {
    let mut f: usize = 1;
    for i in 2..=m {
        f = f.saturating_mul(i);
        if f > limit {
            return false;
        }
    }
    true
}

/// Rearrange `v` into the next permutation in lexicographic order; false (and `v` sorted)
/// after the last one.
pub(super) fn next_permutation(v: &mut [usize]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else {
        v.reverse();
        return false;
    };
    let j = (i..v.len()).rev().find(|&j| v[j] > v[i - 1]).expect("v[i] > v[i-1]");
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

/// Out-adjacency lists of `n` nodes.
pub(super) fn adjacency<'a>(n: usize, arcs: impl IntoIterator<Item = &'a (usize, usize)>) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); n];
    for &(u, v) in arcs {
        adj[u].push(v);
    }
    adj
}

/// (diameter, sum of hop distances over ordered pairs) of a digraph, None when it is not
/// strongly connected. One BFS per node.
pub(super) fn distance_stats(adj: &[Vec<usize>]) -> Option<(usize, usize)> {
    let (mut diameter, mut total) = (0, 0);
    let mut dist = vec![usize::MAX; adj.len()];
    let mut queue = VecDeque::new();
    for s in 0..adj.len() {
        dist.fill(usize::MAX);
        dist[s] = 0;
        queue.push_back(s);
        while let Some(u) = queue.pop_front() {
            for &w in &adj[u] {
                if dist[w] == usize::MAX {
                    dist[w] = dist[u] + 1;
                    queue.push_back(w);
                }
            }
        }
        diameter = diameter.max(*dist.iter().max()?);
        if diameter == usize::MAX {
            return None;
        }
        total += dist.iter().sum::<usize>();
    }
    Some((diameter, total))
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator for reproducible searches.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in 0..n (n >= 1; the modulo bias is negligible for the sizes used here).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Second out-neighbour of the Diamond: arcs i -> i+1 (mod 8) and i -> DIAMOND[i].
const DIAMOND: [usize; 8] = [2, 4, 6, 0, 7, 3, 1, 5];

/// `diamond`: the Diamond of the direct-connect paper (Fig 19: N = 8, d = 2, T_L = 3, not
/// reverse-symmetric, no loops or multi-edges). The paper gives no edge list (erratum 5);
/// this one is the result of the following deterministic search, re-run by the test
/// `diamond_is_the_documented_search_result`:
/// 1. a 2-regular digraph is the union of two permutations P1, P2 (König); P1 runs over the
///    fixed-point-free cycle types [8], [6,2], [5,3], [4,4], [4,2,2], [3,3,2], [2,2,2,2]
///    (cycles on consecutive labels: [6,2] is 0->1->..->5->0, 6<->7), P2 over all 8!
///    permutations in lexicographic order;
/// 2. keep the oriented graphs (no loops, no parallel arcs, no 2-cycles: an orientation of a
///    simple 4-regular graph) that are strongly connected with diameter 3 (Moore optimal for
///    N = 8, d = 2);
/// 3. keep the smallest total distance over ordered pairs: 106 (mean 1.89 hops; no 8-node
///    2-regular digraph has the Moore profile 2, 4, 1 at every node), met by three
///    isomorphism classes (allowing 2-cycles gives the same three): a reverse-symmetric one,
///    and a graph and its transpose;
/// 4. take the first that is not isomorphic to its transpose (exhaustive isomorphism check).
///
/// The result is the Hamiltonian cycle i -> i+1 plus i -> DIAMOND[i]: 2 automorphisms,
/// diameter 3, and as an undirected graph 4-regular with diameter 2. Whether it admits the
/// paper's 3-step bandwidth-optimal schedule (tau = 7/8, not BFB) is checked by the
/// direct-connect schedule work, not here.
fn diamond(s: &Spec) -> Result<Topology> {
    s.expect_args(0, 0, "diamond (no arguments)")?;
    from_arcs(s, 8, (0..8).flat_map(|i| [(i, (i + 1) % 8), (i, DIAMOND[i])]))
}

#[cfg(test)]
mod tests {
    use super::super::from_spec;
    use super::super::testutil::shape;
    use super::*;
    use crate::rational::rat;

    /// (min in-degree, max in-degree, link count) of a spec.
    fn in_degrees_and_links(spec: &str) -> (usize, usize, usize) {
        let m = from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}")).metrics();
        (m.min_in_degree, m.max_in_degree, m.links)
    }

    /// Bandwidth of the link u -> v of a spec (None when absent).
    fn bw(spec: &str, u: usize, v: usize) -> Option<crate::rational::Rat> {
        let t = from_spec(spec).unwrap();
        t.link_between(u, v).map(|i| t.links[i].bandwidth)
    }

    /// ceil(log_d n).
    fn ceil_log(d: usize, n: usize) -> usize {
        (0..).find(|&k| d.pow(k as u32) >= n).unwrap()
    }

    #[test]
    fn complete_and_bipartite() {
        assert_eq!(shape("complete:8"), (8, 7, 7, 1));
        assert_eq!(shape("complete:2"), (2, 1, 1, 1));
        assert_eq!(in_degrees_and_links("complete:8"), (7, 7, 56));
        assert_eq!(shape("bipartite:4,4"), (8, 4, 4, 2));
        assert_eq!(in_degrees_and_links("bipartite:4,4"), (4, 4, 32));
        assert_eq!(shape("bipartite:2,3"), (5, 2, 3, 2));
        assert_eq!(shape("bipartite:1,1"), (2, 1, 1, 1));
        assert_eq!((bw("bipartite:4,4", 0, 1), bw("bipartite:4,4", 0, 4)), (None, Some(rat(100))));
        assert_eq!(bw("complete:3,bw=25", 2, 0), Some(rat(25)));
    }

    #[test]
    fn circulants() {
        assert_eq!(shape("circulant:16:3,4"), (16, 4, 4, 3));
        assert_eq!(shape("circulant:7:2,3"), (7, 4, 4, 2));
        assert_eq!(shape("circulant:11:2,3"), (11, 4, 4, 2));
        assert_eq!(shape("circulant:12:2,3"), (12, 4, 4, 2));
        assert_eq!(shape("circulant:15:1,4,5"), (15, 6, 6, 2));
        // Thm 22 (Boesch-Wang): C(n, {m, m+1}) has diameter m = ceil((sqrt(2n-1) - 1) / 2).
        for n in 7..60 {
            let m = (1..).find(|&m| (2 * m + 1) * (2 * m + 1) >= 2 * n - 1).unwrap();
            assert_eq!(shape(&format!("circulant:{n}:{m},{}", m + 1)).3, m, "C({n},{{{m},{}}})", m + 1);
        }
        // Multi-edges: offset n/2, and offsets coinciding mod n, add bandwidth.
        assert_eq!(shape("circulant:8:1,4"), (8, 3, 3, 2));
        assert_eq!((bw("circulant:8:1,4", 0, 4), bw("circulant:8:1,4", 0, 7)), (Some(rat(200)), Some(rat(100))));
        assert_eq!(shape("circulant:8:3,5"), (8, 2, 2, 4));
        assert_eq!(bw("circulant:8:3,5", 0, 3), Some(rat(200)));
        assert!(from_spec("circulant:16:3,4").unwrap().is_bidirectional());
    }

    #[test]
    fn directed_circulants() {
        assert_eq!(shape("dcirculant:5:1"), (5, 1, 1, 4));
        assert_eq!(shape("dcirculant:16:1,7"), (16, 2, 2, 5));
        assert_eq!(in_degrees_and_links("dcirculant:16:1,7"), (2, 2, 32));
        assert!(!from_spec("dcirculant:16:1,7").unwrap().is_bidirectional());
        // Directed circulants (App. F.4): on Z_{d+2}, any d of the d+1 nonzero offsets give diameter 2.
        for d in [2, 4, 6] {
            for omit in 1..=d + 1 {
                let offsets: Vec<String> = (1..=d + 1).filter(|&o| o != omit).map(|o| o.to_string()).collect();
                assert_eq!(shape(&format!("dcirculant:{}:{}", d + 2, offsets.join(","))), (d + 2, d, d, 2));
            }
        }
    }

    #[test]
    fn traff_skips_and_circulant() {
        assert_eq!(traff_skips(20), [1, 2, 3, 5, 10, 20]);
        assert_eq!(traff_skips(33), [1, 2, 3, 5, 9, 17, 33]);
        assert_eq!(traff_skips(2), [1, 2]);
        assert_eq!(traff_skips(100), [1, 2, 4, 7, 13, 25, 50, 100]);
        assert_eq!(traff_skips(1000), [1, 2, 4, 8, 16, 32, 63, 125, 250, 500, 1000]);
        assert_eq!(traff_skips(1025), [1, 2, 3, 5, 9, 17, 33, 65, 129, 257, 513, 1025]);
        // Closed form skips[k] = ceil(p / 2^(q-k)).
        for p in 2..1500usize {
            let skips = traff_skips(p);
            let q = skips.len() - 1;
            assert_eq!(q, ceil_log(2, p), "p = {p}");
            for (k, &s) in skips.iter().enumerate() {
                assert_eq!(s, p.div_ceil(1 << (q - k)), "p = {p}, k = {k}");
            }
        }
        // q out-links per node; the diameter can be below q (q is what one might read from Algorithm 1: that is
        // the broadcast's round count, not the graph's diameter).
        assert_eq!(shape("traff:20"), (20, 5, 5, 4));
        assert_eq!(shape("traff:33"), (33, 6, 6, 4));
        assert_eq!(shape("traff:2"), (2, 1, 1, 1));
        let t = from_spec("traff:33").unwrap();
        let heads: Vec<usize> = t.out_links(0).map(|i| t.links[i].dst).collect();
        assert_eq!(heads, [1, 2, 3, 5, 9, 17]);
        let heads: Vec<usize> = t.out_links(20).map(|i| t.links[i].dst).collect();
        assert_eq!(heads, [4, 21, 22, 23, 25, 29]);
    }

    #[test]
    fn kautz_loops_are_predicted() {
        for d in 2..=6 {
            for n in d + 1..=60 {
                let t = from_spec(&format!("kautz:{d}:{n}")).unwrap();
                assert_eq!(t.links.len() < d * n, kautz_drops_loops(d, n), "kautz:{d}:{n}");
            }
        }
    }

    #[test]
    fn kautz_graphs() {
        assert_eq!(shape("kautz:2:6"), (6, 2, 2, 2));
        assert_eq!(shape("kautz:2:12"), (12, 2, 2, 3));
        assert_eq!(shape("kautz:2:3"), (3, 2, 2, 1));
        assert_eq!(shape("kautz:3:36"), (36, 3, 3, 3));
        assert_eq!(shape("kautz:4:80"), (80, 4, 4, 3));
        assert_eq!(shape("kautz:4:64").3, 3);
        assert_eq!(shape("kautz:4:1024"), (1024, 3, 4, 5));
        // x -> -2x - a (mod 12): 5 -> 1, 0.
        let t = from_spec("kautz:2:12").unwrap();
        assert_eq!(t.out_links(5).map(|i| t.links[i].dst).collect::<Vec<_>>(), [0, 1]);
        // Self-loops (when (d+1) does not divide N) are dropped: x = 1 -> -3 = 2 and 1 (mod 5).
        assert_eq!(shape("kautz:2:5"), (5, 1, 2, 3));
        // Imase-Itoh: diameter at most ceil(log_d N).
        for d in 2..=5 {
            for n in d + 1..=100 {
                assert!(shape(&format!("kautz:{d}:{n}")).3 <= ceil_log(d, n), "kautz:{d}:{n}");
            }
        }
    }

    #[test]
    fn de_bruijn_graphs() {
        // DBJ(2,3): 000 and 111 lose their loops.
        assert_eq!(shape("debruijn:2:8"), (8, 1, 2, 3));
        assert_eq!(in_degrees_and_links("debruijn:2:8"), (1, 2, 14));
        assert_eq!(shape("debruijn:2:16").3, 4);
        assert_eq!(shape("debruijn:3:9"), (9, 2, 3, 2));
        assert_eq!(shape("debruijn:4:256"), (256, 3, 4, 4));
        assert_eq!(shape("debruijn:2:2"), (2, 1, 1, 1));
        let t = from_spec("debruijn:2:8").unwrap();
        assert_eq!(t.out_links(5).map(|i| t.links[i].dst).collect::<Vec<_>>(), [2, 3]);
        for d in 2..=4 {
            for n in d..=60 {
                assert!(shape(&format!("debruijn:{d}:{n}")).3 <= ceil_log(d, n).max(1), "debruijn:{d}:{n}");
            }
        }
    }

    #[test]
    fn modified_de_bruijn() {
        // (d, n, diameter found, the paper's T_L).
        for (d, n, diameter, t_l) in [(2usize, 3u32, 3, 4), (2, 4, 4, 5), (3, 2, 2, 3), (4, 2, 3, 3)] {
            let spec = format!("dbjmod:{d}:{n}");
            let nodes = d.pow(n);
            assert_eq!(shape(&spec), (nodes, d, d, diameter), "{spec}");
            assert!(diameter <= t_l);
            // Exactly d in and out, no multi-edge (all links single bandwidth).
            assert_eq!(in_degrees_and_links(&spec), (d, d, nodes * d), "{spec}");
            let t = from_spec(&spec).unwrap();
            assert!(t.links.iter().all(|l| l.bandwidth == rat(100)), "{spec}");
            assert_eq!(t, from_spec(&spec).unwrap(), "{spec}: deterministic");
        }
        // DBJ(2,3) minus loops at 0, 7 and the 2-cycle 2 <-> 5, plus the cycle 0 -> 2 -> 5 -> 7 -> 0.
        let t = from_spec("dbjmod:2:3").unwrap();
        let arcs: Vec<(usize, usize)> = t.links.iter().map(|l| (l.src, l.dst)).collect();
        for a in [(0, 2), (2, 5), (5, 7), (7, 0)] {
            assert!(arcs.contains(&a), "{a:?}");
        }
        assert!(!arcs.contains(&(5, 2)));
        // Larger instances stay d-regular.
        for (spec, d) in
            [("dbjmod:2:6", 2), ("dbjmod:3:3", 3), ("dbjmod:5:2", 5), ("dbjmod:10:2", 10), ("dbjmod:32:2", 32)]
        {
            let m = from_spec(spec).unwrap().metrics();
            assert_eq!((m.min_degree, m.max_degree, m.min_in_degree, m.max_in_degree), (d, d, d, d), "{spec}");
        }
    }

    /// Fixed-point-free permutation of Z_8 with cycles of the given lengths on consecutive labels.
    fn cycles(lengths: &[usize]) -> Vec<usize> {
        let mut p = Vec::new();
        for &k in lengths {
            let start = p.len();
            p.extend((0..k).map(|i| start + (i + 1) % k));
        }
        p
    }

    /// Adjacency matrix of arcs on 8 nodes, and its transpose when `transpose`.
    fn matrix(arcs: &[(usize, usize)], transpose: bool) -> Vec<Vec<bool>> {
        let mut m = vec![vec![false; 8]; 8];
        for &(u, v) in arcs {
            if transpose {
                m[v][u] = true;
            } else {
                m[u][v] = true;
            }
        }
        m
    }

    /// Is there a bijection f with a[u][v] == b[f(u)][f(v)] for all u, v? (Backtracking.)
    fn isomorphic(a: &[Vec<bool>], b: &[Vec<bool>]) -> bool {
        fn extend(a: &[Vec<bool>], b: &[Vec<bool>], map: &mut Vec<usize>) -> bool {
            let i = map.len();
            if i == a.len() {
                return true;
            }
            for j in 0..b.len() {
                let fits = |map: &[usize]| (0..i).all(|k| a[i][k] == b[j][map[k]] && a[k][i] == b[map[k]][j]);
                if !map.contains(&j) && a[i][i] == b[j][j] && fits(map) {
                    map.push(j);
                    if extend(a, b, map) {
                        return true;
                    }
                    map.pop();
                }
            }
            false
        }
        extend(a, b, &mut Vec::new())
    }

    #[test]
    fn diamond_is_the_documented_search_result() {
        let (mut best, mut hits) = (usize::MAX, Vec::new());
        for lengths in [&[8][..], &[6, 2], &[5, 3], &[4, 4], &[4, 2, 2], &[3, 3, 2], &[2, 2, 2, 2]] {
            let p1 = cycles(lengths);
            let mut p2: Vec<usize> = (0..8).collect();
            loop {
                let back = |j: usize, i: usize| p1[j] == i || p2[j] == i;
                let oriented = (0..8).all(|i| p2[i] != i && p2[i] != p1[i] && !back(p1[i], i) && !back(p2[i], i));
                let arcs: Vec<(usize, usize)> = (0..8).flat_map(|i| [(i, p1[i]), (i, p2[i])]).collect();
                if let Some((3, total)) = distance_stats(&adjacency(8, &arcs)).filter(|_| oriented) {
                    if total < best {
                        (best, hits) = (total, Vec::new());
                    }
                    if total == best {
                        hits.push(arcs);
                    }
                }
                if !next_permutation(&mut p2) {
                    break;
                }
            }
        }
        assert_eq!(best, 106);
        let first = hits.iter().find(|arcs| !isomorphic(&matrix(arcs, false), &matrix(arcs, true))).unwrap();
        let diamond: Vec<(usize, usize)> = (0..8).flat_map(|i| [(i, (i + 1) % 8), (i, DIAMOND[i])]).collect();
        assert_eq!(first, &diamond);
        // Three isomorphism classes at the minimum, one of them reverse-symmetric.
        let mut classes: Vec<Vec<Vec<bool>>> = Vec::new();
        for arcs in &hits {
            if !classes.iter().any(|c| isomorphic(&matrix(arcs, false), c)) {
                classes.push(matrix(arcs, false));
            }
        }
        let symmetric = classes.iter().filter(|c| isomorphic(c, &matrix(&transposed(c), false))).count();
        assert_eq!((classes.len(), symmetric), (3, 1));
    }

    /// The arcs of the transpose of an adjacency matrix.
    fn transposed(m: &[Vec<bool>]) -> Vec<(usize, usize)> {
        (0..8).flat_map(|u| (0..8).filter(move |&v| m[u][v]).map(move |v| (v, u))).collect()
    }

    #[test]
    fn diamond_properties() {
        assert_eq!(shape("diamond"), (8, 2, 2, 3));
        assert_eq!(in_degrees_and_links("diamond"), (2, 2, 16));
        let t = from_spec("diamond").unwrap();
        let arcs: Vec<(usize, usize)> = t.links.iter().map(|l| (l.src, l.dst)).collect();
        assert!(arcs.iter().all(|&(u, v)| !arcs.contains(&(v, u))), "no 2-cycles");
        assert!(!isomorphic(&matrix(&arcs, false), &matrix(&arcs, true)), "not reverse-symmetric");
        // Neither the identity nor the negation x -> -x maps it onto its transpose.
        let negated: Vec<(usize, usize)> = arcs.iter().map(|&(u, v)| ((8 - v) % 8, (8 - u) % 8)).collect();
        assert!(negated.iter().any(|a| !arcs.contains(a)));
    }

    #[test]
    fn bad_specs_are_errors() {
        let msg = from_spec("circulant:8:2").unwrap_err().to_string();
        assert_eq!(msg, "circulant:8:2: disconnected: gcd(N, offsets) = 2, must be 1");
        for bad in [
            "circulant:8:2",
            "circulant:8:2,4,6",
            "circulant:8:0",
            "circulant:8:8",
            "circulant:8",
            "circulant:1:1",
            "circulant:8:x",
            "dcirculant:6:2,4",
            "dcirculant:6",
            "complete:1",
            "complete:100000",
            "bipartite:4",
            "bipartite:0,4",
            "bipartite:4,4,4",
            "bipartite:4:4",
            "kautz:0:5",
            "kautz:2:2",
            "kautz:2",
            "kautz:4096:1048576",
            "debruijn:2:1",
            "debruijn:1:5",
            "debruijn:3:2",
            "dbjmod:2:1",
            "dbjmod:2:11",
            "dbjmod:4:6",
            "dbjmod:100:2",
            "dbjmod:1:4",
            "diamond:3",
            "traff:1",
            "traff:x",
            "traff:20,bw=0",
        ] {
            assert!(from_spec(bad).is_err(), "{bad}");
        }
    }
}
