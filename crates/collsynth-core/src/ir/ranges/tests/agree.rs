//! Range-compressed and flat schedules: the same schedule back, the same verdicts (mutations
//! included, each built on the flat list by hand too), the same costs bit for bit, and the
//! same file through format 2.

use crate::api;
use crate::cost;
use crate::ir::orbit;
use crate::ir::ranges::{check, compress, flat, has_ranges, n_expanded};
use crate::ir::{json, Collective, Schedule};
use crate::rational::Rat;
use crate::synth::{self, Request};
use crate::testing::arb_digraph;
use crate::topology::Topology;
use crate::verify::verify;
use crate::zoo;
use proptest::prelude::*;

const COLLECTIVES: [Collective; 3] = [Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce];

/// The flat indices stored transfer `j` stands for.
fn members(s: &Schedule, j: usize) -> std::ops::Range<usize> {
    let start: usize = s.transfers[..j].iter().map(|t| t.count as usize).sum();
    start..start + s.transfers[j].count as usize
}

/// BFB's schedule of `c` on `topo`, flat (its ranges expanded when it has them).
fn bfb(topo: &Topology, c: Collective) -> Schedule {
    let s = synth::run(topo, c, "bfb", &Request::default()).unwrap();
    flat(&s).unwrap().into_owned()
}

fn verdict(s: &Schedule, topo: &Topology) -> Result<(), String> {
    verify(s, topo).map(|_| ()).map_err(|v| v.to_string())
}

/// Every cost of the range-compressed `r` at `size` is the flat `f`'s, bit for bit.
fn assert_costs_agree(what: &str, topo: &Topology, r: &Schedule, f: &Schedule, size: Rat) {
    if r.symmetry.is_none() {
        // Link loads read runs natively.
        assert_eq!(cost::link_loads(r, topo, size), cost::link_loads(f, topo, size), "{what}");
        assert_eq!(cost::bandwidth_term_us(r, topo, size), cost::bandwidth_term_us(f, topo, size), "{what}");
    }
    let b = api::bounds(topo, r.collective, 0).unwrap();
    let (e, g) = (api::evaluate(r, topo, size, 2, &b).unwrap(), api::evaluate(f, topo, size, 2, &b).unwrap());
    assert_eq!(e.time_us.to_bits(), g.time_us.to_bits(), "{what}");
    assert_eq!(e.sf_time_us.to_bits(), g.sf_time_us.to_bits(), "{what}");
    assert_eq!(e.alpha_beta_us.to_bits(), g.alpha_beta_us.to_bits(), "{what}");
    assert_eq!(e.runtime, g.runtime, "{what}");
    assert_eq!((e.optimality, e.steps, e.direct), (g.optimality, g.steps, g.direct), "{what}");
    assert_eq!(api::simulate(r, topo, size, 3).unwrap(), api::simulate(f, topo, size, 3).unwrap(), "{what}");
    // `api` costs the bytes nccl-tests moves for `size` (api::moved_size), the models the bytes given.
    let moved = api::moved_size(r.collective, r.n_ranks, size).moved;
    assert_eq!(cost::time_us(cost::Model::AlphaBeta, r, topo, moved, 1).unwrap().to_bits(), e.alpha_beta_us.to_bits());
    assert_eq!((r.depth(), r.steps(), r.n_transfers()), (f.depth(), f.steps(), f.n_transfers()), "{what}");
}

/// Broken variants of the range-compressed `r`, each with the same mutation made on the flat
/// list `f` by hand (None where only the range form can say it).
fn mutants(r: &Schedule, f: &Schedule) -> Vec<(String, Schedule, Option<Schedule>)> {
    let stride = r.symmetry.as_ref().map_or(1, |g| g.order());
    let mut cases = Vec::new();
    for j in (0..r.transfers.len()).filter(|&j| r.transfers[j].count > 1) {
        let span = members(r, j);
        // Break the run's alignment: every member waits for the next transfer of its dependency's.
        if !r.transfers[j].after.is_empty() {
            let (mut m, mut g) = (r.clone(), f.clone());
            m.transfers[j].after[0] += stride;
            span.clone().for_each(|i| g.transfers[i].after[0] += stride);
            cases.push((format!("misaligned {j}"), m, Some(g)));
        }
        // Shift the run by one piece: every member moves the next piece.
        let (mut m, mut g) = (r.clone(), f.clone());
        m.transfers[j].piece += 1;
        span.clone().for_each(|i| g.transfers[i].piece += 1);
        let past = m.transfers[j].piece + m.transfers[j].count as usize > r.pieces.len();
        cases.push((format!("shifted {j}"), m, (!past).then_some(g)));
        // Drop the last piece of the run.
        let mut m = r.clone();
        m.transfers[j].count -= 1;
        cases.push((format!("last piece dropped {j}"), m, None));
        // A run past the pieces.
        let mut m = r.clone();
        m.transfers[j].count = (r.pieces.len() - r.transfers[j].piece + 1) as u32;
        cases.push((format!("past the pieces {j}"), m, None));
        // No dependencies for any member.
        let (mut m, mut g) = (r.clone(), f.clone());
        m.transfers[j].after.clear();
        span.for_each(|i| g.transfers[i].after.clear());
        cases.push((format!("no dependency {j}"), m, Some(g)));
    }
    cases
}

/// Every mutant gets its flat twin's verdict (and its expansion's), and most are refused.
fn assert_mutations_agree(what: &str, topo: &Topology, r: &Schedule, f: &Schedule) {
    let cases = mutants(r, f);
    let mut wrong = 0;
    for (how, m, twin) in &cases {
        let v = verdict(m, topo).is_ok();
        let expanded = flat(m).is_ok_and(|e| verdict(&e, topo).is_ok());
        assert_eq!(v, expanded, "{what}: {how}");
        if let Some(g) = twin {
            match flat(m) {
                Ok(e) => assert_eq!(e.as_ref(), g, "{what}: {how}: the mutant stands for its flat twin"),
                Err(_) => assert!(verdict(g, topo).is_err(), "{what}: {how}: a range refused, its twin accepted"),
            }
            assert_eq!(v, verdict(g, topo).is_ok(), "{what}: {how}: range and flat verdicts differ");
        }
        wrong += usize::from(!v);
    }
    assert!(wrong * 2 > cases.len(), "{what}: the mutations must break most schedules ({wrong} of {})", cases.len());
}

#[test]
fn bfb_compresses_exactly_and_agrees() {
    for spec in ["torus:4x4", "circulant:9:1,3", "hypercube:3", "torus:3x5"] {
        let topo = zoo::from_spec(spec).unwrap();
        for c in COLLECTIVES {
            let f = bfb(&topo, c);
            let r = compress(&f);
            let what = format!("{spec} {}", c.name());
            assert_eq!(flat(&r).unwrap().as_ref(), &f, "{what}");
            assert!(r.transfers.len() <= f.transfers.len(), "{what}");
            assert!(has_ranges(&r) || spec.starts_with("circulant"), "{what}: BFB's deliveries have runs");
            assert!(verdict(&r, &topo).is_ok(), "{what}");
            for size in [Rat::from_integer(1 << 30), Rat::from_integer(1_000_000_000), Rat::from_integer(1001)] {
                assert_costs_agree(&what, &topo, &r, &f, size);
            }
            if has_ranges(&r) {
                assert_mutations_agree(&what, &topo, &r, &f);
            }
        }
    }
}

#[test]
fn compact_schedules_with_ranges_expand_as_before() {
    // BFB's compact allgather (from 64 ranks) and ForestColl's compact reduce-scatter.
    for (spec, alg, c) in [
        ("torus:8x8", "bfb", Collective::Allgather),
        ("circulant:64:1,5", "bfb", Collective::Allgather),
        ("torus:4x4", "forestcoll", Collective::ReduceScatter),
    ] {
        let topo = zoo::from_spec(spec).unwrap();
        let s = flat(&synth::run(&topo, c, alg, &Request::default()).unwrap()).unwrap().into_owned();
        assert!(s.is_compact(), "{spec}");
        let r = compress(&s);
        let f = orbit::expand(&s).unwrap();
        assert_eq!(orbit::expand(&r).unwrap(), f, "{spec}");
        assert_eq!(orbit::flat(&r).unwrap().as_ref(), &f, "{spec}");
        assert_eq!(orbit::quotient(&r, &topo).unwrap(), orbit::quotient(&s, &topo).unwrap(), "{spec}");
        assert_eq!((r.n_transfers(), n_expanded(&r)), (f.transfers.len(), s.transfers.len()), "{spec}");
        assert!(verdict(&r, &topo).is_ok(), "{spec}");
        assert_costs_agree(spec, &topo, &r, &s, Rat::from_integer(1 << 30));
        if has_ranges(&r) {
            let mutants = mutants(&r, &s);
            for (how, m, _) in &mutants {
                let expanded = orbit::expand(m).is_ok_and(|e| verdict(&e, &topo).is_ok());
                assert_eq!(verdict(m, &topo).is_ok(), expanded, "{spec}: {how}");
            }
        }
    }
}

#[test]
fn bfb_emits_ranges_from_64_ranks() {
    let topo = zoo::from_spec("torus:8x8").unwrap();
    let s = synth::run(&topo, Collective::Allgather, "bfb", &Request::default()).unwrap();
    assert!(s.is_compact() && has_ranges(&s));
    assert_eq!((s.transfers.len(), n_expanded(&s), s.n_transfers()), (68, 252, 16128));
    let small = zoo::from_spec("torus:7x9").unwrap();
    let s = synth::run(&small, Collective::Allgather, "bfb", &Request::default()).unwrap();
    assert!(!has_ranges(&s), "below 64 ranks the file stays as it was");
}

#[test]
fn ranges_round_trip_through_format_2() {
    let topo = zoo::from_spec("torus:4x4").unwrap();
    let f = bfb(&topo, Collective::Allreduce);
    let r = compress(&f);
    let text = json::write(&r, &topo);
    assert!(text.contains("\"format\": \"collsynth-schedule/2\"") && text.contains(", \"count\": "));
    let (back, _, _) = json::read(&text).unwrap();
    assert!(back.transfers == r.transfers && back.pieces == r.pieces, "the ranges read back as written");
    assert_eq!(json::write(&back, &topo), text);
    // The flat schedule's file is format 1 without a count, as before.
    let flat_text = json::write(&f, &topo);
    assert!(flat_text.contains("collsynth-schedule/1") && !flat_text.contains("\"count\""));
    // A count is format 2's: a format 1 file with one is refused.
    let e = json::read(&text.replace("collsynth-schedule/2", "collsynth-schedule/1")).unwrap_err();
    assert!(e.to_string().contains("count: only a collsynth-schedule/2 file"), "{e}");
}

#[test]
fn bad_counts_are_refused() {
    let topo = zoo::from_spec("torus:4x4").unwrap();
    let r = compress(&bfb(&topo, Collective::Allgather));
    let j = r.transfers.iter().position(|t| t.count > 1 && !t.after.is_empty()).unwrap();
    let with = |edit: &dyn Fn(&mut Schedule)| {
        let mut m = r.clone();
        edit(&mut m);
        m
    };
    let cases: Vec<(Schedule, &str)> = vec![
        (with(&|m| m.transfers[j].count = 0), "count 0"),
        (with(&|m| m.transfers[j].count = m.pieces.len() as u32), "runs past the schedule's"),
        (with(&|m| m.transfers[j].count = u32::MAX), "more than the"),
        (with(&|m| m.transfers[j].after[0] = n_expanded(&r) - 1), "beyond the"),
    ];
    for (m, says) in cases {
        let e = check(&m).unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
        assert!(flat(&m).is_err() && orbit::expand(&m).is_err());
        assert!(verdict(&m, &topo).unwrap_err().contains(says));
        assert!(json::read(&json::write(&m, &topo)).is_err(), "{says}: the reader refuses it");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Random directed, asymmetric graphs: BFB's schedules compress to exactly themselves, with
    /// the same verdict and costs, and every mutation gets its flat twin's verdict.
    #[test]
    fn random_digraphs_agree(topo in arb_digraph(7), which in 0usize..3) {
        let c = COLLECTIVES[which];
        let f = bfb(&topo, c);
        let r = compress(&f);
        prop_assert_eq!(&flat(&r).unwrap().into_owned(), &f);
        prop_assert_eq!(verdict(&r, &topo).is_ok(), verdict(&f, &topo).is_ok());
        assert_costs_agree(&topo.name, &topo, &r, &f, Rat::from_integer(1_000_000_000));
        if has_ranges(&r) {
            assert_mutations_agree(&topo.name, &topo, &r, &f);
        }
    }
}
