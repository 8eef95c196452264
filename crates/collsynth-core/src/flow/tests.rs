use super::*;
use proptest::prelude::*;

fn net(n: usize, edges: &[(usize, usize, Cap)]) -> FlowNetwork {
    FlowNetwork::new(n, edges)
}

/// Smallest cut capacity over all node sets containing `s` and not `t`, by enumeration.
fn brute_min_cut(n: usize, edges: &[(usize, usize, Cap)], s: usize, t: usize) -> Cap {
    let mut best = Cap::MAX;
    for mask in 0u32..(1 << n) {
        if mask & (1 << s) == 0 || mask & (1 << t) != 0 {
            continue;
        }
        let c = edges.iter().filter(|&&(u, v, _)| mask & (1 << u) != 0 && mask & (1 << v) == 0).map(|e| e.2).sum();
        best = best.min(c);
    }
    best
}

#[test]
fn textbook_example() {
    // CLRS Fig. 26.1: max flow 23.
    let edges =
        [(0, 1, 16), (0, 2, 13), (1, 3, 12), (2, 1, 4), (2, 4, 14), (3, 2, 9), (3, 5, 20), (4, 3, 7), (4, 5, 4)];
    let mut g = net(6, &edges);
    assert_eq!(g.max_flow(0, 5), 23);
    let side = g.min_cut_source_side(0);
    assert_eq!(side, vec![true, true, true, false, true, false]);
    assert_eq!(g.cut_capacity(&side), 23);
    // Flow conservation and capacity on every edge.
    let mut balance = [0i128; 6];
    for (e, &(u, v, c)) in edges.iter().enumerate() {
        let f = g.flow_on(e);
        assert!((0..=c).contains(&f));
        balance[u] -= f;
        balance[v] += f;
    }
    assert_eq!(balance, [-23, 0, 0, 0, 0, 23]);
}

#[test]
fn antiparallel_and_parallel_edges() {
    // 0 <-> 1 both ways, plus a parallel 0 -> 1, then 1 -> 2.
    let edges = [(0, 1, 3), (1, 0, 5), (0, 1, 4), (1, 2, 100)];
    let mut g = net(3, &edges);
    assert_eq!(g.max_flow(0, 2), 7);
    assert_eq!(g.max_flow(1, 0), 5);
    assert_eq!(g.max_flow(2, 0), 0);
    assert_eq!(g.min_cut_source_side(2), vec![false, false, true]);
}

#[test]
fn reuse_with_new_capacities_and_limits() {
    let edges = [(0, 1, 10), (1, 3, 10), (0, 2, 10), (2, 3, 10), (1, 2, 5)];
    let mut g = net(4, &edges);
    assert_eq!(g.max_flow(0, 3), 20);
    g.set_capacity(3, 1);
    assert_eq!(g.capacity(3), 1);
    assert_eq!(g.max_flow(0, 3), 11);
    // Two minimum cut sides, {0, 2} and {0, 1, 2}: the residual gives the smaller.
    assert_eq!(g.min_cut_source_side(0), vec![true, false, true, false]);
    assert_eq!(g.max_flow_limited(0, 3, 7), 7);
    assert_eq!(g.max_flow_limited(0, 3, 0), 0);
    assert_eq!(g.max_flow_limited(0, 3, 100), 11);
    // Other sinks on the same structure.
    assert_eq!(g.max_flow(0, 2), 15);
    assert_eq!(g.max_flow(0, 1), 10);
    // Huge capacities stay exact.
    let big = 1i128 << 100;
    g.set_capacity(0, big);
    g.set_capacity(1, big);
    assert_eq!(g.max_flow(0, 3), big + 1);
}

#[test]
fn long_path_does_not_recurse() {
    let n = 200_000;
    let edges: Vec<(usize, usize, Cap)> = (0..n - 1).map(|i| (i, i + 1, 3 + (i % 5) as Cap)).collect();
    let mut g = net(n, &edges);
    assert_eq!(g.max_flow(0, n - 1), 3);
}

fn arb_graph() -> impl Strategy<Value = (usize, Vec<(usize, usize, Cap)>)> {
    (2usize..=8).prop_flat_map(|n| {
        let edge = (0..n, 0..n, 0i128..12).prop_filter("no self-loops", |(u, v, _)| u != v);
        (Just(n), proptest::collection::vec(edge, 0..30))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn matches_brute_force_min_cut((n, edges) in arb_graph(), s_pick in 0usize..64, t_pick in 0usize..64) {
        let s = s_pick % n;
        let t = (s + 1 + t_pick % (n - 1)) % n;
        let mut g = net(n, &edges);
        let f = g.max_flow(s, t);
        prop_assert_eq!(f, brute_min_cut(n, &edges, s, t));
        let side = g.min_cut_source_side(s);
        prop_assert!(side[s] && !side[t]);
        prop_assert_eq!(g.cut_capacity(&side), f);
        // The limited flow is min(maxflow, limit).
        let lim = f / 2 + 1;
        prop_assert_eq!(g.max_flow_limited(s, t, lim), f.min(lim));
        // Doubling every capacity doubles the flow (reuse without reallocation).
        for (e, &(_, _, c)) in edges.iter().enumerate() {
            g.set_capacity(e, 2 * c);
        }
        prop_assert_eq!(g.max_flow(s, t), 2 * f);
    }
}

#[test]
fn a_polled_flow_stops_at_the_polls_error_and_otherwise_agrees() {
    // Source 0 feeds every node of a path 1 -> 2 -> ... -> n; sink n: one phase per path
    // length, so n - 1 phases.
    let n = 50;
    let mut edges: Vec<(usize, usize, Cap)> = (1..n).map(|v| (v, v + 1, 100)).collect();
    edges.extend((1..=n).map(|v| (0, v, 1)));
    let mut g = net(n + 1, &edges);
    let mut phases = 0;
    let full = g.max_flow_polled(0, n, Cap::MAX, || {
        phases += 1;
        Ok(())
    });
    assert_eq!(full, Ok(n as Cap));
    assert!(phases >= n - 1, "{phases} phases");
    let mut left = 3;
    let stopped = g.max_flow_polled(0, n, Cap::MAX, || {
        left -= 1;
        if left == 0 {
            Err(crate::error::CollsynthError::Cancelled)
        } else {
            Ok(())
        }
    });
    assert_eq!(stopped, Err(crate::error::CollsynthError::Cancelled));
    assert_eq!(g.max_flow_limited(0, n, Cap::MAX), n as Cap);
}
