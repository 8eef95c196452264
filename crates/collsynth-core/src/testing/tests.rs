use super::*;

fn is_symmetric(t: &Topology) -> bool {
    t.links.iter().all(|l| {
        t.link_between(l.dst, l.src)
            .is_some_and(|r| t.links[r].bandwidth == l.bandwidth && t.links[r].latency == l.latency)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn shapes_hold(t in arb_topology(24)) {
        prop_assert!((2..=24).contains(&t.n_ranks()), "{}", describe(&t));
    }

    #[test]
    fn symmetric_means_equal_both_ways(t in arb_flat(2..=8, 3, true), u in arb_boxes(12, true)) {
        prop_assert!(is_symmetric(&t) && is_symmetric(&u));
    }

    #[test]
    fn digraphs_have_no_switch(t in arb_digraph(10)) {
        prop_assert_eq!(t.n_switches(), 0);
        prop_assert!((2..=10).contains(&t.n_ranks()));
    }
}

/// The general strategy really produces what it promises: directed links, asymmetric
/// pairs, switches, several boxes, non-integer bandwidths and N up to the maximum.
#[test]
fn general_strategy_covers_every_feature() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut one_way, mut asym, mut switch, mut boxes, mut frac, mut max_n) = (0, 0, 0, 0, 0, 0);
    for _ in 0..300 {
        let t = arb_topology(24).new_tree(&mut runner).unwrap().current();
        one_way += usize::from(!t.is_bidirectional());
        asym += usize::from(!is_symmetric(&t) && t.is_bidirectional());
        switch += usize::from(t.n_switches() > 0);
        boxes += usize::from(t.nodes.iter().any(|n| n.name == "b1.sw"));
        frac += usize::from(t.links.iter().any(|l| !l.bandwidth.is_integer()));
        max_n = max_n.max(t.n_ranks());
    }
    assert!(
        one_way > 30 && asym > 10 && switch > 100 && boxes > 30 && frac > 200,
        "{one_way} {asym} {switch} {boxes} {frac}"
    );
    assert!(max_n >= 20, "{max_n}");
}
