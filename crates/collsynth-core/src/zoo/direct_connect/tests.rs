use super::super::from_spec;
use super::super::testutil::shape;
use super::*;
use crate::rational::rat;

/// (min in-degree, max in-degree, link count) of a spec.
fn in_degrees_and_links(spec: &str) -> (usize, usize, usize) {
    let m = from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}")).metrics().unwrap();
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
    for (spec, d) in [("dbjmod:2:6", 2), ("dbjmod:3:3", 3), ("dbjmod:5:2", 5), ("dbjmod:10:2", 10), ("dbjmod:32:2", 32)]
    {
        let m = from_spec(spec).unwrap().metrics().unwrap();
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
