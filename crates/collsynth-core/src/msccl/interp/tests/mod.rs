mod buffers;
mod verdicts;
use super::*;
use crate::ir::Collective;

/// The runtime's Simple buffers at large sizes (maxAllowedCount 1, two iterations).
const SIMPLE_M1: Option<Buffers> = Some(Buffers { proto: Protocol::Simple, max_count: 1, iterations: ITERATIONS });
use crate::msccl::model::{Buf, Gpu, Program, Protocol, Step, StepType, ThreadBlock};

/// One side of a step: "-" (unused), "i2" (chunk 2 of the input), "o0:3" (3 chunks).
fn side(text: &str) -> (Buf, i64, Option<usize>) {
    if text == "-" {
        return (Buf::Input, -1, None);
    }
    let buf = Buf::parse(&text[..1]).expect("buffer letter");
    let (off, cnt) = match text[1..].split_once(':') {
        Some((o, c)) => (o, Some(c.parse().expect("cnt"))),
        None => (&text[1..], None),
    };
    (buf, off.parse().expect("offset"), cnt)
}

/// A step from "kind src dst [@tb.step]", e.g. "rrs i2 i2", "s o0:2 -", "s o0 - @0.0".
fn st(text: &str) -> Step {
    let words: Vec<&str> = text.split_whitespace().collect();
    let kind = StepType::parse(words[0]).expect("step type");
    let (srcbuf, srcoff, c1) = side(words[1]);
    let (dstbuf, dstoff, c2) = side(words[2]);
    let cnt = c1.or(c2).unwrap_or(if kind == StepType::Nop { 0 } else { 1 });
    let (depid, deps) = match words.get(3) {
        Some(d) => {
            let (t, k) = d.trim_start_matches('@').split_once('.').expect("@tb.step");
            (t.parse().expect("tb"), k.parse().expect("step"))
        }
        None => (-1, -1),
    };
    Step { s: 0, kind, srcbuf, srcoff, dstbuf, dstoff, cnt, depid, deps, hasdep: false }
}

/// A thread block on channel 0.
fn tb(send: i64, recv: i64, steps: &[&str]) -> ThreadBlock {
    ThreadBlock { id: 0, send, recv, chan: 0, steps: steps.iter().map(|s| st(s)).collect(), comment: None }
}

fn gpu(i_chunks: usize, o_chunks: usize, s_chunks: usize, tbs: Vec<ThreadBlock>) -> Gpu {
    Gpu { id: 0, i_chunks, o_chunks, s_chunks, tbs }
}

/// Numbers gpus, thread blocks and steps, and sets `hasdep` on every dependency target.
fn program(coll: Collective, nchunks: usize, inplace: bool, mut gpus: Vec<Gpu>) -> Program {
    for (g, gpu) in gpus.iter_mut().enumerate() {
        gpu.id = g;
        let mut targets = Vec::new();
        for (t, tb) in gpu.tbs.iter_mut().enumerate() {
            tb.id = t;
            for (k, s) in tb.steps.iter_mut().enumerate() {
                s.s = k;
                if s.depid >= 0 {
                    targets.push((s.depid as usize, s.deps as usize));
                }
            }
        }
        for (t, k) in targets {
            if let Some(s) = gpu.tbs.get_mut(t).and_then(|tb| tb.steps.get_mut(k)) {
                s.hasdep = true;
            }
        }
    }
    Program {
        name: "test".into(),
        proto: Protocol::Simple,
        nchannels: 1,
        nchunksperloop: nchunks,
        ngpus: gpus.len(),
        collective: coll,
        inplace,
        outofplace: !inplace,
        min_bytes: 0,
        max_bytes: 0,
        nthreads: None,
        gpus,
    }
}

/// The 3-GPU in-place ring allreduce of msccl-tools' examples.
fn ring3_steps(r: usize) -> Vec<String> {
    let c = |d: usize| (r + 3 - d) % 3;
    let (a, b, d) = (c(0), c(1), c(2));
    vec![
        format!("s i{a} i{a}"),
        format!("rrs i{b} i{b}"),
        format!("rrcs i{d} i{d}"),
        format!("rcs i{a} i{a}"),
        format!("r i{b} i{b}"),
    ]
}

fn ring3_with(edit: impl Fn(usize, &mut Vec<String>)) -> Program {
    let gpus = (0..3)
        .map(|r| {
            let mut steps = ring3_steps(r);
            edit(r, &mut steps);
            let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
            gpu(3, 0, 0, vec![tb(((r + 1) % 3) as i64, ((r + 2) % 3) as i64, &steps)])
        })
        .collect();
    program(Collective::Allreduce, 3, true, gpus)
}

fn ring3() -> Program {
    ring3_with(|_, _| {})
}

/// A 3-GPU line allgather with GPU 1 relaying through four thread blocks.
fn line3_with(relay0: &str, relay2: &str) -> Program {
    let gpus = vec![
        gpu(0, 3, 0, vec![tb(1, 1, &["s o0 o0", "r o1 o1", "r o2 o2"])]),
        gpu(
            0,
            3,
            0,
            vec![
                tb(-1, 0, &["r o0 o0"]),
                tb(2, -1, &["s o1 o1", relay0]),
                tb(-1, 2, &["r o2 o2"]),
                tb(0, -1, &["s o1 o1", relay2]),
            ],
        ),
        gpu(0, 3, 0, vec![tb(1, 1, &["s o2 o2", "r o1 o1", "r o0 o0"])]),
    ];
    program(Collective::Allgather, 3, true, gpus)
}

fn line3() -> Program {
    line3_with("s o0 o0 @0.0", "s o2 o2 @2.0")
}

#[test]
fn ring3_allreduce_in_place_is_correct_with_the_runtimes_buffers() {
    for slots in [None, Some(Buffers { proto: Protocol::Simple, max_count: 1, iterations: 1 })] {
        let o = run(&ring3(), Aliasing::InPlace, slots);
        assert!(o.is_ok(), "{slots:?}: {o:?}");
        assert_eq!((o.steps_executed, o.messages), (15, 12));
    }
    for slots in [SIMPLE_M1, Some(Buffers::at(Protocol::LL, 1)), Some(Buffers::at(Protocol::LL128, 1))] {
        let o = run(&ring3(), Aliasing::InPlace, slots);
        assert!(o.is_ok(), "{slots:?}: {o:?}");
        assert_eq!((o.steps_executed, o.messages), (30, 24));
    }
    assert_eq!(check(&ring3()), Vec::<String>::new());
}

#[test]
fn line3_allgather_in_place_is_correct_with_any_buffers() {
    for slots in [None, SIMPLE_M1, Some(Buffers::at(Protocol::LL, 1))] {
        let o = run(&line3(), Aliasing::InPlace, slots);
        assert!(o.is_ok(), "{slots:?}: {o:?}");
        let its = slots.map_or(1, |b| b.iterations);
        assert_eq!((o.steps_executed, o.messages), (12 * its, 6 * its));
    }
    assert_eq!(check(&line3()), Vec::<String>::new());
}

#[test]
fn in_place_program_run_out_of_place_leaves_the_output_empty() {
    let o = run(&ring3(), Aliasing::OutOfPlace, None);
    assert_eq!(o.deadlock, None);
    assert_eq!(o.wrong.len(), 9);
    assert_eq!(o.wrong[0], "rank 0 output chunk 0 holds nothing");
    assert_eq!(o.wrong[8], "rank 2 output chunk 2 holds nothing");
}

#[test]
fn swapped_receives_put_chunks_in_the_wrong_place() {
    let mut p = line3();
    p.gpus[0].tbs[0].steps.swap(1, 2);
    p.gpus[0].tbs[0].steps.iter_mut().enumerate().for_each(|(k, s)| s.s = k);
    let o = run(&p, Aliasing::InPlace, SIMPLE_M1);
    assert_eq!((o.deadlock, o.races), (None, vec![]));
    assert_eq!(
        o.wrong,
        [
            "rank 0 output chunk 1 holds chunk 2 of rank 2 but allgather needs chunk 1 of rank 1",
            "rank 0 output chunk 2 holds chunk 1 of rank 1 but allgather needs chunk 2 of rank 2",
        ]
    );
}

#[test]
fn dropped_dependency_is_a_race() {
    let o = run(&line3_with("s o0 o0", "s o2 o2 @2.0"), Aliasing::InPlace, None);
    assert_eq!((o.deadlock, o.wrong), (None, vec![]));
    assert_eq!(
        o.races,
        ["race on rank 1 output chunk 0: gpu 1 tb 0 step 0 (r) writes and gpu 1 tb 1 step 1 (s) reads \
          without a dependency between them"]
    );
    let all = check(&line3_with("s o0 o0", "s o2 o2 @2.0"));
    assert_eq!(all.len(), 1, "{all:?}");
}

/// Rank 0 with a chunk `o1` written by tb 0 and read by tb 1 on another channel; `signal`
/// makes rank 1 answer tb 1 only after tb 0's write (causality through another GPU).
fn relay_through_rank1(signal: bool) -> Program {
    let mut t01 = tb(-1, 1, &["r - s0", "cpy o1 s1"]);
    t01.chan = 1;
    let mut t11 = tb(0, -1, &[if signal { "s o1 - @0.2" } else { "s o1 -" }]);
    t11.chan = 1;
    let gpus = vec![
        gpu(0, 2, 2, vec![tb(1, 1, &["s o0 -", "r - o1", "s o0 -"]), t01]),
        gpu(0, 2, 1, vec![tb(0, 0, &["s o1 -", "r - o0", "r - s0"]), t11]),
    ];
    program(Collective::Allgather, 2, true, gpus)
}

#[test]
fn messages_through_another_gpu_order_thread_blocks() {
    assert!(run(&relay_through_rank1(true), Aliasing::InPlace, None).is_ok());
    let o = run(&relay_through_rank1(false), Aliasing::InPlace, None);
    assert_eq!((o.deadlock, o.wrong), (None, vec![]));
    assert_eq!(
        o.races,
        ["race on rank 0 output chunk 1: gpu 0 tb 0 step 1 (r) writes and gpu 0 tb 1 step 1 (cpy) reads \
          without a dependency between them"]
    );
}

#[test]
fn unordered_read_before_write_is_a_race() {
    let gpus = vec![
        gpu(0, 2, 1, vec![tb(1, 1, &["r - o1", "s o0 -"]), tb(-1, -1, &["cpy o1 s0"])]),
        gpu(0, 2, 0, vec![tb(0, 0, &["s o1 -", "r - o0"])]),
    ];
    let o = run(&program(Collective::Allgather, 2, true, gpus), Aliasing::InPlace, None);
    assert_eq!(o.wrong, ["gpu 0 tb 1 step 0 copies output chunk 1, which holds nothing"]);
    assert_eq!(
        o.races,
        ["race on rank 0 output chunk 1: gpu 0 tb 1 step 0 (cpy) reads and gpu 0 tb 0 step 0 (r) writes \
          without a dependency between them"]
    );
}

#[test]
fn two_writers_race() {
    let mut p = line3();
    p.gpus[1].tbs[2].steps[0] = Step { dstoff: 0, hasdep: true, ..p.gpus[1].tbs[2].steps[0].clone() };
    let o = run(&p, Aliasing::InPlace, None);
    assert_eq!(
        o.races[0],
        "race on rank 1 output chunk 0: gpu 1 tb 0 step 0 (r) writes and gpu 1 tb 2 step 0 (r) writes \
         without a dependency between them"
    );
}

#[test]
fn duplicated_reduction_is_a_double_reduction() {
    let p = ring3_with(|r, steps| {
        if r == 0 {
            steps[3] = "rrcs i0 i0".into();
        }
    });
    let o = run(&p, Aliasing::InPlace, None);
    assert_eq!((o.deadlock, o.races), (None, vec![]));
    assert_eq!(
        o.wrong,
        ["double reduction: rank 0 adds chunk 0 of ranks {0,1,2} into a value that already counts rank 0 \
          (gpu 0 tb 0 step 3)"]
    );
}

#[test]
fn reducing_different_chunks_is_reported() {
    let p = ring3_with(|r, steps| {
        if r == 1 {
            steps[1] = "rrs i2 i2".into();
        }
    });
    let o = run(&p, Aliasing::InPlace, None);
    assert_eq!(o.wrong, ["rank 1 reduces chunk 0 into chunk 2 (gpu 1 tb 0 step 1)"]);
}

#[test]
fn missing_reduction_names_the_missing_rank() {
    let p = ring3_with(|r, steps| {
        if r == 2 {
            steps[2] = "rcs i0 i0".into();
        }
    });
    let o = run(&p, Aliasing::InPlace, SIMPLE_M1);
    assert_eq!((o.deadlock, o.races), (None, vec![]));
    let line = |r| {
        format!("rank {r} output chunk 0 holds chunk 0 summed over ranks {{0,1}} but allreduce needs all 3 ranks (missing {{2}})")
    };
    assert_eq!(o.wrong, [line(0), line(1), line(2)]);
    let all = check(&p);
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(all[0], format!("in-place, unbounded buffers: {}", line(0)));
}

#[test]
fn wait_on_a_step_that_never_runs_deadlocks() {
    let o = run(&line3_with("s o0 o0 @0.5", "s o2 o2 @2.0"), Aliasing::InPlace, None);
    assert_eq!(
        o.deadlock.as_deref(),
        Some(
            "deadlock with unbounded buffers: gpu 1 tb 1 step 1 (s to 2, chan 0) waits for gpu 1 tb 0 step 5, \
             which does not exist (tb 0 has 1 step); gpu 2 tb 0 step 2 (r from 1, chan 0) waits for data"
        )
    );
    assert!(o.wrong.is_empty() && o.races.is_empty());
    // Two relays waiting on each other.
    let o = run(&line3_with("s o0 o0 @3.1", "s o2 o2 @1.1"), Aliasing::InPlace, None);
    assert_eq!(
        o.deadlock.as_deref(),
        Some(
            "deadlock with unbounded buffers: gpu 0 tb 0 step 2 (r from 1, chan 0) waits for data; \
             gpu 1 tb 1 step 1 (s to 2, chan 0) waits for gpu 1 tb 3 step 1; \
             gpu 1 tb 3 step 1 (s to 0, chan 0) waits for gpu 1 tb 1 step 1; \
             gpu 2 tb 0 step 2 (r from 1, chan 0) waits for data"
        )
    );
}

/// Two GPUs each send three chunks to the other before receiving.
fn exchange3(cnt_one_message: bool) -> Program {
    let steps = |r: usize| -> Vec<String> {
        let (mine, theirs) = (3 * r, 3 * (1 - r));
        if cnt_one_message {
            return vec![format!("s o{mine}:3 -"), format!("r - o{theirs}:3")];
        }
        let sends = (0..3).map(|j| format!("s o{} -", mine + j));
        sends.chain((0..3).map(|j| format!("r - o{}", theirs + j))).collect()
    };
    let gpus = (0..2)
        .map(|r| {
            let s = steps(r);
            gpu(0, 6, 0, vec![tb(1 - r as i64, 1 - r as i64, &s.iter().map(String::as_str).collect::<Vec<_>>())])
        })
        .collect();
    program(Collective::Allgather, 6, true, gpus)
}

#[test]
fn sends_before_receives_deadlock_only_with_finite_buffers() {
    let p = exchange3(false);
    for slots in [None, Some(Buffers::at(Protocol::LL, 1))] {
        let o = run(&p, Aliasing::InPlace, slots);
        assert!(o.is_ok(), "{slots:?}: {o:?}");
    }
    // Simple holds two unreceived calls: each GPU's third send waits for the other's receive.
    let d = "deadlock with Simple (2 calls per connection), maxAllowedCount 1, 2 iterations: \
             gpu 0 tb 0 step 2 (s to 1, chan 0) in iteration 0 waits for room on its send connection; \
             gpu 1 tb 0 step 2 (s to 0, chan 0) in iteration 0 waits for room on its send connection";
    let o = run(&p, Aliasing::InPlace, SIMPLE_M1);
    assert_eq!(o.deadlock.as_deref(), Some(d));
    assert_eq!((o.steps_executed, o.messages), (4, 4));
    assert_eq!(check(&p), [format!("in-place: {d}")]);
}

/// One step of three chunks is three calls at maxAllowedCount 1, two at 2, one from 3 on.
#[test]
fn a_step_is_as_many_calls_as_max_allowed_count_makes() {
    let p = exchange3(true);
    assert!(run(&p, Aliasing::InPlace, None).is_ok());
    let o = run(&p, Aliasing::InPlace, SIMPLE_M1);
    let d = "deadlock with Simple (2 calls per connection), maxAllowedCount 1, 2 iterations: \
             gpu 0 tb 0 step 0 (s to 1, chan 0) call 3 of 3 in iteration 0 waits for room on its send connection; \
             gpu 1 tb 0 step 0 (s to 0, chan 0) call 3 of 3 in iteration 0 waits for room on its send connection";
    assert_eq!(o.deadlock.as_deref(), Some(d));
    assert_eq!((o.steps_executed, o.messages), (0, 4));
    for m in [2, 3, 71] {
        let o = run(&p, Aliasing::InPlace, Some(Buffers::at(Protocol::Simple, m)));
        assert!(o.is_ok(), "{m}: {o:?}");
        assert_eq!((o.steps_executed, o.messages), (4, 2 * 3usize.div_ceil(m)));
    }
    assert_eq!(distinct_max_counts(&p), [1, 2, 3]);
    assert_eq!(check(&p), [format!("in-place: {d}")]);
    // LL holds 8 calls: every m passes.
    let mut ll = p.clone();
    ll.proto = Protocol::LL;
    assert_eq!(check(&ll), Vec::<String>::new());
}

#[test]
fn message_size_mismatch_is_reported() {
    let gpus = vec![
        gpu(0, 6, 0, vec![tb(1, 1, &["s o0:3 -", "r - o3:3"])]),
        gpu(0, 6, 0, vec![tb(0, 0, &["s o3:3 -", "r - o0:2"])]),
    ];
    let o = run(&program(Collective::Allgather, 6, true, gpus), Aliasing::InPlace, None);
    assert_eq!(
        o.wrong,
        [
            "gpu 1 tb 0 step 1 receives 2 chunks but the message from gpu 0 tb 0 step 0 carries 3",
            "rank 1 output chunk 2 holds nothing",
        ]
    );
}

/// Out-of-place allgather on 2 GPUs: copy the own chunk, exchange.
fn allgather2(copy: bool) -> Program {
    let gpus = (0..2)
        .map(|r| {
            let (o, t) = (format!("s o{r} -"), format!("r - o{}", 1 - r));
            let c = format!("cpy i0 o{r}");
            let steps: Vec<&str> = if copy { vec![&c, &o, &t] } else { vec![&o, &t] };
            gpu(1, 2, 0, vec![tb(1 - r as i64, 1 - r as i64, &steps)])
        })
        .collect();
    let mut p = program(Collective::Allgather, 2, false, gpus);
    p.inplace = true;
    p.outofplace = true;
    p
}

#[test]
fn out_of_place_allgather_and_reading_empty_chunks() {
    assert_eq!(check(&allgather2(true)), Vec::<String>::new());
    // In place the send of o0 reads the user's input (o chunk rank), so the copy is not needed.
    assert!(run(&allgather2(false), Aliasing::InPlace, None).is_ok());
    let o = run(&allgather2(false), Aliasing::OutOfPlace, None);
    assert_eq!(
        o.wrong,
        [
            "gpu 0 tb 0 step 0 sends output chunk 0, which holds nothing",
            "gpu 1 tb 0 step 0 sends output chunk 1, which holds nothing",
            "rank 0 output chunk 0 holds nothing",
            "rank 1 output chunk 1 holds nothing",
        ]
    );
    assert_eq!(check(&allgather2(false)).len(), 4);
    assert!(check(&allgather2(false))[0].starts_with("out-of-place, unbounded buffers: gpu 0 tb 0 step 0 sends"));
}

#[test]
fn reduce_scatter_aliases_output_into_input_in_place() {
    // Rank r sends the other's chunk and reduces its own into output chunk 0, which in place
    // is input chunk r.
    let gpus = (0..2)
        .map(|r| {
            gpu(2, 1, 0, vec![tb(1 - r as i64, 1 - r as i64, &[&format!("s i{} -", 1 - r), &format!("rrc i{r} o0")])])
        })
        .collect();
    let mut p = program(Collective::ReduceScatter, 2, true, gpus);
    p.outofplace = true;
    assert_eq!(check(&p), Vec::<String>::new());
    // Two-chunk messages in a 4-chunk loop, out of place.
    let gpus = (0..2)
        .map(|r| {
            gpu(
                4,
                2,
                0,
                vec![tb(
                    1 - r as i64,
                    1 - r as i64,
                    &[&format!("s i{}:2 -", 2 * (1 - r)), &format!("rrc i{}:2 o0:2", 2 * r)],
                )],
            )
        })
        .collect();
    let p = program(Collective::ReduceScatter, 4, false, gpus);
    assert!(run(&p, Aliasing::OutOfPlace, None).is_ok());
}

#[test]
fn broadcast_from_root_0_and_reduce_to_root_0() {
    let bcast = |copy: bool| {
        let root =
            if copy { vec![tb(1, -1, &["s i0 -"]), tb(-1, -1, &["cpy i0 o0"])] } else { vec![tb(1, -1, &["s i0 -"])] };
        let gpus = vec![
            gpu(1, 1, 0, root),
            gpu(1, 1, 0, vec![tb(2, 0, &["rcs - o0"])]),
            gpu(1, 1, 0, vec![tb(-1, 1, &["r - o0"])]),
        ];
        program(Collective::Broadcast, 1, false, gpus)
    };
    assert!(run(&bcast(true), Aliasing::OutOfPlace, None).is_ok());
    assert!(run(&bcast(true), Aliasing::InPlace, None).is_ok());
    assert!(run(&bcast(false), Aliasing::InPlace, None).is_ok());
    assert_eq!(run(&bcast(false), Aliasing::OutOfPlace, None).wrong, ["rank 0 output chunk 0 holds nothing"]);
    // Rank 2 waits for a message rank 0 never sends.
    let mut p = bcast(true);
    p.gpus[2].tbs[0].recv = 0;
    p.gpus[1].tbs[0].steps[0].kind = StepType::Recv;
    p.gpus[1].tbs[0].send = -1;
    let o = run(&p, Aliasing::InPlace, None);
    assert_eq!(
        o.deadlock.as_deref(),
        Some("deadlock with unbounded buffers: gpu 2 tb 0 step 0 (r from 0, chan 0) waits for data")
    );

    let gpus = vec![gpu(1, 1, 0, vec![tb(-1, 1, &["rrc i0 o0"])]), gpu(1, 1, 0, vec![tb(0, -1, &["s i0 -"])])];
    let mut p = program(Collective::Reduce, 1, false, gpus);
    p.inplace = true;
    assert_eq!(check(&p), Vec::<String>::new());
}

#[test]
fn inconsistent_programs_are_reported_not_panicked() {
    let mut p = ring3();
    p.gpus[1].tbs[0].steps[2].srcoff = 5;
    assert_eq!(run(&p, Aliasing::InPlace, None).wrong, ["gpu 1 tb 0 step 2: i[5..+1] is outside its 3 chunks"]);
    let mut p = ring3();
    p.gpus[1].tbs[0].send = 1;
    assert_eq!(run(&p, Aliasing::InPlace, None).wrong, ["gpu 1: send peer 1 is not another rank below 3"]);
    let mut p = ring3();
    p.gpus[0].tbs[0].steps[0].depid = 4;
    p.gpus[0].tbs[0].steps[0].deps = 0;
    assert_eq!(run(&p, Aliasing::InPlace, None).wrong, ["gpu 0 tb 0 step 0: depid 4 is not a thread block of gpu 0"]);
    let mut p = ring3();
    p.nchunksperloop = 0;
    assert_eq!(run(&p, Aliasing::InPlace, None).wrong, ["ngpus 3 and nchunksperloop 0 must be positive"]);
    let mut p = ring3();
    p.collective = Collective::Allgatherv;
    assert_eq!(run(&p, Aliasing::InPlace, None).wrong, ["allgatherv is not expressible in MSCCL XML"]);
    let mut p = ring3();
    p.gpus.pop();
    assert_eq!(run(&p, Aliasing::InPlace, None).wrong, ["the program has 2 gpus but ngpus is 3"]);
    let mut p = ring3();
    p.inplace = false;
    p.outofplace = false;
    assert_eq!(check(&p), ["the program claims neither in-place nor out-of-place use"]);
}

#[test]
fn link_loads_are_exact_fractions_of_the_buffer() {
    // Ring allreduce on a unidirectional ring: 4 messages of 1/3 of M per link at 100 GB/s.
    let ring = crate::zoo::from_spec("ring:3").unwrap();
    let (loads, time) = link_loads(&ring3(), &ring).unwrap();
    assert_eq!(loads, vec![Rat::new(4, 3); 3]);
    assert_eq!(time, Rat::new(1, 75));
    // Line allgather on a line at 50 GB/s: rank 1 relays two chunks each way.
    let line = crate::zoo::from_spec("mesh:3,bw=50").unwrap();
    let (loads, time) = link_loads(&line3(), &line).unwrap();
    let mut got: Vec<(usize, usize, Rat)> = line
        .links
        .iter()
        .zip(&loads)
        .map(|(l, x)| (line.rank_of(l.src).unwrap(), line.rank_of(l.dst).unwrap(), *x))
        .collect();
    got.sort();
    let third = |n| Rat::new(n, 3);
    assert_eq!(got, [(0, 1, third(1)), (1, 0, third(2)), (1, 2, third(2)), (2, 1, third(1))]);
    assert_eq!(time, Rat::new(2, 150));
    // Through a switch each message crosses an up and a down link.
    let sw = crate::zoo::from_spec("switch:3").unwrap();
    let (loads, time) = link_loads(&ring3(), &sw).unwrap();
    assert_eq!(loads.iter().filter(|&&x| x == Rat::new(4, 3)).count(), 6);
    assert_eq!(time, Rat::new(1, 75));
    assert!(link_loads(&line3(), &ring).is_ok());
    assert!(link_loads(&line3(), &crate::zoo::from_spec("ring:4").unwrap()).is_err());
}

/// Ring allreduce on n ranks (n chunks, in place), generalizing `ring3`.
fn ring(n: usize) -> Program {
    let gpus = (0..n)
        .map(|r| {
            let c = |d: usize| (r + n * 2 - d) % n;
            let mut steps = vec![format!("s i{r} -")];
            steps.extend((1..n - 1).map(|k| format!("rrs i{} -", c(k))));
            steps.push(format!("rrcs i{0} i{0}", c(n - 1)));
            steps.extend((0..n - 2).map(|j| format!("rcs - i{}", c(j))));
            steps.push(format!("r - i{}", c(n - 2)));
            let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
            gpu(n, 0, 0, vec![tb(((r + 1) % n) as i64, ((r + n - 1) % n) as i64, &steps)])
        })
        .collect();
    program(Collective::Allreduce, n, true, gpus)
}

#[test]
fn large_ring_runs_clean() {
    // How long the interpreter takes is measured by `make bench` (bench_msccl.py), not here.
    assert!(run(&ring(3), Aliasing::InPlace, SIMPLE_M1).is_ok());
    assert!(run(&ring(8), Aliasing::InPlace, SIMPLE_M1).is_ok());
    let n = 300;
    let o = run(&ring(n), Aliasing::InPlace, SIMPLE_M1);
    assert!(o.is_ok(), "{:?}", o.wrong.first());
    assert_eq!(o.steps_executed, ITERATIONS * n * (2 * n - 1));
}

/// Ring allreduce on n ranks with `ch` channels, one thread block per channel and rank;
/// channel c reduces chunks c*n.. (n*ch chunks, in place).
fn multi_ring(n: usize, ch: usize) -> Program {
    let gpus = (0..n)
        .map(|r| {
            let tbs = (0..ch)
                .map(|ci| {
                    let c = |d: usize| ci * n + (r + n * 2 - d) % n;
                    let mut steps = vec![format!("s i{} -", c(0))];
                    steps.extend((1..n - 1).map(|k| format!("rrs i{} -", c(k))));
                    steps.push(format!("rrcs i{0} i{0}", c(n - 1)));
                    steps.extend((0..n - 2).map(|j| format!("rcs - i{}", c(j))));
                    steps.push(format!("r - i{}", c(n - 2)));
                    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
                    let mut t = tb(((r + 1) % n) as i64, ((r + n - 1) % n) as i64, &steps);
                    t.chan = ci;
                    t
                })
                .collect();
            gpu(n * ch, 0, 0, tbs)
        })
        .collect();
    program(Collective::Allreduce, n * ch, true, gpus)
}

#[test]
fn multi_channel_ring_is_clean() {
    let o = run(&multi_ring(8, 4), Aliasing::InPlace, SIMPLE_M1);
    assert!(o.is_ok(), "{o:?}");
    assert_eq!(o.steps_executed, ITERATIONS * 8 * 4 * 15);
}

#[test]
fn long_reports_are_capped() {
    let o = run(&ring(4), Aliasing::OutOfPlace, None);
    assert_eq!(o.wrong.len(), 11);
    assert_eq!(o.wrong[10], "... and 6 more wrong values");
    // Without the first send every GPU waits for data from its predecessor.
    let mut p = ring(12);
    for g in &mut p.gpus {
        g.tbs[0].steps.remove(0);
        g.tbs[0].steps.iter_mut().enumerate().for_each(|(k, s)| s.s = k);
    }
    let d = run(&p, Aliasing::InPlace, None).deadlock.unwrap();
    assert!(
        d.starts_with("deadlock with unbounded buffers: gpu 0 tb 0 step 0 (rrs from 11 to 1, chan 0) waits for data; ")
    );
    assert!(d.ends_with("gpu 7 tb 0 step 0 (rrs from 6 to 8, chan 0) waits for data; and 4 more"), "{d}");
}
