//! The fast checks give the plain algorithm's verdicts: `check` (batched, parallel, runs
//! that only look for a deadlock, merges that skip bases already seen) against the check as
//! it was (every run sequential, fully tracked, plain merges), and `check_first` against
//! `check`'s first line, on exported programs and on mutations of them that race, hang,
//! miscount or compute wrong values.

use super::super::clock::{exceeds, merge, Clock, Seen, Vc, NONE, PLAIN};
use super::*;
use crate::api;
use crate::msccl::{export, lower};
use crate::rational::rat;
use crate::synth::Request;
use crate::zoo::from_spec;

/// The check before this change: every run sequential, fully tracked, with plain merges.
fn check_plain(p: &Program) -> Vec<String> {
    PLAIN.set(true);
    let mut out = Vec::new();
    if !p.inplace && !p.outofplace {
        out.push("the program claims neither in-place nor out-of-place use".into());
    }
    let modes = [(p.inplace, Aliasing::InPlace, "in-place"), (p.outofplace, Aliasing::OutOfPlace, "out-of-place")];
    for (_, aliasing, mode) in modes.into_iter().filter(|m| m.0 && (p.inplace || p.outofplace)) {
        let free = run(p, aliasing, None);
        report(&mut out, mode, &free, None, None);
        if free.deadlock.is_some() {
            continue;
        }
        let (pos, mut first, mut also) = (out.len(), None::<String>, Vec::new());
        for m in distinct_max_counts(p) {
            let b = Buffers::at(p.proto, m);
            let tight = run(p, aliasing, Some(b));
            match (&tight.deadlock, &first) {
                (Some(d), None) => first = Some(format!("{mode}: {d}")),
                (Some(_), Some(_)) => also.push(m.to_string()),
                _ => {}
            }
            if out.len() == pos && free.is_ok() {
                report(&mut out, mode, &Outcome { deadlock: None, ..tight }, Some(b), Some(&free));
            }
        }
        if let Some(mut d) = first {
            if !also.is_empty() {
                d += &format!(" (also deadlocks at maxAllowedCount {})", also.join(", "));
            }
            out.insert(pos, d);
        }
    }
    PLAIN.set(false);
    out
}

/// Exported programs (fused and not, Simple and LL) of a few collectives on small machines.
fn exported() -> Vec<Program> {
    let mut out = Vec::new();
    let cases = [
        ("ring:4", "ring", Collective::Allreduce),
        ("torus:2x3", "forestcoll", Collective::Allreduce),
        ("switch:4", "forestcoll", Collective::Allgather),
        ("dgx-a100:1", "forestcoll", Collective::ReduceScatter),
        ("hypercube:3", "bfb", Collective::Allgather),
    ];
    for (spec, alg, c) in cases {
        let topo = from_spec(spec).unwrap();
        let done = api::synthesize(&topo, c, alg, &Request::default(), rat(1 << 20)).unwrap();
        for (proto, fused) in [(Protocol::Simple, true), (Protocol::LL, false)] {
            let o = lower::Options { proto, fused, ..lower::Options::default() };
            out.push(export(&done.schedule, &o, true).unwrap().program);
        }
    }
    out
}

/// A tiny deterministic generator (the mutations must be the same on every run).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n.max(1) as u64) as usize
    }
}

/// `p` with one step changed by mutation `kind`: drop its dependency, point it at another
/// step, grow or shrink its count, shift an offset, swap it with the next step, or change
/// its type. May be structurally inconsistent (then the verdict is one `wrong` line).
fn mutate(p: &Program, kind: usize, rng: &mut Lcg) -> Program {
    let mut q = p.clone();
    let g = rng.below(q.gpus.len());
    let gpu = &mut q.gpus[g];
    let ntbs = gpu.tbs.len();
    let t = rng.below(ntbs);
    let steps = &mut gpu.tbs[t].steps;
    if steps.is_empty() {
        return q;
    }
    let (k, n) = (rng.below(steps.len()), steps.len());
    if kind == 6 && k + 1 < n {
        steps.swap(k, k + 1);
        (steps[k].s, steps[k + 1].s) = (k, k + 1);
        return q;
    }
    let st = &mut steps[k];
    match kind {
        0 => st.depid = -1,
        1 => {
            st.depid = rng.below(ntbs) as i64;
            st.deps = rng.below(4) as i64;
        }
        2 => st.cnt += 1,
        3 => st.cnt = st.cnt.saturating_sub(1),
        4 => st.dstoff = (st.dstoff + 1).max(0),
        5 => st.srcoff = (st.srcoff - 1).max(0),
        _ => {
            let kinds = [StepType::Send, StepType::Recv, StepType::Copy, StepType::RecvCopySend, StepType::Nop];
            st.kind = kinds[rng.below(kinds.len())];
        }
    }
    q
}

/// (exported programs, their mutations), each checked both ways; counts of what the
/// mutations found, so that the comparison is known to cover every kind of verdict.
#[test]
fn fast_checks_give_the_plain_verdicts() {
    let (mut races, mut hangs, mut wrong, mut clean, mut bad) = (0, 0, 0, 0, 0);
    let mut rng = Lcg(19);
    for p in exported() {
        let base = check(&p);
        assert_eq!(base, Vec::<String>::new(), "exported programs are correct");
        assert_eq!(check_first(&p), None);
        for kind in 0..8 {
            for _ in 0..6 {
                let q = mutate(&p, kind, &mut rng);
                let (fast, plain) = (check(&q), check_plain(&q));
                assert_eq!(fast, plain, "mutation {kind}");
                assert_eq!(check_first(&q), plain.first().cloned(), "mutation {kind}");
                races += usize::from(plain.iter().any(|l| l.contains("race on")));
                hangs += usize::from(plain.iter().any(|l| l.contains("deadlock with")));
                wrong += usize::from(plain.iter().any(|l| l.contains("holds nothing") || l.contains("reduction")));
                bad += usize::from(plain.iter().any(|l| l.contains("but the message from")));
                clean += usize::from(plain.is_empty());
            }
        }
    }
    assert!(races > 0 && hangs > 0 && wrong > 0 && clean > 0 && bad > 0, "{races} {hangs} {wrong} {clean} {bad}");
}

/// A run that only looks for a deadlock finds the same one (same line) as a full run.
#[test]
fn deadlock_only_runs_find_the_full_runs_deadlock() {
    let mut rng = Lcg(20);
    let mut hangs = 0;
    for p in exported() {
        for kind in [0, 1, 6, 7] {
            for _ in 0..4 {
                let q = mutate(&p, kind, &mut rng);
                for m in distinct_max_counts(&q).into_iter().take(3) {
                    let b = Some(Buffers::at(q.proto, m));
                    for aliasing in [Aliasing::InPlace, Aliasing::OutOfPlace] {
                        let (full, only) = (run_as(&q, aliasing, b, true), run_as(&q, aliasing, b, false));
                        assert_eq!(full.deadlock, only.deadlock);
                        assert_eq!((full.steps_executed, full.messages), (only.steps_executed, only.messages));
                        hangs += usize::from(full.deadlock.is_some());
                    }
                }
            }
        }
    }
    assert!(hangs > 0);
}

/// The branch-free comparison is "some component above": a single component decides it.
#[test]
fn exceeds_is_some_component_above() {
    let mut rng = Lcg(21);
    for _ in 0..200 {
        let a: [u32; 64] = std::array::from_fn(|_| rng.below(4) as u32);
        let b: [u32; 64] = std::array::from_fn(|_| rng.below(4) as u32);
        assert_eq!(exceeds(&a, &b), a.iter().zip(&b).any(|(x, y)| x > y), "{a:?} {b:?}");
    }
    let (mut a, b) = ([5; 64], [5; 64]);
    assert!(!exceeds(&a, &b));
    a[63] = 6;
    assert!(exceeds(&a, &b) && !exceeds(&b, &a));
}

/// A merge takes the componentwise maximum and the publisher's own count, shares the
/// segments the incoming clock dominates instead of copying them, and leaves a snapshot
/// taken before it unchanged.
#[test]
fn merge_is_the_maximum_and_shares_dominated_segments() {
    // 130 components: segments 0 and 1 full, segment 2 two components long.
    let (mut a, mut b) = (Vc::zeros(130), Vc::zeros(130));
    let (mut sa, mut sb) = (Seen::default(), Seen::default());
    let bump = |vc: &mut Vc, seen: &mut Seen, who: u32, own: u32| {
        merge(vc, seen, &Clock::snapshot(&Vc::zeros(130), who, own));
    };
    bump(&mut a, &mut sa, 3, 7); // a ahead in segment 0
    bump(&mut b, &mut sb, 70, 9); // b ahead in segment 1
    bump(&mut b, &mut sb, 5, 2); // b ahead in segment 0 too, elsewhere
    let before = a.clone();
    merge(&mut a, &mut sa, &Clock::snapshot(&b, 129, 4));
    let got: Vec<u32> = (0..130).map(|c| a.get(c).unwrap()).collect();
    let want: Vec<u32> =
        (0..130).map(|c| [(3, 7), (70, 9), (5, 2), (129, 4)].iter().find(|x| x.0 == c).map_or(0, |x| x.1)).collect();
    assert_eq!(got, want);
    assert!(std::rc::Rc::ptr_eq(a.segment(1), b.segment(1)), "segment 1: b dominates, so it is shared");
    assert!(!std::rc::Rc::ptr_eq(a.segment(0), b.segment(0)), "segment 0: both ahead somewhere, so it is new");
    assert_eq!((before.get(3), before.get(70), before.get(5)), (Some(7), Some(0), Some(0)));
    assert_eq!(a.get(NONE), None);
}
