use super::*;
use crate::ir::Collective;
use crate::msccl::model::{StepType, ThreadBlock};

/// A verified schedule from the pipeline.
fn schedule(spec: &str, c: Collective, alg: &str) -> Schedule {
    crate::testing::synthesized(spec, c, alg).schedule
}

/// Each case's schedule, flat: the plan and the floors name flat transfers (a schedule
/// stated per orbit is expanded by `lower` too).
fn flat_schedules(cases: &[(&str, Collective, &str)]) -> Vec<Schedule> {
    cases.iter().map(|&(spec, c, alg)| crate::ir::orbit::flat(&schedule(spec, c, alg)).unwrap().into_owned()).collect()
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
    let p = lower(&s, &Options { pipeline: 100, runtime: Runtime::MscclLegacy, ..Options::default() }).unwrap();
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
    // Ring allreduce on 40 ranks: 2 * 39 steps per block > 64 (new runtime).
    let s = schedule("ring:40", Collective::Allreduce, "ring");
    let e = lower(&s, &Options { channels: Some(1), ..Options::default() }).unwrap_err();
    // Known from the count alone: 39 sends of the reduce-scatter and 39 of the allgather.
    assert!(e.message().contains("sends 78 times to rank 1 on channel 0"), "{e}");
    assert!(e.message().contains("limit 64"), "{e}");
    // On 33 ranks the floor is 64 sends, within the limit, and the program needs 65 steps:
    // the emitter finds out.
    let s33 = schedule("ring:33", Collective::Allreduce, "ring");
    let e = lower(&s33, &Options { channels: Some(1), ..Options::default() }).unwrap_err();
    assert!(e.message().contains("needs more than 64 steps (limit 64)"), "{e}");
    let p = lower(&s, &Options::default()).unwrap();
    assert_eq!(p.nchannels, 2);
    let old = lower(&s, &Options { runtime: Runtime::MscclLegacy, ..Options::default() }).unwrap();
    assert_eq!(old.nchannels, 1);
}

/// `block_plan` against the program `lower` writes: block for block, the same peers and as
/// many sends and receives, a fused step being one step that does both.
fn agrees_with_the_program(s: &Schedule, o: &Options) {
    let plan = block_plan(s, o).unwrap();
    let p = lower(s, o).unwrap();
    assert_eq!(plan.channels, p.nchannels);
    let mut first = vec![usize::MAX; s.n_ranks];
    for (b, &r) in plan.ranks.iter().enumerate() {
        first[r] = first[r].min(b);
    }
    for (b, ops) in plan.blocks.iter().enumerate() {
        let r = plan.ranks[b];
        let tb = &p.gpus[r].tbs[b - first[r]];
        let steps: Vec<_> = tb.steps.iter().filter(|x| x.kind != StepType::Nop).collect();
        let sends = ops.iter().filter(|o| o.1).count();
        let receives = ops.len() - sends;
        assert_eq!(steps.iter().filter(|x| x.kind.sends()).count(), sends, "rank {r} block {b}");
        let both = steps.iter().filter(|x| x.kind.sends() && x.kind.receives()).count();
        assert_eq!(steps.len(), ops.len() - both, "rank {r} block {b}");
        assert!(steps.iter().filter(|x| !x.kind.sends()).count() <= receives);
        for &(t, is_send) in ops {
            let tr = &s.transfers[t];
            match (is_send, tr.is_local()) {
                (true, _) => assert_eq!((tr.src, tb.send), (r, tr.dst as i64)),
                (false, false) => assert_eq!((tr.dst, tb.recv), (r, tr.src as i64)),
                (false, true) => assert_eq!((tr.src, tb.send, tb.recv), (r, -1, -1)),
            }
        }
    }
}

#[test]
fn the_block_plan_is_the_programs_thread_blocks() {
    let cases = [
        ("ring:3", Collective::Allreduce, "ring"),
        ("dgx-a100:1", Collective::Allgather, "forestcoll"),
        ("switch:4", Collective::ReduceScatter, "forestcoll"),
        ("dgx-a100:2", Collective::ReduceScatter, "forestcoll"),
    ];
    for s in flat_schedules(&cases) {
        agrees_with_the_program(&s, &Options::default());
        agrees_with_the_program(&s, &Options { fused: false, ..Options::default() });
        agrees_with_the_program(
            &s,
            &Options { channels: Some(s.pieces.len().min(MAX_CHANNELS)), ..Options::default() },
        );
    }
}

#[test]
fn a_given_order_must_be_a_linear_extension() {
    // A tree schedule (no steps): T is its numbering, each send right before its receive.
    let s = crate::ir::orbit::flat(&schedule("switch:4", Collective::Allgather, "forestcoll")).unwrap().into_owned();
    let order = |ops: Vec<Operation>| Options { order: Some(ops), ..Options::default() };
    // T as the numbering gives it: accepted, and the same program.
    let t: Vec<Operation> = (0..s.transfers.len()).flat_map(|i| [(i, true), (i, false)]).collect();
    assert_eq!(lower(&s, &order(t.clone())).unwrap(), lower(&s, &Options::default()).unwrap());
    let dependent = (0..s.transfers.len()).find(|&i| !s.transfers[i].after.is_empty()).unwrap();
    let a = s.transfers[dependent].after[0];
    // The dependent sent before its dependency is received; a receive before its send; one missing.
    let mut early: Vec<Operation> = vec![(a, true), (dependent, true)];
    early.extend(t.iter().copied().filter(|&o| o != (a, true) && o != (dependent, true)));
    let mut swapped = t.clone();
    swapped.swap(0, 1);
    for bad in [early, swapped, t[..t.len() - 1].to_vec()] {
        let e = lower(&s, &order(bad)).unwrap_err();
        assert!(e.to_string().contains("the given operation order"), "{e}");
    }
}

#[test]
fn an_ordering_dependency_on_another_piece_is_a_dep_of_the_send() {
    // switch:3, direct allgather: rank 0 sends its shard to 2 only after it has received
    // rank 1's (a dependency the data does not need, as `--tree-shape boxes-staggered` adds).
    // The program must say so: the block that sends to 2 waits for the block receiving from 1.
    let mut s = schedule("switch:3", Collective::Allgather, "direct");
    // As a tree schedule: within one step, a dependency is no order (the verifier refuses it).
    s.transfers.iter_mut().for_each(|t| t.step = None);
    let send = s.transfers.iter().position(|t| (t.src, t.dst) == (0, 2)).unwrap();
    let recv = s.transfers.iter().position(|t| (t.src, t.dst) == (1, 0)).unwrap();
    assert_ne!(s.transfers[send].piece, s.transfers[recv].piece);
    // Rank 0's receive from 1 and send to 2 (one each): the send waits if it comes later in the
    // same block, or carries (or follows a nop carrying) a dependency on that receive.
    let waits = |p: &Program| {
        let g = &p.gpus[0];
        let find = |peer: fn(&ThreadBlock) -> i64, to: i64, send: bool| {
            g.tbs
                .iter()
                .filter(|t| peer(t) == to)
                .flat_map(|t| t.steps.iter().map(move |st| (t.id, st)))
                .find(|(_, st)| (st.kind == StepType::Send) == send && st.kind != StepType::Nop)
                .map(|(tb, st)| (tb, st.s))
                .unwrap()
        };
        let (rtb, rstep) = find(|t| t.recv, 1, false);
        let (stb, sstep) = find(|t| t.send, 2, true);
        let carried = g.tbs[stb].steps[..=sstep].iter().any(|st| st.depid == rtb as i64 && st.deps >= rstep as i64);
        (stb == rtb && sstep > rstep) || (stb != rtb && carried)
    };
    assert!(!waits(&lower(&s, &Options::default()).unwrap()));
    s.transfers[send].after.push(recv);
    let p = lower(&s, &Options::default()).unwrap();
    assert!(waits(&p));
    assert_eq!(crate::msccl::interp::check_first(&p), None);
    assert!(waits(&lower(&s, &Options { fused: false, ..Options::default() }).unwrap()));
}

/// The most steps of one thread block of `p` (`nop` carriers left out: the floor does not
/// count them).
fn busiest_block(p: &crate::msccl::model::Program) -> usize {
    let steps = |t: &ThreadBlock| t.steps.iter().filter(|x| x.kind != StepType::Nop).count();
    p.gpus.iter().flat_map(|g| g.tbs.iter().map(steps)).max().unwrap_or(0)
}

#[test]
fn the_step_floor_is_never_above_the_busiest_block() {
    use assign::{Spread, TbAssignment};
    // The ring's blocks: 78 sends and 78 receives, 77 of them fused into one step each.
    let s = schedule("ring:40", Collective::Allreduce, "ring");
    let chan = TbAssignment::channels_of(&s, 1, Spread::ByPiece);
    let floor = TbAssignment::step_floor(&s, 1, &chan).unwrap();
    assert_eq!((floor.steps, floor.rank, floor.peer, floor.send), (78, 0, 1, true));
    let old = Options { channels: Some(1), runtime: Runtime::MscclLegacy, ..Options::default() };
    assert_eq!(busiest_block(&lower(&s, &old).unwrap()), 79);
    // A floor above a program that fits would skip a channel count that fits.
    let cases = [
        ("dgx-a100:1", Collective::Allgather, "forestcoll"),
        ("switch:4", Collective::ReduceScatter, "forestcoll"),
        ("ring:6", Collective::Allreduce, "ring"),
        ("torus:3x3", Collective::Allreduce, "forestcoll"),
    ];
    for ((spec, ..), s) in cases.iter().zip(flat_schedules(&cases)) {
        for channels in [1, 2, 3, 7] {
            for spread in [Spread::ByPiece, Spread::ByConnection] {
                let o = Options {
                    channels: Some(channels),
                    spread: Some(spread),
                    runtime: Runtime::MscclLegacy,
                    fused: false,
                    ..Options::default()
                };
                let Ok(p) = lower(&s, &o) else { continue };
                let chan = TbAssignment::channels_of(&s, channels, spread);
                let floor = TbAssignment::step_floor(&s, channels, &chan).unwrap();
                assert!(floor.steps <= busiest_block(&p), "{spec} {channels} {spread:?}: {floor}");
                assert!(floor.steps > 0);
            }
        }
    }
}
