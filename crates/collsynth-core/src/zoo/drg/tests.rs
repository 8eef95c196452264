use super::super::from_spec;
use super::super::testutil::shape;
use super::CATALOGUE;
use crate::topology::metrics::bfs_hops;
use crate::topology::Topology;

/// Name, N, degree, diameter (Table 8's T_L), intersection array {b_0..; c_1..}.
#[allow(clippy::type_complexity)]
const EXPECTED: &[(&str, usize, usize, usize, &[usize], &[usize])] = &[
    ("octahedron", 6, 4, 2, &[4, 1], &[1, 4]),
    ("paley9", 9, 4, 2, &[4, 2], &[1, 2]),
    ("k55-minus-i", 10, 4, 3, &[4, 3, 1], &[1, 3, 4]),
    ("heawood-distance3", 14, 4, 3, &[4, 3, 2], &[1, 2, 4]),
    ("line-petersen", 15, 4, 3, &[4, 2, 1], &[1, 1, 4]),
    ("q4", 16, 4, 4, &[4, 3, 2, 1], &[1, 2, 3, 4]),
    ("line-heawood", 21, 4, 3, &[4, 2, 2], &[1, 1, 2]),
    ("pg23-incidence", 26, 4, 3, &[4, 3, 3], &[1, 1, 4]),
    ("ag24-minus-parallel-class", 32, 4, 4, &[4, 3, 3, 1], &[1, 1, 3, 4]),
    ("odd4", 35, 4, 3, &[4, 3, 3], &[1, 1, 2]),
    ("line-tutte8cage", 45, 4, 4, &[4, 2, 2, 2], &[1, 1, 1, 2]),
    ("doubled-odd4", 70, 4, 7, &[4, 3, 3, 2, 2, 1, 1], &[1, 1, 2, 2, 3, 3, 4]),
    ("gq33-incidence", 80, 4, 4, &[4, 3, 3, 3], &[1, 1, 1, 4]),
    ("petersen", 10, 3, 2, &[3, 2], &[1, 1]),
    ("heawood", 14, 3, 3, &[3, 2, 2], &[1, 1, 3]),
];

/// The intersection array ({b_0..b_{D-1}}, {c_1..c_D}) of `t`, checking that it is
/// distance-regular: for every pair (x, y) at distance h, the neighbours z of y with
/// d(x, z) = h+1 (b_h) and h-1 (c_h) are equally many for all such pairs. None if not.
fn intersection_array(t: &Topology) -> Option<(Vec<usize>, Vec<usize>)> {
    let dist: Vec<Vec<usize>> = (0..t.n_nodes()).map(|v| bfs_hops(t, v)).collect();
    let diameter = dist.iter().flatten().copied().max()?;
    let (mut b, mut c) = (vec![None; diameter + 1], vec![None; diameter + 1]);
    for from_x in &dist {
        for (y, &h) in from_x.iter().enumerate() {
            let count = |k: usize| t.out_links(y).filter(|&i| from_x[t.links[i].dst] == k).count();
            let (bh, ch) = (count(h + 1), if h > 0 { count(h - 1) } else { 0 });
            if *b[h].get_or_insert(bh) != bh || *c[h].get_or_insert(ch) != ch {
                return None;
            }
        }
    }
    let b = b[..diameter].iter().map(|v| v.unwrap()).collect();
    let c = c[1..].iter().map(|v| v.unwrap()).collect();
    Some((b, c))
}

#[test]
fn catalogue_matches_table_8() {
    let names: Vec<&str> = CATALOGUE.iter().map(|(n, _)| *n).collect();
    let expected: Vec<&str> = EXPECTED.iter().map(|e| e.0).collect();
    assert_eq!(names, expected);
    for &(name, n, degree, diameter, _, _) in EXPECTED {
        let spec = format!("drg:{name}");
        assert_eq!(shape(&spec), (n, degree, degree, diameter), "{spec}");
        let m = from_spec(&spec).unwrap().metrics().unwrap();
        assert_eq!((m.min_in_degree, m.max_in_degree, m.links), (degree, degree, n * degree), "{spec}");
        assert!(m.bidirectional, "{spec}");
    }
}

#[test]
fn catalogue_is_distance_regular() {
    for &(name, _, _, _, b, c) in EXPECTED {
        let t = from_spec(&format!("drg:{name}")).unwrap();
        assert_eq!(intersection_array(&t), Some((b.to_vec(), c.to_vec())), "{name}");
    }
    // A vertex-transitive graph that is not distance-regular: the 3-prism (K3 x K2).
    let prism = from_spec("torus:3x2").unwrap();
    assert_eq!(intersection_array(&prism), None);
}

#[test]
fn drg_options_and_errors() {
    let t = from_spec("drg:petersen,bw=25,lat=2").unwrap();
    assert!(t.links.iter().all(|l| l.bandwidth == crate::rational::rat(25) && l.latency == 2.0));
    let msg = from_spec("drg:nonsense").unwrap_err().to_string();
    assert!(msg.contains("unknown distance-regular graph 'nonsense'"), "{msg}");
    assert!(msg.contains("octahedron") && msg.contains("gq33-incidence") && msg.contains("heawood"), "{msg}");
    for bad in ["drg", "drg:petersen:heawood", "drg:petersen,heawood", "drg:q4,twist=1"] {
        assert!(from_spec(bad).is_err(), "{bad}");
    }
}
