use super::*;
use crate::cost::testutil::link;
use crate::ir::{Collective, Op, Piece, Transfer};
use crate::zoo::from_spec;

/// A step schedule on ring:4 (100 GB/s, 1 us): step 0 sends half of M 0 -> 1 and the other
/// half 0 -> 2 (two hops, sharing link 0 -> 1); step 1 sends a quarter 2 -> 3.
#[test]
fn step_model_sums_steps() {
    let topo = from_spec("ring:4,bw=100,lat=1").unwrap();
    let mut s = Schedule::new(Collective::Broadcast, 4, 0, "t");
    let h0 = s.add_piece(Piece { shard: 0, start: Rat::zero(), end: Rat::new(1, 2) });
    let h1 = s.add_piece(Piece { shard: 0, start: Rat::new(1, 2), end: Rat::from_integer(1) });
    let q = s.add_piece(Piece { shard: 0, start: Rat::zero(), end: Rat::new(1, 4) });
    let (l01, l12, l23) = (link(&topo, 0, 1), link(&topo, 1, 2), link(&topo, 2, 3));
    let t = |piece, src, dst, route, step| Transfer::new(piece, src, dst, route, Op::Copy, vec![], Some(step));
    s.add(t(h0, 0, 1, vec![l01], 0));
    s.add(t(h1, 0, 2, vec![l01, l12], 0));
    s.add(t(q, 2, 3, vec![l23], 1));
    let m = Rat::from_integer(1_000_000);
    // Step 0: alpha 2 us (two hops), link 0->1 carries M = 10 us. Step 1: 1 us + 2.5 us.
    let e = alpha_beta(&s, &topo, m, 1).unwrap();
    assert_eq!((e.latency_us, e.bandwidth_us, e.total_us), (3.0, 12.5, 15.5));
    // Without steps it is a DAG of independent transfers: latency 2 us, busiest link M.
    for t in &mut s.transfers {
        t.step = None;
    }
    let e = alpha_beta(&s, &topo, m, 1).unwrap();
    assert_eq!((e.latency_us, e.bandwidth_us), (2.0, 10.0));
    // A gap in step numbers costs nothing; the empty schedule costs nothing.
    let empty = Schedule::new(Collective::Broadcast, 4, 0, "t");
    assert_eq!(alpha_beta(&empty, &topo, m, 1).unwrap().total_us, 0.0);
}

/// The DAG latency is the longest path, not the sum: a tree 0 -> 1 -> 2 and 0 -> 3
/// (on biring:4 with different latencies per hop).
#[test]
fn dag_latency_is_longest_path() {
    let topo = from_spec("biring:4,lat=0.5").unwrap();
    let mut s = Schedule::new(Collective::Broadcast, 4, 0, "t");
    let p = s.add_piece(Piece::whole(0));
    let t = |src: usize, dst: usize, after: Vec<usize>| {
        Transfer::new(p, src, dst, vec![link(&topo, src, dst)], Op::Copy, after, None)
    };
    let a = s.add(t(0, 1, vec![]));
    s.add(t(1, 2, vec![a]));
    s.add(t(0, 3, vec![]));
    let m = Rat::from_integer(3_000);
    let e = alpha_beta(&s, &topo, m, 4).unwrap();
    // Two hops of 0.5 us; link 0 -> 1 is 100 GB/s and carries 3000 bytes: 0.03 us.
    assert_eq!(e.latency_us, 1.0);
    assert!((e.bandwidth_us - 0.03).abs() < 1e-15);
}
