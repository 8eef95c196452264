use super::*;
use crate::cost::bandwidth_term_us;
use crate::topology::TopologyBuilder;
use crate::verify::verify;
use crate::zoo::from_spec;

fn r(p: i128, q: i128) -> Rat {
    Rat::new(p, q)
}

fn rs_ag(t: &Topology) -> Rat {
    let b = crate::bound::allreduce_rs_ag(t).unwrap();
    crate::bound::algbw(Collective::Allreduce, t.n_ranks(), b.inv_throughput).unwrap()
}

/// LP algbw as expected; the schedule verifies and its bandwidth term is M / algbw.
fn check(t: &Topology, want: Rat) -> Schedule {
    let got = lp_algbw(t, LpMode::Always).unwrap().unwrap();
    assert_eq!(got, want, "{}", t.name);
    // The schedule of the rounded solution: verified, bandwidth term = M / its value.
    let (s, value) = with_value(t, LpMode::Always).unwrap().unwrap();
    assert!(value <= want);
    verify(&s, t).unwrap_or_else(|v| panic!("{}: {v}", t.name));
    let m = Rat::from_integer(1 << 20);
    let term = bandwidth_term_us(&s, t, m);
    let at_value = m / value / Rat::from_integer(1000);
    // Every link within its share; where the rounding was exact, some link is saturated.
    assert!(term <= at_value, "{}", t.name);
    if value == want {
        assert_eq!(term, at_value, "{}", t.name);
    }
    s
}

fn weak_node() -> Topology {
    let mut b = TopologyBuilder::new("weak-node");
    let v: Vec<usize> = (0..4).map(|i| b.compute(format!("n{i}"), None)).collect();
    for (x, y) in [(0, 1), (1, 2), (0, 2)] {
        b.bilink(v[x], v[y], Rat::from_integer(10), 1.0);
    }
    for x in 0..3 {
        b.bilink(v[x], v[3], Rat::from_integer(1), 1.0);
    }
    b.build().unwrap()
}

fn fig2(bw: Rat) -> Topology {
    let mut tb = TopologyBuilder::new("fig2a");
    let c: Vec<Vec<usize>> =
        (1..=2).map(|k| (1..=4).map(|j| tb.compute(format!("c{k}.{j}"), None)).collect()).collect();
    let w0 = tb.switch("w0", None);
    for (k, cluster) in c.iter().enumerate() {
        let w = tb.switch(format!("w{}", k + 1), None);
        for &v in cluster {
            tb.bilink(v, w, bw * Rat::from_integer(10), 1.0);
            tb.bilink(v, w0, bw, 1.0);
        }
    }
    tb.build().unwrap()
}

#[test]
fn weak_node_counterexample() {
    // Our weak-node counterexample (beyond the paper): AG algbw 4, RS+AG allreduce 2, LP allreduce 3 with x_3 = 0.
    let t = weak_node();
    assert_eq!(rs_ag(&t), r(2, 1));
    check(&t, r(3, 1));
    assert_eq!(solve(&t, LpMode::Always).unwrap().unwrap().value(), r(3, 1), "exact, above RS+AG");
    let solved = solve(&t, LpMode::Always).unwrap().unwrap();
    assert_eq!(solved.sol.x[3], 0, "the weak node owns no shard");
}

#[test]
fn fig2_equals_rs_ag() {
    let t = fig2(r(1, 1));
    assert_eq!(rs_ag(&t), r(4, 1));
    check(&t, r(4, 1));
}

#[test]
fn switch_free_equals_rs_ag() {
    for spec in ["ring:6", "biring:6", "torus:3x4"] {
        let t = from_spec(spec).unwrap();
        check(&t, rs_ag(&t));
    }
}

#[test]
fn a100_pair_equals_rs_ag() {
    let t = from_spec("dgx-a100:2").unwrap();
    assert_eq!(rs_ag(&t), r(520, 3));
    check(&t, r(520, 3));
}

#[test]
fn mi250_single_cluster_equals_rs_ag() {
    let t = from_spec("mi250:1").unwrap();
    assert_eq!(rs_ag(&t), r(1200, 7));
    check(&t, r(1200, 7));
}

#[test]
fn modes() {
    let t = weak_node();
    assert_eq!(lp_algbw(&t, LpMode::Never).unwrap(), None);
    assert_eq!(lp_algbw(&t, LpMode::Auto).unwrap(), Some(r(3, 1)));
    assert!(allreduce(&t, LpMode::Never).unwrap().is_none());
    assert_eq!(LpMode::parse("auto").unwrap(), LpMode::Auto);
    assert!(LpMode::parse("sometimes").is_err());
}

#[test]
fn one_solve_per_topology_and_mode() {
    // The memo hands back the very solution it solved first; another mode or another
    // topology is solved on its own.
    let t = weak_node();
    let first = solve(&t, LpMode::Always).unwrap().unwrap();
    assert!(Arc::ptr_eq(&first, &solve(&t, LpMode::Always).unwrap().unwrap()));
    assert!(!Arc::ptr_eq(&first, &solve(&t, LpMode::Auto).unwrap().unwrap()));
    let other = fig2(r(1, 1));
    assert!(!Arc::ptr_eq(&first, &solve(&other, LpMode::Always).unwrap().unwrap()));
    assert_eq!(solve(&t, LpMode::Never).unwrap().map(|s| s.value()), None);
}
