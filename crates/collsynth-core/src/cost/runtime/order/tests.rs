//! Thread blocks run their transfers in program order, and the time-reversed numbering, on
//! closed forms a line of three ranks decides, and on a ForestColl reduce-scatter.

use super::*;
use crate::cost::runtime::sim::makespan_us;
use crate::cost::runtime::Protocol;
use crate::ir::{Collective, Piece, Transfer};
use crate::topology::TopologyBuilder;

/// a <-> b <-> c at 100 GB/s (10^5 bytes per µs), no latency, generic classes (no overhead).
fn line() -> Topology {
    let mut b = TopologyBuilder::new("line");
    let r: Vec<usize> = ["a", "b", "c"].iter().map(|n| b.compute(*n, None)).collect();
    for (x, y) in [(0, 1), (1, 0), (1, 2), (2, 1)] {
        b.link(r[x], r[y], Rat::from_integer(100), 0.0);
    }
    b.build().unwrap()
}

/// 3 MiB: a piece is one third, one Simple slice, `m / b` µs on a link.
const SIZE: i128 = 3 << 20;
const PIECE_US: f64 = (1 << 20) as f64 / 1e5;

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b, "{a} != {b}");
}

/// Reduce-scatter pieces of shards 1 and 2 on the line, transfers given as
/// (shard, src, dst, after).
fn schedule(topo: &Topology, transfers: &[(usize, usize, usize, Vec<usize>)]) -> Schedule {
    let mut s = Schedule::new(Collective::ReduceScatter, 3, 0, "line");
    let pieces: Vec<usize> = (0..3).map(|x| s.add_piece(Piece::whole(x))).collect();
    for (shard, src, dst, after) in transfers {
        let l = topo.link_between(topo.rank_node(*src), topo.rank_node(*dst)).unwrap();
        s.add(Transfer::new(pieces[*shard], *src, *dst, vec![l], Op::Reduce, after.clone(), None));
    }
    s
}

fn makespan(s: &Schedule, topo: &Topology) -> f64 {
    makespan_us(s, topo, Rat::from_integer(SIZE), Protocol::Simple, 1).unwrap()
}

#[test]
fn a_thread_block_runs_its_transfers_in_program_order() {
    // On b -> c, transfer 1 waits for a's contribution and transfer 2 is ready at once. As
    // separate connections 2 goes first (2 m/b); one thread block runs 1 then 2, as MSCCL's
    // interpreter runs a block's steps in order (3 m/b).
    let topo = line();
    let mut s = schedule(&topo, &[(2, 0, 1, vec![]), (2, 1, 2, vec![0]), (0, 1, 2, vec![])]);
    close(makespan(&s, &topo), 2.0 * PIECE_US);
    s.provenance.details.set(DETAIL, "as numbered");
    assert!(has_thread_block_order(&s));
    close(makespan(&s, &topo), 3.0 * PIECE_US);
}

#[test]
fn time_reversal_serves_the_longer_chain_first() {
    // a sends b two contributions: shard 1's (ends at b) and shard 2's (goes on to c). In
    // arrival order shard 1's goes first and c waits (3 m/b); reversed, the allgather sends
    // c's piece first, so the reduce-scatter sends shard 2's first: 2 m/b, the bound.
    let topo = line();
    let s = schedule(&topo, &[(1, 0, 1, vec![]), (2, 0, 1, vec![]), (2, 1, 2, vec![1])]);
    close(makespan(&s, &topo), 3.0 * PIECE_US);
    let o = time_reversed(&s, &topo, Rat::from_integer(SIZE)).unwrap().unwrap();
    let shards: Vec<(usize, usize, usize)> =
        o.transfers.iter().map(|t| (o.pieces[t.piece].shard, t.src, t.dst)).collect();
    assert_eq!(shards, [(2, 0, 1), (1, 0, 1), (2, 1, 2)]);
    assert_eq!(o.transfers[2].after, [0]);
    assert_eq!(o.provenance.details.text(DETAIL).as_deref(), Some("\"time-reversed\""));
    close(makespan(&o, &topo), 2.0 * PIECE_US);
    // Already in that order: nothing to change.
    assert!(time_reversed(&o, &topo, Rat::from_integer(SIZE)).unwrap().is_none());
}

#[test]
fn nothing_to_order_without_reductions_or_reverse_links() {
    let topo = line();
    let mut s = schedule(&topo, &[(1, 0, 1, vec![])]);
    s.transfers[0].op = Op::Copy;
    assert!(time_reversed(&s, &topo, Rat::from_integer(SIZE)).unwrap().is_none());
    // a -> b without b -> a.
    let mut b = TopologyBuilder::new("one-way");
    let (x, y) = (b.compute("a", None), b.compute("b", None));
    b.link(x, y, Rat::from_integer(100), 0.0);
    b.link(y, x, Rat::from_integer(100), 0.0);
    let sw = b.switch("sw", None);
    b.link(x, sw, Rat::from_integer(100), 0.0);
    b.link(sw, y, Rat::from_integer(100), 0.0);
    let topo = b.build().unwrap();
    let mut s = Schedule::new(Collective::ReduceScatter, 2, 0, "one-way");
    let p = s.add_piece(Piece::whole(1));
    let route = vec![topo.link_between(x, sw).unwrap(), topo.link_between(sw, y).unwrap()];
    s.add(Transfer::new(p, 0, 1, route, Op::Reduce, vec![], None));
    assert!(time_reversed(&s, &topo, Rat::from_integer(SIZE)).unwrap().is_none());
}

#[test]
fn a_reordered_forestcoll_reduce_scatter_still_verifies_and_lowers_in_its_order() {
    let mut reordered = 0;
    for spec in ["switch:4", "dgx-a100:1", "dgx-a100:2"] {
        let topo = crate::zoo::from_spec(spec).unwrap();
        let size = Rat::from_integer(64 << 20);
        let x =
            crate::api::synthesize(&topo, Collective::ReduceScatter, "forestcoll", &Default::default(), size).unwrap();
        let Some(o) = time_reversed(&x.schedule, &x.topology, size).unwrap() else {
            continue;
        };
        crate::verify::verify(&o, &x.topology).unwrap();
        // The numbering is the program order, so the exported XML runs it.
        let order = crate::ir::transform::program_order(&o).unwrap();
        assert!(order.iter().enumerate().all(|(i, &t)| i == t), "{spec}");
        let key = |s: &Schedule| {
            let mut v: Vec<_> = s.transfers.iter().map(|t| (t.piece, t.src, t.dst, t.route.clone())).collect();
            v.sort();
            v
        };
        assert_eq!(key(&o), key(&x.schedule), "{spec}: not a renumbering");
        crate::msccl::lower::lower(&o, &Default::default()).unwrap();
        assert!(crate::cost::runtime::runtime(&o, &x.topology, size).unwrap().time_us > 0.0);
        reordered += 1;
    }
    assert!(reordered >= 2, "{reordered}");
}
