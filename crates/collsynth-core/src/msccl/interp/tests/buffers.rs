//! Connection buffers counted in runtime calls: the hand-built cycle (a fused
//! `rrcs cnt=12` whose peer's receive waits on a flag that only a step blocked on the return
//! connection would set) and the choice of maxAllowedCount values.

use super::*;
use crate::msccl::{parse, Runtime};

/// GPU 0 `rrcs` 12 chunks from 1 and back; GPU 1 sends its 12 chunks on tb 0 (hasdep) and
/// receives the sums on tb 1 only after tb 0's step (in place the sums overwrite what tb 0
/// sends). At m calls the step is ceil(12/m) calls and the two Simple connections hold 2
/// calls each: with more than 4 calls gpu 1 tb 0 stops midway and never sets its flag.
fn cycle_xml(proto: &str, cnt: usize) -> String {
    let step = |s: usize, ty: &str, src: &str, dst: &str, dep: (i64, i64), hasdep: u8| {
        format!(
            "      <step s=\"{s}\" type=\"{ty}\" srcbuf=\"{src}\" srcoff=\"0\" dstbuf=\"{dst}\" dstoff=\"0\" cnt=\"{cnt}\" \
             depid=\"{}\" deps=\"{}\" hasdep=\"{hasdep}\"/>\n",
            dep.0, dep.1
        )
    };
    let mut x = format!(
        "<algo name=\"cycle\" proto=\"{proto}\" nchunksperloop=\"{cnt}\" ngpus=\"2\" coll=\"allreduce\" inplace=\"1\" \
         outofplace=\"1\" minBytes=\"0\" maxBytes=\"1099511627776\" nchannels=\"1\">\n"
    );
    x += &format!("  <gpu id=\"0\" i_chunks=\"{cnt}\" o_chunks=\"{cnt}\" s_chunks=\"0\">\n");
    x += "    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n";
    x += &step(0, "rrcs", "i", "o", (-1, -1), 0);
    x += "    </tb>\n  </gpu>\n";
    x += &format!("  <gpu id=\"1\" i_chunks=\"{cnt}\" o_chunks=\"{cnt}\" s_chunks=\"0\">\n");
    x += "    <tb id=\"0\" send=\"0\" recv=\"-1\" chan=\"0\">\n";
    x += &step(0, "s", "i", "i", (-1, -1), 1);
    x += "    </tb>\n    <tb id=\"1\" send=\"-1\" recv=\"0\" chan=\"0\">\n";
    x += &step(0, "r", "o", "o", (0, 0), 0);
    x += "    </tb>\n  </gpu>\n</algo>\n";
    x
}

fn cycle(proto: &str, cnt: usize) -> Program {
    parse::parse(&cycle_xml(proto, cnt), Runtime::MscclNccl).unwrap()
}

#[test]
fn the_rrcs_cycle_deadlocks_at_small_max_allowed_count_only() {
    let p = cycle("Simple", 12);
    assert_eq!(crate::msccl::rules::check(&p, Runtime::MscclNccl), Vec::<String>::new());
    for aliasing in [Aliasing::InPlace, Aliasing::OutOfPlace] {
        assert!(run(&p, aliasing, None).is_ok());
        // m = 1: gpu 1 tb 0 gets 4 of its 12 calls out (2 taken by gpu 0, whose 2 sums fill
        // the connection to gpu 1, and 2 buffered), so its flag never comes.
        let o = run(&p, aliasing, Some(Buffers::at(Protocol::Simple, 1)));
        assert_eq!(
            o.deadlock.as_deref(),
            Some(
                "deadlock with Simple (2 calls per connection), maxAllowedCount 1, 2 iterations: \
                 gpu 0 tb 0 step 0 (rrcs from 1 to 1, chan 0) call 3 of 12 in iteration 0 waits for room on its \
                 send connection; gpu 1 tb 0 step 0 (s to 0, chan 0) call 5 of 12 in iteration 0 waits for room \
                 on its send connection; gpu 1 tb 1 step 0 (r from 0, chan 0) in iteration 0 waits for gpu 1 tb \
                 0 step 0"
            )
        );
        assert_eq!((o.steps_executed, o.messages), (0, 6));
        // ceil(12/m) calls: more than 4 (m = 1, 2) hang, 4 or fewer pass.
        for m in 1..=MAX_COUNT - 1 {
            let o = run(&p, aliasing, Some(Buffers::at(Protocol::Simple, m)));
            assert_eq!(o.deadlock.is_some(), 12usize.div_ceil(m) > 4, "m = {m}: {o:?}");
            assert_eq!(o.deadlock.is_none(), o.is_ok(), "m = {m}: {o:?}");
        }
        // Also with one iteration at m = 1: the cycle is within one loop of the runtime.
        let one = Buffers { proto: Protocol::Simple, max_count: 1, iterations: 1 };
        assert!(run(&p, aliasing, Some(one)).deadlock.is_some());
    }
    let problems = check(&p);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].starts_with("in-place: deadlock with Simple (2 calls per connection), maxAllowedCount 1, 2"));
    assert!(problems[0].ends_with("(also deadlocks at maxAllowedCount 2)"), "{}", problems[0]);
    assert!(problems[1].starts_with("out-of-place: deadlock with Simple"));
    // LL holds 8 calls per connection: the two connections absorb 16, so 12 calls pass
    // and 20 hang at m = 1 only (10 calls at m = 2).
    assert_eq!(check(&cycle("LL", 12)), Vec::<String>::new());
    let problems = check(&cycle("LL", 20));
    assert!(problems[0].starts_with("in-place: deadlock with LL (8 calls per connection), maxAllowedCount 1"));
    assert!(!problems[0].contains("also"), "{}", problems[0]);
}

#[test]
fn the_validator_reports_the_cycle_with_m_and_the_protocol() {
    let v = crate::msccl::validate(&cycle_xml("LL128", 20), None).unwrap();
    assert!(v.runtimes.iter().all(|(_, ps)| ps.is_empty()), "{:?}", v.runtimes);
    assert!(!v.ok());
    assert!(v.execution[0].contains("deadlock with LL128 (8 calls per connection), maxAllowedCount 1,"));
}

/// The m values `check` runs are exactly those where some step's call count changes.
#[test]
fn distinct_max_counts_are_the_breakpoints_of_the_call_counts() {
    assert_eq!(distinct_max_counts(&cycle("Simple", 12)), [1, 2, 3, 4, 6, 12]);
    // Brute force over random cnt sets: one m per distinct vector of ceil(cnt/m), the
    // smallest such m, and every m up to 71 maps onto one of them.
    let mut seed = 7u64;
    for _ in 0..200 {
        let mut p = cycle("Simple", 12);
        let steps = &mut p.gpus[1].tbs[0].steps;
        let mut cnts = Vec::new();
        for _ in 0..3 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            cnts.push((seed >> 33) as usize % 71 + 1);
        }
        let mut st = steps[0].clone();
        steps.clear();
        for (k, &c) in cnts.iter().enumerate() {
            st.s = k;
            st.cnt = c;
            steps.push(st.clone());
        }
        let got = distinct_max_counts(&p);
        let mut all = p.gpus.iter().flat_map(|g| &g.tbs).flat_map(|t| &t.steps).map(|s| s.cnt).collect::<Vec<_>>();
        all.sort_unstable();
        all.dedup();
        let sig = |m: usize| all.iter().map(|c| c.div_ceil(m)).collect::<Vec<_>>();
        let mut want = vec![1];
        for m in 2..MAX_COUNT {
            if sig(m) != sig(m - 1) {
                want.push(m);
            }
        }
        assert_eq!(got, want, "{all:?}");
    }
}

/// The argument for running fewer m: every m from 1 to 71 gives the verdict of the largest
/// m of `distinct_max_counts` at or below it (here on the cycle at several `cnt`, both
/// protocols, where the verdict does change with m).
#[test]
fn every_max_allowed_count_has_the_verdict_of_its_representative() {
    for (proto, cnt) in [("Simple", 5), ("Simple", 12), ("Simple", 37), ("LL", 20), ("LL", 71)] {
        let p = cycle(proto, cnt);
        let reps = distinct_max_counts(&p);
        let hangs = |m: usize| run(&p, Aliasing::InPlace, Some(Buffers::at(p.proto, m))).deadlock.is_some();
        let mut changes = 0;
        for m in 1..MAX_COUNT {
            let rep = *reps.iter().rfind(|&&r| r <= m).unwrap();
            assert_eq!(hangs(m), hangs(rep), "{proto} cnt {cnt} m {m} (rep {rep})");
            changes += usize::from(m > 1 && hangs(m) != hangs(m - 1));
        }
        assert_eq!(changes, 1, "{proto} cnt {cnt}: the verdict changes once, from hang to pass");
    }
}
