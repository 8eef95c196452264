use super::latency::{diameter_hops, moore_steps, one_ported_broadcast_rounds};
use super::*;
use crate::ir::transform::transpose;
use crate::topology::TopologyBuilder;
use crate::zoo::from_spec;
use proptest::prelude::*;

fn topo(spec: &str) -> Topology {
    from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn r(p: i128, q: i128) -> Rat {
    Rat::new(p, q)
}

fn ag_algbw(t: &Topology) -> Rat {
    algbw(Collective::Allgather, t.n_ranks(), allgather(t).unwrap().inv_throughput).unwrap()
}

/// `(|S ∩ Vc|, B+(S))` of a node set given by indices.
fn cut_stats(t: &Topology, cut: &[usize]) -> (usize, Rat) {
    let mut inside = vec![false; t.n_nodes()];
    for &v in cut {
        inside[v] = true;
    }
    let count = t.ranks().iter().filter(|&&u| inside[u]).count();
    let out = t.links.iter().filter(|l| inside[l.src] && !inside[l.dst]).map(|l| l.bandwidth).sum();
    (count, out)
}

/// The allgather certificate: S is a proper cut of the ranks and its ratio is the bound.
fn check_ag_certificate(t: &Topology, b: &CutBound) {
    let (count, out) = cut_stats(t, &b.cut);
    assert!(count >= 1 && count < t.n_ranks(), "{}: bad cut {:?}", t.name, b.cut);
    assert_eq!(Rat::from_integer(count as i128) / out, b.inv_throughput, "{}", t.name);
}

/// max over node subsets S (switches included) with 0 < |S ∩ Vc| < N of |S ∩ Vc| / B+(S).
fn brute_allgather(t: &Topology) -> Rat {
    let n = t.n_nodes();
    let mut best = Rat::zero();
    for mask in 1u32..(1 << n) {
        let count = t.ranks().iter().filter(|&&u| mask >> u & 1 == 1).count();
        if count == 0 || count == t.n_ranks() {
            continue;
        }
        let out: Rat =
            t.links.iter().filter(|l| mask >> l.src & 1 == 1 && mask >> l.dst & 1 == 0).map(|l| l.bandwidth).sum();
        best = best.max(Rat::from_integer(count as i128) / out);
    }
    best
}

/// 1 / min over node subsets S with root ∈ S and some rank outside of B+(S).
fn brute_broadcast(t: &Topology, root: usize) -> Rat {
    let n = t.n_nodes();
    let rn = t.rank_node(root);
    let mut best: Option<Rat> = None;
    for mask in 1u32..(1 << n) {
        if mask >> rn & 1 == 0 || t.ranks().iter().all(|&u| mask >> u & 1 == 1) {
            continue;
        }
        let out: Rat =
            t.links.iter().filter(|l| mask >> l.src & 1 == 1 && mask >> l.dst & 1 == 0).map(|l| l.bandwidth).sum();
        best = Some(best.map_or(out, |b| b.min(out)));
    }
    Rat::from_integer(1) / best.unwrap()
}

#[test]
fn single_rank_is_refused() {
    let mut tb = TopologyBuilder::new("one");
    let c = tb.compute("c", None);
    let w = tb.switch("w", None);
    tb.bilink(c, w, r(100, 1), 1.0);
    assert!(tb.build().unwrap_err().message().contains("one compute node"));
}

#[test]
fn switch_and_ring() {
    for n in [2i128, 3, 8, 16] {
        for (family, b) in [("switch", 100), ("ring", 100), ("switch", 25)] {
            let t = topo(&format!("{family}:{n},bw={b}"));
            assert_eq!(ag_algbw(&t), r(n * b, n - 1), "{family}:{n}");
            check_ag_certificate(&t, &allgather(&t).unwrap());
            assert_eq!(reduce_scatter(&t).unwrap().inv_throughput, allgather(&t).unwrap().inv_throughput);
            let bc = broadcast(&t, 0).unwrap();
            assert_eq!(algbw(Collective::Broadcast, t.n_ranks(), bc.inv_throughput), Some(r(b, 1)));
            assert!(bc.cut.contains(&t.rank_node(0)));
            assert_eq!(reduce(&t, 1).unwrap().inv_throughput, r(1, b));
        }
    }
    // Decimal bandwidths stay exact.
    let t = topo("switch:4,bw=12.5");
    assert_eq!(ag_algbw(&t), r(50, 3));
}

#[test]
fn tori_and_hypercube_single_node_cut() {
    for (spec, n, deg) in [("torus:4x4", 16i128, 4i128), ("torus:4x4x4", 64, 6), ("hypercube:4", 16, 4)] {
        let t = topo(spec);
        assert_eq!(t.n_ranks() as i128, n);
        let b = allgather(&t).unwrap();
        assert_eq!(ag_algbw(&t), r(n * deg * 100, n - 1), "{spec}");
        assert_eq!(b.cut.len() as i128, n - 1, "{spec}: the complement of one node");
        check_ag_certificate(&t, &b);
    }
}

/// ForestColl Fig. 2(a): two clusters of 4, each node 10b to its cluster switch, b to w0.
fn fig2(b: Rat) -> Topology {
    let mut tb = TopologyBuilder::new("fig2a");
    let c: Vec<Vec<usize>> =
        (1..=2).map(|k| (1..=4).map(|j| tb.compute(format!("c{k}.{j}"), Some(&format!("c{k}")))).collect()).collect();
    let w0 = tb.switch("w0", None);
    for (k, cluster) in c.iter().enumerate() {
        let w = tb.switch(format!("w{}", k + 1), None);
        for &v in cluster {
            tb.bilink(v, w, b * Rat::from_integer(10), 1.0);
            tb.bilink(v, w0, b, 1.0);
        }
    }
    tb.build().unwrap()
}

#[test]
fn forestcoll_fig2() {
    for b in [r(1, 1), r(25, 2), r(300, 1)] {
        let t = fig2(b);
        let bound = allgather(&t).unwrap();
        assert_eq!(bound.inv_throughput, Rat::from_integer(1) / b);
        assert_eq!(ag_algbw(&t), b * Rat::from_integer(8));
        // One cluster plus its own switch.
        let names: Vec<&str> = bound.cut.iter().map(|&v| t.nodes[v].name.as_str()).collect();
        assert!(
            names == ["c1.1", "c1.2", "c1.3", "c1.4", "w1"] || names == ["c2.1", "c2.2", "c2.3", "c2.4", "w2"],
            "{names:?}"
        );
        check_ag_certificate(&t, &bound);
        // Bidirectional: reduce-scatter and the RS+AG allreduce follow (RS+AG allreduce algbw = N x*/2 = 4b).
        assert_eq!(reduce_scatter(&t).unwrap().inv_throughput, bound.inv_throughput);
        let ar = allreduce_rs_ag(&t).unwrap();
        assert_eq!(algbw(Collective::Allreduce, 8, ar.inv_throughput), Some(b * Rat::from_integer(4)));
    }
}

#[test]
fn dgx_a100() {
    let t = topo("dgx-a100:2");
    let b = allgather(&t).unwrap();
    assert_eq!(b.inv_throughput, r(3, 65));
    assert_eq!(ag_algbw(&t), r(5200, 15));
    check_ag_certificate(&t, &b);
    let ar = allreduce_rs_ag(&t).unwrap();
    assert_eq!(ar.inv_throughput, r(6, 65));
    assert_eq!(algbw(Collective::Allreduce, 16, ar.inv_throughput), Some(r(5200, 30)));
    assert_eq!(ag_algbw(&topo("dgx-a100:1")), r(2400, 7));
    for (n, inv) in [(3, r(2, 25)), (4, r(3, 25)), (6, r(1, 5)), (8, r(7, 25))] {
        let t = topo(&format!("dgx-a100:{n}"));
        let b = allgather(&t).unwrap();
        assert_eq!(b.inv_throughput, inv, "dgx-a100:{n}");
        check_ag_certificate(&t, &b);
    }
}

#[test]
fn mi250() {
    assert_eq!(allgather(&topo("mi250:1")).unwrap().inv_throughput, r(7, 150));
    let t = topo("mi250:2");
    let b = allgather(&t).unwrap();
    assert_eq!(b.inv_throughput, r(15, 166));
    check_ag_certificate(&t, &b);
    // Everything except one package pair (two GCDs joined by 4 xGMI links).
    let outside: Vec<usize> = (0..t.n_nodes()).filter(|v| !b.cut.contains(v)).collect();
    assert_eq!(outside.len(), 2, "{outside:?}");
    assert!(outside.iter().all(|&v| t.is_compute(v)));
    let link = t.link_between(outside[0], outside[1]).expect("a package pair is linked");
    assert_eq!(t.links[link].bandwidth, r(200, 1));
    assert_eq!(cut_stats(&t, &b.cut), (30, r(332, 1)));
    assert_eq!(allgather(&topo("mi250:3")).unwrap().inv_throughput, r(23, 166));
    assert_eq!(allgather(&topo("mi250:4")).unwrap().inv_throughput, r(3, 16));
}

#[test]
fn weak_node() {
    // Our weak-node example: triangle 0-1-2 at 10 each way; node 3 with 1 each way to each of them.
    let mut tb = TopologyBuilder::new("weak-node");
    let v: Vec<usize> = (0..4).map(|i| tb.compute(format!("n{i}"), None)).collect();
    for (a, b) in [(0, 1), (1, 2), (0, 2)] {
        tb.bilink(v[a], v[b], r(10, 1), 1.0);
    }
    for a in 0..3 {
        tb.bilink(v[a], v[3], r(1, 1), 1.0);
    }
    let t = tb.build().unwrap();
    assert_eq!(ag_algbw(&t), r(4, 1));
    assert_eq!(allgather(&t).unwrap().cut, vec![0, 1, 2]);
    let ar = allreduce_rs_ag(&t).unwrap();
    assert_eq!(algbw(Collective::Allreduce, 4, ar.inv_throughput), Some(r(2, 1)));
}

#[test]
fn directed_reduce_scatter_differs() {
    // 0 -> 1 at 1, 1 -> 0 at 10, 1 <-> 2 at 10. Allgather: {0} can only send at 1 (inv 1).
    // Reduce-scatter (transpose): {1, 2} receives only through 0 -> 1 at 1 (inv 2).
    let mut tb = TopologyBuilder::new("directed");
    let v: Vec<usize> = (0..3).map(|i| tb.compute(format!("n{i}"), None)).collect();
    tb.link(v[0], v[1], r(1, 1), 1.0);
    tb.link(v[1], v[0], r(10, 1), 1.0);
    tb.bilink(v[1], v[2], r(10, 1), 1.0);
    let t = tb.build().unwrap();
    let ag = allgather(&t).unwrap();
    let rs = reduce_scatter(&t).unwrap();
    assert_eq!((ag.inv_throughput, ag.cut.clone()), (r(1, 1), vec![0]));
    assert_eq!((rs.inv_throughput, rs.cut.clone()), (r(2, 1), vec![1, 2]));
    let ar = allreduce_rs_ag(&t).unwrap();
    assert_eq!((ar.inv_throughput, ar.cut), (r(3, 1), vec![1, 2]));
    // Broadcast from 0 leaves through the 1 GB/s link; reduce to 0 enters through 10.
    assert_eq!(broadcast(&t, 0).unwrap(), CutBound { inv_throughput: r(1, 1), cut: vec![0] });
    assert_eq!(reduce(&t, 0).unwrap().inv_throughput, r(1, 10));
    assert!(broadcast(&t, 3).is_err() && reduce(&t, 7).is_err());
}

#[test]
fn algbw_conventions() {
    assert_eq!(algbw(Collective::Allgather, 16, r(3, 65)), Some(r(1040, 3)));
    assert_eq!(algbw(Collective::Allgatherv, 16, r(3, 65)), Some(r(1040, 3)));
    assert_eq!(algbw(Collective::ReduceScatter, 4, r(1, 2)), Some(r(8, 1)));
    assert_eq!(algbw(Collective::Broadcast, 16, r(1, 25)), Some(r(25, 1)));
    assert_eq!(algbw(Collective::Reduce, 16, r(1, 25)), Some(r(25, 1)));
    assert_eq!(algbw(Collective::Allreduce, 16, Rat::zero()), None);
}

#[test]
fn latency_helpers() {
    assert_eq!(moore_steps(1024, 4), 5);
    assert_eq!(moore_steps(1, 4), 0);
    assert_eq!(moore_steps(2, 1), 1);
    assert_eq!(moore_steps(8, 1), 7);
    assert_eq!(moore_steps(7, 2), 2);
    assert_eq!(moore_steps(8, 2), 3);
    assert_eq!(moore_steps(5, 0), usize::MAX);
    assert_eq!(moore_steps(usize::MAX, 2), 63);
    assert_eq!(one_ported_broadcast_rounds(20), 5);
    assert_eq!(one_ported_broadcast_rounds(16), 4);
    assert_eq!(one_ported_broadcast_rounds(17), 5);
    assert_eq!(one_ported_broadcast_rounds(2), 1);
    assert_eq!(one_ported_broadcast_rounds(1), 0);
    assert_eq!(one_ported_broadcast_rounds(0), 0);
    assert_eq!(diameter_hops(&topo("ring:8")), 7);
    assert_eq!(diameter_hops(&topo("torus:4x4")), 4);
    assert_eq!(diameter_hops(&topo("hypercube:5")), 5);
    assert_eq!(diameter_hops(&topo("switch:8")), 2);
    assert_eq!(diameter_hops(&topo("dgx-a100:2")), 6);
}

/// Random flat topologies (directed and asymmetric links, up to 3 switches): at most 12
/// nodes, so the brute force over node subsets stays small.
fn arb_topology() -> impl Strategy<Value = Topology> {
    crate::testing::arb_flat(2..=9, 3, false)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]
    #[test]
    fn matches_brute_force(t in arb_topology(), root_pick in 0usize..64) {
        let ag = allgather(&t).unwrap();
        if t.n_ranks() == 1 {
            prop_assert_eq!(ag.inv_throughput, Rat::zero());
        } else {
            prop_assert_eq!(ag.inv_throughput, brute_allgather(&t));
            check_ag_certificate(&t, &ag);
            let tt = transpose(&t);
            let rs = reduce_scatter(&t).unwrap();
            prop_assert_eq!(rs.inv_throughput, brute_allgather(&tt));
            check_ag_certificate(&tt, &rs);
            let root = root_pick % t.n_ranks();
            let bc = broadcast(&t, root).unwrap();
            prop_assert_eq!(bc.inv_throughput, brute_broadcast(&t, root));
            // The certificate: the root's side, leaving a rank out, with B+ = 1 / inv.
            let (count, out) = cut_stats(&t, &bc.cut);
            prop_assert!(bc.cut.contains(&t.rank_node(root)) && count < t.n_ranks());
            prop_assert_eq!(out, Rat::from_integer(1) / bc.inv_throughput);
            prop_assert_eq!(reduce(&t, root).unwrap().inv_throughput, brute_broadcast(&tt, root));
        }
    }
}

/// The zoo's automorphisms cut the allgather bound's max flows to one per rank orbit and
/// change nothing else: the same bound and the same certifying cut, for every collective
/// built on it; a candidate that is no automorphism is ignored.
#[test]
fn symmetric_bounds_are_the_flat_bounds_with_fewer_flows() {
    use super::cuts::allgather_with_stats;
    use crate::zoo::symmetry::node_generators;
    for spec in
        ["torus:4x4", "torus:3x5", "hypercube:4", "ring:7", "dgx-a100:2", "mi250:2", "switch:6", "circulant:9:1,2"]
    {
        let t = from_spec(spec).unwrap();
        let gens = node_generators(&t);
        assert!(!gens.is_empty(), "{spec}: no candidate generators");
        let (flat, flat_stats) = allgather_with_stats(&t, &[]).unwrap();
        let (sym, sym_stats) = allgather_with_stats(&t, &gens).unwrap();
        assert_eq!(flat, sym, "{spec}: allgather");
        assert!(sym_stats.flows < flat_stats.flows, "{spec}: {} vs {} flows", sym_stats.flows, flat_stats.flows);
        assert_eq!(reduce_scatter(&t).unwrap(), reduce_scatter_symmetric(&t, &gens).unwrap(), "{spec}: rs");
        assert_eq!(allreduce_rs_ag(&t).unwrap(), allreduce_rs_ag_symmetric(&t, &gens).unwrap(), "{spec}: ar");
    }
    // Swapping two ranks of a torus is no automorphism: ignored, every rank is a sink.
    let t = from_spec("torus:3x4").unwrap();
    let mut swap: Vec<usize> = (0..t.n_nodes()).collect();
    swap.swap(t.rank_node(0), t.rank_node(5));
    let (flat, flat_stats) = allgather_with_stats(&t, &[]).unwrap();
    let (sym, sym_stats) = allgather_with_stats(&t, &[swap]).unwrap();
    assert_eq!((flat, flat_stats.flows), (sym, sym_stats.flows));
}
