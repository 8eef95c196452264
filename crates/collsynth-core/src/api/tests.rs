//! `auto` skips the candidates that do not apply and surfaces every other failure.

use super::*;
use crate::zoo::from_spec;

fn ring() -> Topology {
    from_spec("ring:6").unwrap()
}

/// Candidates named "ring" and "direct" are real; "broken" fails as `fail` says.
fn pick(fail: CollsynthError) -> Result<Synthesized> {
    let t = ring();
    let size = Rat::from_integer(1 << 20);
    fastest_candidate(
        &t,
        Collective::Allgather,
        size,
        ["ring", "broken", "direct"],
        &Request::default(),
        Ranking::Schedule,
        |name, r| {
            if name == "broken" {
                return Err(fail.clone());
            }
            synthesize(&t, Collective::Allgather, name, r, size)
        },
    )
}

#[test]
fn candidates_that_do_not_apply_are_skipped() {
    for fail in [CollsynthError::Infeasible("needs a circulant".into()), CollsynthError::bad("option --x")] {
        let got = pick(fail).unwrap();
        assert!(["ring", "direct"].contains(&got.schedule.provenance.algorithm.as_str()));
    }
}

#[test]
fn an_internal_error_of_one_candidate_surfaces() {
    let err = pick(CollsynthError::internal("broken schedule failed verification: x")).err().unwrap();
    assert_eq!(err, CollsynthError::internal("auto: algorithm 'broken': broken schedule failed verification: x"));
}

#[test]
fn no_candidate_is_bad_input() {
    let t = ring();
    let one = ["a"];
    let err = fastest_candidate(
        &t,
        Collective::Allgather,
        Rat::from_integer(1),
        one,
        &Request::default(),
        Ranking::Schedule,
        |_, _| Err(CollsynthError::Infeasible("no".into())),
    )
    .err()
    .unwrap();
    assert_eq!(err, CollsynthError::bad("no registered algorithm applies to allgather on this topology (a: no)"));
}

#[test]
fn the_fewest_transfers_past_the_memory_budget_are_refused_before_synthesis() {
    // 65536 x 65535 transfers at 12 bytes: 48 GiB, above every default budget (at most 8 GiB).
    let t = from_spec("ring:65536").unwrap();
    for (collective, algorithm) in [(Collective::Allgather, "ring"), (Collective::Allreduce, "auto")] {
        let err = synthesize(&t, collective, algorithm, &Request::default(), Rat::from_integer(1 << 20)).err().unwrap();
        let want = format!(
            "{} on 65536 ranks (4294901760 transfers at least) needs about 48.0 GiB of memory, above the budget of {} \
             (--memory-budget)",
            collective.name(),
            crate::budget::human(u128::from(crate::budget::memory_budget()))
        );
        assert_eq!(err, CollsynthError::bad(want));
    }
    // a broadcast has no such floor (N - 1 transfers suffice): it is not refused here
    assert!(least_memory(&t, Collective::Broadcast).is_ok());
}

#[test]
fn auto_names_a_root_that_is_not_a_rank() {
    let req = Request { root: 9, options: Default::default(), size: None };
    let err = synthesize(&ring(), Collective::Allreduce, "auto", &req, Rat::from_integer(1 << 20)).err().unwrap();
    assert!(matches!(err, CollsynthError::BadInput(ref m) if m.starts_with("--root 9 is not a rank")), "{err}");
}

/// Through the registry: `auto` on a directed graph finds a verified schedule (ForestColl's
/// allreduce composes a reduce-scatter and an allgather with different pieces there).
#[test]
fn auto_on_a_directed_graph() {
    let t = from_spec("kautz:2:6").unwrap();
    let got = synthesize(&t, Collective::Allreduce, "auto", &Request::default(), Rat::from_integer(1 << 30)).unwrap();
    verify::verify(&got.schedule, &got.topology).unwrap();
}

#[test]
fn infeasible_says_which_algorithm_does_not_apply_and_why() {
    let e =
        does_not_apply(CollsynthError::Infeasible("a rank is unreachable from root 2".into()), "x", Collective::Reduce);
    assert_eq!(
        e,
        CollsynthError::Infeasible(
            "algorithm 'x' does not apply to reduce on this topology because a rank is unreachable from root 2".into()
        )
    );
    // Other errors pass unchanged.
    assert_eq!(does_not_apply(CollsynthError::bad("b"), "x", Collective::Reduce), CollsynthError::bad("b"));
}

/// `auto` searches algorithms, their shrunk forms and pipeline depths together: on
/// dgx-a100:2 at 64 MiB its pick is no slower than any algorithm's own schedule at any depth,
/// it says what it chose, and the schedule it returns is that choice lowered (the sub-chunks
/// materialized), so the simulator gives the same time without a pipeline.
#[test]
fn auto_searches_algorithms_trees_and_depths_together() {
    let t = from_spec("dgx-a100:2").unwrap();
    let size = Rat::from_integer(64 << 20);
    let got = synthesize(&t, Collective::Allgather, "auto", &Request::default(), size).unwrap();
    let s = &got.schedule;
    let k = s.provenance.details.usize("auto_pipeline").unwrap();
    let choice = s.provenance.details.get("auto_choice").and_then(|v| v.as_str()).unwrap().to_string();
    assert!(choice.starts_with(&s.provenance.algorithm), "{choice}");
    let mine = cost::time_us(cost::Model::Runtime, s, &t, size, 1).unwrap();
    for alg in synth::algorithms().into_iter().filter(|a| a.collectives.contains(&Collective::Allgather)) {
        let Ok(other) = synthesize(&t, Collective::Allgather, alg.name, &Request::default(), size) else { continue };
        for d in [1, 2, 4, 8] {
            let theirs = cost::time_us(cost::Model::Runtime, &other.schedule, &t, size, d).unwrap();
            assert!(mine <= theirs * (1.0 + 1e-9), "{} at depth {d}: {theirs} < auto's {mine} ({choice})", alg.name);
        }
    }
    // a tree pick is lowered to its depth: the pieces are cut k ways
    if k > 1 {
        let plain = synthesize(&t, Collective::Allgather, &s.provenance.algorithm, &Request::default(), size).unwrap();
        assert!(s.pieces.len() >= plain.schedule.pieces.len());
    }
}

/// `auto` returns MSCCL programs: on `dgx1` at 1 GiB it picks NCCL's rings, and what it
/// returns is those rings as an MSCCL program (no NCCL kernel step), not NCCL running them.
#[test]
fn auto_hands_out_msccl_programs_even_of_nccl_rings() {
    let t = from_spec("dgx1").unwrap();
    let size = Rat::from_integer(1 << 30);
    let got = synthesize(&t, Collective::Allreduce, "auto", &Request::default(), size).unwrap().schedule;
    assert_eq!(got.provenance.details.text("auto_choice").as_deref(), Some("\"nccl-ring\""));
    assert_eq!(got.provenance.executor, crate::ir::Executor::Msccl);
    let nccl = synthesize(&t, Collective::Allreduce, "nccl-ring", &Request::default(), size).unwrap().schedule;
    assert_eq!(nccl.provenance.executor, crate::ir::Executor::NcclRing);
    let time = |s: &Schedule| crate::cost::runtime::runtime(s, &t, size).unwrap().time_us;
    assert!(time(&got) < time(&nccl), "{} vs {}", time(&got), time(&nccl));
}

/// What nccl-tests moves (src/all_gather.cu `AllGatherGetCollByteCount`, src/reduce_scatter.cu
/// `ReduceScatterGetCollByteCount`: each rank's part trimmed to 16 bytes): the size asked on a
/// power of two that 16 N divides, `16 N floor(M / (16 N))` otherwise, M below 16 N (noted).
#[test]
fn moved_size_is_what_nccl_tests_moves() {
    let r = Rat::from_integer;
    let m = moved_size(Collective::Allgather, 8, r(1 << 30));
    assert_eq!((m.moved, m.note), (r(1 << 30), None));
    let m = moved_size(Collective::ReduceScatter, 2500, r(1 << 30));
    assert_eq!((m.asked, m.moved, m.note), (r(1 << 30), r(1_073_720_000), None));
    assert_eq!(moved_size(Collective::Allreduce, 5, r(1001)).moved, r(1001));
    // exactly 16 N moves; one byte less would move nothing: costed as asked, and said so
    assert_eq!(moved_size(Collective::Allgather, 5, r(80)), MovedSize { asked: r(80), moved: r(80), note: None });
    let m = moved_size(Collective::Allgather, 5, r(79));
    assert_eq!(m.moved, r(79));
    assert!(m
        .note
        .as_deref()
        .unwrap()
        .starts_with("below 16 N = 80 bytes nccl-tests moves nothing (allgather on 5 ranks"));
    // zero bytes asked is zero bytes moved, nothing to say
    assert_eq!(moved_size(Collective::Allgather, 5, r(0)).note, None);
    // idempotent: the api functions may apply it twice
    for (c, n, size) in
        [(Collective::Allgather, 5, 1 << 30), (Collective::ReduceScatter, 7, 100), (Collective::Reduce, 3, 7)]
    {
        let once = moved_size(c, n, r(size)).moved;
        assert_eq!(moved_size(c, n, once).moved, once);
    }
}

/// Every cost through `api` at 1 GiB on five ranks is the cost at the bytes nccl-tests moves
/// (1,073,741,760), not at 2^30, for allgather and reduce-scatter; allreduce costs 2^30.
#[test]
fn the_api_costs_the_moved_size() {
    let t = from_spec("ring:5").unwrap();
    let (gib, moved) = (Rat::from_integer(1 << 30), Rat::from_integer(1_073_741_760));
    for (c, at) in [(Collective::Allgather, moved), (Collective::ReduceScatter, moved), (Collective::Allreduce, gib)] {
        let s = synthesize(&t, c, "ring", &Request::default(), gib).unwrap().schedule;
        let b = bounds(&t, c, 0).unwrap();
        let (e, f) = (evaluate(&s, &t, gib, 2, &b).unwrap(), evaluate(&s, &t, at, 2, &b).unwrap());
        assert_eq!((e.size.asked, e.size.moved), (gib, at), "{c:?}");
        assert_eq!(e.time_us.to_bits(), f.time_us.to_bits(), "{c:?}");
        assert_eq!(e.sf_time_us.to_bits(), f.sf_time_us.to_bits(), "{c:?}");
        assert_eq!(e.algbw_gbps.to_bits(), f.algbw_gbps.to_bits(), "{c:?}");
        assert_eq!((e.runtime, e.optimality), (f.runtime, f.optimality), "{c:?}");
        assert_eq!(e.alpha_beta_us.to_bits(), f.alpha_beta_us.to_bits(), "{c:?}");
        assert_eq!(e.time_bound_us.to_bits(), f.time_bound_us.to_bits(), "{c:?}");
        // the models themselves cost exactly the bytes given: 2^30 is slower
        let flat = cost::simulate(&crate::ir::orbit::flat(&s).unwrap(), &t, at, 2).unwrap().time_us;
        assert_eq!(e.sf_time_us.to_bits(), flat.to_bits(), "{c:?}");
        let raw = cost::simulate(&crate::ir::orbit::flat(&s).unwrap(), &t, gib, 2).unwrap().time_us;
        assert_eq!(raw > e.sf_time_us, at < gib, "{c:?}");
        // One clock: the time and bandwidths are the runtime model's.
        assert_eq!(e.time_us.to_bits(), e.runtime.time_us.to_bits(), "{c:?}");
        assert_eq!(e.algbw_gbps, crate::rational::to_f64(&at) / e.time_us / 1e3);
        assert_eq!(simulate(&s, &t, gib, 3).unwrap(), simulate(&s, &t, at, 3).unwrap(), "{c:?}");
        assert_eq!(runtime(&s, &t, gib).unwrap(), runtime(&s, &t, at).unwrap(), "{c:?}");
        let bound = |size| time_bound(&t, c, 0, size).unwrap().0;
        assert_eq!(bound(gib).to_bits(), bound(at).to_bits(), "{c:?}");
        assert!(bound(gib) > bound(at - Rat::from_integer(80)), "{c:?}");
    }
}

/// Below 16 N bytes nccl-tests moves nothing of an allgather; the costs are on the size asked
/// (never a silent zero-byte collective), with a note.
#[test]
fn below_16_n_bytes_the_size_asked_is_costed() {
    let t = from_spec("ring:5").unwrap();
    let s = synthesize(&t, Collective::Allgather, "ring", &Request::default(), Rat::from_integer(64)).unwrap().schedule;
    let b = bounds(&t, Collective::Allgather, 0).unwrap();
    let e = evaluate(&s, &t, Rat::from_integer(64), 1, &b).unwrap();
    assert_eq!(e.size.moved, Rat::from_integer(64));
    assert!(e.size.note.is_some() && e.time_us > 0.0 && e.algbw_gbps > 0.0);
    let direct = cost::simulate(&s, &t, Rat::from_integer(64), 1).unwrap().time_us;
    assert_eq!(e.sf_time_us.to_bits(), direct.to_bits());
}

/// `--time-only` times the moved size too, and says so.
#[test]
fn time_only_times_the_moved_size() {
    let t = from_spec("torus:3x3").unwrap();
    let (gib, moved) = (Rat::from_integer(1 << 30), Rat::from_integer(16 * 9 * ((1 << 30) / (16 * 9))));
    let (a, b) = (
        time_only(&t, Collective::Allgather, "bfb", &Request::default(), gib).unwrap(),
        time_only(&t, Collective::Allgather, "bfb", &Request::default(), moved).unwrap(),
    );
    assert_eq!((a.size.asked, a.size.moved), (gib, moved));
    assert_eq!(a.report.time_us.to_bits(), b.report.time_us.to_bits());
    assert_eq!(a.algbw_gbps, crate::rational::to_f64(&moved) / a.report.time_us / 1e3);
    // with --ranks, N is the sub-collective's: 4 ranks, 16 N = 64 divides 2^30
    let req = Request { options: [("ranks".to_string(), "0-3".to_string())].into(), ..Request::default() };
    if let Ok(sub) = time_only(&t, Collective::Allgather, "bfb", &req, gib) {
        assert_eq!(sub.size.moved, gib);
    }
}

/// `auto` chooses the protocol with the schedule: on hgx-h100:2 at 64 MiB NCCL's tuner
/// estimate picks LL128 for the winning rings, Simple runs them faster, so `auto` returns
/// them pinned to Simple (`auto_protocol`), and the runtime model (and the exporter, which
/// asks `choose_protocol`) run them so. Without the pin the same schedule is slower; the pin
/// binds MSCCL programs only, and an unknown name pins nothing. (Asked with `--crossing pxn`,
/// which only NCCL's rings take: by default `auto` now picks the rings crossing over the
/// rails, which win under the tuner's LL128, `api/mix/tests.rs`.)
#[test]
fn auto_pins_the_protocol_it_won_with() {
    use crate::cost::runtime::{choose_protocol, pinned_protocol, runtime, runtime_time, Protocol, PINNED_PROTOCOL};
    let t = from_spec("hgx-h100:2").unwrap();
    let size = Rat::from_integer(64 << 20);
    let pxn = Request { options: [("crossing".to_string(), "pxn".to_string())].into(), ..Request::default() };
    let s = synthesize(&t, Collective::Allgather, "auto", &pxn, size).unwrap().schedule;
    assert_eq!(s.provenance.details.text(PINNED_PROTOCOL).as_deref(), Some("\"Simple\""));
    assert_eq!(choose_protocol(&s, &t, size).unwrap(), Protocol::Simple);
    let pinned = runtime(&s, &t, size).unwrap();
    assert_eq!(pinned, runtime_time(&s, &t, size, Protocol::Simple).unwrap());
    let mut free = s.clone();
    free.provenance.details.set(PINNED_PROTOCOL, "fast");
    let tuned = runtime(&free, &t, size).unwrap();
    assert_eq!(tuned.protocol, Protocol::LL128);
    assert!(pinned.time_us < tuned.time_us, "{} vs {}", pinned.time_us, tuned.time_us);
    assert_eq!(pinned_protocol(&free), None);
    free.provenance.details.set(PINNED_PROTOCOL, "Simple");
    assert_eq!(pinned_protocol(&free), Some(Protocol::Simple));
    free.provenance.executor = crate::ir::Executor::NcclRing;
    assert_eq!(pinned_protocol(&free), None);
}

/// Candidates are timed once only when they also run alike: the same transfers under NCCL's
/// ring kernel, or marked with another thread-block order or protocol, are other programs.
#[test]
fn same_program_needs_the_same_executor_and_model_details() {
    let t = from_spec("ring:4").unwrap();
    let s = synthesize(&t, Collective::Allgather, "ring", &Request::default(), Rat::from_integer(1 << 20))
        .unwrap()
        .schedule;
    assert!(same_program(&s, &s.clone()));
    let mut other = s.clone();
    other.provenance.details.set("auto_choice", "anything");
    assert!(same_program(&s, &other), "details the model does not read do not count");
    let mut kernel = s.clone();
    kernel.provenance.executor = crate::ir::Executor::NcclRing;
    assert!(!same_program(&s, &kernel));
    for key in [cost::runtime::order::DETAIL, cost::runtime::PINNED_PROTOCOL] {
        let mut marked = s.clone();
        marked.provenance.details.set(key, "Simple");
        assert!(!same_program(&s, &marked), "{key}");
    }
}

/// `auto` picks its candidate, depth and protocol at the bytes nccl-tests moves, as every cost
/// it reports is. On hgx-h100:2, reduce-scatter's pick (the fastest of the algorithms'
/// schedules at a multiple of 16 N = 256 bytes, bisected) changes between 1,506 and 1,507
/// units; at M = 1,507 x 256 - 1 bytes nccl-tests moves 1,506 x 256, so a search at M (the
/// trim left out of `auto` alone) returns a schedule that `direct`'s own beats at the moved
/// size, where `synth` reports its time.
#[test]
fn auto_searches_at_the_moved_size() {
    use crate::cost::runtime::{runtime_time, Protocol};
    let (spec, c, units) = ("hgx-h100:2", Collective::ReduceScatter, 1507);
    let t = from_spec(spec).unwrap();
    let unit = 16 * t.n_ranks() as i128;
    let m = Rat::from_integer(units * unit - 1);
    let moved = moved_size(c, t.n_ranks(), m).moved;
    assert_eq!(moved, Rat::from_integer((units - 1) * unit));
    let got = synthesize(&t, c, "auto", &Request::default(), m).unwrap();
    // `api::runtime` costs the moved size, as `synth` reports it.
    let mine = runtime(&got.schedule, &got.topology, m).unwrap().time_us;
    assert_eq!(mine.to_bits(), runtime(&got.schedule, &got.topology, moved).unwrap().time_us.to_bits());
    for alg in synth::algorithms().into_iter().filter(|a| a.collectives.contains(&c)) {
        let Ok(other) = synthesize(&t, c, alg.name, &Request::default(), m) else { continue };
        let other = as_exported(other.schedule).unwrap();
        for &d in cost::tuning::depths(&other) {
            let lowered = crate::ir::transform::pipelined(&other, d).unwrap();
            for p in Protocol::ALL {
                let theirs = runtime_time(&lowered, &t, moved, p).unwrap().time_us;
                assert!(
                    mine <= theirs * (1.0 + 1e-12),
                    "{spec} {c:?} at {m}: {} at depth {d} under {p:?} takes {theirs} us, auto's pick {mine} us",
                    alg.name
                );
            }
        }
    }
}

#[test]
fn what_follows_synthesis_gets_the_verified_schedule_and_its_topology() {
    let t = from_spec("ring:6").unwrap();
    let size = Rat::from_integer(1 << 20);
    let ranks = Request { options: [("ranks".to_string(), "0-3".to_string())].into(), ..Request::default() };
    for (algorithm, req) in [("ring", Request::default()), ("auto", Request::default()), ("tacos", ranks)] {
        let (done, seen) = synthesize_then(&t, Collective::Allgather, algorithm, &req, size, |s, topo| {
            (s.transfers.clone(), topo.n_ranks(), crate::ir::transform::topological_order(s).unwrap())
        })
        .unwrap();
        assert_eq!(seen.0, done.schedule.transfers, "{algorithm}");
        assert_eq!(seen.1, done.topology.n_ranks(), "{algorithm}");
        assert_eq!(seen.2, crate::ir::transform::topological_order(&done.schedule).unwrap(), "{algorithm}");
        let alone = synthesize(&t, Collective::Allgather, algorithm, &req, size).unwrap().schedule;
        assert_eq!((&done.schedule.pieces, &done.schedule.transfers), (&alone.pieces, &alone.transfers), "{algorithm}");
    }
}

#[test]
fn the_verdict_decides_whatever_followed_it() {
    // Small (one after the other) and past PARALLEL_EVALUATION (side by side).
    for n in [6, 320] {
        let t = from_spec(&format!("ring:{n}")).unwrap();
        let mut s =
            synthesize(&t, Collective::Allgather, "ring", &Request::default(), Rat::from_integer(1 << 30)).unwrap();
        s.schedule = crate::ir::orbit::expand(&s.schedule).unwrap(); // flat: every transfer
        let len = s.schedule.transfers.len();
        assert_eq!(len >= PARALLEL_EVALUATION, n > 6, "{len} transfers");
        let mut bad = s.schedule.clone();
        bad.transfers.pop(); // the last rank never gets its last piece
        let followed = std::sync::atomic::AtomicBool::new(false);
        let err = verified_then(&bad, &t, |b, _| {
            followed.store(b.transfers.len() + 1 == s.schedule.transfers.len(), std::sync::atomic::Ordering::SeqCst)
        })
        .unwrap_err();
        assert_eq!(err, check(&bad, &t).unwrap_err());
        assert!(
            matches!(err, CollsynthError::Internal(ref m) if m.starts_with("ring schedule failed verification")),
            "{err:?}"
        );
        assert!(followed.load(std::sync::atomic::Ordering::SeqCst), "the follow-up ran on the schedule given");
        assert_eq!(verified_then(&s.schedule, &t, |g, _| g.transfers.len()).unwrap(), s.schedule.transfers.len());
    }
}

#[test]
fn the_time_bound_is_computed_ahead_of_an_evaluation() {
    // A topology of its own, so that no other test has memoized its bounds.
    let mut t = from_spec("ring:7").unwrap();
    t.name = "time-bound-ahead".into();
    let effective = cost::runtime::bound::effective_topology(&t);
    let memoized =
        |topo: &Topology| bounds_memo().lock().unwrap().contains_key(&bounds_key(topo, Collective::Allreduce, 0));
    let req = Request { root: 0, options: Default::default(), size: None };
    let mut sub = req.clone();
    sub.options.insert("ranks".into(), "0-3".into());
    // A sub-collective runs on another topology: nothing is computed ahead.
    assert_eq!(with_time_bound_ahead(&t, Collective::Allreduce, &sub, || 7), 7);
    assert!(!memoized(&effective));
    assert_eq!(with_time_bound_ahead(&t, Collective::Allreduce, &req, || 8), 8);
    // On one core nothing runs beside `f`; the machines we test on have two.
    assert_eq!(memoized(&effective), crate::parallel::threads(2) > 1);
    let (bound, _) = time_bound(&t, Collective::Allreduce, 0, Rat::from_integer(1 << 20)).unwrap();
    assert!(bound > 0.0);
}

#[test]
fn an_mscclpp_plan_too_large_to_stay_resident_is_fitted_with_fewer_trees() {
    // hgx-h100:1 allreduce at 1 GiB: auto's pick needed 98 blocks of 64 operations on rank 0,
    // above the 64 that stay resident; the plan is now made of a forest with fewer trees.
    let topo = from_spec("hgx-h100:1").unwrap();
    let done = synthesize(
        &topo,
        Collective::Allreduce,
        "auto",
        &crate::synth::Request::default(),
        crate::rational::rat(1 << 30),
    )
    .unwrap();
    let flat = crate::ir::orbit::flat(&done.schedule).unwrap();
    let refused = crate::mscclpp::export(flat.as_ref(), &done.topology, None).err().expect("does not fit as it is");
    assert!(refused.to_string().contains("above the 64 blocks that stay resident"), "{refused}");
    let e = export_mscclpp(&done.schedule, &done.topology, None, true).unwrap();
    let note = e.fallback.expect("a fallback");
    assert!(note.contains("does not fit") && note.contains("of the optimal algbw"), "{note}");
    let blocks = e.exported.plan.gpus.iter().map(|g| g.threadblocks.len()).max().unwrap();
    assert!(blocks <= crate::mscclpp::lower::MAX_TBS_PER_RANK, "{blocks}");
    assert!(crate::mscclpp::validate(&e.exported.json).ok());
    // A plan that fits is written from the schedule as it is.
    let small = synthesize(
        &from_spec("ring:4").unwrap(),
        Collective::Allreduce,
        "ring",
        &Default::default(),
        crate::rational::rat(1 << 20),
    );
    let small = small.unwrap();
    assert!(export_mscclpp(&small.schedule, &small.topology, None, true).unwrap().fallback.is_none());
}

/// An export for `runtime` with every other choice left to the exporter, judged at `bytes`.
fn msccl_ask(runtime: crate::msccl::Runtime, bytes: Option<u64>) -> MscclAsk {
    MscclAsk { runtime, protocol: None, channels: None, fused: true, pipeline: None, size_range: None, bytes }
}

/// `auto` for a program written as MSCCL XML ranks by that program. On hgx-h100:2 allgather at
/// 64 MiB the fastest schedule (NCCL's rings crossing by rail, 200.7 us on connections of
/// their own) runs 350.6 us in its thread blocks, 1.88x the 186.2 us bound; TACOS's program
/// runs 217.9 us (1.17x).
#[test]
fn auto_for_msccl_picks_by_the_exported_program() {
    let t = from_spec("hgx-h100:2").unwrap();
    let size = Rat::from_integer(64 << 20);
    let ask = msccl_ask(crate::msccl::Runtime::MscclNccl, Some(64 << 20));
    let judged = |s: &Schedule| ask.export(s, &t, false).unwrap().judged.unwrap().time_us;
    let req = Request::default();
    let by_schedule = synthesize(&t, Collective::Allgather, "auto", &req, size).unwrap().schedule;
    let by_program =
        synthesize_for_msccl(&t, Collective::Allgather, &req, size, &MscclAsk { bytes: None, ..ask.clone() })
            .unwrap()
            .schedule;
    assert_eq!(by_program.provenance.details.text("auto_ranking").as_deref(), Some("\"exported\""));
    assert!(by_schedule.provenance.details.get("auto_ranking").is_none());
    let (bound, _) = time_bound(&t, Collective::Allgather, 0, size).unwrap();
    let (fast, slow) = (judged(&by_program), judged(&by_schedule));
    assert!(slow / bound > 1.8 && fast / bound < 1.2, "{fast} {slow} {bound}");
    // The brute force over the algorithms alone: none of their programs is faster.
    for name in ["forestcoll", "tacos", "nccl-ring", "direct"] {
        let s = as_exported(synthesize(&t, Collective::Allgather, name, &req, size).unwrap().schedule).unwrap();
        assert!(fast <= judged(&s) * (1.0 + 1e-9), "{name}: {} < {fast}", judged(&s));
    }
}

/// A candidate whose program does not fit the runtime is passed over: dgx-a100:2 allgather
/// at 1 MiB (the fastest schedule needs more than 64 steps in a thread block).
#[test]
fn auto_for_msccl_passes_over_programs_that_do_not_fit() {
    let t = from_spec("dgx-a100:2").unwrap();
    let size = Rat::from_integer(1 << 20);
    let req = Request::default();
    for runtime in [crate::msccl::Runtime::MscclNccl, crate::msccl::Runtime::Rccl] {
        let ask = msccl_ask(runtime, None);
        let s = synthesize_for_msccl(&t, Collective::Allgather, &req, size, &ask).unwrap().schedule;
        let e = ask.export(&s, &t, true).unwrap();
        assert!(e.judged.is_some(), "{runtime:?}");
    }
    let plain = synthesize(&t, Collective::Allgather, "auto", &req, size).unwrap().schedule;
    let ask = msccl_ask(crate::msccl::Runtime::MscclNccl, Some(1 << 20));
    let refused = ask.export(&plain, &t, false).map(|e| e.judged);
    assert!(matches!(refused, Err(CollsynthError::Infeasible(_))), "{refused:?}");
}
