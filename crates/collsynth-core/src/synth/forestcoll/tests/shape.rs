//! `--tree-shape shallow`: the same optimum as the budget greedy, in trees no higher (and on
//! the DGX boxes much lower), and only the broadcasting half of allreduce changes.

use super::*;
use super::{check_forest, check_schedule, detail, topo};

/// The largest number of rank hops from a root to a rank, over the forest.
fn height(f: &Forest, n: usize) -> usize {
    let mut worst = 0;
    for tree in &f.trees {
        let mut depth = vec![0usize; n];
        for (x, y, _) in &tree.edges {
            depth[*y] = depth[*x] + 1;
            worst = worst.max(depth[*y]);
        }
    }
    worst
}

#[test]
fn shallow_trees_keep_the_optimum_and_are_lower() {
    // (topology, height of the budget greedy's trees, height of the shallow ones), counted
    // on the forests: the budget greedy chains a box's GPUs behind one NVSwitch hop each.
    for (spec, budget_height, shallow_height) in [("dgx-a100:2", 8, 2), ("dgx-a100:4", 10, 2), ("switch:8", 7, 1)] {
        let t = topo(spec);
        let b = forest_with(&t, None, true, Shape::Budget).unwrap();
        let s = forest_with(&t, None, true, Shape::Shallow).unwrap();
        check_forest(&t, &s);
        assert!(s.symmetry.is_some(), "{spec}: the shape applies to the switched fast path");
        assert_eq!((s.k, s.u), (b.k, b.u), "{spec}: same optimum");
        check_schedule(&t, &emit::allgather(&t, &s.trees, s.k), s.optimum.inv);
        let n = t.n_ranks();
        assert_eq!((height(&b, n), height(&s, n)), (budget_height, shallow_height), "{spec}");
    }
}

#[test]
fn shape_is_an_option_of_allgather_and_of_allreduce_s_broadcast_half_only() {
    let t = topo("dgx-a100:2");
    let req = |shape: &str| {
        let mut r = Request::default();
        r.options.insert("tree-shape".into(), shape.into());
        r
    };
    // Stage timings differ between runs: compare what moves.
    let moves = |s: Schedule| (s.pieces, s.transfers);
    let ag_b = synthesize(&t, Collective::Allgather, &Request::default()).unwrap();
    let ag_s = synthesize(&t, Collective::Allgather, &req("shallow")).unwrap();
    assert_eq!(detail(&ag_s, "tree_shape"), "\"shallow\"");
    assert!(moves(ag_b.clone()) != moves(ag_s), "shallow changes the allgather");
    assert!(moves(synthesize(&t, Collective::Allgather, &req("budget")).unwrap()) == moves(ag_b));
    // Reduce-scatter reduces: the option leaves it alone.
    assert!(
        moves(synthesize(&t, Collective::ReduceScatter, &req("shallow")).unwrap())
            == moves(synthesize(&t, Collective::ReduceScatter, &Request::default()).unwrap())
    );
    let ar_s = synthesize(&t, Collective::Allreduce, &req("shallow")).unwrap();
    crate::verify::verify(&ar_s, &t).unwrap();
    let ar_b = synthesize(&t, Collective::Allreduce, &Request::default()).unwrap();
    assert!(moves(ar_s) != moves(ar_b), "shallow changes allreduce's allgather half");
    let e = synthesize(&t, Collective::Allgather, &req("tall")).unwrap_err();
    assert!(e.to_string().contains("--tree-shape: 'tall' is not one of budget, shallow"), "{e}");
}
