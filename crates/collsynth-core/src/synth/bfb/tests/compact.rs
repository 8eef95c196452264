//! The allgather stated per orbit (`compact`) against the flat plan of every rank: both
//! verify alike (mutations included), the expansion has the flat schedule's steps, per-step
//! busiest link and details (as a set it is the flat schedule wherever the flat plan is
//! itself invariant), its costs are the expansion's bit for bit, and two runs write the
//! same bytes.

use super::step_cost;
use super::*;
use crate::api;
use crate::ir::orbit::{expand, tests::assert_costs_agree, tests::assert_mutations_agree};
use crate::ir::Schedule;
use crate::synth::{self, Request};
use crate::verify::verify;
use crate::zoo::from_spec;
use proptest::prelude::*;

/// Tori (odd, even, three-dimensional), hypercubes, Hamming graphs, circulants, rings and a
/// complete graph: the zoo's translations act regularly on all of them.
const SYMMETRIC: &[&str] = &[
    "hypercube:3",
    "hypercube:5",
    "torus:4x4",
    "torus:3x5",
    "torus:6x4",
    "torus:3x3x3",
    "hamming:2,3",
    "circulant:8:1,3",
    "circulant:13:1,5",
    "ring:6",
    "biring:5",
    "complete:5",
];

fn compact(spec: &str) -> (Topology, Schedule) {
    let t = from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    // Below PER_ORBIT_FROM ranks `synthesize` stays flat; the compact path is called directly.
    let s = super::super::compact_allgather(&t).unwrap().expect("a regular group");
    assert!(s.is_compact(), "{spec}: bfb's allgather is stated per orbit");
    assert_eq!(s.symmetry.as_ref().unwrap().order(), t.n_ranks(), "{spec}: the group is regular");
    (t, s)
}

/// (step, link) -> the fraction of M it carries.
fn loads(s: &Schedule) -> std::collections::BTreeMap<(u32, usize), Rat> {
    let mut out = std::collections::BTreeMap::new();
    for t in &s.transfers {
        *out.entry((t.step.unwrap(), t.route[0])).or_insert_with(Rat::zero) += s.piece_fraction(t.piece);
    }
    out
}

/// The transfers as a sorted list of (shard, start, end, src, dst, route, step).
type Key = Vec<(usize, Rat, Rat, usize, usize, Vec<usize>, Option<u32>)>;

fn key(s: &Schedule) -> Key {
    let mut v: Key = s
        .transfers
        .iter()
        .map(|t| {
            let p = &s.pieces[t.piece];
            (p.shard, p.start, p.end, t.src, t.dst, t.route.clone(), t.step)
        })
        .collect();
    v.sort();
    v
}

/// The compact allgather of `spec` against [`allgather`], the flat plan of every rank.
fn assert_like_flat(spec: &str) -> (Schedule, Schedule) {
    let (t, s) = compact(spec);
    let old = allgather(&t).unwrap();
    assert!(!old.is_compact());
    let flat = expand(&s).unwrap();
    assert_eq!(flat.transfers.len(), s.n_transfers(), "{spec}");
    let (a, b) = (verify(&s, &t).unwrap(), verify(&flat, &t).unwrap());
    assert_eq!(a, b, "{spec}: the compact report counts the flat transfers");
    assert_eq!(s.provenance.details, old.provenance.details, "{spec}: steps, tau, bandwidth_optimal");
    assert_eq!(flat.n_steps(), old.n_steps(), "{spec}");
    assert_eq!(step_cost(&flat, &t), step_cost(&old, &t), "{spec}: every step's busiest link");
    // Every rank receives at every step what the flat plan gives it (the shards at that
    // distance). Which in-links carry it may differ: rank 0's optimum, translated, need not be
    // the optimal vertex the flat plan's solver finds for another rank (circulant:15:1,5,6).
    assert_eq!(received(&flat), received(&old), "{spec}");
    (flat, old)
}

/// Fraction of the buffer each rank receives at each step: (step, receiver) -> sum.
fn received(s: &Schedule) -> std::collections::BTreeMap<(u32, usize), Rat> {
    let mut out = std::collections::BTreeMap::new();
    for t in &s.transfers {
        *out.entry((t.step.unwrap(), t.dst)).or_insert_with(Rat::zero) += s.piece_fraction(t.piece);
    }
    out
}

#[test]
fn compact_and_flat_verify_alike() {
    for spec in SYMMETRIC {
        let (flat, old) = assert_like_flat(spec);
        // On these the translated optimum is the one the flat plan finds for every rank: every
        // in-link carries the same load at every step; only sources sharing a sender set may
        // swap parts.
        assert_eq!(loads(&flat), loads(&old), "{spec}");
    }
}

#[test]
fn translated_optima_may_load_other_in_links() {
    // Found by `random_circulants_agree`: the same steps, busiest links and receptions, other
    // in-links loaded at step 1.
    let (flat, old) = assert_like_flat("circulant:15:1,5,6");
    assert_ne!(loads(&flat), loads(&old));
}

#[test]
fn the_expansion_is_the_flat_schedule_on_rings_and_complete_graphs() {
    // There every class of sources is one source and every rank lists its in-links alike,
    // so the flat plan is itself translation-invariant.
    for spec in ["ring:6", "biring:5", "complete:5"] {
        let (flat, old) = assert_like_flat(spec);
        assert_eq!(key(&flat), key(&old), "{spec}");
    }
    // Elsewhere the flat plan hands a class's parts to its sources in rank order and each
    // rank's in-links come in the topology's order, neither of which translations keep: the
    // same loads on every link, other pieces on them. On torus:3x5 the compact plan cuts
    // every shard at every cut point of rank 0's, so it has more pieces.
    let (flat, old) = assert_like_flat("torus:3x5");
    assert_ne!(key(&flat), key(&old));
    assert!(flat.transfers.len() > old.transfers.len());
}

#[test]
fn mutations_get_the_same_verdict() {
    for spec in ["hypercube:3", "torus:3x5", "circulant:8:1,3", "biring:5"] {
        let (t, s) = compact(spec);
        assert_mutations_agree(spec, &t, &s);
    }
}

#[test]
fn quotient_costs_equal_flat_costs() {
    for spec in ["hypercube:3", "torus:4x4", "torus:3x5", "torus:3x3x3", "circulant:13:1,5", "biring:5"] {
        let (t, s) = compact(spec);
        // Whole-byte shards: N divides the size.
        let size = Rat::from_integer((t.n_ranks() as i128 * 3) << 20);
        assert_costs_agree(spec, &t, &s, size);
    }
}

#[test]
fn same_costs_as_the_flat_plan_on_small_tori_and_hypercubes() {
    let size = Rat::from_integer(1 << 30);
    for spec in ["hypercube:4", "torus:4x4", "torus:8x8"] {
        let (t, s) = compact(spec);
        let old = allgather(&t).unwrap();
        let b = api::bounds(&t, Collective::Allgather, 0).unwrap();
        let (e, f) = (api::evaluate(&s, &t, size, 1, &b).unwrap(), api::evaluate(&old, &t, size, 1, &b).unwrap());
        assert_eq!(e.time_us.to_bits(), f.time_us.to_bits(), "{spec}");
        assert_eq!(e.sf_time_us.to_bits(), f.sf_time_us.to_bits(), "{spec}");
        assert_eq!(e.runtime, f.runtime, "{spec}");
        assert_eq!((e.optimality, e.steps, e.direct), (f.optimality, f.steps, f.direct), "{spec}");
        assert_eq!(e.alpha_beta_us.to_bits(), f.alpha_beta_us.to_bits(), "{spec}");
    }
}

#[test]
fn two_runs_write_the_same_bytes() {
    for spec in ["torus:3x5", "hypercube:4"] {
        let (t, a) = compact(spec);
        let (_, b) = compact(spec);
        let text = crate::ir::json::write(&a, &t);
        assert_eq!(text, crate::ir::json::write(&b, &t), "{spec}");
        assert!(text.contains("collsynth-schedule/2"), "{spec}");
    }
}

#[test]
fn topologies_without_a_regular_group_stay_flat() {
    // Kautz (no translation) and a mesh (none) have no regular group.
    for spec in ["kautz:2:12", "mesh:3x3", "mesh:8x8"] {
        let t = from_spec(spec).unwrap();
        assert!(super::super::compact_allgather(&t).unwrap().is_none(), "{spec}");
        assert!(!synth::run(&t, Collective::Allgather, "bfb", &Request::default()).unwrap().is_compact(), "{spec}");
    }
}

#[test]
fn synthesize_states_it_per_orbit_from_64_ranks_without_options() {
    let run = |spec: &str, req: &Request| {
        synth::run(&from_spec(spec).unwrap(), Collective::Allgather, "bfb", req).unwrap().is_compact()
    };
    assert!(run("torus:8x8", &Request::default()), "64 ranks");
    assert!(!run("torus:7x9", &Request::default()), "63 ranks stay flat");
    // The options that plan every rank stay flat.
    let req =
        Request { options: [("chunks".to_string(), "4".to_string())].into_iter().collect(), ..Default::default() };
    assert!(!run("torus:8x8", &req));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Random circulants C(N, S): the compact allgather verifies, as does its expansion, with
    /// the flat plan's details, per-step busiest link and per-link loads.
    #[test]
    fn random_circulants_agree(n in 5usize..=16, shifts in proptest::collection::btree_set(1usize..8, 1..=3)) {
        let shifts: Vec<usize> = shifts.into_iter().filter(|&s| s < n).collect();
        prop_assume!(!shifts.is_empty() && shifts.iter().fold(n, |g, &s| num_integer::gcd(g, s)) == 1);
        let list: Vec<String> = shifts.iter().map(|s| s.to_string()).collect();
        let spec = format!("circulant:{n}:{}", list.join(","));
        prop_assume!(from_spec(&spec).is_ok());
        assert_like_flat(&spec);
    }
}
