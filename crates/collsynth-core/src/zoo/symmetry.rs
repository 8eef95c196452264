//! Symmetries the zoo knows by construction. Two uses:
//! - [`vertex_transitive`]: whether a spec builds a vertex-transitive graph, so that
//!   algorithms whose work is per rank (BFB's per-(u, t) subproblems, see
//!   `synth::bfb::profile`) may do it for one rank only;
//! - [`translation_candidates`] and [`switched_generators`]: candidate groups for
//!   ForestColl's symmetric fast paths. A rank is read as a mixed-radix vector of
//!   `Z_{d0} x Z_{d1} x ..` (`d0` fastest, the numbering of `torus`, `hypercube` and
//!   `hamming`); translating by `v` adds `v` digit-wise. These are candidates only: the caller
//!   checks that they are automorphisms of the topology it holds (a topology file may reuse a
//!   zoo name), see `synth::forestcoll::symmetric`.

use super::{Expr, Spec};
use crate::topology::Topology;

/// Moduli to try for `topo`, most specific first: the family's own coordinates when its name
/// is a `torus`, `hypercube` or `hamming` spec, then the cyclic group `Z_N` (rings, circulants,
/// complete graphs and anything else numbered around a cycle).
pub fn translation_candidates(topo: &Topology) -> Vec<Vec<usize>> {
    let n = topo.n_ranks();
    let mut out = Vec::new();
    if let Ok(spec) = Spec::parse(&topo.name) {
        let dims = match spec.family.as_str() {
            "torus" => spec.dims(0, 1).ok(),
            "hypercube" => spec.int(0, "n", 1, 20).ok().map(|d| vec![2; d]),
            "hamming" => spec.ints(0, "n,q").ok().and_then(|v| match v[..] {
                [d, q] => Some(vec![q; d]),
                _ => None,
            }),
            _ => None,
        };
        let size = |d: &Vec<usize>| d.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
        out.extend(dims.filter(|d| d.len() > 1 && size(d) == Some(n)));
    }
    out.push(vec![n]);
    out
}

/// Node permutations generating candidate automorphisms of the switched machine families:
/// `dgx-a100:N` (box shift `box{j}` -> `box{j+1}`, and GPU shift `gpu{i}` -> `gpu{i+1}` with its
/// NIC, which swaps the rails `ib0` and `ib1`), `mi250:N` (box shift) and `switch:N` (rank
/// shift). Empty when the name is no such spec or a renamed node is missing. Candidates only,
/// like [`translation_candidates`].
pub fn switched_generators(topo: &Topology) -> Vec<Vec<usize>> {
    let Ok(spec) = Spec::parse(&topo.name) else { return Vec::new() };
    let Some(count) = spec.args.first().and_then(|a| a.first()).and_then(|a| a.parse::<usize>().ok()) else {
        return Vec::new();
    };
    let index: std::collections::HashMap<&str, usize> =
        topo.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let rename = |f: &dyn Fn(&str) -> Option<String>| -> Option<Vec<usize>> {
        topo.nodes
            .iter()
            .map(|n| f(&n.name).map_or(index.get(n.name.as_str()).copied(), |m| index.get(m.as_str()).copied()))
            .collect()
    };
    let box_shift = |name: &str| {
        let (j, rest) = name.strip_prefix("box")?.split_once('.')?;
        Some(format!("box{}.{rest}", (j.parse::<usize>().ok()? + 1) % count))
    };
    let gpu_shift = |name: &str| {
        if let Some(r) = name.strip_prefix("ib") {
            return Some(format!("ib{}", 1 - r.parse::<usize>().ok()?.min(1)));
        }
        let (bx, rest) = name.split_once('.')?;
        let kind = ["gpu", "nic"].into_iter().find(|k| rest.starts_with(k))?;
        let i: usize = rest[kind.len()..].parse().ok()?;
        Some(format!("{bx}.{kind}{}", (i + 1) % 8))
    };
    let rank_shift = |name: &str| Some(format!("n{}", (name.strip_prefix('n')?.parse::<usize>().ok()? + 1) % count));
    let perms: Vec<Option<Vec<usize>>> = match spec.family.as_str() {
        "dgx-a100" => vec![rename(&box_shift), rename(&gpu_shift)],
        "mi250" => vec![rename(&box_shift)],
        "switch" => vec![rename(&rank_shift)],
        _ => Vec::new(),
    };
    perms.into_iter().collect::<Option<Vec<_>>>().unwrap_or_default()
}

/// The families whose every member is a Cayley graph (translations of a group act
/// transitively on the ranks and preserve links, bandwidths included) whatever the options:
/// rings and circulants (Z_N), tori, hypercubes and Hamming graphs (products of Z_q; `bw=` is
/// per dimension), the twisted torus (Z^2 modulo its wrap lattice), and K_N.
const CAYLEY_FAMILIES: &[&str] = &[
    "ring",
    "biring",
    "torus",
    "twisted-torus",
    "hypercube",
    "hamming",
    "complete",
    "circulant",
    "dcirculant",
    "traff",
];

/// Whether the topology `expr` builds is vertex-transitive by construction: for any two ranks
/// some automorphism (links and bandwidths) maps one to the other. True for the
/// `CAYLEY_FAMILIES`, `bipartite:M,M`, and products, powers, degree expansions and unions
/// `bi(..)` of such graphs (each construction commutes with its parts' automorphisms; a degree
/// expansion's copies are interchangeable too). False means "not known": line graphs, Kautz
/// and de Bruijn graphs, the DRG catalogue, meshes, machines. Never builds anything.
pub fn vertex_transitive(expr: &Expr) -> bool {
    match expr {
        Expr::Spec(text) => Spec::parse(text).is_ok_and(|s| cayley_spec(&s)),
        Expr::Degree(_, inner) | Expr::Power(_, inner) | Expr::Bi(inner) => vertex_transitive(inner),
        Expr::Product(factors) => factors.iter().all(vertex_transitive),
        Expr::Line(..) => false,
    }
}

/// An automorphism of the ranks of the `n`-rank topology `expr` builds, by construction,
/// where the zoo knows one besides the identity: x -> N - 1 - x, i.e. x -> -x - 1 (mod N),
/// of the generalized Kautz graph (its arcs x -> -Dx - a, a = 1..D, map to the arcs of digit
/// D + 1 - a) and of the generalized de Bruijn graph (x -> Dx + a, a = 0..D-1, to digit
/// D - 1 - a), and of their unions `bi(..)`. None otherwise. Never builds anything; callers
/// that rely on it check it (`bfb::profile_with_automorphism` does).
pub fn rank_automorphism(expr: &Expr, n: usize) -> Option<Vec<usize>> {
    match expr {
        Expr::Spec(text) => {
            let s = Spec::parse(text).ok()?;
            ["kautz", "debruijn"].contains(&s.family.as_str()).then(|| (0..n).rev().collect())
        }
        Expr::Bi(inner) => rank_automorphism(inner, n),
        _ => None,
    }
}

fn cayley_spec(s: &Spec) -> bool {
    match s.family.as_str() {
        // Swapping the two sides is an automorphism only when they have the same size.
        "bipartite" => s.ints(0, "M,N").is_ok_and(|v| v.len() == 2 && v[0] == v[1]),
        f => CAYLEY_FAMILIES.contains(&f),
    }
}

#[cfg(test)]
mod tests;

/// Candidate automorphisms of `topo` as node permutations, for work that is the same on
/// every rank of an orbit (the cut bound's max flows, `bound::allgather_symmetric`): the
/// switched families' generators, else, on a switchless topology, the unit translations of
/// the first translation group in [`translation_candidates`]. Candidates only: the caller
/// keeps those that are automorphisms.
pub fn node_generators(topo: &Topology) -> Vec<Vec<usize>> {
    let switched = switched_generators(topo);
    if !switched.is_empty() || topo.n_switches() > 0 {
        return switched;
    }
    let n = topo.n_ranks();
    let Some(dims) = translation_candidates(topo).into_iter().next() else { return Vec::new() };
    let mut stride = 1;
    let mut out = Vec::new();
    for &d in &dims {
        // Add 1 to digit i (weight `stride`, modulus d) of every rank, wrapping within the digit.
        let perm_rank = |r: usize| {
            let digit = (r / stride) % d;
            r - digit * stride + ((digit + 1) % d) * stride
        };
        let mut perm = vec![0; topo.n_nodes()];
        for r in 0..n {
            perm[topo.rank_node(r)] = topo.rank_node(perm_rank(r));
        }
        out.push(perm);
        stride *= d;
    }
    out
}
