//! `drg:NAME`: the distance-regular graphs of the direct-connect paper's Table 8 with
//! N <= 100 (App. F.3, Def 17), plus the Petersen and Heawood graphs, each built from its classical
//! construction. All are undirected (two directed links per edge, one `bw=` / `lat=`), nodes
//! `n0..` in construction order. Every distance-regular graph has a bandwidth-optimal BFB
//! schedule (the paper's Thm 18).

use super::direct_connect::{adjacency, bad, from_edges};
use super::{Family, Spec};
use crate::error::Result;
use crate::topology::Topology;
use std::collections::{BTreeSet, HashMap, VecDeque};

pub(super) const FAMILIES: &[&Family] = &[&Family {
    name: "drg",
    args: "NAME",
    help: "distance-regular graph of the direct-connect paper's Table 8 (N <= 100), petersen or heawood",
    options: &[],
    build: drg,
}];

/// An undirected graph: node count and edges {u, v}, u != v, no repeats.
struct Graph {
    n: usize,
    edges: Vec<(usize, usize)>,
}

/// Builds one catalogue graph.
type Constructor = fn() -> Graph;

/// The catalogue, in Table 8 order, then the two cubic graphs.
const CATALOGUE: &[(&str, Constructor)] = &[
    ("octahedron", octahedron),
    ("paley9", paley9),
    ("k55-minus-i", k55_minus_i),
    ("heawood-distance3", heawood_distance3),
    ("line-petersen", line_petersen),
    ("q4", q4),
    ("line-heawood", line_heawood),
    ("pg23-incidence", pg23_incidence),
    ("ag24-minus-parallel-class", ag24_minus_parallel_class),
    ("odd4", odd4),
    ("line-tutte8cage", line_tutte8cage),
    ("doubled-odd4", doubled_odd4),
    ("gq33-incidence", gq33_incidence),
    ("petersen", petersen),
    ("heawood", heawood),
];

/// `drg:NAME`: the catalogue graph called NAME; an unknown name lists the catalogue.
fn drg(s: &Spec) -> Result<Topology> {
    let names = || CATALOGUE.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
    s.expect_args(1, 1, &format!("drg:NAME, NAME one of {}", names()))?;
    let name = s.args[0].join(",");
    let (_, make) = CATALOGUE
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| bad(s, format!("unknown distance-regular graph '{name}' (known: {})", names())))?;
    let g = make();
    from_edges(s, g.n, g.edges)
}

/// The graph on `items` with an edge {i, j}, i < j, whenever `adjacent(items[i], items[j])`.
fn graph_on<T: Copy>(items: &[T], adjacent: impl Fn(T, T) -> bool) -> Graph {
    let mut edges = Vec::new();
    for (i, &a) in items.iter().enumerate() {
        edges.extend((i + 1..items.len()).filter(|&j| adjacent(a, items[j])).map(|j| (i, j)));
    }
    Graph { n: items.len(), edges }
}

/// The k-subsets of {0..n-1} as bit masks, in increasing order.
fn subsets(n: u32, k: u32) -> Vec<u32> {
    (0..1u32 << n).filter(|m| m.count_ones() == k).collect()
}

/// Incidence graph: nodes 0..points are the points, then one node per line (a point list).
fn incidence(points: usize, lines: &[Vec<usize>]) -> Graph {
    let edges = lines.iter().enumerate().flat_map(|(l, pts)| pts.iter().map(move |&p| (p, points + l))).collect();
    Graph { n: points + lines.len(), edges }
}

/// The line graph: one node per edge of `g` (in `g`'s order), adjacent when they share an
/// endpoint.
fn line_graph(g: &Graph) -> Graph {
    graph_on(&g.edges, |(a, b), (c, d)| a == c || a == d || b == c || b == d)
}

/// Hop distances between all pairs of nodes of `g` (usize::MAX when unreachable).
fn all_distances(g: &Graph) -> Vec<Vec<usize>> {
    let arcs: Vec<(usize, usize)> = g.edges.iter().flat_map(|&(u, v)| [(u, v), (v, u)]).collect();
    let adj = adjacency(g.n, &arcs);
    (0..g.n)
        .map(|s| {
            let mut dist = vec![usize::MAX; g.n];
            dist[s] = 0;
            let mut queue = VecDeque::from([s]);
            while let Some(u) = queue.pop_front() {
                for &w in &adj[u] {
                    if dist[w] == usize::MAX {
                        dist[w] = dist[u] + 1;
                        queue.push_back(w);
                    }
                }
            }
            dist
        })
        .collect()
}

/// The distance-k graph of `g`: its nodes, adjacent when at distance exactly k in `g`.
fn distance_graph(g: &Graph, k: usize) -> Graph {
    let dist = all_distances(g);
    graph_on(&(0..g.n).collect::<Vec<_>>(), |u, v| dist[u][v] == k)
}

/// Multiplication in GF(4) = GF(2)[w]/(w^2 + w + 1), elements 0, 1, w = 2, w + 1 = 3
/// (addition is XOR).
fn gf4_mul(a: usize, b: usize) -> usize {
    let r = (0..2).filter(|i| b >> i & 1 == 1).fold(0, |r, i| r ^ (a << i));
    if r & 4 != 0 {
        r ^ 0b111
    } else {
        r
    }
}

/// Multiplication in GF(9) = GF(3)[i]/(i^2 + 1), the element a + bi numbered a + 3b.
fn gf9_mul(x: usize, y: usize) -> usize {
    let (a, b, c, d) = (x % 3, x / 3, y % 3, y / 3);
    (a * c + 2 * b * d) % 3 + 3 * ((a * d + b * c) % 3)
}

/// x - y in GF(9) (coordinate-wise mod 3).
fn gf9_sub(x: usize, y: usize) -> usize {
    (x % 3 + 3 - y % 3) % 3 + 3 * ((x / 3 + 3 - y / 3) % 3)
}

/// The points of the projective space PG(dim-1, q), q prime: the nonzero vectors of
/// GF(q)^dim whose first nonzero coordinate is 1, ordered by their base-q value (coordinate
/// 0 least significant).
fn projective_points(q: usize, dim: usize) -> Vec<Vec<usize>> {
    let vector = |c: usize| (0..dim).map(|i| c / q.pow(i as u32) % q).collect::<Vec<_>>();
    (1..q.pow(dim as u32)).map(vector).filter(|v| v.iter().find(|&&x| x != 0) == Some(&1)).collect()
}

/// `v` scaled so that its first nonzero coordinate is 1 (q prime, v nonzero).
fn normalize(v: &[usize], q: usize) -> Vec<usize> {
    let lead = *v.iter().find(|&&x| x != 0).expect("nonzero vector");
    let inv = (1..q).find(|x| x * lead % q == 1).expect("q is prime");
    v.iter().map(|x| x * inv % q).collect()
}

/// Incidence graph of the projective plane PG(2, q), q prime: the points, then the lines,
/// line l being {p : l . p = 0}. (q+1)-regular on 2(q^2+q+1) nodes, girth 6, diameter 3.
fn projective_plane(q: usize) -> Graph {
    let pts = projective_points(q, 3);
    let dot = |a: &[usize], b: &[usize]| a.iter().zip(b).map(|(x, y)| x * y).sum::<usize>() % q;
    let lines: Vec<Vec<usize>> =
        pts.iter().map(|l| (0..pts.len()).filter(|&p| dot(l, &pts[p]) == 0).collect()).collect();
    incidence(pts.len(), &lines)
}

/// Incidence graph of the symplectic generalized quadrangle W(q) = GQ(q, q), q prime: the
/// points of PG(3, q), then its lines totally isotropic for the form
/// x0 y1 - x1 y0 + x2 y3 - x3 y2 (the q+1 points of span{p, r} for each orthogonal pair),
/// sorted. (q+1)-regular on 2(q+1)(q^2+1) nodes, girth 8, diameter 4.
fn symplectic_quadrangle(q: usize) -> Graph {
    let pts = projective_points(q, 4);
    let index: HashMap<&[usize], usize> = pts.iter().enumerate().map(|(i, p)| (p.as_slice(), i)).collect();
    let form = |x: &[usize], y: &[usize]| (x[0] * y[1] + x[2] * y[3] + (q - 1) * (x[1] * y[0] + x[3] * y[2])) % q;
    let mut lines = BTreeSet::new();
    for (i, p) in pts.iter().enumerate() {
        for r in pts[i + 1..].iter().filter(|r| form(p, r) == 0) {
            let mut line: Vec<usize> = (0..q * q)
                .map(|c| (c % q, c / q))
                .filter(|&ab| ab != (0, 0))
                .map(|(a, b)| normalize(&(0..4).map(|k| (a * p[k] + b * r[k]) % q).collect::<Vec<_>>(), q))
                .map(|v| index[v.as_slice()])
                .collect();
            line.sort_unstable();
            line.dedup();
            lines.insert(line);
        }
    }
    incidence(pts.len(), &lines.into_iter().collect::<Vec<_>>())
}

/// Octahedron = Johnson graph J(4,2): the 2-subsets of {0..3}, adjacent when they share
/// one element. N = 6, degree 4, diameter 2.
fn octahedron() -> Graph {
    graph_on(&subsets(4, 2), |a, b| (a & b).count_ones() == 1)
}

/// Paley graph P9: GF(9), adjacent when the difference is a nonzero square (≅ H(2,3)).
/// N = 9, degree 4, diameter 2.
fn paley9() -> Graph {
    let squares: BTreeSet<usize> = (1..9).map(|z| gf9_mul(z, z)).collect();
    graph_on(&(0..9).collect::<Vec<_>>(), |x, y| squares.contains(&gf9_sub(x, y)))
}

/// K_{5,5} minus the perfect matching {i, 5+i}. N = 10, degree 4, diameter 3.
fn k55_minus_i() -> Graph {
    graph_on(&(0..10).collect::<Vec<_>>(), |a, b| a < 5 && b >= 5 && b != a + 5)
}

/// Distance-3 graph of the Heawood graph (a point and the 4 lines of the Fano plane missing
/// it). N = 14, degree 4, diameter 3.
fn heawood_distance3() -> Graph {
    distance_graph(&heawood(), 3)
}

/// Line graph of the Petersen graph. N = 15, degree 4, diameter 3.
fn line_petersen() -> Graph {
    line_graph(&petersen())
}

/// The 4-cube Q4 ≅ H(4,2): 4-bit strings, adjacent when they differ in one bit. N = 16,
/// degree 4, diameter 4.
fn q4() -> Graph {
    graph_on(&(0u32..16).collect::<Vec<_>>(), |a, b| (a ^ b).count_ones() == 1)
}

/// Line graph of the Heawood graph. N = 21, degree 4, diameter 3.
fn line_heawood() -> Graph {
    line_graph(&heawood())
}

/// Incidence graph of the projective plane PG(2,3): 13 points, then 13 lines. N = 26,
/// degree 4, diameter 3.
fn pg23_incidence() -> Graph {
    projective_plane(3)
}

/// Incidence graph of the affine plane AG(2,4) minus the parallel class of vertical lines:
/// points (x, y) in GF(4)^2 numbered x + 4y, then the lines y = mx + c numbered 16 + 4m + c.
/// N = 32, degree 4, diameter 4.
fn ag24_minus_parallel_class() -> Graph {
    let lines: Vec<Vec<usize>> =
        (0..16).map(|l| (0..4).map(|x| x + 4 * (gf4_mul(l / 4, x) ^ (l % 4))).collect()).collect();
    incidence(16, &lines)
}

/// Odd graph O4 = Kneser graph K(7,3): the 3-subsets of {0..6}, adjacent when disjoint.
/// N = 35, degree 4, diameter 3.
fn odd4() -> Graph {
    graph_on(&subsets(7, 3), |a, b| a & b == 0)
}

/// Line graph of Tutte's 8-cage (the Tutte–Coxeter graph = incidence graph of GQ(2,2) =
/// W(2)). N = 45, degree 4, diameter 4.
fn line_tutte8cage() -> Graph {
    line_graph(&symplectic_quadrangle(2))
}

/// Doubled odd graph D(O4): the 3-subsets then the 4-subsets of {0..6}, adjacent when one
/// contains the other. N = 70, degree 4, diameter 7.
fn doubled_odd4() -> Graph {
    let sets: Vec<u32> = subsets(7, 3).into_iter().chain(subsets(7, 4)).collect();
    graph_on(&sets, |a, b| a & b == a || a & b == b)
}

/// Incidence graph of the generalized quadrangle GQ(3,3) = W(3): 40 points, then 40 lines.
/// N = 80, degree 4, diameter 4.
fn gq33_incidence() -> Graph {
    symplectic_quadrangle(3)
}

/// Petersen graph = Kneser graph K(5,2): the 2-subsets of {0..4}, adjacent when disjoint.
/// N = 10, degree 3, diameter 2.
fn petersen() -> Graph {
    graph_on(&subsets(5, 2), |a, b| a & b == 0)
}

/// Heawood graph: incidence graph of the Fano plane PG(2,2), 7 points then 7 lines. N = 14,
/// degree 3, diameter 3.
fn heawood() -> Graph {
    projective_plane(2)
}

#[cfg(test)]
mod tests;
