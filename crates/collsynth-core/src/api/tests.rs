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
    fastest_candidate(&t, Collective::Allgather, size, ["ring", "broken", "direct"], &Request::default(), |name, r| {
        if name == "broken" {
            return Err(fail.clone());
        }
        synthesize(&t, Collective::Allgather, name, r, size)
    })
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
    let err = fastest_candidate(&t, Collective::Allgather, Rat::from_integer(1), ["a"], &Request::default(), |_, _| {
        Err(CollsynthError::Infeasible("no".into()))
    })
    .err()
    .unwrap();
    assert!(matches!(err, CollsynthError::BadInput(ref m) if m.starts_with("no registered algorithm applies")));
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

/// `auto` chooses the protocol with the schedule: on hgx-h100:2 at 64 MiB NCCL's tuner
/// estimate picks LL128 for the winning rings, Simple runs them faster, so `auto` returns
/// them pinned to Simple (`auto_protocol`), and the runtime model (and the exporter, which
/// asks `choose_protocol`) run them so. Without the pin the same schedule is slower; the pin
/// binds MSCCL programs only, and an unknown name pins nothing.
#[test]
fn auto_pins_the_protocol_it_won_with() {
    use crate::cost::runtime::{choose_protocol, pinned_protocol, runtime, runtime_time, Protocol, PINNED_PROTOCOL};
    let t = from_spec("hgx-h100:2").unwrap();
    let size = Rat::from_integer(64 << 20);
    let s = synthesize(&t, Collective::Allgather, "auto", &Request::default(), size).unwrap().schedule;
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
