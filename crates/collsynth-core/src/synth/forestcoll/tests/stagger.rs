//! `--tree-shape boxes-staggered` (stagger.rs): the two-level reduce-scatter with its folds
//! ordered by dependencies on the rank's own receives, real in MSCCL and verified.

use super::boxes::arb_boxes;
use super::topo;
use super::*;
use crate::cost::runtime::{runtime_time, Protocol};
use crate::ir::Schedule;
use proptest::prelude::*;

fn staggered_req(t: Option<usize>) -> Request {
    shape_req("boxes-staggered", t)
}

/// The ordering dependencies: `after` entries on another piece. Each must be a receive of the
/// dependent's own source (what an MSCCL step can wait for).
fn ordering(s: &Schedule) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, t) in s.transfers.iter().enumerate() {
        for &a in t.after.iter().filter(|&&a| s.transfers[a].piece != t.piece) {
            assert_eq!(s.transfers[a].dst, t.src, "transfer {i} waits for a receive at another rank");
            out.push((i, a));
        }
    }
    out
}

/// `s` without its ordering dependencies: the same forest, folds unordered.
fn unordered(s: &Schedule) -> Schedule {
    let mut u = s.clone();
    for i in 0..u.transfers.len() {
        let piece = u.transfers[i].piece;
        let keep: Vec<usize> =
            u.transfers[i].after.iter().copied().filter(|&a| s.transfers[a].piece == piece).collect();
        u.transfers[i].after = keep;
    }
    u
}

const ALGBW: &str = "6400/19";
const ORDERING: usize = 34800;
const ORDERED_US: f64 = 335.6197925925911;
const UNORDERED_US: f64 = 446.76844444444254;

#[test]
fn mi250_staggered_reduce_scatter_orders_its_folds() {
    let t = topo("mi250:2");
    let s = synthesize(&t, Collective::ReduceScatter, &staggered_req(None)).unwrap();
    verify(&s, &t).unwrap_or_else(|v| panic!("{v}"));
    // 16 trees per position, each of the 32 ranks' 16 trees one piece of 1/16 of its shard.
    assert_eq!(s.pieces.len(), 512);
    assert_eq!(s.transfers.len(), 512 * 31);
    let d = &s.provenance.details;
    assert_eq!(d.get("tree_shape").and_then(|v| v.as_str()), Some("boxes-staggered"));
    assert_eq!(d.get("forest_algbw_exact").and_then(|v| v.as_str()), Some(ALGBW));
    let deps = ordering(&s);
    assert_eq!(deps.len(), ORDERING);
    assert_eq!(d.get("ordering_dependencies").and_then(|v| v.as_u64()), Some(ORDERING as u64));
    // One crossing per tree (512), all from the rank at the root's position.
    let crossings = s.transfers.iter().filter(|x| (x.src < 16) != (x.dst < 16)).count();
    assert_eq!(crossings, 512);
    assert!(s.transfers.iter().filter(|x| (x.src < 16) != (x.dst < 16)).all(|x| x.src % 16 == x.dst % 16));
    // `boxes` has none; the allgather of boxes-staggered is boxes'.
    let mut boxes = Request::default();
    boxes.options.insert("tree-shape".into(), "boxes".into());
    assert!(ordering(&synthesize(&t, Collective::ReduceScatter, &boxes).unwrap()).is_empty());
    let ag = synthesize(&t, Collective::Allgather, &staggered_req(None)).unwrap();
    assert_eq!(ag.transfers, synthesize(&t, Collective::Allgather, &boxes).unwrap().transfers);
    // The allreduce composes the staggered reduce-scatter with that allgather and keeps the order.
    let ar = synthesize(&t, Collective::Allreduce, &staggered_req(None)).unwrap();
    verify(&ar, &t).unwrap_or_else(|v| panic!("{v}"));
    assert_eq!(ordering(&ar).len(), ORDERING);
}

#[test]
fn staggering_feeds_the_crossings_first() {
    // The runtime model at 64 MiB under LL128 and 4 sub-chunks per piece, the same forest with
    // and without the order: unordered, all folds share the xGMI links to the end and the
    // crossings come last.
    let t = topo("mi250:2");
    let s = synthesize(&t, Collective::ReduceScatter, &staggered_req(None)).unwrap();
    let size = Rat::from_integer(64 << 20);
    let time = |s: &Schedule| {
        runtime_time(&crate::ir::transform::pipelined(s, 4).unwrap(), &t, size, Protocol::LL128).unwrap().time_us
    };
    let (ordered, free) = (time(&s), time(&unordered(&s)));
    assert!((ordered - ORDERED_US).abs() < 0.05, "{ordered}");
    assert!((free - UNORDERED_US).abs() < 0.05, "{free}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn random_boxes_staggered_verify(t in arb_boxes(), per in 1usize..6) {
        for c in [Collective::ReduceScatter, Collective::Allreduce] {
            let s = synthesize(&t, c, &staggered_req(Some(per))).unwrap();
            prop_assert!(verify(&s, &t).is_ok(), "{:?}", c);
            let deps = ordering(&s);
            // With more than one tree per position and boxes of several ranks there is an order.
            let g = t.n_ranks() / crate::synth::forestcoll::two_level::layout(&t).unwrap().len();
            prop_assert_eq!(deps.is_empty(), g == 1, "{} per position, {} per box", per, g);
        }
    }
}
