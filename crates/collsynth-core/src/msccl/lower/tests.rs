use super::*;
use crate::api;
use crate::ir::Collective;
use crate::msccl::model::StepType;
use crate::rational::rat;
use crate::synth::Request;
use crate::zoo::from_spec;

/// A verified schedule from the pipeline.
fn schedule(spec: &str, c: Collective, alg: &str) -> Schedule {
    let topo = from_spec(spec).unwrap();
    api::synthesize(&topo, c, alg, &Request::default(), rat(1 << 30)).unwrap().schedule
}

#[test]
fn ring_allreduce_on_three_ranks_is_the_msccl_tools_ring() {
    // The shape of msccl-tools' 3-GPU ring: one thread block per rank (recv from the left, send
    // to the right), s, rrs, rrcs, rcs, r.
    let s = schedule("ring:3", Collective::Allreduce, "ring");
    let p = lower(&s, &Options::default()).unwrap();
    assert_eq!(p.nchunksperloop, 3);
    assert_eq!(p.nchannels, 1);
    for g in &p.gpus {
        let kinds: Vec<StepType> = g.tbs.iter().flat_map(|t| t.steps.iter().map(|s| s.kind)).collect();
        assert_eq!(g.tbs.len(), 1, "{:?}", g.tbs);
        assert_eq!(
            kinds,
            [
                StepType::Send,
                StepType::RecvReduceSend,
                StepType::RecvReduceCopySend,
                StepType::RecvCopySend,
                StepType::Recv
            ]
        );
        assert_eq!(g.s_chunks, 0);
    }
}

#[test]
fn unfused_uses_only_s_r_rrc_nop() {
    for (spec, c, alg) in [
        ("ring:4", Collective::Allreduce, "ring"),
        ("ring:4", Collective::Allgather, "ring"),
        ("switch:4", Collective::Broadcast, "forestcoll"),
    ] {
        let s = schedule(spec, c, alg);
        let p = lower(&s, &Options { fused: false, ..Options::default() }).unwrap();
        for st in p.gpus.iter().flat_map(|g| g.tbs.iter().flat_map(|t| t.steps.iter())) {
            assert!(matches!(st.kind, StepType::Send | StepType::Recv | StepType::RecvReduceCopy | StepType::Nop));
        }
        // Allgather and broadcast would need a local copy out of place.
        assert_eq!(p.outofplace, c == Collective::Allreduce, "{spec} {c:?}");
    }
}

#[test]
fn large_counts_are_split_below_72_chunks() {
    // 100 sub-chunks per piece of a 2-rank allgather: one piece spans 100 chunks.
    let s = schedule("ring:2", Collective::Allgather, "ring");
    let mut one = s.clone();
    one.pieces = vec![crate::ir::Piece::whole(0), crate::ir::Piece::whole(1)];
    let p = lower(&one, &Options { pipeline: 1, ..Options::default() }).unwrap();
    assert_eq!(p.nchunksperloop, 2);
    let p = lower(&s, &Options { pipeline: 100, dialect: Dialect::Old, ..Options::default() }).unwrap();
    assert_eq!(p.nchunksperloop, 200);
    assert!(p.gpus.iter().flat_map(|g| &g.tbs).flat_map(|t| &t.steps).all(|st| st.cnt < 72));
}

#[test]
fn channels_out_of_range_and_allgatherv_are_bad_input() {
    let s = schedule("ring:3", Collective::Allreduce, "ring");
    for c in [0, 33] {
        let e = lower(&s, &Options { channels: Some(c), ..Options::default() }).unwrap_err();
        assert!(e.message().contains("1 to 32 channels"), "{e}");
    }
}

#[test]
fn too_many_steps_for_one_channel_is_infeasible_and_auto_channels_fit() {
    // Ring allreduce on 40 ranks: 2 * 39 steps per block > 64 (new dialect).
    let s = schedule("ring:40", Collective::Allreduce, "ring");
    let e = lower(&s, &Options { channels: Some(1), ..Options::default() }).unwrap_err();
    assert!(e.message().contains("limit 64"), "{e}");
    let p = lower(&s, &Options::default()).unwrap();
    assert_eq!(p.nchannels, 2);
    let old = lower(&s, &Options { dialect: Dialect::Old, ..Options::default() }).unwrap();
    assert_eq!(old.nchannels, 1);
}
