//! Tests of [`profile`]: both symmetries give exactly `plan`'s steps and tau; on every
//! topology the zoo calls vertex-transitive the full plan's optima are the same at every rank
//! (what the rank-0 shortcut relies on), and on non-transitive ones they are not, so rank 0
//! alone would be wrong there. The general path's level sets (`levels`) against the plan on
//! multi-word bitsets, random digraphs with random bandwidths, and its two fallbacks.

use super::arb_digraph;
use super::*;
use crate::topology::TopologyBuilder;
use crate::zoo::{from_spec, vertex_transitive, Expr};
use num_traits::One;
use proptest::prelude::*;

fn topo(spec: &str) -> Topology {
    from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// Vertex-transitive by the zoo, with multi-edges (`circulant:8:1,4`, `circulant:8:3,5`),
/// per-dimension bandwidths, size-2 torus dimensions and every expansion that keeps it.
const TRANSITIVE: &[&str] = &[
    "ring:5",
    "biring:7,d=4",
    "complete:5",
    "bipartite:3,3",
    "circulant:8:1,4",
    "circulant:8:3,5",
    "circulant:15:1,4,5",
    "circulant:34:8,11,15",
    "circulant:64:6,7",
    "dcirculant:16:1,7",
    "dcirculant:6:1,2,3,4",
    "dcirculant:40:1,9,10,11",
    "traff:13",
    "torus:4x4",
    "torus:3x4,bw=50/100",
    "torus:3x3x2",
    "torus:4x6x5",
    "twisted-torus:8x4",
    "twisted-torus:6x3,twist=1",
    "hypercube:4",
    "hamming:2,4",
    "power^2(circulant:7:1,2)",
    "power^2(dcirculant:5:1,2)",
    "product(ring:3; dcirculant:5:1,2)",
    "degree*2(dcirculant:5:1,2)",
    "bi(dcirculant:9:1,3)",
];

/// Not vertex-transitive (ranks differ): the shortcut must not be taken.
/// Some need several bitset words (N > 64); `mesh:30x30` (diameter 58) and `bipartite:70,72`
/// (72 in-links) take the plan's path instead of the level sets.
const GENERAL: &[&str] = &[
    "kautz:2:12",
    "kautz:4:64",
    "kautz:3:100",
    "kautz:5:131",
    "debruijn:2:16",
    "debruijn:2:128",
    "mesh:3x3",
    "mesh:9x8",
    "mesh:30x30",
    "bipartite:70,72",
    "diamond",
    "line(circulant:7:1,2)",
    "line^2(dcirculant:8:1,3)",
    "drg:petersen",
    "drg:doubled-odd4",
    "product(kautz:2:6; ring:4)",
];

fn plan_profile(t: &Topology) -> Profile {
    let p = plan(t).unwrap();
    Profile { steps: p.steps(), tau: p.tau() }
}

#[test]
fn transitive_topologies_have_the_same_optima_at_every_rank() {
    for spec in TRANSITIVE {
        assert!(vertex_transitive(&Expr::parse(spec).unwrap()), "{spec}");
        let p = plan(&topo(spec)).unwrap();
        for u in 0..p.n {
            for t in 1..=p.steps() {
                assert_eq!(p.optimum(u, t), p.optimum(0, t), "{spec}: rank {u}, step {t}");
            }
        }
    }
}

#[test]
fn shortcut_equals_the_general_path_and_the_plan() {
    for spec in TRANSITIVE {
        let t = topo(spec);
        let expected = plan_profile(&t);
        assert_eq!(profile(&t, Symmetry::Unknown).unwrap(), expected, "{spec}: general path");
        assert_eq!(profile(&t, Symmetry::VertexTransitive).unwrap(), expected, "{spec}: rank-0 shortcut");
    }
}

#[test]
fn general_path_equals_the_plan_where_ranks_differ() {
    for spec in GENERAL {
        assert!(!vertex_transitive(&Expr::parse(spec).unwrap()), "{spec}");
        let t = topo(spec);
        assert_eq!(profile(&t, Symmetry::Unknown).unwrap(), plan_profile(&t), "{spec}");
    }
}

/// The zoo's reflection x -> N - 1 - x is an automorphism of every Kautz and de Bruijn graph
/// (and their unions) it is claimed for, and solving one rank per orbit gives the plan's
/// values; a permutation that is not an automorphism is refused (every rank solved).
#[test]
fn reflections_of_kautz_and_de_bruijn_graphs() {
    let mut specs: Vec<String> = Vec::new();
    for d in 2..=6 {
        specs.extend((d + 1..=40).map(|n| format!("kautz:{d}:{n}")));
        specs.extend((d..=40).map(|n| format!("debruijn:{d}:{n}")));
    }
    specs.extend(
        ["bi(kautz:2:10)", "bi(debruijn:3:20)", "kautz:4:1024", "kautz:16:331", "debruijn:2:128"].map(String::from),
    );
    for spec in &specs {
        let t = topo(spec);
        let sigma = crate::zoo::symmetry::rank_automorphism(&Expr::parse(spec).unwrap(), t.n_ranks()).expect(spec);
        assert!(crate::synth::bfb::profile::is_automorphism(&t, &sigma), "{spec}");
    }
    for spec in ["kautz:2:12", "kautz:3:100", "kautz:5:131", "debruijn:2:16", "debruijn:2:128", "kautz:4:1024"] {
        let t = topo(spec);
        let sigma: Vec<usize> = (0..t.n_ranks()).rev().collect();
        assert_eq!(profile_with_automorphism(&t, &sigma).unwrap(), plan_profile(&t), "{spec}");
    }
    // Not automorphisms: a rotation of a Kautz graph, a reflection of a mesh; a non-permutation.
    let t = topo("kautz:3:100");
    let rotation: Vec<usize> = (0..100).map(|x| (x + 1) % 100).collect();
    assert!(!crate::synth::bfb::profile::is_automorphism(&t, &rotation));
    assert_eq!(profile_with_automorphism(&t, &rotation).unwrap(), plan_profile(&t));
    let mesh = topo("mesh:3x4");
    let flip: Vec<usize> = (0..12).map(|x| 11 - x).collect();
    assert!(crate::synth::bfb::profile::is_automorphism(&mesh, &flip), "a 3x4 mesh's half-turn");
    let swap: Vec<usize> = (0..12).map(|x| if x < 2 { 1 - x } else { x }).collect();
    assert!(!crate::synth::bfb::profile::is_automorphism(&mesh, &swap));
    assert!(!crate::synth::bfb::profile::is_automorphism(&t, &vec![0; 100]));
}

/// A strongly connected digraph on `n` ranks (a ring plus pseudo-random links, bandwidths 1
/// to 3): several bitset words and uneven loads.
fn scrambled(n: usize, extra: usize, seed: u64) -> Topology {
    let mut x = seed;
    let mut next = |m: usize| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) as usize % m
    };
    let mut b = TopologyBuilder::new("scrambled");
    for i in 0..n {
        b.compute(format!("v{i}"), None);
    }
    for i in 0..n {
        b.link(i, (i + 1) % n, Rat::from_integer(1 + next(3) as i128), 1.0);
    }
    for _ in 0..extra {
        let (u, v) = (next(n), next(n));
        if u != v {
            b.link(u, v, Rat::from_integer(1 + next(3) as i128), 1.0);
        }
    }
    b.build().unwrap()
}

#[test]
fn level_sets_equal_the_plan_on_scrambled_digraphs() {
    for (n, extra, seed) in [(65, 200, 1), (130, 500, 2), (200, 1500, 3), (300, 600, 4)] {
        let t = scrambled(n, extra, seed);
        assert_eq!(profile(&t, Symmetry::Unknown).unwrap(), plan_profile(&t), "n {n} seed {seed}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn level_sets_equal_the_plan_on_random_digraphs(t in arb_digraph()) {
        prop_assert_eq!(profile(&t, Symmetry::Unknown).unwrap(), plan_profile(&t));
    }
}

#[test]
fn the_shortcut_would_be_wrong_where_ranks_differ() {
    // Diamond's rank 0 alone would give 7/8 (the paper's figure); another rank needs 1.
    let t = topo("diamond");
    assert_eq!(profile(&t, Symmetry::VertexTransitive).unwrap().tau, Rat::new(7, 8));
    assert_eq!(plan_profile(&t).tau, Rat::one());
    // A mesh corner sees every source through at most two links, the centre through four.
    let p = plan(&topo("mesh:3x3")).unwrap();
    assert!((0..p.n).any(|u| (1..=p.steps()).any(|s| p.optimum(u, s) != p.optimum(0, s))));
}

#[test]
fn exact_values() {
    let r = Rat::new;
    let cases = [
        ("torus:4x4", 4, r(15, 16)),
        ("hypercube:4", 4, r(15, 16)),
        // The erratum to Conjecture 1 (docs/bfb.md): not bandwidth-optimal.
        ("circulant:15:1,4,5", 2, r(1, 1)),
        ("circulant:34:8,11,15", 5, r(35, 34)),
        ("bi(dcirculant:6:1,2,3,4)", 1, r(4, 3)),
        ("kautz:2:12", 3, r(7, 6)),
    ];
    for (spec, steps, tau) in cases {
        let t = topo(spec);
        let symmetry =
            if vertex_transitive(&Expr::parse(spec).unwrap()) { Symmetry::VertexTransitive } else { Symmetry::Unknown };
        assert_eq!(profile(&t, symmetry).unwrap(), Profile { steps, tau }, "{spec}");
    }
}

/// The circulant profile without a topology equals the shortcut on the built one: every
/// directed and undirected generator set of up to 3 offsets on small N (multi-edges at
/// N/2 among them), larger sets, larger N, and the disconnected sets it refuses.
#[test]
fn circulant_without_a_topology_equals_the_built_one() {
    let check = |n: usize, offsets: &[usize], directed: bool| {
        let family = if directed { "dcirculant" } else { "circulant" };
        let list: Vec<String> = offsets.iter().map(usize::to_string).collect();
        let spec = format!("{family}:{n}:{}", list.join(","));
        let mut shifts = offsets.to_vec();
        if !directed {
            shifts.extend(offsets.iter().map(|&o| n - o));
        }
        let fast = crate::synth::bfb::profile::circulant(n, &shifts);
        match from_spec(&spec) {
            Ok(t) => assert_eq!(fast, Some(profile(&t, Symmetry::VertexTransitive).unwrap()), "{spec}"),
            Err(_) => assert_eq!(fast, None, "{spec} does not build"),
        }
    };
    for n in 2..=24 {
        for a in 1..n {
            for directed in [true, false] {
                check(n, &[a], directed);
                for b in a + 1..n {
                    check(n, &[a, b], directed);
                    for c in (b + 1..n).step_by(3) {
                        check(n, &[a, b, c], directed);
                    }
                }
            }
        }
    }
    for (n, offsets) in [
        (100, &[1, 10, 11, 12][..]),
        (128, &[3, 4, 50, 64]),
        (331, &[1, 7, 19, 40, 41, 42, 43, 100]),
        (1000, &[5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]),
    ] {
        check(n, offsets, true);
        check(n, offsets, false);
    }
}

#[test]
fn switches_are_refused() {
    let t = topo("switch:4");
    for symmetry in [Symmetry::Unknown, Symmetry::VertexTransitive] {
        assert!(profile(&t, symmetry).is_err());
    }
}
