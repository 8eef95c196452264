use super::*;
use crate::zoo::from_spec;

fn found(spec: &str) -> &'static str {
    let g = from_spec(spec).unwrap();
    let t = transpose_isomorphism(&g, Some(&Expr::parse(spec).unwrap())).unwrap();
    assert!(is_transpose_isomorphism(&g, &t.map), "{spec}");
    // The search alone finds one too (the constructions only save its time).
    let s = search(&g, SEARCH_BUDGET).unwrap_or_else(|| panic!("{spec}: search failed"));
    assert!(is_transpose_isomorphism(&g, &s), "{spec}");
    t.how
}

#[test]
fn constructions_give_their_maps() {
    for spec in [
        "dcirculant:6:1,2,3,4",
        "ring:5",
        "dcirculant:16:6,7",
        "debruijn:2:8",
        "debruijn:3:9",
        "line(dcirculant:6:1,2)",
        "line(bipartite:2,2)",
        "line^2(dcirculant:7:1,3)",
        "degree*2(dcirculant:5:1,2)",
        "product(ring:3; dcirculant:4:1,3)",
        "power^2(dcirculant:5:1,2)",
    ] {
        assert_eq!(found(spec), "structural", "{spec}");
    }
    assert_eq!(found("torus:3x3"), "identity");
    assert_eq!(found("bi(kautz:2:6)"), "identity");
}

#[test]
fn kautz_graphs_by_search() {
    // Π_{d, d^(n+1) + d^n} is the Kautz graph K(d, n) = L^n(K_{d+1}): reverse-symmetric.
    for spec in ["kautz:2:6", "kautz:2:12", "kautz:2:24", "kautz:3:36", "kautz:4:80"] {
        assert_eq!(found(spec), "search", "{spec}");
    }
}

#[test]
fn no_map_is_bad_input() {
    // The zoo's Diamond is chosen not isomorphic to its transpose (docs/zoo.md).
    let g = from_spec("diamond").unwrap();
    let e = transpose_isomorphism(&g, Some(&Expr::parse("diamond").unwrap())).unwrap_err();
    assert!(e.to_string().contains("no isomorphism to the transpose found"), "{e}");
    assert!(!is_transpose_isomorphism(&g, &(0..8).collect::<Vec<_>>()));
    assert!(!is_transpose_isomorphism(&g, &[0; 8]), "not a permutation");
}

#[test]
fn the_map_respects_bandwidths() {
    // x -> -x maps the offset-1 links onto offset-1 links: fine with per-offset
    // bandwidths only if the map keeps offsets, which it does.
    assert_eq!(found("dcirculant:7:1,3,bw=100"), "structural");
    // A ring with one slow link is not isomorphic to its transpose by x -> -x unless
    // the slow link maps to itself; the search finds the reflection that does.
    let mut b = crate::topology::TopologyBuilder::new("uneven");
    let ids: Vec<usize> = (0..4).map(|i| b.compute(format!("n{i}"), None)).collect();
    for i in 0..4 {
        let bw = crate::rational::Rat::from_integer(if i == 0 { 50 } else { 100 });
        b.link(ids[i], ids[(i + 1) % 4], bw, 1.0);
    }
    let g = b.build().unwrap();
    let t = transpose_isomorphism(&g, None).unwrap();
    assert_eq!(t.how, "search");
    assert_eq!((t.map[0], t.map[1]), (1, 0), "the slow link 0 -> 1 maps onto itself, reversed");
}
