use super::*;
use crate::error::CollsynthError;
use crate::rational::Rat;
use crate::zoo::from_spec;

fn ring_of(bws: &[Rat]) -> Result<Topology, CollsynthError> {
    let mut b = TopologyBuilder::new("r");
    let n = bws.len();
    let v: Vec<usize> = (0..n).map(|i| b.compute(format!("r{i}"), None)).collect();
    for (i, bw) in bws.iter().enumerate() {
        b.link(v[i], v[(i + 1) % n], *bw, 1.0);
    }
    b.build()
}

#[test]
fn one_rank_is_refused_by_the_builder() {
    let mut b = TopologyBuilder::new("one");
    b.compute("a", None);
    let err = b.build().unwrap_err();
    assert_eq!(err.message(), "topology has one compute node ('a'): a collective needs at least 2 ranks");
    for spec in ["mesh:1x1", "torus:1", "product(torus:1; torus:1)"] {
        assert!(from_spec(spec).unwrap_err().message().contains("one compute node"), "{spec}");
    }
    // one rank behind a switch is one rank too
    let mut b = TopologyBuilder::new("switched");
    let (a, s) = (b.compute("a", None), b.switch("s", None));
    b.link(a, s, Rat::from_integer(1), 0.0);
    b.link(s, a, Rat::from_integer(1), 0.0);
    assert!(b.build().unwrap_err().message().contains("one compute node"));
}

#[test]
fn bandwidths_past_2_pow_80_are_refused_and_merges_never_overflow() {
    let big = Rat::from_integer(1 << 80);
    assert!(ring_of(&[big, big]).is_ok());
    let err = ring_of(&[big + Rat::from_integer(1), big]).unwrap_err();
    assert!(err.message().contains("above 2^80"), "{err}");
    let err = ring_of(&[Rat::new(1, (1 << 80) + 1), big]).unwrap_err();
    assert!(err.message().contains("above 2^80"), "{err}");
    // parallel links add: a sum past the limit is refused, not wrapped or panicked on
    let mut b = TopologyBuilder::new("parallel");
    let (x, y) = (b.compute("x", None), b.compute("y", None));
    b.link(x, y, big, 1.0);
    b.link(x, y, big, 1.0);
    b.link(y, x, Rat::from_integer(1), 1.0);
    let err = b.build().unwrap_err();
    assert_eq!(err.message(), format!("link x -> y: {}", validate::TOO_FINE));
    // bi(..) doubles a bidirectional graph's bandwidth per level: 64 levels still fit
    let deep = format!("{}biring:4{}", "bi(".repeat(64), ")".repeat(64));
    let t = from_spec(&deep).unwrap();
    assert_eq!(t.links[0].bandwidth, Rat::from_integer(100 << 64));
}

#[test]
fn many_distinct_fractions_are_bad_input_with_the_reason() {
    let primes: Vec<i128> = (2i128..200).filter(|p| (2..*p).all(|q| p % q != 0)).take(46).collect();
    let t = ring_of(&primes.iter().map(|&p| Rat::new(1, p)).collect::<Vec<_>>()).unwrap();
    let err = crate::flow::integer_capacities(&t).unwrap_err();
    assert!(matches!(err, CollsynthError::BadInput(_)), "{err:?}");
    assert!(err.message().contains("above 2^80"), "{err}");
    // a few fractions scale exactly
    let t = ring_of(&[Rat::new(1, 2), Rat::new(1, 3), Rat::new(2, 5)]).unwrap();
    let (caps, sigma) = crate::flow::integer_capacities(&t).unwrap();
    assert_eq!((caps, sigma), (vec![15, 10, 12], Rat::from_integer(30)));
}

#[test]
fn metrics_take_one_bfs_when_every_rank_is_alike() {
    for spec in ["ring:7", "biring:9", "complete:6", "circulant:16:3,4"] {
        let t = from_spec(spec).unwrap();
        assert!(metrics::rank_shift_is_automorphism(&t), "{spec}");
    }
    for spec in ["torus:4x4", "mesh:3x3", "line(complete:3)", "switch:4", "ring:4,bw=1/2/3/4"] {
        if let Ok(t) = from_spec(spec) {
            assert!(!metrics::rank_shift_is_automorphism(&t), "{spec}");
        }
    }
    // one BFS gives what N BFS give: the biring's exact figures
    let m = from_spec("biring:10").unwrap().metrics().unwrap();
    assert_eq!((m.diameter, m.average_distance), (5, 25.0 / 9.0));
    let m = from_spec("ring:1048576").unwrap().metrics().unwrap();
    assert_eq!((m.n, m.diameter), (1 << 20, (1 << 20) - 1));
    assert_eq!(m.average_distance, 524288.0);
}

#[test]
fn metrics_past_the_work_limit_are_refused_with_it() {
    let t = from_spec("torus:512x512").unwrap();
    let err = t.metrics().unwrap_err();
    assert!(err.message().contains("above the limit of 2^32"), "{err}");
    assert!(err.message().contains("262144 ranks"), "{err}");
}
