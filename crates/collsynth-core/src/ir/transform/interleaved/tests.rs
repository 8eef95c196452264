//! Interleaved pipelining: ramps, heights and the order decided by hand, and what it buys
//! `auto` on `dgx-a100` at 64 MiB (the three cells of issue 19 it brings within 1.15x).

use super::*;
use crate::api::{self, synthesize};
use crate::cost::link_loads;
use crate::cost::tuning::{fastest_each, lowered, lowerings};
use crate::ir::{Collective, Op};
use crate::synth::Request;
use crate::verify::verify;
use crate::zoo::from_spec;

fn flat(s: Schedule) -> Schedule {
    crate::ir::orbit::flat(&s).unwrap().into_owned()
}

fn r(a: i128, b: i128) -> Rat {
    Rat::new(a, b)
}

#[test]
fn the_ramp_is_smallest_at_both_ends() {
    assert_eq!(ramp(1), vec![1]);
    assert_eq!(ramp(2), vec![1, 1]);
    assert_eq!(ramp(4), vec![1, 2, 2, 1]);
    assert_eq!(ramp(5), vec![1, 2, 3, 2, 1]);
    assert_eq!(ramp(8), vec![1, 2, 3, 4, 4, 3, 2, 1]);
}

/// Three ranks on a switch, a reduce-scatter: shard 0 reduced along 2 -> 1 -> 0 (the first
/// hop listed second, the only transfer something waits on), shards 1 and 2 directly.
fn chain_on_a_switch() -> (crate::topology::Topology, Schedule) {
    let t = from_spec("switch:3").unwrap();
    let route = |a: usize, b: usize| {
        let (x, y) = (t.link_between(a, 3).unwrap(), t.link_between(3, b).unwrap());
        vec![x, y]
    };
    let mut s = Schedule::new(Collective::ReduceScatter, 3, 0, "hand");
    let whole = |s: &mut Schedule, shard| s.add_piece(Piece::whole(shard));
    let (p0, p1, p2) = (whole(&mut s, 0), whole(&mut s, 1), whole(&mut s, 2));
    // Shard 0: 2 -> 1 -> 0. Shards 1 and 2: direct from both others.
    let a = s.add(Transfer::new(p1, 0, 1, route(0, 1), Op::Reduce, vec![], None));
    let b = s.add(Transfer::new(p0, 2, 1, route(2, 1), Op::Reduce, vec![], None));
    s.add(Transfer::new(p0, 1, 0, route(1, 0), Op::Reduce, vec![b], None));
    s.add(Transfer::new(p1, 2, 1, route(2, 1), Op::Reduce, vec![], None));
    s.add(Transfer::new(p2, 0, 2, route(0, 2), Op::Reduce, vec![], None));
    s.add(Transfer::new(p2, 1, 2, route(1, 2), Op::Reduce, vec![], None));
    assert_eq!(a, 0);
    verify(&s, &t).unwrap();
    (t, s)
}

#[test]
fn heights_count_the_longest_chain_of_dependents() {
    let (_, s) = chain_on_a_switch();
    assert_eq!(heights(&s).unwrap(), vec![1, 2, 1, 1, 1, 1]);
}

/// k = 2 on the hand schedule: round 0 lists the chain's first hop (height 2) first, then
/// the others by index; round 1 the same on the second halves. Pieces are cut at 1/2 (ramp
/// 1, 1), every dependency points back into its own round, and the result verifies with the
/// same link loads.
#[test]
fn rounds_come_one_after_the_other_longest_chain_first() {
    let (t, s) = chain_on_a_switch();
    let x = interleaved(&s, 2).unwrap();
    verify(&x, &t).unwrap();
    let srcs: Vec<(usize, usize, usize)> = x.transfers.iter().map(|t| (t.piece, t.src, t.dst)).collect();
    // Round 0: sub-piece 0 of every piece (piece p -> 2 p); round 1: 2 p + 1.
    assert_eq!(
        srcs,
        vec![
            (0, 2, 1),
            (2, 0, 1),
            (0, 1, 0),
            (2, 2, 1),
            (4, 0, 2),
            (4, 1, 2),
            (1, 2, 1),
            (3, 0, 1),
            (1, 1, 0),
            (3, 2, 1),
            (5, 0, 2),
            (5, 1, 2)
        ]
    );
    assert_eq!(x.transfers[2].after, vec![0]);
    assert_eq!(x.transfers[8].after, vec![6]);
    assert_eq!((x.pieces[0].start, x.pieces[0].end, x.pieces[1].end), (r(0, 1), r(1, 2), r(1, 1)));
    let size = Rat::from_integer(1 << 20);
    assert_eq!(link_loads(&x, &t, size), link_loads(&s, &t, size));
    // k = 1 only reorders.
    let one = interleaved(&s, 1).unwrap();
    assert_eq!(one.pieces, s.pieces);
    assert_eq!(one.transfers[0], s.transfers[1]);
}

/// The ramp on a real forest: `dgx-a100:2`'s shallow reduce-scatter forest cuts shard 0 at
/// 12/13; at depth 4 (weights 1, 2, 2, 1) that piece becomes [0, 2/13), [2/13, 6/13),
/// [6/13, 10/13), [10/13, 12/13). Its reductions into a NIC sender come first.
#[test]
fn a_forest_interleaved_at_depth_4() {
    let t = from_spec("dgx-a100:2").unwrap();
    let size = Rat::from_integer(64 << 20);
    let mut req = Request::default();
    req.options.insert("tree-shape".into(), "shallow-all".into());
    let s = flat(synthesize(&t, Collective::ReduceScatter, "forestcoll", &req, size).unwrap().schedule);
    assert_eq!((s.pieces[0].start, s.pieces[0].end), (r(0, 1), r(12, 13)));
    let x = interleaved(&s, 4).unwrap();
    verify(&x, &t).unwrap();
    let cuts: Vec<(Rat, Rat)> = x.pieces[..4].iter().map(|p| (p.start, p.end)).collect();
    assert_eq!(cuts, vec![(r(0, 1), r(2, 13)), (r(2, 13), r(6, 13)), (r(6, 13), r(10, 13)), (r(10, 13), r(12, 13))]);
    assert_eq!(x.transfers.len(), 4 * s.transfers.len());
    let h = heights(&x).unwrap();
    assert_eq!((h[0], x.transfers[0].after.len()), (2, 0));
    assert!(x.transfers.iter().enumerate().all(|(i, t)| t.after.iter().all(|&a| a < i)));
}

/// The three cells of issue 19 on `dgx-a100` at 64 MiB, `forestcoll --tree-shape
/// shallow-all`: at its best plain depth and protocol it misses 1.15x of the time bound
/// (1.21x, 1.26x and 1.17x before the bound's cut term; the two reduce-scatters
/// are 1.2x and 1.16x since); interleaved it is within 1.15x, and `fastest_each` (what
/// `auto` judges with) picks the interleaved cut.
#[test]
fn interleaving_brings_the_dgx_cells_within_the_target() {
    for (spec, c, plain, cut) in [
        ("dgx-a100:2", Collective::ReduceScatter, 1.19, 1.15),
        ("dgx-a100:4", Collective::ReduceScatter, 1.15, 1.15),
        ("dgx-a100:4", Collective::Allreduce, 1.15, 1.15),
    ] {
        let t = from_spec(spec).unwrap();
        let size = Rat::from_integer(64 << 20);
        let mut req = Request::default();
        req.options.insert("tree-shape".into(), "shallow-all".into());
        let s = flat(synthesize(&t, c, "forestcoll", &req, size).unwrap().schedule);
        let (bound, _) = api::time_bound(&t, c, 0, size).unwrap();
        let mut best_plain = f64::INFINITY;
        for (depth, inter) in lowerings(&s).into_iter().filter(|l| !l.1) {
            let x = lowered(&s, depth, inter).unwrap();
            for (time, _) in crate::cost::tuning::protocol_times(&x, &t, size).unwrap() {
                best_plain = best_plain.min(time);
            }
        }
        assert!(best_plain / bound > plain, "{spec} {c:?}: {}", best_plain / bound);
        let pick = fastest_each([&s], &t, size).unwrap()[0];
        assert!(pick.interleaved && pick.time_us / bound <= cut, "{spec} {c:?}: {pick:?} {}", pick.time_us / bound);
        verify(&lowered(&s, pick.depth, true).unwrap(), &t).unwrap();
    }
}

/// `auto` on dgx-a100:2's reduce-scatter at 64 MiB (the quick check): the shallow
/// forest interleaved at depth 4 under LL128, 315.9 us, 1.136x the time bound (a mix of two
/// forests cut by `pipelined`, 335.8 us and 1.207x, before); its details say how it was cut,
/// the runtime model gives it that time, and it verifies.
#[test]
fn auto_cuts_the_dgx_reduce_scatter_interleaved() {
    let t = from_spec("dgx-a100:2").unwrap();
    let size = Rat::from_integer(64 << 20);
    let s = synthesize(&t, Collective::ReduceScatter, "auto", &Request::default(), size).unwrap().schedule;
    let d = &s.provenance.details;
    assert_eq!(d.get("auto_choice").and_then(|v| v.as_str()), Some("forestcoll --tree-shape shallow-all"));
    assert_eq!(d.get("auto_pipeline_order").and_then(|v| v.as_str()), Some("interleaved"));
    assert_eq!(d.usize("auto_pipeline"), Some(4));
    let time = api::runtime(&s, &t, size).unwrap().time_us;
    let (bound, _) = api::time_bound(&t, Collective::ReduceScatter, 0, size).unwrap();
    assert!((time - 315.9).abs() < 0.1 && time / bound <= 1.15, "{time} {bound}");
    verify(&s, &t).unwrap();
}
