//! Tests of the expansion mappings against the paper's closed forms, exactly: Def 1 applied
//! k = 1..3 times gives base + k steps and Cor 10.1's tau, which is also plain BFB's optimum
//! on the expanded graph (Thm 10); Def 2 gives base + 1 steps and Thm 11's tau. Every mapped
//! schedule passes `verify`.

use super::super::{allgather, plan};
use super::*;
use crate::cost::latency_bandwidth::LatencyBandwidthCosts;
use crate::synth::{self, Request};
use crate::topology::TopologyBuilder;
use crate::verify::verify;

fn topo(spec: &str) -> Topology {
    from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn detail(s: &Schedule, key: &str) -> Option<String> {
    s.provenance.details.text(key)
}

/// The mapped allgather on `spec`, verified, with its costs.
fn mapped(spec: &str) -> (Topology, Schedule, LatencyBandwidthCosts) {
    let t = topo(spec);
    let s = mapped_allgather(&t).unwrap().unwrap_or_else(|| panic!("{spec}: not mapped"));
    verify(&s, &t).unwrap_or_else(|v| panic!("{spec}: {v}"));
    let c = latency_bandwidth_costs(&s, &t);
    (t, s, c)
}

/// Costs of plain BFB on `spec`.
fn base_costs(spec: &str) -> (Topology, LatencyBandwidthCosts) {
    let t = topo(spec);
    let s = allgather(&t).unwrap();
    let c = latency_bandwidth_costs(&s, &t);
    (t, c)
}

/// Cor 10.1 for `line^k(base)`, k = 1..=max_k: steps base + k and tau base + d/(d-1) (1/N -
/// 1/(d^k N)), equal to plain BFB's optimum on the expanded graph (Thm 10).
fn check_line(base: &str, max_k: u32) {
    let (g, bc) = base_costs(base);
    let (n, d) = (g.n_ranks() as i128, g.out_links(0).len() as i128);
    for k in 1..=max_k {
        let spec = format!("line^{k}({base})");
        let (t, s, c) = mapped(&spec);
        let tau = bc.bandwidth_factor + Rat::new(d, d - 1) * (Rat::new(1, n) - Rat::new(1, d.pow(k) * n));
        assert_eq!((c.latency_steps, c.bandwidth_factor), (bc.latency_steps + k as usize, tau), "{spec}");
        let p = plan(&t).unwrap();
        assert_eq!((p.steps(), p.tau()), (c.latency_steps, tau), "{spec}: plain BFB differs (Thm 10)");
        let times = if k == 1 { String::new() } else { format!(" (x{k})") };
        let want = format!("\"line-graph mapping{times} of bfb({base})\"");
        assert_eq!(detail(&s, "construction"), Some(want), "{spec}");
        assert_eq!(detail(&s, "tau"), Some(format!("\"{}\"", crate::rational::to_fraction_string(&tau))));
    }
}

#[test]
fn line_graph_of_k22_is_figure_2c() {
    // Def 1 with Cor 10.1 (our check): k = 3, tau = 1 on L(K_{2,2}); k = 4, tau = 9/8 on L^2.
    let (t, s, c) = mapped("line(bipartite:2,2)");
    assert_eq!((c.latency_steps, c.bandwidth_factor), (3, Rat::one()));
    // Step 1 of Fig 2c: ca sends its whole shard to ac and ad.
    let ca = t.node_index("n2>n0").unwrap();
    let mut sent: Vec<(String, Rat)> = s
        .transfers
        .iter()
        .filter(|x| x.step == Some(0) && x.src == ca)
        .map(|x| (t.nodes[x.dst].name.clone(), s.pieces[x.piece].len()))
        .collect();
    sent.sort();
    let mut to: Vec<String> = sent.iter().map(|(n, _)| n.clone()).collect();
    to.dedup();
    assert_eq!(to, ["n0>n2", "n0>n3"]);
    for name in &to {
        assert_eq!(sent.iter().filter(|(n, _)| n == name).map(|(_, l)| *l).sum::<Rat>(), Rat::one());
    }
    let (_, _, c) = mapped("line^2(bipartite:2,2)");
    assert_eq!((c.latency_steps, c.bandwidth_factor), (4, Rat::new(9, 8)));
}

#[test]
fn line_graphs_of_bipartite_bases() {
    check_line("bipartite:2,2", 3);
    check_line("bipartite:4,4", 3);
}

#[test]
fn line_graphs_of_complete_and_hamming() {
    check_line("complete:5", 3);
    check_line("hamming:2,3", 3);
}

#[test]
fn line_graphs_of_circulants() {
    check_line("dcirculant:6:1,2,3,4", 3);
    check_line("circulant:16:3,4", 3);
}

#[test]
fn line_graphs_of_diamond_and_kautz() {
    check_line("diamond", 3);
    check_line("kautz:2:6", 3);
}

#[test]
fn notes_values_of_line_graphs() {
    // Tables 7 and 4: L(K_{4,4}) 1, L^2(K_{4,4}) 1.03125, L^3(C(16,{3,4})) 6 steps, 1.01953.
    assert_eq!(mapped("line(bipartite:4,4)").2.bandwidth_factor, Rat::one());
    assert_eq!(mapped("line^2(bipartite:4,4)").2.bandwidth_factor, Rat::new(33, 32));
    let c = mapped("line^3(circulant:16:3,4)").2;
    let tau = Rat::new(15, 16) + Rat::new(4, 3) * Rat::new(63, 1024);
    assert_eq!((c.latency_steps, c.bandwidth_factor), (6, tau));
}

/// Thm 11 for `degree*n(base)`: steps base + 1, tau base + (n-1)/(n N).
fn check_degree(base: &str, n: usize, want: (usize, Rat)) {
    let (g, bc) = base_costs(base);
    let spec = format!("degree*{n}({base})");
    let (_, s, c) = mapped(&spec);
    let nn = n as i128;
    let tau = bc.bandwidth_factor + Rat::new(nn - 1, nn * g.n_ranks() as i128);
    assert_eq!((c.latency_steps, c.bandwidth_factor), (bc.latency_steps + 1, tau), "{spec}");
    assert_eq!((c.latency_steps, c.bandwidth_factor), want, "{spec}");
    let want = format!("\"degree-expansion mapping (n={n}) of bfb({base})\"");
    assert_eq!(detail(&s, "construction"), Some(want));
}

#[test]
fn degree_expansions_follow_theorem_11() {
    // Thm 11 and Table 5: UniRing(1,4) * 2: 4 steps, 7/8; K_3 * 2: 2 steps, 5/6 (both optimal).
    check_degree("ring:4", 2, (4, Rat::new(7, 8)));
    check_degree("ring:4", 3, (4, Rat::new(11, 12)));
    check_degree("complete:3", 2, (2, Rat::new(5, 6)));
    check_degree("bipartite:2,2", 3, (3, Rat::new(11, 12)));
    check_degree("bipartite:2,2", 2, (3, Rat::new(7, 8)));
}

#[test]
fn degree_one_is_the_base_schedule() {
    let (_, bc) = base_costs("diamond");
    assert_eq!(mapped("degree*1(diamond)").2, bc);
}

#[test]
fn nested_expansions_compose_the_closed_forms() {
    // L(UniRing(1,4) * 2): N = 8, d = 2: 4 + 1 steps, 7/8 + 1/8.
    let (_, s, c) = mapped("line(degree*2(ring:4))");
    assert_eq!((c.latency_steps, c.bandwidth_factor), (5, Rat::one()));
    let want = "\"line-graph mapping of degree-expansion mapping (n=2) of bfb(ring:4)\"";
    assert_eq!(detail(&s, "construction").as_deref(), Some(want));
    // L(K_{2,2}) * 2: 3 + 1 steps, 1 + 1/16.
    let (_, _, c) = mapped("degree*2(line(bipartite:2,2))");
    assert_eq!((c.latency_steps, c.bandwidth_factor), (4, Rat::new(17, 16)));
    // line(line(G)) is line^2(G), mapped twice; line^2 of a product maps BFB on the product.
    assert_eq!(mapped("line(line(bipartite:2,2))").2, mapped("line^2(bipartite:2,2)").2);
    // 64 nested line graphs of a directed cycle: the cycle again, its node names the walks of
    // 64 links (mapping level by level once doubled them: 2^64 bytes at the last level).
    let deep = format!("{}ring:6{}", "line(".repeat(64), ")".repeat(64));
    let (t, s, c) = mapped(&deep);
    assert_eq!((t.n_ranks(), c), (6, base_costs("ring:6").1));
    assert!(t.nodes.iter().all(|n| n.name.split('>').count() == 65), "{}", t.nodes[0].name);
    assert_eq!(detail(&s, "construction").as_deref(), Some("\"line-graph mapping (x64) of bfb(ring:6)\""));
    let (_, s, _) = mapped("line(product(ring:3; ring:3))");
    assert_eq!(detail(&s, "construction").as_deref(), Some("\"line-graph mapping of bfb(product(ring:3; ring:3))\""));
}

#[test]
fn the_registered_algorithm_maps_only_real_expansions() {
    let req = Request::default();
    let t = topo("line^2(bipartite:2,2)");
    let s = synth::run(&t, Collective::Allgather, "bfb", &req).unwrap();
    assert!(detail(&s, "construction").is_some());
    // Products and plain specs: BFB directly; reduce-scatter / allreduce: plain BFB too.
    for spec in ["power^2(complete:3)", "bipartite:2,2"] {
        let s = synth::run(&topo(spec), Collective::Allgather, "bfb", &req).unwrap();
        assert_eq!(detail(&s, "construction"), None, "{spec}");
    }
    let s = synth::run(&t, Collective::ReduceScatter, "bfb", &req).unwrap();
    assert_eq!(detail(&s, "construction"), None);
    // A topology that only has an expansion's name is not mapped.
    let ring = topo("ring:8");
    let mut b = TopologyBuilder::new("line(bipartite:2,2)");
    for n in &ring.nodes {
        b.compute(n.name.clone(), None);
    }
    for l in &ring.links {
        b.link(l.src, l.dst, l.bandwidth, l.latency);
    }
    let fake = b.build().unwrap();
    assert!(mapped_allgather(&fake).unwrap().is_none());
    let s = synth::run(&fake, Collective::Allgather, "bfb", &req).unwrap();
    verify(&s, &fake).unwrap();
    assert_eq!((detail(&s, "construction"), s.n_steps()), (None, Some(7)));
}
