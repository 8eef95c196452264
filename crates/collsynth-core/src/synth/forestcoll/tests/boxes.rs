//! The boxes-on-one-switch fast path (boxes.rs) against the general packing: same optimum,
//! every invariant of the paper's Alg. 5, and a clean fallback where it does not apply.

use super::*;
use super::{check_forest, check_schedule, count_taken, optimal, topo, with_slower_cable};
use crate::topology::TopologyBuilder;
use proptest::prelude::*;

#[test]
fn mi250_from_four_boxes_takes_the_box_path() {
    // The Fig. 11 optimum rows (tests.rs checks 1/x*, k, U and every invariant): the bottleneck is a
    // box's switch ingress, so every tree enters every other box once, and every switch link
    // carries k (N - 1) = floor(16 U) trees.
    for nb in [4, 5, 6, 8] {
        let spec = format!("mi250:{nb}");
        let t = topo(&spec);
        let f = optimal(&t);
        assert_eq!(f.symmetry, Some(format!("{nb} boxes x 16 ranks, one switch")), "{spec}");
        assert_eq!(f.k * (nb - 1), (f.u * Rat::from_integer(16)).floor().to_integer(), "{spec}: switch links full");
        // Only the box packing's flows (16 ranks), none over the whole cluster.
        assert!(f.packing_stats.mu_flows > 0 && f.packing_stats.mu_flows < 16 * 16 * 16, "{spec}");
    }
}

#[test]
fn mi250_small_clusters_fall_back() {
    // MI250 x2 (U = 15/2, k = 83): a switch link carries 120 >= 83 trees, but 166 in-box trees
    // per GCD do not fit the xGMI mesh (a pair of GCDs has 6 links in, 14 x 166 > 6 x 375).
    let t = topo("mi250:2");
    let f = forest(&t, None).unwrap();
    let b = crate::synth::forestcoll::boxes::Boxes::detect(&t, &f.caps).expect("two identical boxes on ib0");
    assert!(crate::synth::forestcoll::boxes::trees(&t, &b, f.k, &f.caps).is_none());
    assert_eq!(f.symmetry, None);
    // Switch-free, NIC switches in front of the IB switches, or one box: no boxes.
    for spec in ["torus:4x4", "dgx-a100:2", "mi250:1"] {
        let t = topo(spec);
        let caps = optimality::tree_capacities(&t, Rat::from_integer(1));
        assert!(crate::synth::forestcoll::boxes::Boxes::detect(&t, &caps).is_none(), "{spec}");
    }
}

#[test]
fn unequal_boxes_are_not_boxes() {
    // mi250:2,gcds=4 with one xGMI cable of box 1 slower (both ways): boxes no longer match.
    let good = topo("mi250:2,gcds=4");
    let odd = with_slower_cable(&good, "odd", "box1.gpu0", "box1.gpu1", 2);
    let caps = |t: &Topology| optimality::tree_capacities(t, Rat::from_integer(1));
    assert!(crate::synth::forestcoll::boxes::Boxes::detect(&good, &caps(&good)).is_some());
    assert!(crate::synth::forestcoll::boxes::Boxes::detect(&odd, &caps(&odd)).is_none());
    assert_ne!(optimal(&odd).symmetry.as_deref(), Some("2 boxes x 4 ranks, one switch"));
}

/// `nb` copies of a random connected box of `g` ranks (a path plus random links, random
/// bandwidths, equal both ways: the general path's switch removal needs every node
/// Eulerian), every rank linked both ways to one switch.
pub(super) fn arb_boxes() -> impl Strategy<Value = Topology> {
    let extra = proptest::collection::vec((0usize..6, 0usize..6, 1i128..5), 0..8);
    (2usize..=4, 1usize..=5, extra, 1i128..4, proptest::collection::vec(1i128..5, 5)).prop_map(
        |(nb, g, extra, up, ring)| {
            let mut tb = TopologyBuilder::new("random-boxes");
            let sw = tb.switch("sw", None);
            let mut m = vec![vec![0i128; g]; g];
            for p in 1..g {
                (m[p - 1][p], m[p][p - 1]) = (ring[p], ring[p]);
            }
            for (p, q, w) in extra {
                let (p, q) = (p % g, q % g);
                if p != q {
                    (m[p][q], m[q][p]) = (w, w);
                }
            }
            for b in 0..nb {
                let ids: Vec<usize> = (0..g).map(|p| tb.compute(format!("b{b}.r{p}"), None)).collect();
                for (p, row) in m.iter().enumerate() {
                    for (q, &w) in row.iter().enumerate() {
                        if w > 0 {
                            tb.link(ids[p], ids[q], Rat::from_integer(25 * w), 1.0);
                        }
                    }
                }
                for &v in &ids {
                    tb.bilink(v, sw, Rat::from_integer(10 * up), 1.0);
                }
            }
            tb.build().expect("strongly connected")
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn random_boxes_fast_path_is_exact(t in arb_boxes()) {
        let f = forest(&t, None).unwrap();
        let g = forest_with(&t, None, false, Shape::Budget).unwrap();
        prop_assert_eq!((f.k, f.u), (g.k, g.u));
        check_forest(&t, &f);
        check_schedule(&t, &emit::allgather(&t, &f.trees, f.k), f.optimum.inv);
    }
}

#[test]
fn random_boxes_often_take_the_box_path() {
    let fast = count_taken(arb_boxes(), 40, |f| f.symmetry.as_ref().is_some_and(|s| s.ends_with("one switch")));
    assert!(fast >= 10, "{fast} of 40");
}
