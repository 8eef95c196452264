//! `--tree-shape shallow`: the same optimum as the budget greedy, in trees no higher (and on
//! the DGX boxes much lower), and only the broadcasting half of allreduce changes.

use super::*;
use super::{check_forest, check_schedule, detail, topo};

/// A request for `--tree-shape shape`.
fn req(shape: &str) -> Request {
    let mut r = Request::default();
    r.options.insert("tree-shape".into(), shape.into());
    r
}

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

/// The longest chain of dependent transfers (rank hops a contribution crosses).
fn chain(s: &Schedule) -> usize {
    let s = &*crate::ir::orbit::flat(s).unwrap();
    let mut depth = vec![0usize; s.transfers.len()];
    for i in crate::ir::transform::topological_order(s).unwrap() {
        depth[i] = 1 + s.transfers[i].after.iter().map(|&a| depth[a]).max().unwrap_or(0);
    }
    depth.into_iter().max().unwrap_or(0)
}

#[test]
fn shallow_all_shapes_the_reducing_trees_too() {
    let t = topo("dgx-a100:2");
    let moves = |s: &Schedule| (s.pieces.clone(), s.transfers.clone());
    let inv = crate::bound::reduce_scatter(&t).unwrap().inv_throughput;
    let rs_b = synthesize(&t, Collective::ReduceScatter, &Request::default()).unwrap();
    let rs_s = synthesize(&t, Collective::ReduceScatter, &req("shallow-all")).unwrap();
    check_schedule(&t, &rs_s, inv);
    // The reversed shallow forest: chains 8 rank hops long become stars of height 2.
    let ag_s = synthesize(&t, Collective::Allgather, &req("shallow")).unwrap();
    let rev = crate::ir::transform::reverse(&ag_s, &t, &t).unwrap();
    assert!(moves(&rs_s) == moves(&rev));
    assert_eq!((chain(&rs_b), chain(&rs_s)), (8, 2));
    // On an allgather it is `shallow`.
    assert!(moves(&synthesize(&t, Collective::Allgather, &req("shallow-all")).unwrap()) == moves(&ag_s));
    // Allreduce: both halves shallow, so it differs from `shallow` (budget reduce-scatter).
    let ar_all = synthesize(&t, Collective::Allreduce, &req("shallow-all")).unwrap();
    crate::verify::verify(&ar_all, &t).unwrap();
    let ar_s = synthesize(&t, Collective::Allreduce, &req("shallow")).unwrap();
    assert!(moves(&ar_all) != moves(&ar_s));
    assert_eq!(chain(&ar_all), 4);
    // What it is for: the runtime model's time at 64 MiB drops (dgx-a100:2: 1.42x -> 1.25x of
    // the time bound).
    let m = Rat::from_integer(64 << 20);
    let time =
        |s: &Schedule| crate::cost::runtime::runtime(&crate::ir::orbit::flat(s).unwrap(), &t, m).unwrap().time_us;
    assert!(time(&rs_s) < 0.9 * time(&rs_b), "{} {}", time(&rs_s), time(&rs_b));
}
