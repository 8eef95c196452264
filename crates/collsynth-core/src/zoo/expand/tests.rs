//! Expansion expressions: grammar, node counts / degrees / diameters against the
//! direct-connect paper (§5, Table 3), identities with zoo families, names, and error messages.

use super::super::spec::Expr;
use super::super::testutil::shape;
use crate::rational::rat;
use crate::topology::Topology;
use crate::zoo::from_spec;

fn build(spec: &str) -> Topology {
    from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn error(spec: &str) -> String {
    from_spec(spec).map(|t| t.name).expect_err(spec).to_string()
}

/// Arcs (src, dst) of a topology, in link order.
fn arcs(t: &Topology) -> Vec<(usize, usize)> {
    t.links.iter().map(|l| (l.src, l.dst)).collect()
}

/// k*(N, d) = min{k : M_{d,k} >= N}, the Moore-optimal diameter (§3.2, App. C, Def 9/10).
fn moore_diameter(n: usize, d: usize) -> usize {
    let (mut k, mut moore, mut layer) = (0, 1, 1);
    while moore < n {
        layer *= d;
        moore += layer;
        k += 1;
    }
    k
}

#[test]
fn grammar_and_normalised_names() {
    let cases = [
        ("line(diamond)", "line(diamond)"),
        ("line^1(diamond)", "line(diamond)"),
        ("  line ^ 2 ( power ^2( diamond ) ) ", "line^2(power^2(diamond))"),
        ("product(ring:4;ring:8)", "product(ring:4; ring:8)"),
        ("power^2(product( ring:4,d=1 ;ring:8 ))", "power^2(product(ring:4,d=1; ring:8))"),
        ("degree * 2 (ring:4)", "degree*2(ring:4)"),
        ("ring:8", "ring:8"),
        (" bi ( line ( bipartite:2,2 ) ) ", "bi(line(bipartite:2,2))"),
        ("power^2(bi(ring:3))", "power^2(bi(ring:3))"),
    ];
    for (text, normal) in cases {
        let e = Expr::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(e.to_string(), normal, "{text}");
        assert_eq!(Expr::parse(normal).unwrap(), e, "{normal} parses back");
        assert_eq!(build(text).name, normal, "{text}");
    }
    let e = Expr::parse("product(line(a:1); degree*3(b:2); c)").unwrap();
    let spec = |s: &str| Box::new(Expr::Spec(s.to_string()));
    let factors = vec![Expr::Line(1, spec("a:1")), Expr::Degree(3, spec("b:2")), *spec("c")];
    assert_eq!(e, Expr::Product(factors));
    // Keywords only count when an operator follows: these are (unknown) zoo families.
    assert_eq!(Expr::parse("line:3").unwrap(), *spec("line:3"));
    assert_eq!(Expr::parse("linear").unwrap(), *spec("linear"));
    assert_eq!(Expr::parse("biring:4").unwrap(), *spec("biring:4"));
    assert_eq!(Expr::parse("bi:4").unwrap(), *spec("bi:4"));
    assert_eq!(Expr::parse("bi(line(a))").unwrap(), Expr::Bi(Box::new(Expr::Line(1, spec("a")))));
}

#[test]
fn line_graphs_of_small_graphs() {
    // Def 12: |V| = |E| = dN, degree d, diameter D + 1.
    assert_eq!(shape("line(complete:3)"), (6, 2, 2, 2));
    // L(K_{2,2}) of Fig 2: 8 nodes, degree 2, diameter 3.
    assert_eq!(shape("line(bipartite:2,2)"), (8, 2, 2, 3));
    assert_eq!(shape("line(diamond)"), (16, 2, 2, 4));
    assert_eq!(shape("line^2(diamond)"), (32, 2, 2, 5));
    assert_eq!(shape("line(dbjmod:2:3)"), (16, 2, 2, 4));
    assert_eq!(shape("line^2(dbjmod:3:2)"), (81, 3, 3, 4));
    // §5.1 (checked by us): L^3(C(16,{3,4})) has N = 1024 and T_L = 6 = its diameter.
    assert_eq!(shape("line^3(circulant:16:3,4)"), (1024, 4, 4, 6));
    // The directed cycle is the exception: L(C_n) is C_n again.
    assert_eq!(shape("line(ring:5)"), (5, 1, 1, 4));
    assert_eq!(shape("line^7(ring:5)"), (5, 1, 1, 4));
    // The line digraph of a symmetric digraph is not symmetric (App. A.6).
    assert!(!build("line(bipartite:2,2)").is_bidirectional());
}

#[test]
fn line_graphs_keep_moore_optimality() {
    // Figure 3's Moore- and BW-optimal degree-4 bases (K_{4,4}, K_5, a directed circulant on
    // 6 nodes, H(2,3)); Thm 8: every L^n stays Moore optimal, N grows 4-fold per step.
    for base in ["bipartite:4,4", "complete:5", "dcirculant:6:1,2,3,4", "hamming:2,3"] {
        let (n0, _, _, d0) = shape(base);
        assert_eq!(d0, moore_diameter(n0, 4), "{base}");
        for k in 1..=3 {
            let spec = format!("line^{k}({base})");
            let n = n0 * 4usize.pow(k as u32);
            if n > 600 {
                continue;
            }
            assert_eq!(shape(&spec), (n, 4, 4, d0 + k), "{spec}");
            assert_eq!(d0 + k, moore_diameter(n, 4), "{spec} is Moore optimal");
        }
    }
}

#[test]
fn line_graph_names_links_and_bandwidth() {
    let t = build("line(bipartite:2,2)");
    // Nodes are K_{2,2}'s links in (tail, head) order; n0 -> n2 is the first.
    let names: Vec<&str> = t.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["n0>n2", "n0>n3", "n1>n2", "n1>n3", "n2>n0", "n2>n1", "n3>n0", "n3>n1"]);
    // n0>n2 -> n2>n0 and n2>n1 (the 2-cycle back is a link, not a loop).
    assert_eq!(t.out_links(0).map(|i| t.links[i].dst).collect::<Vec<_>>(), [4, 5]);
    assert!(t.links.iter().all(|l| l.bandwidth == rat(100)));
    // L^2 nodes are walks of two links; line(line(G)) is the same graph.
    let t2 = build("line^2(bipartite:2,2)");
    assert_eq!(t2.nodes[0].name, "n0>n2>n0");
    assert_eq!(t2.nodes[15].name, "n3>n1>n3");
    let nested = build("line(line(bipartite:2,2))");
    assert_eq!(
        (nested.name.as_str(), &nested.nodes, &nested.links),
        ("line(line(bipartite:2,2))", &t2.nodes, &t2.links)
    );
    // The link (u->v) -> (v->w) carries v -> w's bandwidth: circulant:8:1,4 has 0 -> 4 at
    // 200 (a merged multi-edge), so every link into node n0>n4 has 200.
    let t = build("line(circulant:8:1,4)");
    let into = t.node_index("n0>n4").unwrap();
    assert!(t.in_links(into).iter().all(|&i| t.links[i].bandwidth == rat(200)));
    assert_eq!(t.in_links(into).len(), 3);
    // ... and each node keeps the egress of its head in G (100 + 100 + 200).
    assert!((0..t.n_nodes()).all(|v| t.egress(v) == rat(400)));
    assert_eq!(build("line(ring:4,bw=25)").links[0].bandwidth, rat(25));
}

#[test]
fn degree_expansions() {
    // Fig 4: UniRing(1,4) * 2 has 8 nodes of degree 2; diameter max(D, g) = max(3, 4) = 4.
    assert_eq!(shape("degree*2(ring:4)"), (8, 2, 2, 4));
    // Bidirectional bases: D(G*n) = max(D(G), 2) (§5.2; checked by us).
    assert_eq!(shape("degree*2(biring:5)"), (10, 4, 4, 2));
    assert_eq!(shape("degree*3(complete:3)"), (9, 6, 6, 2));
    assert_eq!(shape("degree*2(bipartite:2,2)"), (8, 4, 4, 2));
    assert_eq!(shape("degree*1(diamond)"), shape("diamond"));
    let t = build("degree*2(ring:4,bw=25)");
    let names: Vec<&str> = t.nodes.iter().take(4).map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["n0_0", "n0_1", "n1_0", "n1_1"]);
    // u_i -> v_j for all i, j, with the base link's bandwidth.
    assert_eq!(arcs(&t)[..4], [(0, 2), (0, 3), (1, 2), (1, 3)]);
    assert!(t.links.iter().all(|l| l.bandwidth == rat(25)));
}

/// (N, min degree, max degree, diameter, average distance, link count) of a topology.
fn metrics(t: &Topology) -> (usize, usize, usize, usize, f64, usize) {
    let m = t.metrics().unwrap();
    (m.n, m.min_degree, m.max_degree, m.diameter, m.average_distance, m.links)
}

#[test]
fn products_are_the_zoo_grids() {
    // A torus is the product of bidirectional rings, link for link (first factor fastest).
    let (p, torus) = (build("product(biring:4; biring:8)"), build("torus:4x8"));
    assert_eq!(metrics(&p), metrics(&torus));
    assert_eq!(p.links, torus.links);
    assert_eq!((p.nodes[1].name.as_str(), p.nodes[4].name.as_str()), ("(n1,n0)", "(n0,n1)"));
    // Hamming H(2,4) = K_4^2 and the hypercube Q_3 = K_2^3.
    let (p, h) = (build("power^2(complete:4)"), build("hamming:2,4"));
    assert_eq!((metrics(&p), &p.links), (metrics(&h), &h.links));
    let (p, q) = (build("power^3(complete:2)"), build("hypercube:3"));
    assert_eq!((metrics(&p), &p.links), (metrics(&q), &q.links));
    assert_eq!(p.nodes[6].name, "(n0,n1,n1)");
    // With unidirectional rings the product is the directed torus: degree 2, D = 3 + 7.
    assert_eq!(shape("product(ring:4; ring:8)"), (32, 2, 2, 10));
    // Degrees and diameters add; each factor keeps its bandwidth.
    assert_eq!(shape("product(complete:3; biring:5; bipartite:2,2)"), (60, 6, 6, 5));
    let t = build("product(ring:3,bw=10; ring:2,bw=20)");
    assert_eq!(
        (t.links[t.link_between(0, 1).unwrap()].bandwidth, t.links[t.link_between(0, 3).unwrap()].bandwidth),
        (rat(10), rat(20))
    );
    assert_eq!(shape("power^1(diamond)"), shape("diamond"));
}

#[test]
fn nested_expressions() {
    // power^2(diamond): 64 nodes, degree 4, diameter 6; then two line graph steps.
    assert_eq!(shape("power^2(diamond)"), (64, 4, 4, 6));
    assert_eq!(shape("line^2(power^2(diamond))"), (1024, 4, 4, 8));
    // L(K_{2,2})^2 (§5.3; checked by us): N = 64, d = 4, T_L = 6.
    assert_eq!(shape("power^2(line(bipartite:2,2))"), (64, 4, 4, 6));
    assert_eq!(shape("power^2(product(ring:4,d=1; ring:8))"), (1024, 4, 4, 20));
    // G * n has diameter max(D, shortest cycle) = max(2, 2): L(K_3) has 2-cycles uv <-> vu.
    assert_eq!(shape("degree*2(line(complete:3))"), (12, 4, 4, 2));
    assert_eq!(shape("line(degree*2(ring:4))"), (16, 2, 2, 5));
    assert_eq!(build("line(degree*2(ring:4))").nodes[0].name, "n0_0>n1_0");
    assert_eq!(build("line(product(ring:2; ring:3))").nodes[0].name, "(n0,n0)>(n1,n0)");
}

#[test]
fn parse_errors_name_position_and_problem() {
    let cases = [
        ("line^0(diamond)", "line^0(diamond): position 6: line^k: k must be between 1 and 64, got 0"),
        ("line^2(diamond", "line^2(diamond: position 7: '(' is never closed"),
        ("line(diamond))", "line(diamond)): position 14: unbalanced ')'"),
        ("line(ring:4; ring:5)", "line(ring:4; ring:5): position 12: ';' separates the factors of product(..; ..) only"),
        ("product(ring:4, ring:8)", "product(ring:4, ring:8): position 8: product(..) needs at least two factors separated by ';'"),
        ("power^2()", "power^2(): position 9: expected a topology spec"),
        ("degree*(ring:4)", "degree*(ring:4): position 8: degree*n: n: expected a whole number"),
        ("degree(ring:4)", "degree(ring:4): position 7: degree expansion is written degree*n(SPEC)"),
        ("power*2(ring:4)", "power*2(ring:4): position 6: Cartesian power is written power^n(SPEC)"),
        ("power^99999999999999999999999(ring:4)", "power^99999999999999999999999(ring:4): position 7: power^n: n must be between 1 and 64"),
        ("ring:4(x)", "ring:4(x): position 7: unexpected '(' (expansions are line^k(..), degree*n(..), power^n(..), product(..; ..), bi(..))"),
        ("bi^2(ring:4)", "bi^2(ring:4): position 3: bidirectional union is written bi(SPEC)"),
        ("bi (ring:4", "bi (ring:4: position 4: '(' is never closed"),
        ("bi()", "bi(): position 4: expected a topology spec"),
        ("bi(ring:4; ring:5)", "bi(ring:4; ring:5): position 10: ';' separates the factors of product(..; ..) only"),
        ("line(x)y", "line(x)y: position 8: unexpected 'y'"),
        ("  ", "empty topology spec"),
    ];
    for (text, msg) in cases {
        assert_eq!(error(text), msg, "{text}");
    }
}

#[test]
fn build_errors_name_the_expression() {
    assert_eq!(error("line(nosuch:3)"), "line(nosuch:3): unknown topology family 'nosuch' (see `collsynth topo list`)");
    assert_eq!(
        error("product(ring:4; torus:4x0)"),
        "product(ring:4; torus:4x0): torus:4x0: each dimension must be between 1 and 1048576, got 0"
    );
    assert_eq!(
        error("line(switch:4)"),
        "line(switch:4): line graph expansion needs a topology without switches (switch:4 has 1 switch)"
    );
    assert_eq!(
        error("degree*2(fat-tree:4)"),
        "degree*2(fat-tree:4): degree expansion needs a topology without switches (fat-tree:4 has 20 switches)"
    );
    assert!(error("product(ring:4; switch:3)").contains("Cartesian product needs a topology without switches"));
    assert!(error("power^2(line(switch:3))").contains("line graph expansion needs"));
    assert_eq!(
        error("bi(switch:4)"),
        "bi(switch:4): bidirectional union needs a topology without switches (switch:4 has 1 switch)"
    );
    assert_eq!(error("bi(nosuch)"), "bi(nosuch): unknown topology family 'nosuch' (see `collsynth topo list`)");
    assert_eq!(
        error("line^3(complete:30)"),
        "line^3(complete:30): line graph step 3 of 3: too large (21218430 links, at most 16777216)"
    );
    assert!(error("power^64(complete:3)").contains("nodes (at most 1048576)"));
    assert!(error("degree*1048576(complete:8)").contains("would have 8388608 nodes"));
}

/// Bandwidth of the link u -> v, 0 if there is none.
fn bw(t: &Topology, u: usize, v: usize) -> crate::rational::Rat {
    t.link_between(u, v).map_or(rat(0), |l| t.links[l].bandwidth)
}

#[test]
fn bidirectional_unions() {
    // bi(G) keeps G's nodes and adds every link reversed: the directed ring becomes the
    // bidirectional one and a 2-cycle-free directed circulant the undirected one, link for link.
    for (union, zoo) in [("bi(ring:5)", "biring:5"), ("bi(dcirculant:6:1,2)", "circulant:6:1,2")] {
        let (u, z) = (build(union), build(zoo));
        assert_eq!((u.name.as_str(), &u.nodes, &u.links), (union, &z.nodes, &z.links));
    }
    // Where G already has v -> u the two links merge: bandwidths add. So every link of bi(G)
    // carries bw(u -> v) + bw(v -> u) of G, and every node twice its egress in G.
    for base in ["kautz:2:6", "line(bipartite:2,2)", "diamond", "biring:5", "circulant:8:1,4", "line(ring:4,bw=25)"] {
        let (g, u) = (build(base), build(&format!("bi({base})")));
        assert!(u.is_bidirectional(), "{base}");
        assert_eq!(u.nodes, g.nodes, "{base}");
        for l in &u.links {
            assert_eq!(l.bandwidth, bw(&g, l.src, l.dst) + bw(&g, l.dst, l.src), "{base}: {l:?}");
        }
        assert!((0..g.n_nodes()).all(|v| u.egress(v) == g.egress(v) * rat(2)), "{base}");
    }
    // A.6's 2d-regular union needs G and G^T to share no link. L(K_{2,2}) has the 2-cycles
    // (u>v) <-> (v>u), so bi() merges one link pair per node: 3 distinct neighbours, not 4,
    // one of them at 200 (egress 400 as for 4 links). Kautz graphs have 2-cycles too.
    assert_eq!(shape("bi(line(bipartite:2,2))"), (8, 3, 3, 3));
    assert_eq!(build("bi(line(bipartite:2,2))").links.len(), 24);
    assert_eq!(shape("bi(kautz:2:6)"), (6, 3, 3, 2));
    assert_eq!(shape("bi(diamond)"), (8, 4, 4, 2));
    // A bidirectional G comes back with doubled bandwidth; nesting works like the others.
    assert!(build("bi(biring:5)").links.iter().all(|l| l.bandwidth == rat(200)));
    assert_eq!(shape("line(bi(ring:4))"), (8, 2, 2, 3));
    assert_eq!(shape("power^2(bi(dcirculant:6:1,2))"), shape("power^2(circulant:6:1,2)"));
}

#[test]
fn bfb_on_unions_against_the_base() {
    // A.6: half of every shard on G's schedule, half on G^T's, keeps G's (T_L, tau). BFB on
    // the union is a different schedule over the union's shortest paths: never more steps
    // (the union's diameter is at most G's), but its tau can be higher (a shorter path
    // through a thinner link). Values (steps, tau) of BFB on G and on bi(G), exact.
    use crate::rational::Rat;
    let r = |n: i128, d: i128| Rat::new(n, d);
    let cases = [
        ("line(bipartite:2,2)", (3, r(1, 1)), (3, r(1, 1))),
        ("kautz:2:6", (2, r(1, 1)), (2, r(1, 1))),
        ("diamond", (3, r(1, 1)), (2, r(7, 8))),
        ("line^2(bipartite:2,2)", (4, r(9, 8)), (4, r(17, 16))),
        // Fewer steps, more tau: one step over K_6 whose offset-1 links have 100 of 800.
        ("dcirculant:6:1,2,3,4", (2, r(5, 6)), (1, r(4, 3))),
        ("line(dcirculant:6:1,2)", (4, r(1, 1)), (3, r(13, 12))),
    ];
    for (base, g, u) in cases {
        let plan = |spec: &str| crate::synth::bfb::plan(&build(spec)).map(|p| (p.steps(), p.tau())).unwrap();
        assert_eq!(plan(base), g, "{base}");
        assert_eq!(plan(&format!("bi({base})")), u, "bi({base})");
    }
}
