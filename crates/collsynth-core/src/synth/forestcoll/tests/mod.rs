//! Exact tests of the ForestColl pipeline: the paper's numbers and values we derived exactly
//! for its topologies, the invariants of its Alg. 5 on every output, random topologies and
//! edge cases (disconnected graphs, N = 1 and 2, switch-free inputs).

mod boxes;
mod shape;
mod stagger;
mod symmetric;
mod two_level;

use super::*;
use crate::cost::bandwidth_term_us;
use crate::topology::TopologyBuilder;
use crate::verify::verify;
use crate::zoo::from_spec;
use proptest::prelude::*;

fn r(p: i128, q: i128) -> Rat {
    Rat::new(p, q)
}

pub(super) fn topo(spec: &str) -> Topology {
    from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// Fig. 2(a): two clusters of 4 ranks, 10b to the cluster switch, b to the global switch.
fn fig2(b: Rat) -> Topology {
    let mut tb = TopologyBuilder::new("fig2");
    let mut ranks = Vec::new();
    for c in 1..=2 {
        for j in 1..=4 {
            ranks.push(tb.compute(format!("c{c}.{j}"), None));
        }
    }
    let w0 = tb.switch("w0", None);
    let w = [tb.switch("w1", None), tb.switch("w2", None)];
    for (i, &u) in ranks.iter().enumerate() {
        tb.bilink(u, w[i / 4], b * Rat::from_integer(10), 1.0);
        tb.bilink(u, w0, b, 1.0);
    }
    tb.build().unwrap()
}

/// The invariants of a forest (Alg. 5): every tree a spanning arborescence of the ranks rooted at its
/// root with N-1 edges, counts summing to k per root, routes valid switch-only paths, link
/// loads within floor(U b_e), and the forest's time per shard byte equal to U / k.
pub(super) fn check_forest(t: &Topology, f: &Forest) {
    let n = t.n_ranks();
    let mut per_root = vec![0; n];
    let mut load = vec![0 as Cap; t.links.len()];
    for tree in &f.trees {
        assert!(tree.count > 0);
        per_root[tree.root] += tree.count;
        assert_eq!(tree.edges.len(), n - 1);
        let mut inside = vec![false; n];
        inside[tree.root] = true;
        for (x, y, route) in &tree.edges {
            assert!(inside[*x] && !inside[*y], "not an arborescence grown from the root");
            inside[*y] = true;
            assert!(!route.is_empty());
            let mut at = t.rank_node(*x);
            for (i, &l) in route.iter().enumerate() {
                assert_eq!(t.links[l].src, at, "route not consecutive");
                at = t.links[l].dst;
                if i + 1 < route.len() {
                    assert!(!t.is_compute(at), "a logical edge passes through a rank");
                }
                load[l] += tree.count;
            }
            assert_eq!(at, t.rank_node(*y));
        }
        assert!(inside.iter().all(|&b| b));
    }
    assert!(per_root.iter().all(|&c| c == f.k), "{per_root:?} != k = {}", f.k);
    let mut worst = Rat::from_integer(0);
    for (e, l) in t.links.iter().enumerate() {
        assert!(load[e] <= f.caps[e]);
        assert!(Rat::from_integer(f.caps[e]) <= f.u * l.bandwidth);
        worst = worst.max(Rat::from_integer(load[e]) / l.bandwidth);
    }
    // The busiest link decides the time: exactly U/k per byte of shard (Thm 13).
    assert_eq!(worst, f.u, "{}", t.name);
}

/// The schedule passes the verifier and its bandwidth term is `inv` per byte of shard.
pub(super) fn check_schedule(t: &Topology, s: &Schedule, inv: Rat) {
    verify(s, t).unwrap_or_else(|v| panic!("{}: {v}", t.name));
    let s = &*crate::ir::orbit::flat(s).unwrap();
    let n = Rat::from_integer(t.n_ranks() as i128);
    assert_eq!(bandwidth_term_us(s, t, Rat::from_integer(1)), inv / n / Rat::from_integer(1000), "{}", t.name);
}

/// Forest + schedule at the optimum; returns the forest.
pub(super) fn optimal(t: &Topology) -> Forest {
    let f = forest(t, None).unwrap();
    check_forest(t, &f);
    assert_eq!(f.k, f.optimum.k);
    assert_eq!(f.u / Rat::from_integer(f.k), f.optimum.inv);
    check_schedule(t, &emit::allgather(t, &f.trees, f.k), f.optimum.inv);
    f
}

/// How many of `cases` topologies drawn (deterministically) from `strategy` give a forest
/// with `taken`: property tests over a fast path only mean something if it is taken.
pub(super) fn count_taken(
    strategy: impl proptest::strategy::Strategy<Value = Topology>,
    cases: usize,
    taken: impl Fn(&Forest) -> bool,
) -> usize {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    (0..cases).filter(|_| taken(&forest(&strategy.new_tree(&mut runner).unwrap().current(), None).unwrap())).count()
}

/// `good` rebuilt under `name` with the cable between nodes `a` and `b` (both ways) `slower`
/// times slower: a topology file that reuses a zoo name with one cable changed.
pub(super) fn with_slower_cable(good: &Topology, name: &str, a: &str, b: &str, slower: i128) -> Topology {
    let mut tb = TopologyBuilder::new(name);
    for v in &good.nodes {
        tb.node(v.name.clone(), v.kind, v.group.as_deref());
    }
    let (a, b) = (good.node_index(a).unwrap(), good.node_index(b).unwrap());
    let slow = [good.link_between(a, b).unwrap(), good.link_between(b, a).unwrap()];
    for (i, l) in good.links.iter().enumerate() {
        let bw = if slow.contains(&i) { l.bandwidth / Rat::from_integer(slower) } else { l.bandwidth };
        tb.link(l.src, l.dst, bw, 1.0);
    }
    tb.build().unwrap()
}

/// A request for `--tree-shape shape`, with `--max-trees t` when given.
pub(super) fn shape_req(shape: &str, t: Option<usize>) -> Request {
    let mut req = Request::default();
    req.options.insert("tree-shape".into(), shape.into());
    if let Some(t) = t {
        req.options.insert("max-trees".into(), t.to_string());
    }
    req
}

pub(super) fn detail(s: &Schedule, key: &str) -> String {
    s.provenance.details.text(key).unwrap_or_default()
}

#[test]
fn fig2_optimum_is_m_over_8b_with_one_tree() {
    for b in [r(1, 1), r(25, 2), r(300, 1)] {
        let t = fig2(b);
        let f = optimal(&t);
        assert_eq!(f.optimum.inv, Rat::from_integer(1) / b); // T = (M/8) (1/b) = M/(8b)
        assert_eq!(f.k, 1);
        assert_eq!(f.u, Rat::from_integer(1) / b);
        assert_eq!(f.algbw(8), b * Rat::from_integer(8));
        // Switch removal keeps Thm 5's condition (Fig. 13(b)'s D* passes with N k = 8).
        assert!(f.split_stats.splits > 0);
    }
}

/// Optimum rows for the multi-cluster topologies of Fig. 11 (§5.4), derived exactly: (spec, 1/x*, algbw, k, U).
fn table_row(spec: &str, inv: Rat, algbw: Rat, k: i128, u: Rat) {
    let t = topo(spec);
    let f = optimal(&t);
    assert_eq!(f.optimum.inv, inv, "{spec}");
    assert_eq!(f.optimum.algbw(t.n_ranks()), algbw, "{spec}");
    assert_eq!(f.algbw(t.n_ranks()), algbw, "{spec}");
    assert_eq!((f.k, f.u), (k, u), "{spec}");
}

#[test]
fn table_a100_small() {
    table_row("dgx-a100:2", r(3, 65), r(5200, 15), 13, r(3, 5));
    table_row("dgx-a100:3", r(2, 25), r(300, 1), 1, r(2, 25));
    table_row("dgx-a100:4", r(3, 25), r(800, 3), 1, r(3, 25));
}

#[test]
fn table_mi250_small() {
    table_row("mi250:2", r(15, 166), r(26560, 75), 83, r(15, 2));
}

#[test]
fn table_mi250_large() {
    // Built by the boxes fast path (boxes_tests.rs checks that it is taken).
    table_row("mi250:4", r(3, 16), r(1024, 3), 8, r(3, 2));
    table_row("mi250:6", r(5, 16), r(1536, 5), 8, r(5, 2));
    table_row("mi250:8", r(7, 16), r(2048, 7), 8, r(7, 2));
}

#[test]
fn fixed_k_mi250_2() {
    let t = topo("mi250:2");
    let f = forest(&t, Some(2)).unwrap();
    check_forest(&t, &f);
    // Fixed k on MI250 2x16: U* for k = 1, 2 (k = 2 -> 341.33 GB/s, the paper's §4.5 number).
    let scan = f.k_scan.clone().unwrap();
    assert_eq!(scan, vec![(1, r(1, 10)), (2, r(3, 16))]);
    assert_eq!((f.k, f.u), (2, r(3, 16)));
    assert_eq!(f.algbw(32), r(1024, 3));
    check_schedule(&t, &emit::allgather(&t, &f.trees, f.k), f.u / Rat::from_integer(f.k));
    // Thm 15's bound on k = 2: U*/k <= 1/x* + 1/(2 max b).
    assert!(f.u / Rat::from_integer(2) <= f.optimum.inv + r(1, 2 * 16));
}

#[test]
fn k_scan_a100_first_values() {
    // A100 2x8's fixed-k scan (k = 1..3 and 7 kept in the fast suite).
    let t = topo("dgx-a100:2");
    let inv = optimality::optimum(&t).unwrap().inv;
    let mut test = optimality::TreeTest::new(&t);
    for k in 1..=3 {
        let u = fixed_k::min_u(&t, k, inv, &mut test).unwrap();
        assert_eq!(Rat::from_integer(16 * k) / u, r(2400, 7));
    }
    assert_eq!(fixed_k::min_u(&t, 7, inv, &mut test).unwrap(), r(97, 300));
    let s = allgather(&t, Some(3)).unwrap();
    assert_eq!(detail(&s, "k"), "1");
    // full precision (2400/7 as the shortest f64 that reads back) and exactly
    let json = |text: &str| serde_json::from_str::<serde_json::Value>(text).expect("JSON text");
    let scan = json("[[1, 342.85714285714283], [2, 342.85714285714283], [3, 342.85714285714283]]");
    assert_eq!(json(&detail(&s, "k_scan")), scan);
    assert_eq!(json(&detail(&s, "k_scan_exact")), json(r#"[[1, "2400/7"], [2, "2400/7"], [3, "2400/7"]]"#));
    assert_eq!(detail(&s, "forest_algbw_exact"), r#""2400/7""#);
}

#[test]
fn details_and_all_collectives() {
    let t = topo("dgx-a100:2");
    let req = Request::default();
    let ag = synthesize(&t, Collective::Allgather, &req).unwrap();
    assert_eq!(detail(&ag, "k"), "13");
    assert_eq!(detail(&ag, "trees"), "208");
    assert_eq!(detail(&ag, "inv_x_star"), "\"3/65\"");
    let inv = r(3, 65);
    check_schedule(&t, &ag, inv);
    let rs = synthesize(&t, Collective::ReduceScatter, &req).unwrap();
    check_schedule(&t, &rs, inv);
    let ar = synthesize(&t, Collective::Allreduce, &req).unwrap();
    check_schedule(&t, &ar, inv * Rat::from_integer(2));
    assert_eq!(detail(&ar, "allreduce_method"), "\"rs+ag\"");
    // Broadcast comes from rooted.rs: either a verified schedule or a clear error.
    match synthesize(&t, Collective::Broadcast, &req) {
        Ok(s) => assert!(verify(&s, &t).is_ok()),
        Err(e) => assert!(e.message().contains("forestcoll broadcast"), "{e}"),
    }
    let bad = Request { options: [("allreduce-lp".to_string(), "maybe".to_string())].into(), ..Default::default() };
    assert!(matches!(synthesize(&t, Collective::Allreduce, &bad), Err(CollsynthError::BadInput(_))));
    let zero = Request { options: [("max-trees".to_string(), "0".to_string())].into(), ..Default::default() };
    assert!(matches!(synthesize(&t, Collective::Allgather, &zero), Err(CollsynthError::BadInput(_))));
}

#[test]
fn unidirectional_rings_and_transpose() {
    // A one-way ring: reduce-scatter is built on the transpose.
    for spec in ["ring:5", "dcirculant:7:1,3"] {
        let t = topo(spec);
        let f = optimal(&t);
        let rs = synthesize(&t, Collective::ReduceScatter, &Request::default()).unwrap();
        check_schedule(&t, &rs, crate::bound::reduce_scatter(&t).unwrap().inv_throughput);
        let ar = synthesize(&t, Collective::Allreduce, &Request::default()).unwrap();
        check_schedule(&t, &ar, crate::bound::allreduce_rs_ag(&t).unwrap().inv_throughput);
        assert!(f.k >= 1);
    }
}

#[test]
fn single_rank_and_two_ranks() {
    // one rank is refused by the topology builder (nothing to schedule)
    let mut tb = TopologyBuilder::new("one");
    tb.compute("a", None);
    assert!(tb.build().is_err());
    // N = 2 through a switch with unequal directions elsewhere: 1/x* = 1/min(λ(a,b), λ(b,a)).
    let mut tb = TopologyBuilder::new("two");
    let (a, b) = (tb.compute("a", None), tb.compute("b", None));
    let w = tb.switch("w", None);
    tb.bilink(a, w, r(6, 1), 1.0);
    tb.bilink(b, w, r(4, 1), 1.0);
    tb.bilink(a, b, r(3, 2), 1.0);
    let t = tb.build().unwrap();
    let f = optimal(&t);
    assert_eq!(f.optimum.inv, r(2, 11));
}

#[test]
fn parallel_links_add_up() {
    let mut tb = TopologyBuilder::new("par");
    let (a, b, c) = (tb.compute("a", None), tb.compute("b", None), tb.compute("c", None));
    tb.bilink(a, b, r(1, 1), 1.0);
    tb.bilink(a, b, r(2, 1), 1.0);
    tb.bilink(b, c, r(3, 1), 1.0);
    tb.bilink(c, a, r(3, 1), 1.0);
    let t = tb.build().unwrap();
    let f = optimal(&t);
    assert_eq!(f.optimum.inv, r(1, 3));
}

#[test]
fn non_eulerian_switch_is_rejected_clearly() {
    let mut tb = TopologyBuilder::new("skew");
    let (a, b, c) = (tb.compute("a", None), tb.compute("b", None), tb.compute("c", None));
    let w = tb.switch("w", None);
    tb.link(a, w, r(2, 1), 1.0);
    tb.link(w, a, r(1, 1), 1.0);
    tb.bilink(b, w, r(1, 1), 1.0);
    tb.bilink(c, w, r(1, 1), 1.0);
    tb.link(a, b, r(1, 1), 1.0);
    let t = tb.build().unwrap();
    match forest(&t, None) {
        Err(CollsynthError::BadInput(m)) => assert!(m.contains("Eulerian") && m.contains("'"), "{m}"),
        other => panic!("expected a clear error, got {other:?}"),
    }
}

#[test]
fn disconnected_is_rejected_before_synthesis() {
    let mut tb = TopologyBuilder::new("split");
    let (a, b) = (tb.compute("a", None), tb.compute("b", None));
    tb.link(a, b, r(1, 1), 1.0);
    assert!(tb.build().is_err());
}

#[test]
fn eq2_gamma_of_fig2_is_exact() {
    // Eq. (2) on the scaled Fig. 2 (U = 1, k = 1; cf. Fig. 4(b)): the cross-cluster split via w0 has
    // γ = 1, the same-cluster one γ = 0, the cluster-switch one 10, the self-loop one 4.
    let t = fig2(r(1, 1));
    let caps = optimality::tree_capacities(&t, r(1, 1));
    let g = switch_removal::Logical::from_links(&t, &caps);
    let id = |s: &str| t.node_index(s).unwrap();
    let gm = |u: &str, w: &str, v: &str| switch_removal::gamma_for_test(&t, &g, id(u), id(w), id(v), 1);
    assert_eq!(gm("c1.1", "w0", "c2.1"), 1);
    assert_eq!(gm("c1.1", "w0", "c1.2"), 0);
    assert_eq!(gm("c1.1", "w1", "c1.2"), 10);
    assert_eq!(gm("c1.1", "w1", "c1.1"), 4);
}

/// Random strongly connected topologies: symmetric (Eulerian) with 0-3 switches, or
/// directed and switch-free; up to 12 ranks.
fn arb_topology() -> impl Strategy<Value = Topology> {
    prop_oneof![crate::testing::arb_flat(2..=12, 3, true), crate::testing::arb_digraph(12)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    #[test]
    fn random_topologies_reach_the_bound(t in arb_topology()) {
        let f = optimal(&t);
        prop_assert_eq!(f.optimum.inv, crate::bound::allgather(&t).unwrap().inv_throughput);
        // Fixed k = 1 and 2 also give verified forests at their own U*.
        let g = forest(&t, Some(2)).unwrap();
        check_forest(&t, &g);
        check_schedule(&t, &emit::allgather(&t, &g.trees, g.k), g.u / Rat::from_integer(g.k));
        let rs = synthesize(&t, Collective::ReduceScatter, &Request::default()).unwrap();
        check_schedule(&t, &rs, crate::bound::reduce_scatter(&t).unwrap().inv_throughput);
    }
}

#[test]
fn local_splits_need_no_flows() {
    // A path a - w - b through a degree-2 switch: γ needs no max-flow.
    let mut tb = TopologyBuilder::new("path");
    let (a, b) = (tb.compute("a", None), tb.compute("b", None));
    let w = tb.switch("w", None);
    tb.bilink(a, w, r(2, 1), 1.0);
    tb.bilink(w, b, r(2, 1), 1.0);
    let t = tb.build().unwrap();
    let f = optimal(&t);
    assert_eq!(f.split_stats.flows, 0);
    assert_eq!(f.optimum.inv, r(1, 2));
}
