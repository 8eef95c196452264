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
