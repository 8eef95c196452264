//! Symmetric fast path of the tree packing: when translations of an abelian group act
//! regularly on the ranks of a switch-free topology (tori, hypercubes, Hamming graphs,
//! circulants, rings, complete graphs), build the k trees of rank 0 only and translate them.
//!
//! Why no Edmonds check is needed: the translation by `v` maps a link `a -> b` to a link
//! `a+v -> b+v` of the same bandwidth, so every link is the image of exactly one out-link of
//! rank 0 (its *type*) under exactly one translation. The load of a link of type `s` is then
//! the number of rank 0's tree edges of type `s` (times their multiplicity), the same on every
//! link of the type: the translated forest fits the capacities iff rank 0's trees use each
//! type at most `floor(U b_s)` times. That is a counting condition, checked exactly.
//!
//! Rank 0's trees: every other rank takes its k parents (one per tree) among in-neighbours
//! visited before it by a BFS from rank 0 (the previous layer, or earlier in its own), so every
//! tree is a spanning arborescence whatever the choice.
//! Which types the k parents have is a transportation problem (ranks with demand k, types
//! with supply `floor(U b_s)`), one small max-flow. The BFS order is a heuristic: when the flow
//! falls short (trees that must detour), [`trees`] returns None and the caller packs in general.

use super::emit::Tree;
use crate::flow::{Cap, FlowNetwork};
use crate::topology::Topology;

/// A verified regular translation group on the ranks of a switch-free topology.
pub struct Cayley {
    /// Moduli of the group `Z_{d0} x Z_{d1} x ..`, `d0` fastest in the rank number.
    pub dims: Vec<usize>,
    /// Out-degree (in links, parallel ones counted).
    deg: usize,
    /// `out[v * deg + s]`: the link of type `s` leaving rank `v`.
    out: Vec<usize>,
    /// `offset[s]`: the rank the type-`s` link of rank 0 reaches.
    offset: Vec<usize>,
}

impl Cayley {
    /// The first of the zoo's candidate groups (`zoo::symmetry`) whose translations are
    /// automorphisms of `topo` (with bandwidths), or None (switches, or no candidate fits).
    /// Guarantees: `translate(a, v)` is a bijection on ranks for each `v` and maps every link
    /// to a link of equal bandwidth between the translated ranks.
    pub fn detect(topo: &Topology) -> Option<Cayley> {
        let n = topo.n_ranks();
        if topo.n_switches() > 0 || n < 2 {
            return None;
        }
        crate::zoo::symmetry::translation_candidates(topo).into_iter().find_map(|dims| Cayley::check(topo, dims))
    }

    /// Every rank's out-links, as (offset to the destination, bandwidth, latency) sorted, must
    /// equal rank 0's: then translating by `v` maps the i-th out-link of `a` to the i-th of
    /// `a + v`. Latency too, though the packing reads bandwidths only: the schedule is kept
    /// per orbit of this group, which must be an automorphism of the whole topology.
    fn check(topo: &Topology, dims: Vec<usize>) -> Option<Cayley> {
        let n = topo.n_ranks();
        let mut c = Cayley { dims, deg: 0, out: Vec::with_capacity(topo.links.len()), offset: Vec::new() };
        let mut first: Vec<(usize, crate::rational::Rat, u64)> = Vec::new();
        for a in 0..n {
            let mut sig: Vec<(usize, crate::rational::Rat, u64, usize)> = topo
                .out_links(topo.rank_node(a))
                .map(|l| {
                    let link = &topo.links[l];
                    (c.sub(topo.rank_of(link.dst).expect("switch-free"), a), link.bandwidth, link.latency.to_bits(), l)
                })
                .collect();
            sig.sort_unstable();
            let key: Vec<_> = sig.iter().map(|&(o, b, lat, _)| (o, b, lat)).collect();
            if a == 0 {
                c.deg = sig.len();
                c.offset = sig.iter().map(|s| s.0).collect();
                first = key;
            } else if key != first {
                return None;
            }
            c.out.extend(sig.iter().map(|s| s.3));
        }
        Some(c)
    }

    /// Rank `a` translated by `v` (digit-wise sum).
    pub fn translate(&self, a: usize, v: usize) -> usize {
        self.combine(a, v, |x, y, d| (x + y) % d)
    }

    /// The rank `a - b` (digit-wise difference).
    fn sub(&self, a: usize, b: usize) -> usize {
        self.combine(a, b, |x, y, d| (x + d - y) % d)
    }

    fn combine(&self, a: usize, b: usize, f: impl Fn(usize, usize, usize) -> usize) -> usize {
        let (mut a, mut b, mut out, mut stride) = (a, b, 0, 1);
        for &d in &self.dims {
            out += f(a % d, b % d, d) * stride;
            a /= d;
            b /= d;
            stride *= d;
        }
        out
    }

    /// The translation group as generators (translation by one along each dimension), so that
    /// element `g` is the translation by rank `g` (the mixed radix of both is `dims`).
    pub fn group(&self, topo: &Topology) -> crate::ir::orbit::Group {
        let mut stride = 1;
        let gens = self
            .dims
            .iter()
            .map(|&d| {
                let mut nodes: Vec<usize> = (0..topo.n_nodes()).collect();
                for r in 0..topo.n_ranks() {
                    nodes[topo.rank_node(r)] = topo.rank_node(self.translate(r, stride));
                }
                stride *= d;
                crate::ir::orbit::Generator::from_nodes(topo, nodes).expect("a checked translation is an automorphism")
            })
            .collect();
        crate::ir::orbit::Group::new(gens).expect("|G| = N")
    }

    /// The group, as `Z_32 x Z_32`.
    pub fn describe(&self) -> String {
        self.dims.iter().map(|d| format!("Z_{d}")).collect::<Vec<_>>().join(" x ")
    }
}

/// A representative's trees as groups of identical trees: `(count, edges (parent, child,
/// type))`, parents first, counts summing to `k` (the type is a link type here, a route type in
/// `symmetric_switched`).
pub(super) type RootTrees = Vec<(Cap, Vec<(usize, usize, usize)>)>;

/// The forest of `k` trees per rank within the link capacities `caps`, built from rank 0's
/// trees and translated to every root, or None when the layered transportation falls short.
/// Guarantees: every tree is a spanning arborescence of the ranks rooted at its root, counts
/// sum to `k` per root, and every link carries at most `caps[link]` trees.
pub fn trees(topo: &Topology, c: &Cayley, k: Cap, caps: &[Cap]) -> Option<Vec<Tree>> {
    Some(translated(c, topo.n_ranks(), &root_trees(topo, c, k, caps)?))
}

/// Rank 0's trees only (the forest is their translates), or None.
pub fn rank0_trees(topo: &Topology, c: &Cayley, k: Cap, caps: &[Cap]) -> Option<Vec<Tree>> {
    Some(translated(c, 1, &root_trees(topo, c, k, caps)?))
}

/// Rank 0's trees translated to the first `n` ranks, rank by rank.
fn translated(c: &Cayley, n: usize, root: &RootTrees) -> Vec<Tree> {
    let mut out = Vec::with_capacity(n * root.len());
    for v in 0..n {
        for (count, edges) in root {
            let edges = edges
                .iter()
                .map(|&(x, y, s)| {
                    let x = c.translate(x, v);
                    (x, c.translate(y, v), vec![c.out[x * c.deg + s]])
                })
                .collect();
            out.push(Tree { root: v, count: *count, edges });
        }
    }
    out
}

/// Rank 0's trees (see the module docs), or None. Three BFS orders are tried, exploring the
/// types as numbered, widest first and narrowest first: each admits different parents.
fn root_trees(topo: &Topology, c: &Cayley, k: Cap, caps: &[Cap]) -> Option<RootTrees> {
    let supply: Vec<Cap> = (0..c.deg).map(|s| caps[c.out[s]]).collect();
    let mut types: Vec<usize> = (0..c.deg).filter(|&s| supply[s] > 0).collect();
    let mut orders = vec![types.clone()];
    types.sort_by_key(|&s| std::cmp::Reverse(supply[s]));
    orders.push(types.clone());
    types.reverse();
    orders.push(types);
    orders.iter().find_map(|types| transport(c, topo.n_ranks(), k, &supply, types))
}

/// The transportation of the module docs over the BFS order that explores `types` in this
/// order, or None when it falls short.
fn transport(c: &Cayley, n: usize, k: Cap, supply: &[Cap], types: &[usize]) -> Option<RootTrees> {
    let (order, pos) = bfs_order(c, n, types)?;
    // Nodes: ranks 0..n (0 unused), types n..n+deg, source n+deg, sink n+deg+1.
    let (src, sink) = (n + c.deg, n + c.deg + 1);
    let mut edges: Vec<(usize, usize, Cap)> = (1..n).map(|v| (src, v, k)).collect();
    let mut choice = Vec::new(); // (edge id, rank, type)
    for v in 1..n {
        for s in (0..c.deg).filter(|&s| supply[s] > 0 && pos[c.sub(v, c.offset[s])] < pos[v]) {
            choice.push((edges.len(), v, s));
            edges.push((v, n + s, k));
        }
    }
    edges.extend((0..c.deg).map(|s| (n + s, sink, supply[s])));
    let mut net = FlowNetwork::new(n + c.deg + 2, &edges);
    let need = k * (n as Cap - 1);
    if net.max_flow_limited(src, sink, need) < need {
        return None;
    }
    // Units of rank v's k parents in type order: tree t takes unit t. Trees with the same
    // type at every rank form one group; the group boundaries are the union of the ranks'
    // cumulative unit counts.
    let mut units: Vec<Vec<(Cap, usize)>> = vec![Vec::new(); n]; // (cumulative end, type)
    let mut cuts = vec![0, k];
    for &(e, v, s) in &choice {
        let f = net.flow_on(e);
        if f > 0 {
            let end = units[v].last().map_or(0, |u| u.0) + f;
            units[v].push((end, s));
            cuts.push(end);
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let groups = cuts
        .windows(2)
        .map(|w| {
            let edges = order
                .iter()
                .skip(1)
                .map(|&v| {
                    let s = units[v].iter().find(|u| u.0 > w[0]).expect("k units per rank").1;
                    (c.sub(v, c.offset[s]), v, s)
                })
                .collect();
            (w[1] - w[0], edges)
        })
        .collect();
    Some(groups)
}

/// BFS from rank 0 over `types` (in this order at every rank): ranks in visiting order and
/// each rank's position in it, or None when some rank is unreachable.
fn bfs_order(c: &Cayley, n: usize, types: &[usize]) -> Option<(Vec<usize>, Vec<usize>)> {
    let mut pos = vec![usize::MAX; n];
    let mut order = vec![0];
    pos[0] = 0;
    let mut head = 0;
    while head < order.len() {
        let v = order[head];
        head += 1;
        for &s in types {
            let w = c.translate(v, c.offset[s]);
            if pos[w] == usize::MAX {
                pos[w] = order.len();
                order.push(w);
            }
        }
    }
    (order.len() == n).then_some((order, pos))
}
