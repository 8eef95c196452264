use super::*;

/// The early-stopping cycle search equals the distances of a full BFS to the in-neighbours.
#[test]
fn shortest_cycles_match_full_searches() {
    use crate::topology::metrics::bfs_hops;
    for spec in [
        "kautz:2:12",
        "kautz:3:100",
        "kautz:4:131",
        "debruijn:2:64",
        "dcirculant:20:3,7",
        "diamond",
        "mesh:4x5",
        "ring:9",
        "line(kautz:2:10)",
    ] {
        let t = zoo::from_spec(spec).unwrap();
        let mut bfs = CycleBfs::new(t.n_nodes());
        let arcs: Vec<(usize, usize)> = t.links.iter().map(|l| (l.src, l.dst)).collect();
        let adjacency = Adjacency::of_arcs(t.n_nodes(), &arcs);
        for u in 0..t.n_nodes() {
            let d = bfs_hops(&t, u);
            let full = t.in_links(u).iter().map(|&l| d[t.links[l].src].saturating_add(1)).min().unwrap_or(usize::MAX);
            assert_eq!(bfs.shortest_cycle(&adjacency, u), full, "{spec} node {u}");
        }
    }
}

/// A Kautz graph measured from its arcs is the candidate measured on the built topology:
/// with and without dropped self-loops, girth computed (N <= 512) or not, every degree of
/// a sweep.
#[test]
fn kautz_graphs_measured_without_building_them() {
    let mut cases: Vec<(usize, usize)> = Vec::new();
    for d in 2..=6 {
        cases.extend((d + 2..=60).map(|n| (d, n)));
    }
    cases.extend([(2, 511), (2, 513), (4, 700), (8, 600), (16, 400), (16, 595), (3, 1000), (15, 1024)]);
    for (d, n) in cases {
        let spec = format!("kautz:{d}:{n}");
        let topo = zoo::from_spec(&spec).unwrap();
        let built = measure(Expr::Spec(spec.clone()), &topo, d).unwrap();
        assert_eq!(measure_kautz(&spec, d, n, d), Some(built), "{spec}");
    }
}

/// A circulant measured from its shifts is the candidate measured on the built topology:
/// directed and undirected, symmetric or not, multi-edges (N/2, o = -o'), girth computed
/// (N <= 512) or not, and the finder's kept sets of a few sizes and degrees.
#[test]
fn circulants_measured_without_building_them() {
    let mut cases: Vec<(usize, Vec<usize>, bool)> = vec![
        (8, vec![1, 4], false),
        (8, vec![3, 5], false),
        (6, vec![1, 2, 3, 4], true),
        (10, vec![1, 9], true),
        (12, vec![1, 5, 7, 11], true),
        (600, vec![1, 2, 3], true),
        (600, vec![1, 300], false),
        (1000, vec![7, 8, 9], true),
        (1000, vec![7, 993], true),
    ];
    for n in [9, 16, 31, 64, 100, 257, 513, 700] {
        for (k, directed) in [(1, false), (2, false), (2, true), (3, true), (4, true), (4, false), (8, true)] {
            cases.extend(best_circulants(n, k, directed).into_iter().map(|(o, _)| (n, o, directed)));
        }
    }
    for (n, offsets, directed) in cases {
        let spec = circulant_spec(n, &(offsets.clone(), 0), directed);
        let Some(Arcs::Circulant(_, shifts)) = spec.arcs.clone() else { panic!("a circulant") };
        let d = shifts.len();
        let topo = zoo::from_spec(&spec.text).unwrap();
        let built = measure(Expr::Spec(spec.text.clone()), &topo, d).unwrap();
        assert_eq!(measure_circulant(&spec.text, n, &shifts, d), Some(built), "{}", spec.text);
    }
}
