use super::*;
use crate::msccl::parse::parse;

/// A 3-GPU line allgather: GPU 1 relays through separate recv/send thread blocks, so
/// it has cross-thread-block dependencies (tb 1 step 1 waits on tb 0 step 0, tb 3 step 1 on
/// tb 2 step 0).
/// (Shared with the Python executor's tests; the window here is 1 MiB.)
fn line3_xml() -> String {
    include_str!("../../../../../tests/data/ag_line3.xml").replace(r#"maxBytes="0""#, r#"maxBytes="1048576""#)
}

fn line3() -> Program {
    parse(&line3_xml(), Runtime::MscclNccl).unwrap()
}

/// The single problem `p` has under every runtime (each names itself: msccl-nccl's is
/// returned).
fn only_problem(p: &Program) -> String {
    let new = check(p, Runtime::MscclNccl);
    for r in Runtime::ALL {
        assert_eq!(check(p, r).join("\n").replace(r.name(), "msccl-nccl"), new.join("\n"));
    }
    assert_eq!(new.len(), 1, "{new:#?}");
    new[0].clone()
}

fn nop(s: usize, depid: i64, deps: i64) -> Step {
    Step {
        s,
        kind: StepType::Nop,
        srcbuf: Buf::Input,
        srcoff: -1,
        dstbuf: Buf::Output,
        dstoff: -1,
        cnt: 0,
        depid,
        deps,
        hasdep: false,
    }
}

#[test]
fn line3_is_clean_in_both_dialects() {
    let p = line3();
    assert_eq!(check(&p, Runtime::MscclLegacy), Vec::<String>::new());
    assert_eq!(check(&p, Runtime::MscclNccl), Vec::<String>::new());
    assert_eq!(tb_usage(&p), vec![(1, 1, 3), (4, 1, 2), (1, 1, 3)]);
}

#[test]
fn dropped_hasdep_on_a_dependency_target_deadlocks() {
    let mut p = line3();
    p.gpus[1].tbs[0].steps[0].hasdep = false;
    assert_eq!(
        only_problem(&p),
        "gpu 1 tb 1 step 1: depid=\"0\" deps=\"0\" waits on gpu 1 tb 0 step 0, which does not have hasdep=\"1\": \
         the runtime would never publish the flag (deadlock)"
    );
}

#[test]
fn duplicate_tb_id() {
    let mut p = line3();
    p.gpus[1].tbs[3].id = 2;
    let got = check(&p, Runtime::MscclNccl);
    assert!(got.contains(&"gpu 1 tb 2: duplicate thread block id (2 thread blocks have it)".to_string()), "{got:#?}");
}

#[test]
fn tb_id_hole() {
    let mut p = line3();
    p.gpus[1].tbs[3].id = 5;
    p.gpus[1].tbs[2].id = 4;
    p.gpus[1].tbs[1].steps[1].depid = 0;
    let got = check(&p, Runtime::MscclNccl);
    assert!(got.contains(&"gpu 1: thread block id(s) 2, 3 missing (ids must be 0..T-1 with no holes)".to_string()));
    // tb 5 still waits on "tb 2", which is gone now.
    assert!(got.contains(&"gpu 1 tb 5 step 1: depid=\"2\" deps=\"0\": gpu 1 has no thread block 2".to_string()));
}

#[test]
fn two_tbs_owning_one_connection() {
    let mut p = line3();
    p.gpus[1].tbs[3].send = 2;
    p.gpus[1].tbs[3].steps[1].srcoff = 0;
    assert_eq!(
        only_problem(&p),
        "gpu 1 tb 3: the send connection with gpu 2 on channel 0 is already owned by tb 1 \
         (one thread block per peer, direction and channel)"
    );
    // On another channel the same peer is fine.
    p.nchannels = 2;
    p.gpus[1].tbs[3].chan = 1;
    assert_eq!(check(&p, Runtime::MscclNccl), Vec::<String>::new());
}

#[test]
fn cnt_limits() {
    let mut p = line3();
    p.gpus[0].tbs[0].steps[0].cnt = 72;
    let got = check(&p, Runtime::MscclNccl);
    assert!(got.contains(&"gpu 0 tb 0 step 0: cnt=\"72\" must be below 72 (MSCCL_MAX_COUNT)".to_string()), "{got:#?}");
    p.gpus[0].tbs[0].steps[0].cnt = 0;
    assert_eq!(only_problem(&p), "gpu 0 tb 0 step 0: cnt=\"0\" on a s step (it must move at least one chunk)");
}

#[test]
fn step_index_gap() {
    let mut p = line3();
    p.gpus[2].tbs[0].steps[1].s = 2;
    p.gpus[2].tbs[0].steps[2].s = 3;
    assert_eq!(only_problem(&p), "gpu 2 tb 0 step 1: s=\"2\", expected 1 (s counts 0,1,2,... including nops)");
}

#[test]
fn offset_out_of_bounds() {
    let mut p = line3();
    p.gpus[0].tbs[0].steps[2].dstoff = 3;
    assert_eq!(only_problem(&p), "gpu 0 tb 0 step 2: dstoff=\"3\" cnt=\"1\" is outside buffer o (o_chunks=\"3\")");
    let mut p = line3();
    p.gpus[0].tbs[0].steps[0].srcbuf = Buf::Scratch;
    assert_eq!(only_problem(&p), "gpu 0 tb 0 step 0: srcoff=\"0\" cnt=\"1\" is outside buffer s (s_chunks=\"0\")");
    // A recv does not read its src side, so an unused -1 there is fine.
    let mut p = line3();
    p.gpus[0].tbs[0].steps[1].srcoff = -1;
    assert_eq!(check(&p, Runtime::MscclNccl), Vec::<String>::new());
}

#[test]
fn send_and_recv_need_peers() {
    let mut p = line3();
    p.gpus[1].tbs[0].steps[0].kind = StepType::RecvCopySend;
    assert_eq!(only_problem(&p), "gpu 1 tb 0 step 0: a rcs step sends but the thread block has send=\"-1\"");
}

#[test]
fn peers_and_channels() {
    let mut p = line3();
    p.gpus[0].tbs[0].recv = 0;
    p.gpus[2].tbs[0].chan = 1;
    let got = check(&p, Runtime::MscclNccl);
    assert_eq!(got, ["gpu 0 tb 0: recv=\"0\" is the GPU itself", "gpu 2 tb 0: chan=\"1\" but nchannels=\"1\""]);
    p.gpus[0].tbs[0].recv = 3;
    assert!(check(&p, Runtime::MscclNccl).contains(&"gpu 0 tb 0: recv=\"3\" is neither -1 nor a rank 0..2".to_string()));
}

#[test]
fn algo_level_rules() {
    let mut p = line3();
    p.max_bytes = 0;
    assert_eq!(check(&p, Runtime::MscclNccl), Vec::<String>::new());
    assert_eq!(
        check(&p, Runtime::MscclLegacy),
        ["algo: maxBytes=\"0\" means never in the old runtime (it selects only minBytes <= size < maxBytes)"]
    );
    p.max_bytes = 10;
    p.min_bytes = 11;
    assert_eq!(only_problem(&p), "algo: minBytes=\"11\" is greater than maxBytes=\"10\"");
    let mut p = line3();
    p.nchannels = 33;
    assert_eq!(check(&p, Runtime::MscclNccl), ["algo: nchannels=\"33\" is outside 1..=32 (MAXCHANNELS of msccl-nccl)"]);
    assert_eq!(check(&p, Runtime::Rccl), Vec::<String>::new(), "RCCL's MAXCHANNELS is 128");
    p.nchannels = 129;
    assert_eq!(check(&p, Runtime::Rccl), ["algo: nchannels=\"129\" is outside 1..=128 (MAXCHANNELS of rccl)"]);
    let mut p = line3();
    p.nthreads = Some(100);
    assert_eq!(check(&p, Runtime::MscclLegacy), ["algo: nthreads=\"100\" must be a multiple of 32 (warp size)"]);
    assert_eq!(check(&p, Runtime::MscclNccl), Vec::<String>::new());
    p.inplace = false;
    assert_eq!(
        check(&p, Runtime::MscclNccl),
        ["algo: inplace=\"0\" and outofplace=\"0\": msccl-nccl never selects it"]
    );
}

#[test]
fn gpu_ids_must_be_the_ranks() {
    let mut p = line3();
    p.gpus[2].id = 1;
    let got = check(&p, Runtime::MscclNccl);
    assert_eq!(&got[..2], ["gpu 1: appears 2 times", "gpu 2: missing (ngpus=\"3\" needs one <gpu> per rank)"]);
}

#[test]
fn chunk_counts_must_match_nchunksperloop() {
    let mut p = line3();
    p.gpus[0].i_chunks = 3;
    assert_eq!(
        only_problem(&p),
        "gpu 0: i_chunks=\"3\" x ngpus 3 != nchunksperloop=\"3\" (the old runtime rejects the file)"
    );
    p.gpus[0].i_chunks = 1;
    assert_eq!(check(&p, Runtime::MscclNccl), Vec::<String>::new());
}

#[test]
fn step_count_limit_depends_on_dialect() {
    let mut p = line3();
    let tb = &mut p.gpus[1].tbs[0];
    let proto = tb.steps[0].clone();
    tb.steps = (0..65).map(|s| Step { s, hasdep: s == 0, ..proto.clone() }).collect();
    assert_eq!(check(&p, Runtime::MscclLegacy), Vec::<String>::new());
    assert_eq!(check(&p, Runtime::MscclNccl), ["gpu 1 tb 0: 65 steps, msccl-nccl stores at most 64"]);
}

#[test]
fn dependency_shapes() {
    let mut p = line3();
    p.gpus[1].tbs[1].steps[1].depid = 1;
    assert_eq!(
        only_problem(&p),
        "gpu 1 tb 1 step 1: depid=\"1\" deps=\"0\" names its own thread block (program order already covers it)"
    );
    p.gpus[1].tbs[1].steps[1].depid = 0;
    p.gpus[1].tbs[1].steps[1].deps = 1;
    assert_eq!(only_problem(&p), "gpu 1 tb 1 step 1: depid=\"0\" deps=\"1\": tb 0 has only 1 steps");
    p.gpus[1].tbs[1].steps[1].deps = -1;
    assert_eq!(only_problem(&p), "gpu 1 tb 1 step 1: depid=\"0\" deps=\"-1\": both must be -1 or both name a step");
}

#[test]
fn nops_carry_one_dependency_each() {
    // tb 3 waits on tb 0 step 0 through a nop, then on tb 2 step 0 itself.
    let mut p = line3();
    let tb = &mut p.gpus[1].tbs[3];
    tb.steps.insert(1, nop(1, 0, 0));
    tb.steps[2].s = 2;
    assert_eq!(check(&p, Runtime::MscclNccl), Vec::<String>::new());
    // A bare nop, and a nop whose dependency the next step does not anchor.
    p.gpus[1].tbs[3].steps[1].depid = -1;
    p.gpus[1].tbs[3].steps[1].deps = -1;
    assert_eq!(
        only_problem(&p),
        "gpu 1 tb 3 step 1: a nop must carry a dependency (depid/deps), it exists only for that"
    );
    let mut p2 = line3();
    let tb = &mut p2.gpus[1].tbs[3];
    tb.steps.insert(1, nop(1, 0, 0));
    (tb.steps[2].s, tb.steps[2].depid, tb.steps[2].deps) = (2, -1, -1);
    p2.gpus[1].tbs[2].steps[0].hasdep = false;
    assert!(only_problem(&p2).starts_with("gpu 1 tb 3 step 2: follows nop dependencies but has no depid itself"));
    // Waiting on a nop never returns.
    p.gpus[1].tbs[3].steps[1] = nop(1, 0, 0);
    p.gpus[1].tbs[1].steps[1].depid = 3;
    p.gpus[1].tbs[1].steps[1].deps = 1;
    assert!(only_problem(&p).contains("waits on gpu 1 tb 3 step 1, a nop: the runtime drops nops"));
}

#[test]
fn dependency_cycle_is_reported() {
    let mut p = line3();
    // tb 0 step 0 now waits on tb 1 step 1, which waits on tb 0 step 0.
    p.gpus[1].tbs[0].steps[0].depid = 1;
    p.gpus[1].tbs[0].steps[0].deps = 1;
    p.gpus[1].tbs[1].steps[1].hasdep = true;
    let got = only_problem(&p);
    assert!(got.starts_with("gpu 1: dependency cycle ("), "{got}");
    assert!(
        got.contains("tb 0 step 0 waits on tb 1 step 1") && got.contains("tb 1 step 1 waits on tb 0 step 0"),
        "{got}"
    );
    assert!(got.ends_with("the runtime would deadlock"));
}

#[test]
fn reduce_fusion_limit() {
    let mut p = line3();
    p.gpus[0].s_chunks = 1;
    let re = Step {
        s: 0,
        kind: StepType::LocalReduce,
        srcbuf: Buf::Scratch,
        srcoff: 0,
        dstbuf: Buf::Output,
        dstoff: 0,
        cnt: 1,
        depid: -1,
        deps: -1,
        hasdep: false,
    };
    let steps = |n: usize| (0..n).map(|s| Step { s, ..re.clone() }).collect::<Vec<_>>();
    // 4 separate reductions first, so the runtime's one-time cut at 16 in total falls inside
    // the long chain (12 fused), and the remaining 17 form one chain.
    let mut chain = steps(33);
    for (k, st) in chain.iter_mut().enumerate().take(4) {
        st.dstoff = k as i64 % 3;
        st.srcoff = 0;
        st.dstbuf = if k % 2 == 0 { Buf::Output } else { Buf::Input };
    }
    p.gpus[0].i_chunks = 0;
    p.gpus[0].tbs.push(ThreadBlock { id: 1, send: -1, recv: -1, chan: 0, steps: chain, comment: None });
    let got = check(&p, Runtime::MscclLegacy);
    assert!(got.iter().any(|m| m.starts_with("gpu 0 tb 1 step 32: the runtime fuses more than 16")), "{got:#?}");
    // 16 in a row are fine.
    p.gpus[0].tbs[1].steps = steps(16);
    assert_eq!(check(&p, Runtime::MscclLegacy), Vec::<String>::new());
}

/// A gpu whose tb 0 waits on step 0 of its last thread block, `n` thread blocks in all (each
/// a local block with one copy, the last publishing its flag).
fn waits_on_block(n: usize) -> Program {
    let mut p = line3();
    let g = &mut p.gpus[1];
    let copy = Step {
        s: 0,
        kind: StepType::Copy,
        srcbuf: Buf::Input,
        srcoff: 0,
        dstbuf: Buf::Output,
        dstoff: 1,
        cnt: 1,
        depid: -1,
        deps: -1,
        hasdep: false,
    };
    let first = g.tbs.len();
    for id in first..n {
        let hasdep = id == n - 1;
        let steps = vec![Step { hasdep, ..copy.clone() }];
        g.tbs.push(ThreadBlock { id, send: -1, recv: -1, chan: id % 8, steps, comment: None });
    }
    p.nchannels = 8;
    let waiting = &mut p.gpus[1].tbs[first].steps[0];
    waiting.depid = n as i64 - 1;
    waiting.deps = 0;
    p
}

#[test]
fn a_dependency_on_block_128_is_stored_as_block_minus_128() {
    // Block 127 fits int8_t dependentBid: every runtime that holds 128 blocks accepts it.
    let inside = waits_on_block(128);
    assert!(check_limits(&inside, Runtime::MscclNccl).is_empty(), "{:?}", check_limits(&inside, Runtime::MscclNccl));
    assert!(check_limits(&inside, Runtime::MscclLegacy).is_empty());
    // 129 blocks: the depid 128 is stored as -128 (msccl_struct.h dependentBid).
    let outside = waits_on_block(129);
    assert_eq!(
        check_limits(&outside, Runtime::MscclNccl),
        ["gpu 1 tb 4 step 0: depid=\"128\" is stored as -128 by msccl-nccl (int8_t dependentBid, at most 127)"]
    );
    // RCCL holds 64 blocks: both are refused for the count first.
    assert_eq!(
        check_limits(&inside, Runtime::Rccl)[0],
        "gpu 1: 128 thread blocks, rccl allows at most 64 (MSCCL_MAX_NUM_THREAD_BLOCKS)"
    );
    assert!(check_limits(&waits_on_block(64), Runtime::Rccl).is_empty());
    assert_eq!(check_limits(&waits_on_block(65), Runtime::Rccl).len(), 1);
}

#[test]
fn offsets_and_peers_are_stored_in_16_bits() {
    let mut p = line3();
    p.gpus[0].tbs[0].steps[0].srcoff = 32768;
    p.gpus[0].tbs[0].send = 40000;
    let problems = check_limits(&p, Runtime::Rccl);
    assert_eq!(
        problems,
        [
            "gpu 0 tb 0: send=\"40000\" is stored as -25536 by rccl (int16_t sendPeer, at most 32767)",
            "gpu 0 tb 0 step 0: srcoff=\"32768\" is stored as -32768 by rccl (int16_t srcOffset, at most 32767)",
        ]
    );
    p.gpus[0].tbs[0].steps[0].srcoff = 32767;
    p.gpus[0].tbs[0].send = 32767;
    assert!(check_limits(&p, Runtime::Rccl).is_empty());
}

#[test]
fn the_parsers_node_budget_is_a_limit_the_exporter_fits() {
    // 1 algo + 3 gpus + 69 tbs + 4092 steps = 4165 nodes >= MAX_NODES (4096): the parser
    // refuses the rank, so check_limits (what the exporter packs to) must name it.
    let mut p = waits_on_block(70);
    let g = &mut p.gpus[1];
    for tb in g.tbs.iter_mut().skip(4) {
        let one = tb.steps[0].clone();
        tb.steps = (0..62).map(|s| Step { s, hasdep: s == 0 && one.hasdep, ..one.clone() }).collect();
    }
    let steps: usize = p.gpus[1].tbs.iter().map(|t| t.steps.len()).sum();
    let problems = check_limits(&p, Runtime::MscclNccl);
    assert!(problems.iter().any(|m| m.contains(&format!("would store {} nodes", 1 + 3 + 70 + steps))), "{problems:?}");
}

#[test]
fn offsets_near_i64_max_are_outside_never_an_overflow() {
    for off in [i64::MAX, i64::MAX - 1, i64::MAX - 70] {
        let mut p = line3();
        p.gpus[0].tbs[0].steps[0].srcoff = off;
        p.gpus[0].tbs[0].steps[0].cnt = 71;
        let problems = check(&p, Runtime::MscclNccl);
        assert!(problems.iter().any(|m| m.contains(&format!("srcoff=\"{off}\""))), "{problems:?}");
    }
    let mut p = line3();
    p.gpus[0].tbs[0].steps[2].dstoff = i64::MIN;
    assert!(check(&p, Runtime::MscclNccl).iter().any(|m| m.contains("dstoff=\"-9223372036854775808\"")));
}
