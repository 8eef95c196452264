//! Vertex-transitivity known by construction, so that algorithms whose work is per rank
//! (BFB's per-(u, t) subproblems, see `synth::bfb::profile`) may do it for one rank only.

use super::{Expr, Spec};

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
/// [`CAYLEY_FAMILIES`], `bipartite:M,M`, and products, powers, degree expansions and unions
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

fn cayley_spec(s: &Spec) -> bool {
    match s.family.as_str() {
        // Swapping the two sides is an automorphism only when they have the same size.
        "bipartite" => s.ints(0, "M,N").is_ok_and(|v| v.len() == 2 && v[0] == v[1]),
        f => CAYLEY_FAMILIES.contains(&f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transitive(text: &str) -> bool {
        vertex_transitive(&Expr::parse(text).unwrap())
    }

    #[test]
    fn families_and_expansions() {
        for t in [
            "ring:7",
            "biring:9,d=4",
            "torus:4x3,bw=50/100",
            "twisted-torus:8x4",
            "hypercube:4",
            "hamming:2,3",
            "complete:5",
            "circulant:16:3,4",
            "dcirculant:12:1,5",
            "traff:11",
            "bipartite:4,4",
            "power^2(circulant:7:1,2)",
            "product(ring:3; hypercube:2)",
            "degree*2(dcirculant:6:1,2)",
            "bi(dcirculant:6:1,2,3,4)",
        ] {
            assert!(transitive(t), "{t}");
        }
        for t in [
            "bipartite:2,3",
            "kautz:2:6",
            "debruijn:2:8",
            "mesh:3x3",
            "drg:petersen",
            "diamond",
            "line(circulant:7:1,2)",
            "product(ring:3; kautz:2:6)",
            "bi(line(dcirculant:4:1,2))",
            "no-such-family:3",
        ] {
            assert!(!transitive(t), "{t}");
        }
    }
}
