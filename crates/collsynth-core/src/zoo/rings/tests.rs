use super::super::from_spec;
use super::super::testutil::shape;
use crate::rational::{rat, Rat};

/// Bandwidth of the link u -> v of a spec (None when absent).
fn bw(spec: &str, u: usize, v: usize) -> Option<Rat> {
    let t = from_spec(spec).unwrap();
    t.link_between(u, v).map(|i| t.links[i].bandwidth)
}

#[test]
fn rings() {
    assert_eq!(shape("ring:8"), (8, 1, 1, 7));
    assert_eq!(shape("biring:8"), (8, 2, 2, 4));
    assert_eq!(shape("biring:2"), (2, 1, 1, 1));
}

#[test]
fn ring_multiplicity() {
    // UniRing(3,8): one link of 3 x bw per arc.
    assert_eq!(shape("ring:8,d=3"), (8, 1, 1, 7));
    assert_eq!((bw("ring:8,d=3", 7, 0), bw("ring:8,d=3", 0, 7)), (Some(rat(300)), None));
    assert_eq!(bw("ring:8,d=2,bw=25", 0, 1), Some(rat(50)));
    // BiRing(4,9): d/2 = 2 parallel links each way.
    assert_eq!(shape("biring:9,d=4"), (9, 2, 2, 4));
    assert_eq!((bw("biring:9,d=4", 0, 8), bw("biring:9,d=4", 0, 1)), (Some(rat(200)), Some(rat(200))));
    assert_eq!(bw("biring:8", 3, 4), Some(rat(100)));
    assert_eq!(bw("biring:2,d=4", 1, 0), Some(rat(200)));
}

#[test]
fn twisted_tori() {
    // RTT(2), RTT(4), RTT(5) of Camara et al.
    assert_eq!(shape("twisted-torus:4x2"), (8, 4, 4, 2));
    assert_eq!(shape("twisted-torus:8x4"), (32, 4, 4, 4));
    assert_eq!(shape("twisted-torus:10x5"), (50, 4, 4, 5));
    // One below the plain torus (4x4: 4).
    assert_eq!(shape("twisted-torus:4x4"), (16, 4, 4, 3));
    // The twisted wrap (x, B-1) <-> (x + A/2, 0): n4 = (0,1) <-> n2 = (2,0) for 4x2.
    assert!(bw("twisted-torus:4x2", 4, 2).is_some() && bw("twisted-torus:4x2", 4, 0).is_some());
    assert!(bw("twisted-torus:4x2,twist=1", 4, 1).is_some() && bw("twisted-torus:4x2,twist=1", 4, 2).is_none());
    // A = 2: the x pair is one link pair; twist 1 makes K4.
    assert_eq!(shape("twisted-torus:2x2"), (4, 3, 3, 1));
    assert_eq!(from_spec("twisted-torus:8x4").unwrap().links.len(), 32 * 4);
}

#[test]
fn hypercubes_and_hamming_graphs() {
    for n in 1..=6 {
        assert_eq!(shape(&format!("hypercube:{n}")), (1 << n, n, n, n), "hypercube:{n}");
    }
    assert_eq!(shape("hamming:2,3"), (9, 4, 4, 2));
    assert_eq!(shape("hamming:3,4"), (64, 9, 9, 3));
    assert_eq!(shape("hamming:1,5"), (5, 4, 4, 1));
    // Node v = (v mod 3, v div 3): 4 = (1,1) is adjacent to 3, 5, 1, 7.
    let t = from_spec("hamming:2,3").unwrap();
    assert_eq!(t.out_links(4).map(|i| t.links[i].dst).collect::<Vec<_>>(), [1, 3, 5, 7]);
    // bw= per dimension.
    assert_eq!((bw("hypercube:2,bw=10/20", 0, 1), bw("hypercube:2,bw=10/20", 0, 2)), (Some(rat(10)), Some(rat(20))));
    let (q4, h42) = (from_spec("hypercube:4").unwrap(), from_spec("hamming:4,2").unwrap());
    assert_eq!(q4.links, h42.links);
}

#[test]
fn bad_specs_are_errors() {
    assert_eq!(from_spec("twisted-torus:5x2").unwrap_err().to_string(), "twisted-torus:5x2: A must be even, got 5");
    for bad in [
        "twisted-torus:5x2",
        "twisted-torus:4",
        "twisted-torus:4x2x2",
        "twisted-torus:4x1",
        "twisted-torus:4x2,twist=4",
        "twisted-torus:4x2,twist=0",
        "twisted-torus:4096x4096",
        "ring:8,d=0",
        "ring:8,twist=1",
        "biring:8,d=3",
        "biring:8,d=0",
        "hypercube:0",
        "hypercube:21",
        "hamming:2",
        "hamming:0,3",
        "hamming:2,1",
        "hamming:2,3,4",
        "hamming:2:3",
        "hamming:3,1048576",
        "torus:1048576x1048576x1048576x1048576",
    ] {
        assert!(from_spec(bad).is_err(), "{bad}");
    }
}

#[test]
fn tori_have_closed_form_diameter() {
    for dims in [vec![4, 4], vec![4, 4, 2], vec![3, 5], vec![6, 5, 4], vec![2, 2, 2], vec![7]] {
        let spec = format!("torus:{}", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x"));
        let n: usize = dims.iter().product();
        let diam: usize = dims.iter().map(|d| d / 2).sum();
        let deg: usize = dims.iter().map(|&d| if d == 2 { 1 } else { 2 }).sum();
        assert_eq!(shape(&spec), (n, deg, deg, diam), "{spec}");
    }
}

#[test]
fn meshes() {
    assert_eq!(shape("mesh:5x5"), (25, 2, 4, 8));
    assert_eq!(shape("mesh:3x4x5"), (60, 3, 6, 9));
    let t = super::super::from_spec("mesh:5x5").unwrap();
    assert_eq!(t.links.len(), 80);
    let t = super::super::from_spec("mesh:3x4x5").unwrap();
    assert_eq!(t.links.len(), 266);
}
