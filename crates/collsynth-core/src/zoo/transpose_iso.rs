//! Isomorphisms g: G -> G^T of a direct-connect topology onto its transpose (the paper's
//! "reverse-symmetric", Def 6; appendix A.6 needs one to split `bi(G)`'s allgather).
//!
//! A map is a node permutation with, for every link u -> v of G, a link g(v) -> g(u) of G
//! with the same bandwidth and latency (so u -> v maps onto the G^T link g(u) -> g(v)).
//! [`transpose_isomorphism`] tries, in order:
//! 1. the identity (G equal to its transpose: every bidirectional family);
//! 2. the construction's own map, from the expression G was built from: directed circulant
//!    and ring x -> -x; de Bruijn DBJ(d, n) (N = d^n) the digit reversal; a line graph lifts
//!    its base's map h to walks, (n0 > .. > nk) -> (h(nk) > .. > h(n0)), since
//!    L(G)^T = L(G^T); degree expansion copy-wise, v_i -> h(v)_i; products and powers
//!    coordinate-wise;
//! 3. a search (colour refinement on G and G^T, then backtracking in BFS order with a
//!    budget), e.g. for generalized Kautz graphs, which the paper lists as not
//!    reverse-symmetric in general (Table 9) and whose integer labels have no known map.
//!
//! Every map is checked by [`is_transpose_isomorphism`] before it is returned.

use super::spec::{Expr, Spec};
use crate::error::{CollsynthError, Result};
use crate::topology::Topology;
use std::collections::HashMap;

/// Candidate pairs the search may try before giving up.
const SEARCH_BUDGET: usize = 2_000_000;

/// A verified isomorphism G -> G^T.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransposeMap {
    /// `map[v]`: the node of G that node v is sent to (a permutation of node indices).
    pub map: Vec<usize>,
    /// How it was found: "identity", "structural", or "search".
    pub how: &'static str,
}

/// Whether `map` is an isomorphism of `g` onto its transpose (see the module docs).
/// Guarantees: true only for a permutation such that the links u -> v correspond one to one
/// with links g(v) -> g(u) of the same bandwidth and latency (parallel links included).
pub fn is_transpose_isomorphism(g: &Topology, map: &[usize]) -> bool {
    crate::topology::automorphism::maps_links(g, &crate::topology::automorphism::link_pairs(g), map, true)
}

/// An isomorphism of `g` (built from `expr`, or any topology with `expr` = `None`) onto its
/// transpose, found as the module docs say; `BadInput` "no isomorphism to the transpose
/// found" when the search proves there is none or runs out of budget.
pub fn transpose_isomorphism(g: &Topology, expr: Option<&Expr>) -> Result<TransposeMap> {
    let identity: Vec<usize> = (0..g.n_nodes()).collect();
    if is_transpose_isomorphism(g, &identity) {
        return Ok(TransposeMap { map: identity, how: "identity" });
    }
    if let Some(map) = expr.and_then(|e| structural(e, g)).filter(|m| is_transpose_isomorphism(g, m)) {
        return Ok(TransposeMap { map, how: "structural" });
    }
    match search(g, SEARCH_BUDGET).filter(|m| is_transpose_isomorphism(g, m)) {
        Some(map) => Ok(TransposeMap { map, how: "search" }),
        None => Err(CollsynthError::bad(format!(
            "'{}': no isomorphism to the transpose found (the graph is not reverse-symmetric, or the \
             search gave up)",
            g.name
        ))),
    }
}

// ---------------------------------------------------------------------------------------
// The constructions' maps (checked by the caller)

/// The map the construction of `expr` gives for `g` (its build), if known.
fn structural(expr: &Expr, g: &Topology) -> Option<Vec<usize>> {
    match expr {
        Expr::Spec(text) => family_map(&Spec::parse(text).ok()?, g.n_nodes()),
        Expr::Line(..) => line_map(expr, g),
        Expr::Degree(n, inner) => {
            let h = sub_map(inner)?;
            Some((0..h.len() * n).map(|x| h[x / n] * n + x % n).collect())
        }
        Expr::Power(n, inner) => {
            let h = sub_map(inner)?;
            product_map(&vec![h; *n])
        }
        Expr::Product(factors) => product_map(&factors.iter().map(sub_map).collect::<Option<Vec<_>>>()?),
        // bi(E) is symmetric: the identity, tried first.
        Expr::Bi(_) => None,
    }
}

/// The verified map of a sub-expression's own build (identity included).
fn sub_map(expr: &Expr) -> Option<Vec<usize>> {
    let g = super::from_spec(&expr.to_string()).ok()?;
    transpose_isomorphism(&g, Some(expr)).ok().map(|t| t.map)
}

/// Directed circulants and rings: x -> -x (i -> i + s becomes -x - s -> -x, an i -> i + s
/// link). De Bruijn DBJ(d, n): digit reversal (x -> dx + a shifts a digit in at the end;
/// reversed, it shifts one in at the front, which is the reverse link).
fn family_map(spec: &Spec, n: usize) -> Option<Vec<usize>> {
    match spec.family.as_str() {
        "dcirculant" | "ring" => Some((0..n).map(|x| (n - x) % n).collect()),
        "debruijn" => {
            let d: usize = spec.args.first()?.first()?.parse().ok()?;
            let digits = (1..=usize::BITS).find(|&k| d.checked_pow(k) == Some(n))?;
            Some((0..n).map(|x| reverse_digits(x, d, digits)).collect())
        }
        _ => None,
    }
}

fn reverse_digits(mut x: usize, d: usize, digits: u32) -> usize {
    let mut r = 0;
    for _ in 0..digits {
        r = r * d + x % d;
        x /= d;
    }
    r
}

/// Coordinate-wise maps of a product whose first coordinate varies fastest.
fn product_map(maps: &[Vec<usize>]) -> Option<Vec<usize>> {
    let total = maps.iter().try_fold(1usize, |a, m| a.checked_mul(m.len()))?;
    let map = (0..total)
        .map(|x| {
            let (mut rest, mut out, mut scale) = (x, 0, 1);
            for m in maps {
                out += m[rest % m.len()] * scale;
                scale *= m.len();
                rest /= m.len();
            }
            out
        })
        .collect();
    Some(map)
}

/// `line^k(B)` (nested lines flattened as the zoo does): node `n0>..>nk` goes to
/// `h(nk)>..>h(n0)`, h the base's map. Names are split at '>', so a base whose node names
/// contain '>' gets `None` (the search still applies).
fn line_map(expr: &Expr, g: &Topology) -> Option<Vec<usize>> {
    let mut base = expr;
    while let Expr::Line(_, inner) = base {
        base = inner;
    }
    let b = super::from_spec(&base.to_string()).ok()?;
    if b.nodes.iter().any(|x| x.name.contains('>')) {
        return None;
    }
    let h = sub_map(base)?;
    let base_index: HashMap<&str, usize> = b.nodes.iter().enumerate().map(|(i, x)| (x.name.as_str(), i)).collect();
    let index: HashMap<&str, usize> = g.nodes.iter().enumerate().map(|(i, x)| (x.name.as_str(), i)).collect();
    g.nodes
        .iter()
        .map(|x| {
            let walk: Vec<&str> = x
                .name
                .split('>')
                .rev()
                .map(|w| base_index.get(w).map(|&i| b.nodes[h[i]].name.as_str()))
                .collect::<Option<_>>()?;
            index.get(walk.join(">").as_str()).copied()
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The search

/// Adjacency of G: per node, (neighbour, link class) out and in; a link class is one
/// (bandwidth, latency) pair.
struct Adjacency {
    out: Vec<Vec<(u32, u32)>>,
    ins: Vec<Vec<(u32, u32)>>,
}

impl Adjacency {
    fn new(g: &Topology) -> Adjacency {
        let n = g.n_nodes();
        let mut classes: HashMap<(crate::rational::Rat, u64), u32> = HashMap::new();
        let (mut out, mut ins) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        for l in &g.links {
            let next = classes.len() as u32;
            let c = *classes.entry((l.bandwidth, l.latency.to_bits())).or_insert(next);
            out[l.src].push((l.dst as u32, c));
            ins[l.dst].push((l.src as u32, c));
        }
        Adjacency { out, ins }
    }
}

/// A node's colour with the sorted (link class, colour) pairs of its out- and in-neighbours.
type Signature = (u32, Vec<(u32, u32)>, Vec<(u32, u32)>);

/// Colour refinement on the disjoint union of G (nodes 0..n) and G^T (nodes n..2n, whose
/// out-links are G's in-links): nodes of equal final colour are the only possible images.
fn refine(a: &Adjacency) -> Vec<u32> {
    let n = a.out.len();
    // In G^T node x has G's in-links of x as out-links and G's out-links as in-links.
    let sides = |x: usize| if x < n { (&a.out[x], &a.ins[x]) } else { (&a.ins[x - n], &a.out[x - n]) };
    let mut colour = vec![0u32; 2 * n];
    let mut classes = 1;
    loop {
        let mut ids: HashMap<Signature, u32> = HashMap::new();
        let base = |x: usize| if x < n { 0 } else { n };
        let next: Vec<u32> = (0..2 * n)
            .map(|x| {
                let (o, i) = sides(x);
                let mut os: Vec<(u32, u32)> = o.iter().map(|&(y, c)| (c, colour[base(x) + y as usize])).collect();
                let mut is: Vec<(u32, u32)> = i.iter().map(|&(y, c)| (c, colour[base(x) + y as usize])).collect();
                os.sort_unstable();
                is.sort_unstable();
                let fresh = ids.len() as u32;
                *ids.entry((colour[x], os, is)).or_insert(fresh)
            })
            .collect();
        colour = next;
        if ids.len() == classes {
            return colour;
        }
        classes = ids.len();
    }
}

/// Backtracking search for g: G -> G^T within `budget` candidate pairs; `None` when none
/// exists or the budget runs out.
fn search(g: &Topology, budget: usize) -> Option<Vec<usize>> {
    let n = g.n_nodes();
    let a = Adjacency::new(g);
    let colour = refine(&a);
    let mut count: HashMap<u32, i64> = HashMap::new();
    for x in 0..n {
        *count.entry(colour[x]).or_default() += 1;
        *count.entry(colour[n + x]).or_default() -= 1;
    }
    if count.values().any(|&c| c != 0) {
        return None;
    }
    let order = bfs_order(&a, &colour[..n], &count_by_colour(&colour[..n]));
    let mut s = Search { a: &a, colour: &colour, map: vec![NONE; n], inv: vec![NONE; n] };
    let (mut cands, mut next) = (vec![s.candidates(order[0])], vec![0usize]);
    let mut tries = 0;
    loop {
        let depth = cands.len() - 1;
        let x = order[depth];
        match cands[depth].get(next[depth]).copied() {
            Some(y) => {
                next[depth] += 1;
                tries += 1;
                if tries > budget {
                    return None;
                }
                if s.consistent(x, y) {
                    s.map[x] = y;
                    s.inv[y as usize] = x as u32;
                    if depth + 1 == n {
                        return Some(s.map.iter().map(|&y| y as usize).collect());
                    }
                    cands.push(s.candidates(order[depth + 1]));
                    next.push(0);
                }
            }
            None => {
                cands.pop();
                next.pop();
                let back = depth.checked_sub(1)?;
                let x = order[back];
                s.inv[s.map[x] as usize] = NONE;
                s.map[x] = NONE;
            }
        }
    }
}

const NONE: u32 = u32::MAX;

fn count_by_colour(colour: &[u32]) -> HashMap<u32, usize> {
    let mut c = HashMap::new();
    for &x in colour {
        *c.entry(x).or_insert(0) += 1;
    }
    c
}

/// Nodes in BFS order over links of either direction, each component started at a node of
/// the rarest colour, so every later node has a mapped neighbour that bounds its candidates.
fn bfs_order(a: &Adjacency, colour: &[u32], count: &HashMap<u32, usize>) -> Vec<usize> {
    let n = colour.len();
    let mut starts: Vec<usize> = (0..n).collect();
    starts.sort_by_key(|&x| (count[&colour[x]], x));
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for s in starts {
        if seen[s] {
            continue;
        }
        seen[s] = true;
        let mut head = order.len();
        order.push(s);
        while head < order.len() {
            let x = order[head];
            head += 1;
            for &(y, _) in a.out[x].iter().chain(&a.ins[x]) {
                if !std::mem::replace(&mut seen[y as usize], true) {
                    order.push(y as usize);
                }
            }
        }
    }
    order
}

/// The partial map of a search (`map`: G node -> image, `inv`: image -> G node).
struct Search<'a> {
    a: &'a Adjacency,
    colour: &'a [u32],
    map: Vec<u32>,
    inv: Vec<u32>,
}

impl Search<'_> {
    /// Images x may take: of x's colour, unused, and next to a mapped neighbour's image
    /// where x has a mapped neighbour (u -> x maps to g(u) -> g(x) in G^T, i.e. the G link
    /// g(x) -> g(u): an in-neighbour of g(u); x -> u to the G link g(u) -> g(x)).
    fn candidates(&self, x: usize) -> Vec<u32> {
        let n = self.map.len();
        let fits = |y: u32| self.inv[y as usize] == NONE && self.colour[n + y as usize] == self.colour[x];
        let from_in = self.a.ins[x].iter().find(|&&(u, _)| self.map[u as usize] != NONE);
        let from_out = self.a.out[x].iter().find(|&&(u, _)| self.map[u as usize] != NONE);
        let pool: Vec<u32> = match (from_in, from_out) {
            (Some(&(u, _)), _) => self.a.ins[self.map[u as usize] as usize].iter().map(|&(y, _)| y).collect(),
            (None, Some(&(u, _))) => self.a.out[self.map[u as usize] as usize].iter().map(|&(y, _)| y).collect(),
            (None, None) => (0..n as u32).collect(),
        };
        pool.into_iter().filter(|&y| fits(y)).collect()
    }

    /// Whether x -> y keeps every link between x and mapped nodes, in both directions and
    /// with its class, and adds none (counted on y's side).
    fn consistent(&self, x: usize, y: u32) -> bool {
        let y = y as usize;
        let (a, map) = (self.a, &self.map);
        // x -> z (class c) needs the G link g(z) -> y of class c; w -> x needs y -> g(w).
        let mut mapped = 0;
        for &(z, c) in &a.out[x] {
            if map[z as usize] != NONE {
                mapped += 1;
                if !a.ins[y].contains(&(map[z as usize], c)) {
                    return false;
                }
            }
        }
        for &(w, c) in &a.ins[x] {
            if map[w as usize] != NONE {
                mapped += 1;
                if !a.out[y].contains(&(map[w as usize], c)) {
                    return false;
                }
            }
        }
        let images = a.ins[y].iter().chain(&a.out[y]).filter(|&&(v, _)| self.inv[v as usize] != NONE).count();
        images == mapped
    }
}

#[cfg(test)]
mod tests;
