//! Tests of BFB: the paper's Figure 5 by hand, the families the paper calls BW-optimal (tori,
//! hypercubes, Hamming, two-offset circulants, twisted tori, DRGs), generalized Kautz against
//! the paper's tau values (Tables 4 and 7) and Theorem 21, a counterexample to Conjecture 1 (it fails for
//! C(15,{1,4,5})), reduce-scatter / allreduce by transposition, and a property test against
//! the brute-force Hall ratio on random digraphs. Every schedule passes `verify`, and its
//! bandwidth term recomputed from the transfers equals the plan's optima exactly.

mod bi;
mod chunked;
mod compact;
mod hetero;
mod profile;
mod time_only;

use super::solve::{brute_force, optimum, optimum_from, solve, Subproblem};
use super::*;
use crate::bound::latency::{diameter_hops, moore_steps};
use crate::ir::transform::transpose;
use crate::ir::Schedule;
use crate::rational::to_fraction_string;
use crate::synth::{self, Request};
use crate::topology::metrics::bfs_hops;
use crate::topology::TopologyBuilder;
use crate::verify::verify;
use crate::zoo::from_spec;
use num_traits::Zero;
use proptest::prelude::*;

fn r(p: i128, q: i128) -> Rat {
    Rat::new(p, q)
}

fn topo(spec: &str) -> Topology {
    from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// Sum over steps of the busiest link's (fraction of M) / bandwidth, from the transfers alone.
pub(super) fn step_cost(s: &Schedule, topo: &Topology) -> Rat {
    let mut per_step: std::collections::BTreeMap<u32, Vec<Rat>> = Default::default();
    for t in &s.transfers {
        let loads =
            per_step.entry(t.step.expect("a step schedule")).or_insert_with(|| vec![Rat::zero(); topo.links.len()]);
        for &l in &t.route {
            loads[l] += s.piece_fraction(t.piece);
        }
    }
    per_step
        .values()
        .map(|loads| loads.iter().zip(&topo.links).map(|(x, l)| x / l.bandwidth).max().unwrap_or_default())
        .sum()
}

fn detail(s: &Schedule, key: &str) -> String {
    s.provenance.details.text(key).unwrap_or_else(|| panic!("no detail {key}"))
}

/// BFB allgather of `t`: verified, D steps, and its exact step cost equal to the plan's.
fn checked_allgather(t: &Topology) -> (BfbPlan, Schedule) {
    let p = plan(t).unwrap();
    let s = allgather(t).unwrap();
    verify(&s, t).unwrap_or_else(|v| panic!("{}: {v}", t.name));
    let n = t.n_ranks();
    assert_eq!(p.steps(), diameter_hops(t), "{}", t.name);
    assert_eq!(s.n_steps().unwrap_or(0) as usize, p.steps(), "{}", t.name);
    assert_eq!(step_cost(&s, t), p.load_sum() / Rat::from_integer(n as i128), "{}", t.name);
    assert_eq!(detail(&s, "tau"), format!("\"{}\"", to_fraction_string(&p.tau())));
    assert_eq!(detail(&s, "bandwidth_optimal"), p.bandwidth_optimal().to_string());
    (p, s)
}

/// Steps and tau of the verified allgather on `spec`.
fn steps_tau(spec: &str) -> (usize, Rat) {
    let (p, _) = checked_allgather(&topo(spec));
    (p.steps(), p.tau())
}

fn assert_bw_optimal(spec: &str, steps: usize) {
    let t = topo(spec);
    let (p, _) = checked_allgather(&t);
    let n = t.n_ranks() as i128;
    assert_eq!((p.steps(), p.tau()), (steps, r(n - 1, n)), "{spec}");
    assert!(p.bandwidth_optimal(), "{spec}");
}

// ---------------------------------------------------------------------------------------
// The solver

#[test]
fn figure5_solver() {
    // u2's LP: v1 via {w1, w2}, v2 via {w2, w3}, unit links: U = 2/3, every link at 2/3.
    let p = Subproblem::new(vec![1, 1, 1], &[(&[0, 1], 1), (&[1, 2], 1)]);
    let s = solve(&p);
    assert_eq!((s.optimum, s.unit), (r(2, 3), 3));
    assert_eq!(s.flows, vec![vec![(0, 2), (1, 1)], vec![(1, 1), (2, 2)]]);
    assert_eq!(brute_force(&p), r(2, 3));
    // u1's LP: v1 via {w1, w2}, v2 via {w2} only: U = 1.
    let p = Subproblem::new(vec![1, 1], &[(&[0, 1], 1), (&[1], 1)]);
    assert_eq!(solve(&p).optimum, r(1, 1));
}

#[test]
fn newton_needs_several_rounds() {
    // J = all gives 7 / 10, but the 4 sources that only sender 0 (capacity 1) can serve
    // need U = 4: the first cut jumps there.
    let p = Subproblem::new(vec![1, 3, 6], &[(&[0], 4), (&[1, 2], 3)]);
    let s = solve(&p);
    assert_eq!(s.optimum, r(4, 1));
    assert_eq!(s.rounds, 2);
    assert_eq!(brute_force(&p), r(4, 1));
    // No sources: 0.
    assert_eq!(solve(&Subproblem::new(vec![1], &[])).optimum, Rat::zero());
}

#[test]
fn wide_sender_sets() {
    // 70 senders (two mask words), one class using all of them, one using the last only.
    let all: Vec<u32> = (0..70).collect();
    let p = Subproblem::new(vec![1; 70], &[(&all, 139), (&[69], 1)]);
    assert_eq!(solve(&p).optimum, r(2, 1));
    assert_eq!(brute_force(&p), r(2, 1));
}

fn arb_problem() -> impl Strategy<Value = Subproblem> {
    (1usize..=6).prop_flat_map(|senders| {
        let caps = proptest::collection::vec(1i128..=5, senders);
        let class = (1u64..(1 << senders), 1i128..=4);
        (caps, proptest::collection::vec(class, 0..=6)).prop_map(move |(caps, classes)| {
            let sets: Vec<(Vec<u32>, i128)> =
                classes.iter().map(|&(m, c)| ((0..senders as u32).filter(|w| m >> w & 1 == 1).collect(), c)).collect();
            let refs: Vec<(&[u32], i128)> = sets.iter().map(|(s, c)| (s.as_slice(), *c)).collect();
            Subproblem::new(caps, &refs)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// The optimum is the Hall ratio and the flows are a feasible assignment attaining it.
    #[test]
    fn solver_matches_brute_force(p in arb_problem()) {
        let s = solve(&p);
        prop_assert_eq!(s.optimum, brute_force(&p));
        let mut load = vec![0i128; p.caps.len()];
        for (k, flow) in s.flows.iter().enumerate() {
            let allowed = p.senders(k);
            prop_assert_eq!(flow.iter().map(|f| f.1).sum::<i128>(), p.counts[k] * s.unit);
            for &(w, units) in flow {
                prop_assert!(allowed.contains(&w) && units > 0);
                load[w as usize] += units;
            }
        }
        for (w, &l) in load.iter().enumerate() {
            prop_assert!(Rat::from_integer(l) <= s.optimum * Rat::from_integer(p.caps[w] * s.unit));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Newton from the ratio of any set of classes (at most U*) ends at the solver's U*, as
    /// [`optimum`] does from the ratio of all sources.
    #[test]
    fn optimum_from_any_set(p in arb_problem(), pick in any::<u32>()) {
        let exact = solve(&p).optimum;
        let j: Vec<usize> = (0..p.n_classes()).filter(|k| pick >> (k % 32) & 1 == 1).collect();
        prop_assume!(!j.is_empty());
        let count: i128 = j.iter().map(|&k| p.counts[k]).sum();
        let senders = j.iter().fold(0u64, |m, &k| m | p.masks[k]);
        let cap: i128 = (0..p.caps.len()).filter(|&w| senders >> w & 1 == 1).map(|w| p.caps[w]).sum();
        prop_assert_eq!(optimum_from(&p, Rat::new(count, cap)), exact);
        prop_assert_eq!(optimum(&p), exact);
    }
}

// ---------------------------------------------------------------------------------------
// Figure 5 as a topology

/// The Figure 5 neighbourhood at t = 2: v1 -> {w1, w2}, v2 -> {w2, w3}, u1 <- {w1, w2},
/// u2 <- {w1, w2, w3}, closed by u1 -> v1 and u2 -> v2. Link w2 -> u2 has bandwidth `w2u2`.
fn figure5(w2u2: Rat) -> Topology {
    let mut b = TopologyBuilder::new("figure5");
    let names = ["v1", "v2", "w1", "w2", "w3", "u1", "u2"];
    let id: Vec<usize> = names.iter().map(|n| b.compute(*n, None)).collect();
    let [v1, v2, w1, w2, w3, u1, u2] = id[..] else { unreachable!() };
    let one = Rat::from_integer(1);
    for (a, c) in [(v1, w1), (v1, w2), (v2, w2), (v2, w3), (w1, u1), (w2, u1), (w1, u2), (w3, u2), (u1, v1), (u2, v2)] {
        b.link(a, c, one, 1.0);
    }
    b.link(w2, u2, w2u2, 1.0);
    b.build().unwrap()
}

#[test]
fn figure5_topology() {
    let t = figure5(Rat::from_integer(1));
    let (p, s) = checked_allgather(&t);
    let (v1, v2, u1, u2) = (0, 1, 5, 6);
    assert_eq!(p.optimum(u2, 2), r(2, 3));
    assert_eq!(p.optimum(u1, 2), r(1, 1));
    // w1 sends [0, 2/3) of v1 and w2 the rest; w2 sends [0, 1/3) of v2 and w3 the rest.
    assert_eq!(p.cuts(v1), &[r(2, 3)]);
    assert_eq!(p.cuts(v2), &[r(1, 3)]);
    assert_eq!(s.pieces.iter().filter(|pc| pc.shard == v1).count(), 2);
    // Heterogeneous: w2 -> u2 twice as fast: U = 2 / (1 + 2 + 1) = 1/2.
    let (p, _) = checked_allgather(&figure5(Rat::from_integer(2)));
    assert_eq!(p.optimum(u2, 2), r(1, 2));
}

// ---------------------------------------------------------------------------------------
// Families

#[test]
fn tori_are_bandwidth_optimal_in_sum_of_half_dims_steps() {
    for (spec, dims) in [
        ("torus:4x4", &[4, 4][..]),
        ("torus:3x5", &[3, 5]),
        ("torus:4x6", &[4, 6]),
        ("torus:3x4", &[3, 4]),
        ("torus:3x3x3", &[3, 3, 3]),
        ("torus:4x6x5", &[4, 6, 5]),
    ] {
        assert_bw_optimal(spec, dims.iter().map(|d| d / 2).sum());
    }
    // A size-2 dimension is one link pair (degree 5): 3 steps, 17/18 (Thm 13 needs the simple graph).
    assert_bw_optimal("torus:3x3x2", 3);
}

#[test]
fn rings_complete_and_bipartite() {
    assert_eq!(steps_tau("complete:5"), (1, r(4, 5)));
    assert_eq!(steps_tau("bipartite:2,2"), (2, r(3, 4)));
    assert_eq!(steps_tau("bipartite:4,4"), (2, r(7, 8)));
    // BFB ring: floor(N/2) steps, both parities BW-optimal; doubled links (d = 4) too.
    assert_bw_optimal("biring:7", 3);
    assert_bw_optimal("biring:8", 4);
    assert_bw_optimal("biring:12", 6);
    assert_bw_optimal("biring:9,d=4", 4);
    assert_bw_optimal("ring:5", 4);
}

#[test]
fn hypercubes_and_hamming_graphs() {
    for n in [3, 4, 6] {
        assert_bw_optimal(&format!("hypercube:{n}"), n);
    }
    assert_bw_optimal("hamming:2,3", 2);
    assert_bw_optimal("hamming:3,3", 3);
}

#[test]
fn two_offset_circulants_are_bandwidth_optimal() {
    // The paper's Table 5 examples, then every connected simple C(n, {a, b}) with n <= 24.
    assert_bw_optimal("circulant:7:2,3", 2);
    assert_bw_optimal("circulant:11:2,3", 2);
    assert_bw_optimal("circulant:12:2,3", 2);
    assert_bw_optimal("circulant:16:3,4", 3);
    let gcd = |a: usize, b: usize| num_integer::Integer::gcd(&a, &b);
    for n in 5usize..=24 {
        for a in 1..n.div_ceil(2) {
            for b in a + 1..n.div_ceil(2) {
                if gcd(n, gcd(a, b)) == 1 {
                    let t = topo(&format!("circulant:{n}:{a},{b}"));
                    let p = plan(&t).unwrap();
                    assert!(p.bandwidth_optimal(), "C({n}, {{{a}, {b}}}): tau {}", p.tau());
                }
            }
        }
    }
}

#[test]
fn directed_circulants_twisted_tori_and_drgs() {
    // Directed circulant on Z_{d+2} with d of the d+1 offsets: 2 steps, BW-optimal.
    assert_bw_optimal("dcirculant:4:1,2", 2);
    assert_bw_optimal("dcirculant:6:1,2,3,5", 2);
    assert_bw_optimal("dcirculant:8:1,2,3,4,5,7", 2);
    // Rectangular twisted tori 2a x a (§6.2).
    assert_bw_optimal("twisted-torus:4x2", 2);
    assert_bw_optimal("twisted-torus:8x4", 4);
    assert_bw_optimal("twisted-torus:10x5", 5);
    // Distance-regular graphs (App. F.3, Table 8).
    for (name, steps) in
        [("octahedron", 2), ("k55-minus-i", 3), ("line-petersen", 3), ("q4", 4), ("odd4", 3), ("petersen", 2)]
    {
        assert_bw_optimal(&format!("drg:{name}"), steps);
    }
}

#[test]
fn generalized_kautz() {
    // The paper's values (K(d, n) by Cor 10.1; Pi_{4,64} from Table 7). The zoo drops
    // self-loops; tau's B is the largest ingress, i.e. the loop-counted degree of the paper.
    for (spec, steps, tau) in [
        ("kautz:2:3", 1, r(2, 3)),
        ("kautz:4:5", 1, r(4, 5)),
        ("kautz:2:6", 2, r(1, 1)),
        ("kautz:2:12", 3, r(7, 6)),
        ("kautz:2:24", 4, r(5, 4)),
        ("kautz:3:36", 3, r(13, 12)),
        ("kautz:4:80", 3, r(21, 20)),
        ("kautz:4:64", 3, r(21, 16)),
    ] {
        assert_eq!(steps_tau(spec), (steps, tau), "{spec}");
    }
    // BW-optimal only as the complete graph (Table 9).
    assert!(plan(&topo("kautz:3:4")).unwrap().bandwidth_optimal());
    let p = plan(&topo("kautz:4:64")).unwrap();
    assert!(!p.bandwidth_optimal());
    // ... though the ranks whose loop was dropped have 3 in-links, and T_B meets their bound.
    assert!(p.meets_ingress_bound());
    // Theorem 21: BFB takes D steps, at most one more than the Moore bound.
    for (d, top) in [(2usize, 40usize), (3, 40), (4, 40)] {
        for m in d + 1..=top {
            let t = topo(&format!("kautz:{d}:{m}"));
            let p = plan(&t).unwrap();
            assert_eq!(p.steps(), diameter_hops(&t));
            assert!(p.steps() <= moore_steps(m, d) + 1, "kautz:{d}:{m}");
        }
    }
    checked_allgather(&topo("kautz:3:20"));
    checked_allgather(&topo("kautz:4:30"));
}

#[test]
fn large_kautz_and_de_bruijn_plans() {
    // Table 7 (to 3 decimals there): Pi_{4,1024} D = 5, tau 1.3320; DBJ(4,4) D = 4, tau 1.3281 (= 85/64).
    let p = plan(&topo("kautz:4:1024")).unwrap();
    assert_eq!(p.steps(), 5);
    assert_eq!(format!("{:.4}", crate::rational::to_f64(&p.tau())), "1.3320");
    let p = plan(&topo("debruijn:4:256")).unwrap();
    assert_eq!((p.steps(), p.tau()), (4, r(85, 64)));
}

#[test]
fn circulant_erratum_has_no_bandwidth_optimal_bfb() {
    // Conjecture 1 fails for three offsets: at step 2, u = 0 gets sources {2, 7, 12} only from
    // in-neighbours {1, 11}: U = 3/2 > |N_2| / d = 8/6. tau = (6/15)(1 + 3/2) = 1 > 14/15.
    let t = topo("circulant:15:1,4,5");
    let (p, s) = checked_allgather(&t);
    let bw = t.links[0].bandwidth;
    assert_eq!(p.optimum(0, 2) * bw, r(3, 2));
    assert_eq!(p.optimum(0, 2), hall_ratio(&t, 0, 2));
    assert_eq!((p.steps(), p.tau()), (2, r(1, 1)));
    assert!(!p.bandwidth_optimal());
    assert_eq!(detail(&s, "bandwidth_optimal"), "false");
    // C(34, {8, 11, 15}): tau 1.0294 vs 0.9706 (App. F.4, Conjecture 1 fails); exactly 35/34.
    let (p, _) = checked_allgather(&topo("circulant:34:8,11,15"));
    assert_eq!(p.tau(), r(35, 34));
    assert!(!p.bandwidth_optimal());
}

// ---------------------------------------------------------------------------------------
// Reduce-scatter, allreduce, registry

#[test]
fn reduce_scatter_and_allreduce_by_transposition() {
    for spec in ["kautz:2:12", "ring:5", "debruijn:2:8", "circulant:15:1,4,5", "torus:3x4", "dcirculant:7:1,3"] {
        let t = topo(spec);
        let d = diameter_hops(&t);
        let on_transpose = plan(&transpose(&t)).unwrap();
        let rs = reduce_scatter(&t).unwrap();
        verify(&rs, &t).unwrap_or_else(|v| panic!("{spec} reduce-scatter: {v}"));
        assert_eq!(rs.n_steps(), Some(on_transpose.steps() as u32), "{spec}");
        assert_eq!(step_cost(&rs, &t), on_transpose.load_sum() / Rat::from_integer(t.n_ranks() as i128), "{spec}");
        assert_eq!(detail(&rs, "tau"), format!("\"{}\"", to_fraction_string(&on_transpose.tau())));
        let ar = allreduce(&t).unwrap();
        verify(&ar, &t).unwrap_or_else(|v| panic!("{spec} allreduce: {v}"));
        assert_eq!(ar.n_steps(), Some((on_transpose.steps() + d) as u32), "{spec}");
        let tau = on_transpose.tau() + plan(&t).unwrap().tau();
        assert_eq!(detail(&ar, "tau"), format!("\"{}\"", to_fraction_string(&tau)), "{spec}");
    }
    // §3 and App. B: reverse(BFB(G^T)) on Pi_{2,12}: 3 steps, tau 7/6.
    let rs = reduce_scatter(&topo("kautz:2:12")).unwrap();
    assert_eq!((rs.n_steps(), detail(&rs, "tau")), (Some(3), "\"7/6\"".to_string()));
    let ar = allreduce(&topo("torus:4x4")).unwrap();
    assert_eq!((detail(&ar, "tau"), detail(&ar, "bandwidth_optimal")), ("\"15/8\"".to_string(), "true".to_string()));
}

#[test]
fn registered_and_refuses_switches() {
    let alg = synth::find("bfb").unwrap();
    assert_eq!(alg.collectives, &[Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce]);
    assert_eq!(alg.options, &["chunks", "hetero", "bi-method"]);
    let s = synth::run(&topo("torus:3x3"), Collective::Allgather, "bfb", &Request::default()).unwrap();
    assert_eq!(s.provenance.algorithm, "bfb");
    assert_eq!(detail(&s, "bfb_steps"), "2");
    let err = synth::run(&topo("switch:4"), Collective::Allgather, "bfb", &Request::default()).unwrap_err();
    assert!(matches!(err, CollsynthError::BadInput(_)));
    assert!(err.message().starts_with("bfb needs a direct-connect topology (no switches)"), "{err}");
    assert!(synth::run(&topo("ring:4"), Collective::Broadcast, "bfb", &Request::default()).is_err());
}

#[test]
fn one_rank_and_two_ranks() {
    // one rank is refused by the topology builder (nothing to schedule)
    let mut b = TopologyBuilder::new("one");
    b.compute("a", None);
    assert!(b.build().is_err());
    assert_eq!(steps_tau("complete:2"), (1, r(1, 2)));
}

// ---------------------------------------------------------------------------------------
// Property test: random strongly connected digraphs

/// max over nonempty J of |J| / bw(f(J)) for (u, t), straight from the definitions: sources at
/// distance t, f(v) = in-neighbours w of u with d(v, w) = t - 1, subsets enumerated.
fn hall_ratio(t: &Topology, u: usize, step: usize) -> Rat {
    let n = t.n_ranks();
    let dist: Vec<Vec<usize>> = (0..n).map(|v| bfs_hops(t, t.rank_node(v))).collect();
    let node = t.rank_node(u);
    let sources: Vec<usize> = (0..n).filter(|&v| dist[v][node] == step).collect();
    let ins: Vec<(usize, Rat)> = t.in_links(node).iter().map(|&l| (t.links[l].src, t.links[l].bandwidth)).collect();
    let mut best = Rat::zero();
    for set in 1u32..(1 << sources.len()) {
        let chosen: Vec<usize> = (0..sources.len()).filter(|i| set >> i & 1 == 1).map(|i| sources[i]).collect();
        let bw: Rat = ins.iter().filter(|(w, _)| chosen.iter().any(|&v| dist[v][*w] + 1 == step)).map(|x| x.1).sum();
        best = best.max(Rat::from_integer(chosen.len() as i128) / bw);
    }
    best
}

/// Random strongly connected switch-free digraphs (directed and asymmetric links), up to 10
/// ranks so the Hall-ratio brute force stays small.
pub(super) fn arb_digraph() -> impl Strategy<Value = Topology> {
    crate::testing::arb_digraph(10)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_digraphs(t in arb_digraph()) {
        let (p, _) = checked_allgather(&t);
        for u in 0..t.n_ranks() {
            for step in 1..=p.steps() {
                prop_assert_eq!(p.optimum(u, step), hall_ratio(&t, u, step), "u {} t {}", u, step);
            }
        }
        let rs = reduce_scatter(&t).unwrap();
        prop_assert!(verify(&rs, &t).is_ok(), "{:?}", verify(&rs, &t));
        let ar = allreduce(&t).unwrap();
        prop_assert!(verify(&ar, &t).is_ok(), "{:?}", verify(&ar, &t));
    }
}
