//! Thread blocks run their transfers in program order, and the time-reversed numbering, on
//! closed forms a line of three ranks decides, and on a ForestColl reduce-scatter.

use super::*;
use crate::cost::runtime::sim::{makespan_in_blocks_us, makespan_us};
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
fn the_listed_order_of_a_thread_block_decides() {
    // The same transfers, the independent b -> c one listed first: b's block (receive from
    // a, send to c) sends it, then receives shard 2 and forwards it in one fused step:
    // 2 m/b, where listed second it waits behind that receive (3 m/b, above).
    let topo = line();
    let mut s = schedule(&topo, &[(0, 1, 2, vec![]), (2, 0, 1, vec![]), (2, 1, 2, vec![1])]);
    s.provenance.details.set(DETAIL, "as numbered");
    let plan = crate::cost::runtime::sim::block_plan(&s).unwrap();
    // a: send to b; b: receive from a paired with send to c; c: receive from b.
    assert_eq!(plan.blocks, [vec![(1, true)], vec![(0, true), (1, false), (2, true)], vec![(0, false), (2, false)]]);
    close(makespan(&s, &topo), 2.0 * PIECE_US);
}

#[test]
fn the_timed_order_forwards_before_the_unrelated_receive() {
    // The schedule above that takes 3 m/b as numbered: by time, b's block sends the ready
    // piece (start 0), receives shard 2 (arrives m) and forwards it in the same step (m,
    // deeper than c's receive of the first at m): 2 m/b.
    let topo = line();
    let mut s = schedule(&topo, &[(2, 0, 1, vec![]), (2, 1, 2, vec![0]), (0, 1, 2, vec![])]);
    let size = Rat::from_integer(SIZE);
    let t = timed_operations(&s, &topo, size, Protocol::Simple, 1).unwrap();
    assert_eq!(t, [(0, true), (2, true), (0, false), (1, true), (2, false), (1, false)]);
    // On one channel (b's one block receives from a and sends to c) the order alone decides.
    let one = crate::msccl::lower::Options { order: Some(t.clone()), channels: Some(1), ..Default::default() };
    let plan = crate::msccl::lower::block_plan(&s, &one).unwrap();
    assert_eq!(plan.blocks[1], [(2, true), (0, false), (1, true)]);
    close(makespan_in_blocks_us(&s, &topo, size, Protocol::Simple, 1, &plan).unwrap(), 2.0 * PIECE_US);
    // The simulator's timed lowering: one channel per piece (3 pieces).
    assert_eq!(crate::cost::runtime::sim::timed_block_plan(&s, t).unwrap().channels, 3);
    s.provenance.details.set(DETAIL, TIMED);
    assert_eq!(thread_block_order(&s), Some(BlockOrder::Timed));
    close(makespan(&s, &topo), 2.0 * PIECE_US);
    s.provenance.details.set(DETAIL, "as numbered");
    assert_eq!(thread_block_order(&s), Some(BlockOrder::Numbered));
    close(makespan(&s, &topo), 3.0 * PIECE_US);
}

#[test]
fn a_ring_in_thread_blocks_pays_every_hop_latency_once_per_slice() {
    // ring:4 allgather (1 us per hop, 10^5 bytes per us, no overhead), k slices of s us:
    // each rank's one block (receive from the left, send to the right) runs slice j's three
    // steps before slice j + 1's, so the three hops of a slice are never overlapped:
    // k 3 (s + 1), where independent connections stream (3 k s + 1).
    let topo = crate::zoo::from_spec("ring:4").unwrap();
    let mut s = crate::cost::testutil::ring_allgather(&topo, &[0, 1, 2, 3]);
    let m = 4 * 4 * (2 << 20); // k = 4 slices of 2 MiB, s = 20.97 us
    let slice = (2 << 20) as f64 / 1e5;
    let size = Rat::from_integer(m);
    close(makespan_us(&s, &topo, size, Protocol::Simple, 4).unwrap(), 12.0 * slice + 1.0);
    s.provenance.details.set(DETAIL, "as numbered");
    close(makespan_us(&s, &topo, size, Protocol::Simple, 4).unwrap(), 12.0 * (slice + 1.0));
    let plan = crate::cost::runtime::sim::block_plan(&s).unwrap();
    assert_eq!(plan.blocks.len(), 4);
    close(makespan_in_blocks_us(&s, &topo, size, Protocol::Simple, 1, &plan).unwrap(), 3.0 * (4.0 * slice + 1.0));
}

#[test]
fn a_switch_with_one_peer_per_block_loses_nothing() {
    // Three ranks on a switch (100 GB/s, 1 us per link), each sends its piece to both
    // others: every block has one peer, so blocks and connections agree: two pieces per
    // up- and downlink, 2 s + 2 us in one slice.
    let (topo, s) = switch_allgather();
    let size = Rat::from_integer(SIZE);
    let free = makespan_us(&s, &topo, size, Protocol::Simple, 1).unwrap();
    close(free, 2.0 * PIECE_US + 2.0);
    let plan = crate::cost::runtime::sim::block_plan(&s).unwrap();
    assert_eq!(plan.blocks.len(), 12);
    assert!(plan.blocks.iter().all(|b| b.len() == 1));
    close(makespan_in_blocks_us(&s, &topo, size, Protocol::Simple, 1, &plan).unwrap(), free);
}

#[test]
fn time_reversal_serves_the_longer_chain_first() {
    // a sends b two contributions: shard 1's (ends at b) and shard 2's (goes on to c). In
    // arrival order shard 1's goes first and c waits (3 m/b); reversed, the allgather sends
    // c's piece first, so the reduce-scatter sends shard 2's first; and b's block (receive
    // from a, send to c) forwards it before it waits for shard 1's (b -> c is deeper, at
    // the same reversed time): 2 m/b, the bound. Listed as given, the block would receive
    // shard 1's before it forwards: 3 m/b.
    let topo = line();
    let mut s = schedule(&topo, &[(1, 0, 1, vec![]), (2, 0, 1, vec![]), (2, 1, 2, vec![1])]);
    close(makespan(&s, &topo), 3.0 * PIECE_US);
    let o = time_reversed(&s, &topo, Rat::from_integer(SIZE)).unwrap().unwrap();
    let shards: Vec<(usize, usize, usize)> =
        o.transfers.iter().map(|t| (o.pieces[t.piece].shard, t.src, t.dst)).collect();
    assert_eq!(shards, [(2, 0, 1), (2, 1, 2), (1, 0, 1)]);
    assert_eq!(o.transfers[1].after, [0]);
    assert_eq!(o.provenance.details.text(DETAIL).as_deref(), Some("\"time-reversed\""));
    close(makespan(&o, &topo), 2.0 * PIECE_US);
    // Already in that order: nothing to change.
    assert!(time_reversed(&o, &topo, Rat::from_integer(SIZE)).unwrap().is_none());
    s.provenance.details.set(DETAIL, "as numbered");
    close(makespan(&s, &topo), 3.0 * PIECE_US);
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
        // The numbering is the program order: every thread block the exporter writes runs
        // its transfers by increasing index.
        let plan = crate::cost::runtime::sim::block_plan(&o).unwrap();
        assert!(plan.blocks.iter().all(|b| b.windows(2).all(|w| w[0].0 <= w[1].0)), "{spec}");
        let key = |s: &Schedule| {
            let mut v: Vec<_> = s.transfers.iter().map(|t| (t.piece, t.src, t.dst, t.route.clone())).collect();
            v.sort();
            v
        };
        assert_eq!(key(&o), key(&crate::ir::orbit::expand(&x.schedule).unwrap()), "{spec}: not a renumbering");
        crate::msccl::lower::lower(&o, &Default::default()).unwrap();
        assert!(crate::cost::runtime::runtime(&o, &x.topology, size).unwrap().time_us > 0.0);
        reordered += 1;
    }
    assert!(reordered >= 2, "{reordered}");
}

/// Two ranks a <-> b at 100 GB/s with `latency` µs per hop, and the allreduce that reduces
/// shard 0 at a and shard 1 at b, then sends each sum back: t0 (shard 0, b -> a, reduce),
/// t1 (shard 0, a -> b, after t0), t2 (shard 1, a -> b, reduce), t3 (shard 1, b -> a, after t2).
fn two_rank_allreduce(latency: f64) -> (Topology, Schedule) {
    let mut b = TopologyBuilder::new("pair");
    let (x, y) = (b.compute("a", None), b.compute("b", None));
    b.link(x, y, Rat::from_integer(100), latency);
    b.link(y, x, Rat::from_integer(100), latency);
    let topo = b.build().unwrap();
    let mut s = Schedule::new(Collective::Allreduce, 2, 0, "pair");
    let (p0, p1) = (s.add_piece(Piece::whole(0)), s.add_piece(Piece::whole(1)));
    let link = |src: usize, dst: usize| vec![topo.link_between(topo.rank_node(src), topo.rank_node(dst)).unwrap()];
    s.add(Transfer::new(p0, 1, 0, link(1, 0), Op::Reduce, vec![], None));
    s.add(Transfer::new(p0, 0, 1, link(0, 1), Op::Copy, vec![0], None));
    s.add(Transfer::new(p1, 0, 1, link(0, 1), Op::Reduce, vec![], None));
    s.add(Transfer::new(p1, 1, 0, link(1, 0), Op::Copy, vec![2], None));
    crate::verify::verify(&s, &topo).unwrap();
    (topo, s)
}

#[test]
fn export_writes_the_lowering_that_streams() {
    // k = 2 slices of s = 1 µs (2 x 10^5 bytes per piece), L = 2 µs per hop (L >= s).
    // Timed, a channel per piece: a's blocks are [receive t0, send t1] (a forward, fused),
    // [send t2], [receive t3], b's the mirror; t0 and t2 stream ([0, s], [s, 2 s]), t1's
    // slice j leaves when t0's arrives ((j + 1) s + L) and the link is free: t1 runs
    // [s + L, 3 s + L] and lands at 3 s + 2 L = 7 µs, the default model's time too.
    // As numbered (one channel: one block per rank runs slice j's four steps in turn,
    // t0 t1 t2 t3, before slice j + 1's): 8 s + 5 L = 18 µs.
    let (topo, s) = two_rank_allreduce(2.0);
    let size = Rat::from_integer(400_000);
    let simple = Protocol::Simple;
    close(makespan_us(&s, &topo, size, simple, 2).unwrap(), 7.0);
    let numbered = crate::cost::runtime::sim::block_plan(&s).unwrap();
    assert_eq!(numbered.channels, 1);
    close(makespan_in_blocks_us(&s, &topo, size, simple, 2, &numbered).unwrap(), 18.0);
    let base = crate::msccl::lower::Options::default();
    let e = exported_lowering(&s, &topo, size, simple, 2, &base).unwrap().unwrap();
    // The timed lowering by piece first reaches 7 µs (by half and by depth tie with it).
    assert_eq!((e.lowering, e.plan.channels), (Lowering::Timed, 2));
    assert_eq!(
        e.plan.blocks,
        [
            vec![(0, false), (1, true)],
            vec![(2, true)],
            vec![(3, false)],
            vec![(0, true)],
            vec![(1, false)],
            vec![(2, false), (3, true)]
        ]
    );
    close(e.makespan_us, 7.0);
    // The model of a schedule marked as exported runs exactly that lowering.
    let mut marked = s.clone();
    marked.provenance.details.set(DETAIL, EXPORTED);
    assert_eq!(thread_block_order(&marked), Some(BlockOrder::Exported));
    close(makespan_us(&marked, &topo, size, simple, 2).unwrap(), 7.0);
    // And the exporter writes it: the program of the chosen options, 2 channels.
    let o = crate::msccl::lower::Options { pipeline: 1, ..base };
    let x = crate::api::export_msccl_at(&s, &topo, &o, false, true, 400_000).unwrap();
    assert_eq!(x.exported.program, crate::msccl::lower::lower(&s, &e.options).unwrap());
    assert_eq!(x.exported.program.nchannels, 2);
    // The plain exporter (no chooser) keeps the numbering: one channel.
    assert_eq!(crate::msccl::export(&s, &o, false).unwrap().program.nchannels, 1);
}

#[test]
fn the_numbered_lowering_is_kept_when_nothing_beats_it() {
    // A switch allgather whose every block has one peer (above): all three candidates take
    // 2 s + 2 µs; a tie keeps the numbered one, the program `export` wrote before.
    let (topo, s) = switch_allgather();
    let size = Rat::from_integer(SIZE);
    let e = exported_lowering(&s, &topo, size, Protocol::Simple, 1, &Default::default()).unwrap().unwrap();
    assert_eq!((e.lowering, e.options.order.is_none(), e.options.channels), (Lowering::Numbered, true, None));
    close(e.makespan_us, 2.0 * PIECE_US + 2.0);
}

/// Three ranks on a switch (100 GB/s, 1 us per link), each sending its piece to both others
/// straight through the switch.
fn switch_allgather() -> (Topology, Schedule) {
    let mut b = TopologyBuilder::new("star");
    let r: Vec<usize> = (0..3).map(|i| b.compute(format!("r{i}"), None)).collect();
    let sw = b.switch("sw", None);
    for &x in &r {
        b.link(x, sw, Rat::from_integer(100), 1.0);
        b.link(sw, x, Rat::from_integer(100), 1.0);
    }
    let topo = b.build().unwrap();
    let mut s = Schedule::new(Collective::Allgather, 3, 0, "direct");
    for x in 0..3 {
        let p = s.add_piece(Piece::whole(x));
        for d in [(x + 1) % 3, (x + 2) % 3] {
            let route = vec![topo.link_between(r[x], sw).unwrap(), topo.link_between(sw, r[d]).unwrap()];
            s.add(Transfer::new(p, x, d, route, Op::Copy, vec![], None));
        }
    }
    (topo, s)
}

#[test]
fn a_block_runs_first_the_send_the_rest_waits_on_longest() {
    // c sends two reductions to b: t0 ends at b (shard 1), t1 is forwarded on to a by t2
    // (shard 0). One block of c sends both. Numbered, t0 first: t1 leaves at m/b and t2 lands
    // at 3 m/b. By criticality t1 (two transfers to go) goes first and t2 runs beside t0:
    // 2 m/b.
    let topo = line();
    let s = schedule(&topo, &[(1, 2, 1, vec![]), (0, 2, 1, vec![]), (0, 1, 0, vec![1])]);
    let size = Rat::from_integer(SIZE);
    let ranked = ranked_operations(&s, &topo, size, Protocol::Simple).unwrap();
    let at = |op: Operation| ranked.iter().position(|&x| x == op).unwrap();
    assert!(at((1, true)) < at((0, true)), "{ranked:?}");
    let run = |order: Option<Vec<Operation>>| {
        let o = crate::msccl::lower::Options { order, channels: Some(1), ..Default::default() };
        let plan = block_plan(&s, &o).unwrap();
        makespan_in_blocks_us(&s, &topo, size, Protocol::Simple, 1, &plan).unwrap()
    };
    close(run(None), 3.0 * PIECE_US);
    close(run(Some(ranked)), 2.0 * PIECE_US);
}

#[test]
fn the_exported_forest_reduce_scatter_runs_as_fast_in_blocks_as_on_connections() {
    // dgx-a100:2's reduce-scatter at 64 MiB, as `auto` picks it and export cuts it (4 deep):
    // ordered by time, with depths sharing the channels the limits leave, its blocks took
    // 424.5 us where independent connections take 318.6 (1.52x and 1.14x the time bound,
    // 279.9 us). Critical path first, a channel group per depth: within 1.15x.
    let topo = crate::zoo::from_spec("dgx-a100:2").unwrap();
    let size = Rat::from_integer(64 << 20);
    let c = Collective::ReduceScatter;
    let done = crate::api::synthesize(&topo, c, "auto", &Default::default(), size).unwrap();
    let s = crate::ir::transform::pipelined(&crate::ir::orbit::flat(&done.schedule).unwrap(), 4).unwrap();
    let p = choose_protocol(&s, &topo, size).unwrap();
    let k = slices_for(&s, &topo, size, p);
    let e = exported_lowering(&s, &topo, size, p, k, &Default::default()).unwrap().unwrap();
    let (bound, _) = crate::api::time_bound(&topo, c, 0, size).unwrap();
    let time = p.base_latency_us() + e.makespan_us;
    assert_eq!(e.lowering, Lowering::RankedDepth);
    assert!(time <= 1.15 * bound, "{time} vs bound {bound}");
    // No channel carries two depths: the spread's width times the depths.
    let Some(Spread::ByDepth { width }) = e.options.spread else { panic!("{:?}", e.options.spread) };
    assert_eq!(e.plan.channels % width, 0);
}
