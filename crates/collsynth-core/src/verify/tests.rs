//! Hand-built schedules that must pass, and mutations of them that must be caught with
//! the right message.

use super::*;
use crate::ir::transform::{compose, pipelined, reverse, transpose};
use crate::ir::{Collective, Op, Piece, Router, Schedule, Transfer};
use crate::rational::Rat;
use crate::zoo::from_spec;

fn topo(spec: &str) -> Topology {
    from_spec(spec).unwrap()
}

/// Ring allgather on a ring whose links go r -> r + dir: N - 1 steps; at step t rank r
/// sends shard (r - dir t) mod N, after the transfer that delivered it. Transfer t*N + r.
fn ring_allgather(topo: &Topology, dir: isize) -> Schedule {
    let n = topo.n_ranks();
    let mut s = Schedule::new(Collective::Allgather, n, 0, "ring");
    for r in 0..n {
        s.add_piece(Piece::whole(r));
    }
    let next = |r: usize| (r as isize + dir).rem_euclid(n as isize) as usize;
    let mut delivered = vec![usize::MAX; n];
    for t in 0..n - 1 {
        let mut now = vec![usize::MAX; n];
        for r in 0..n {
            let shard = (r as isize - dir * t as isize).rem_euclid(n as isize) as usize;
            let link = topo.link_between(topo.rank_node(r), topo.rank_node(next(r))).unwrap();
            let after = if t == 0 { vec![] } else { vec![delivered[r]] };
            now[next(r)] = s.add(Transfer::new(shard, r, next(r), vec![link], Op::Copy, after, Some(t as u32)));
        }
        delivered = now;
    }
    s
}

/// Ring reduce-scatter on `ring`: the ring allgather of the transpose, reversed.
fn ring_reduce_scatter(ring: &Topology) -> Schedule {
    let t = transpose(ring);
    reverse(&ring_allgather(&t, -1), &t, ring).unwrap()
}

fn ring_allreduce(ring: &Topology) -> Schedule {
    compose(&ring_reduce_scatter(ring), &ring_allgather(ring, 1), Collective::Allreduce).unwrap()
}

/// Binary-tree broadcast from rank 0 on `switch:4`, every edge a 2-hop route through the
/// switch: 0 -> 1, 0 -> 2, then 1 -> 3 after 0 -> 1.
fn tree_broadcast(topo: &Topology) -> Schedule {
    let mut router = Router::new(topo);
    let mut s = Schedule::new(Collective::Broadcast, 4, 0, "tree");
    let p = s.add_piece(Piece::whole(0));
    let mut edge = |s: &mut Schedule, src: usize, dst: usize, after: Vec<usize>| {
        let route = router.route(src, dst).unwrap();
        assert_eq!(route.len(), 2);
        s.add(Transfer::new(p, src, dst, route, Op::Copy, after, None))
    };
    let a = edge(&mut s, 0, 1, vec![]);
    edge(&mut s, 0, 2, vec![]);
    edge(&mut s, 1, 3, vec![a]);
    s
}

/// Remove transfer `i` and every dependency on it.
fn drop_transfer(s: &mut Schedule, i: usize) {
    s.transfers.remove(i);
    for t in &mut s.transfers {
        t.after.retain(|&a| a != i);
        for a in &mut t.after {
            if *a > i {
                *a -= 1;
            }
        }
    }
}

#[track_caller]
fn fails(s: &Schedule, topo: &Topology, needle: &str) -> Violation {
    match verify(s, topo) {
        Ok(r) => panic!("expected a violation containing {needle:?}, the schedule passed: {r:?}"),
        Err(v) => {
            assert!(v.message.contains(needle), "expected {needle:?} in:\n{v}");
            assert_eq!(v.to_string(), v.message);
            assert!(!v.message.contains('\n'));
            v
        }
    }
}

// --- schedules that pass ------------------------------------------------------------------

#[test]
fn ring_allgather_passes() {
    let ring = topo("ring:4");
    let s = ring_allgather(&ring, 1);
    assert_eq!(verify(&s, &ring), Ok(Report { transfers: 12, pieces: 4, depth: 3 }));
    // Pipelined into 2 chunks per piece.
    let s2 = pipelined(&s, 2).unwrap();
    assert_eq!(verify(&s2, &ring), Ok(Report { transfers: 24, pieces: 8, depth: 3 }));
}

#[test]
fn ring_reduce_scatter_and_allreduce_pass() {
    let ring = topo("ring:4");
    let rs = ring_reduce_scatter(&ring);
    assert_eq!(rs.collective, Collective::ReduceScatter);
    assert_eq!(verify(&rs, &ring), Ok(Report { transfers: 12, pieces: 4, depth: 3 }));
    let ar = ring_allreduce(&ring);
    assert_eq!(verify(&ar, &ring), Ok(Report { transfers: 24, pieces: 4, depth: 6 }));
    assert_eq!(verify(&pipelined(&ar, 3).unwrap(), &ring), Ok(Report { transfers: 72, pieces: 12, depth: 6 }));
}

#[test]
fn ring_allreduce_over_64_words_of_ranks_passes() {
    // 130 ranks: bitsets of 3 words, ranks in every word.
    let ring = topo("ring:130");
    let ar = ring_allreduce(&ring);
    let report = verify(&ar, &ring).unwrap();
    assert_eq!(report, Report { transfers: 2 * 130 * 129, pieces: 130, depth: 2 * 129 });
}

#[test]
fn tree_broadcast_reduce_and_allreduce_pass() {
    let sw = topo("switch:4");
    let b = tree_broadcast(&sw);
    assert_eq!(verify(&b, &sw), Ok(Report { transfers: 3, pieces: 1, depth: 2 }));
    assert_eq!(verify(&pipelined(&b, 2).unwrap(), &sw), Ok(Report { transfers: 6, pieces: 2, depth: 2 }));
    let r = reverse(&b, &sw, &sw).unwrap();
    assert_eq!(r.collective, Collective::Reduce);
    assert_eq!(verify(&r, &sw), Ok(Report { transfers: 3, pieces: 1, depth: 2 }));
    let ar = compose(&r, &b, Collective::Allreduce).unwrap();
    assert_eq!(verify(&ar, &sw), Ok(Report { transfers: 6, pieces: 1, depth: 4 }));
}

#[test]
fn broadcast_from_another_root_passes() {
    // Root 2: 2 -> 0 and 2 -> 3, then 0 -> 1 after 2 -> 0 (indirectly: after 2 -> 3, which
    // is after 2 -> 0, so the delivery is found through the DAG, not the direct list).
    let sw = topo("switch:4");
    let mut router = Router::new(&sw);
    let mut s = Schedule::new(Collective::Broadcast, 4, 2, "tree");
    s.add_piece(Piece::whole(0));
    for (src, dst, after) in [(2, 0, vec![]), (2, 3, vec![0]), (0, 1, vec![1])] {
        let route = router.route(src, dst).unwrap();
        s.add(Transfer::new(0, src, dst, route, Op::Copy, after, None));
    }
    assert_eq!(verify(&s, &sw), Ok(Report { transfers: 3, pieces: 1, depth: 3 }));
}

#[test]
fn allgatherv_with_an_empty_shard_passes() {
    // Rank 1 contributes nothing: its shard has size 0 and no pieces.
    let ring = topo("ring:3");
    let mut s = Schedule::new(Collective::Allgatherv, 3, 0, "ring");
    s.shards = vec![Rat::new(1, 4), Rat::from_integer(0), Rat::new(3, 4)];
    let p0 = s.add_piece(Piece::whole(0));
    let p2 = s.add_piece(Piece::whole(2));
    let l = |a: usize| ring.link_between(a, (a + 1) % 3).unwrap();
    let mk = |piece, src: usize, after: Vec<usize>, step| {
        Transfer::new(piece, src, (src + 1) % 3, vec![l(src)], Op::Copy, after, Some(step))
    };
    let a = s.add(mk(p0, 0, vec![], 0)); // 0 -> 1
    let b = s.add(mk(p2, 2, vec![], 0)); // 2 -> 0
    s.add(mk(p0, 1, vec![a], 1)); // 1 -> 2
    s.add(mk(p2, 0, vec![b], 1)); // 0 -> 1
    assert_eq!(verify(&s, &ring), Ok(Report { transfers: 4, pieces: 2, depth: 2 }));
    // Zero-size shards are for allgatherv only.
    s.collective = Collective::Allgather;
    let v = fails(&s, &ring, "shard 1 has size 0 (must be > 0)");
    assert_eq!(v.transfer, None);
}

#[test]
fn allreduce_without_transfers_misses_contributions() {
    let t = from_spec("ring:2").unwrap();
    let mut s = Schedule::new(Collective::Allreduce, 2, 0, "none");
    s.add_piece(Piece::whole(0));
    s.add_piece(Piece::whole(1));
    // Two ranks and nothing sent: each rank misses the other's contribution.
    let v = fails(&s, &t, "rank 0 ends with piece 0 = shard 0 [0, 1) missing contributions from rank 1");
    assert_eq!((v.rank, v.piece, v.transfer), (Some(0), Some(0), None));
}

// --- mutations that must be caught ----------------------------------------------------------

#[test]
fn swapped_steps_send_before_the_data_arrives() {
    // Rank 1 sends shard 0 at step 0 (it only receives it at step 0) and its own shard 1 at
    // step 1: the first send has nothing to wait for that would bring it the data.
    let ring = topo("ring:4");
    let mut s = ring_allgather(&ring, 1);
    let (a, b) = (1, 4 + 1);
    assert_eq!((s.transfers[a].piece, s.transfers[b].piece), (1, 0));
    s.transfers[a].piece = 0;
    s.transfers[b].piece = 1;
    s.transfers[a].after.clear();
    s.transfers[b].after.clear();
    let v = fails(
        &s,
        &ring,
        "transfer 1 (step 0, rank 1 -> 2, piece 0 = shard 0 [0, 1)): rank 1 sends piece 0 before it holds it \
         (it arrives by transfer 0, which this transfer does not wait for)",
    );
    assert_eq!((v.transfer, v.rank, v.piece, v.step), (Some(1), Some(1), Some(0), Some(0)));
}

#[test]
fn send_of_a_piece_never_received() {
    // The 1 -> 3 edge of the tree without its dependency, moved first.
    let sw = topo("switch:4");
    let mut s = tree_broadcast(&sw);
    let mut t = s.transfers.pop().unwrap();
    t.after.clear();
    s.transfers.insert(0, t);
    let v =
        fails(&s, &sw, "transfer 0 (rank 1 -> 3, piece 0 = shard 0 [0, 1)): rank 1 sends piece 0 before it holds it");
    assert!(!v.message.contains("arrives"));
    assert_eq!(v.step, None);
}

#[test]
fn dropped_transfer_fails_the_postcondition() {
    let ring = topo("ring:4");
    let mut s = ring_allgather(&ring, 1);
    let last = s.transfers.pop().unwrap();
    assert_eq!((last.src, last.dst, last.piece), (3, 0, 1));
    let v = fails(&s, &ring, "rank 0 ends without piece 1 = shard 1 [0, 1)");
    assert_eq!((v.rank, v.piece, v.transfer), (Some(0), Some(1), None));

    let mut bcast = tree_broadcast(&topo("switch:4"));
    drop_transfer(&mut bcast, 1);
    fails(&bcast, &topo("switch:4"), "rank 2 ends without piece 0 = shard 0 [0, 1)");

    // Reduce-scatter: drop the first reduction of the chain of piece 2 (3 -> 0).
    let mut rs = ring_reduce_scatter(&ring);
    let t = &rs.transfers[8];
    assert_eq!((t.src, t.dst, t.piece, t.op), (3, 0, 2, Op::Reduce));
    drop_transfer(&mut rs, 8);
    let v = fails(&rs, &ring, "rank 2 ends with piece 2 = shard 2 [0, 1) missing contributions from rank 3");
    assert_eq!((v.rank, v.piece), (Some(2), Some(2)));
}

#[test]
fn duplicated_reduction_is_a_double_reduction() {
    let ring = topo("ring:4");
    let mut rs = ring_reduce_scatter(&ring);
    rs.transfers.push(rs.transfers[8].clone());
    let v = fails(
        &rs,
        &ring,
        "transfer 12 (step 0, rank 3 -> 0, piece 2 = shard 2 [0, 1)): double reduction: \
         rank 3's contribution to piece 2 reaches rank 0 twice",
    );
    assert_eq!((v.transfer, v.rank, v.piece), (Some(12), Some(0), Some(2)));

    // Later in the chain: 0 -> 1 reduced twice, the copy after the original.
    let mut rs = ring_reduce_scatter(&ring);
    let i = rs.transfers.iter().position(|t| (t.src, t.dst, t.piece) == (0, 1, 2)).unwrap();
    let mut dup = rs.transfers[i].clone();
    dup.after = vec![i];
    dup.step = None;
    rs.transfers.push(dup);
    fails(&rs, &ring, "double reduction: rank 0's contribution to piece 2 reaches rank 1 twice");
}

#[test]
fn copied_partial_sum_reduced_again_is_a_double_reduction() {
    // Reduce on switch:3 to root 0: 1 copies its value to 2, then 1 and 2 both reduce into 0.
    let sw = topo("switch:3");
    let mut router = Router::new(&sw);
    let mut s = Schedule::new(Collective::Reduce, 3, 0, "bad");
    s.add_piece(Piece::whole(0));
    for (src, dst, op, after) in [(1, 2, Op::Copy, vec![]), (1, 0, Op::Reduce, vec![]), (2, 0, Op::Reduce, vec![0])] {
        let route = router.route(src, dst).unwrap();
        s.add(Transfer::new(0, src, dst, route, op, after, None));
    }
    fails(&s, &sw, "transfer 2 (rank 2 -> 0, piece 0 = shard 0 [0, 1)): double reduction: rank 1's contribution");
}

#[test]
fn route_over_a_missing_link() {
    // Rank 1 -> 2 on the one-way ring, sent over the link 0 -> 1 (backwards).
    let ring = topo("ring:4");
    let mut s = ring_allgather(&ring, 1);
    let l01 = ring.link_between(0, 1).unwrap();
    s.transfers[1].route = vec![l01];
    let v = fails(
        &s,
        &ring,
        "route over a missing link n1 -> n0: rank 1 is at n1 but the route starts with link 0 (n0 -> n1)",
    );
    assert_eq!((v.transfer, v.link), (Some(1), Some(l01)));

    // A 2-hop route through the switch whose second hop leads elsewhere.
    let sw = topo("switch:4");
    let mut b = tree_broadcast(&sw);
    let (n3, swn) = (sw.node_index("n3").unwrap(), sw.node_index("sw").unwrap());
    b.transfers[0].route[1] = sw.link_between(swn, n3).unwrap();
    fails(&b, &sw, "route over a missing link n3 -> n1: the route ends with link 7 (sw -> n3) but rank 1 is at n1");

    // A jump inside the route between nodes without a link: 0 -> sw -> 1, 2 -> sw -> 3.
    let mut b = tree_broadcast(&sw);
    b.transfers[2].src = 0;
    b.transfers[2].after.clear();
    let (n1, n2) = (sw.node_index("n1").unwrap(), sw.node_index("n2").unwrap());
    b.transfers[2].route = vec![0, sw.link_between(swn, n1).unwrap(), sw.link_between(n2, swn).unwrap(), 7];
    fails(&b, &sw, "route over a missing link n1 -> n2: link 5 (sw -> n1) is followed by link 2 (n2 -> sw)");

    // A jump over a link the topology has but the route does not list.
    let mut b = tree_broadcast(&sw);
    b.transfers[1].route[1] = sw.link_between(n2, swn).unwrap();
    let v =
        fails(&b, &sw, "the route leaves out link 6 (sw -> n2): link 0 (n0 -> sw) is followed by link 2 (n2 -> sw)");
    assert_eq!(v.link, Some(2));

    // A schedule checked against the wrong topology (the transpose).
    let rs = ring_reduce_scatter(&ring);
    fails(&rs, &transpose(&ring), "route over a missing link");
}

#[test]
fn bad_links_and_empty_routes() {
    let ring = topo("ring:4");
    let mut s = ring_allgather(&ring, 1);
    s.transfers[2].route = vec![99];
    let v = fails(&s, &ring, "route link 99 does not exist (the topology has 4 links)");
    assert_eq!(v.link, Some(99));
    s.transfers[2].route.clear();
    fails(&s, &ring, "transfer 2 (step 0, rank 2 -> 3, piece 2 = shard 2 [0, 1)): the route is empty");
}

#[test]
fn dependency_cycle_is_a_deadlock() {
    let ring = topo("ring:4");
    let mut s = ring_allgather(&ring, 1);
    // Transfer 5 (rank 1, step 1) waits for transfer 0; make 0 wait for 5.
    assert_eq!(s.transfers[5].after, vec![0]);
    s.transfers[0].after.push(5);
    let v = fails(&s, &ring, "deadlock: dependency cycle, transfer 0 -> 5 -> 0");
    assert_eq!(v.transfer, Some(0));

    let mut s = ring_allgather(&ring, 1);
    s.transfers[9].after.push(9);
    let v = fails(&s, &ring, "deadlock: dependency cycle, transfer 9 -> 9");
    assert_eq!(v.transfer, Some(9));

    // Transfer 0 waits for a cycle (9 already waits for 4) without being on it.
    let mut s = ring_allgather(&ring, 1);
    assert_eq!(s.transfers[9].after, vec![4]);
    s.transfers[4].after.push(9);
    s.transfers[0].after.push(4);
    let v = fails(&s, &ring, "deadlock: dependency cycle, transfer 4 -> 9 -> 4 (each waits for the next)");
    assert_eq!(v.transfer, Some(4));
}

#[test]
fn dependency_on_a_later_step() {
    let ring = topo("ring:4");
    let mut s = ring_allgather(&ring, 1);
    s.transfers[5].step = Some(0);
    let v =
        fails(&s, &ring, "transfer 5 (step 0, rank 1 -> 2, piece 0 = shard 0 [0, 1)): depends on transfer 0 of step 0");
    assert_eq!(v.step, Some(0));
}

#[test]
fn missing_edge_in_the_reduction_tree_is_a_race() {
    let sw = topo("switch:4");
    let mut r = reverse(&tree_broadcast(&sw), &sw, &sw).unwrap();
    // Transfer 0 (1 -> 0) waits for transfer 2 (3 -> 1): rank 1 must have 3's part first.
    assert_eq!(r.transfers[0].after, vec![2]);
    r.transfers[0].after.clear();
    let v = fails(
        &r,
        &sw,
        "transfer 2 (rank 3 -> 1, piece 0 = shard 0 [0, 1)): race on piece 0 at rank 1 with transfer 0 \
         (rank 1 -> 0, piece 0 = shard 0 [0, 1)): that one sends it and this one reduces into it",
    );
    assert_eq!((v.transfer, v.rank, v.piece), (Some(2), Some(1), Some(0)));
}

#[test]
fn race_that_one_execution_does_not_show() {
    // Allreduce: the allgather's first send of piece 0 from rank 0 no longer waits for the
    // last reduction into rank 0. In index order the reductions still run first, so the
    // symbolic run and the postcondition pass; only the race check sees it.
    let ring = topo("ring:4");
    let mut ar = ring_allreduce(&ring);
    let first_ag = 12;
    let t = &ar.transfers[first_ag];
    assert_eq!((t.src, t.piece, t.after.len()), (0, 0, 1));
    let last_rs = t.after[0];
    ar.transfers[first_ag].after.clear();
    let v = fails(&ar, &ring, &format!("race on piece 0 at rank 0 with transfer {last_rs}"));
    assert!(v.message.contains("that one reduces into it and this one sends it"), "{v}");

    // A read racing with a copy: rank 1 forwards piece 0 without waiting for the
    // allgather's copy of it into rank 1 (transfer 12), so it may send its partial sum.
    let mut ar = ring_allreduce(&ring);
    let j = (12..24).find(|&j| ar.transfers[j].src == 1 && ar.transfers[j].piece == 0).unwrap();
    assert_eq!(ar.transfers[j].after, vec![12]);
    ar.transfers[j].after.clear();
    let v = fails(&ar, &ring, "race on piece 0 at rank 1 with transfer 12 (step 3, rank 0 -> 1");
    assert!(v.message.contains("that one overwrites it and this one sends it"), "{v}");
    assert_eq!(v.transfer, Some(j));
}

#[test]
fn pieces_that_do_not_tile_a_shard() {
    let ring = topo("ring:4");
    let mut s = ring_allgather(&ring, 1);
    s.pieces[1].end = Rat::new(1, 2);
    let v = fails(&s, &ring, "the pieces of shard 1 do not tile it: [1/2, 1) is in no piece");
    assert_eq!(v.transfer, None);

    let mut s = pipelined(&ring_allgather(&ring, 1), 2).unwrap();
    s.pieces[5].start = Rat::new(1, 4); // shard 2 = [0, 1/2) + [1/4, 1)
    let v = fails(&s, &ring, "the pieces of shard 2 do not tile it: pieces 4 and 5 overlap on [1/4, 1/2)");
    assert_eq!(v.piece, Some(5));

    let mut s = pipelined(&ring_allgather(&ring, 1), 2).unwrap();
    s.pieces[2].start = Rat::new(1, 4); // shard 1 = [1/4, 1/2) + [1/2, 1)
    fails(&s, &ring, "the pieces of shard 1 do not tile it: [0, 1/4) is in no piece");

    let mut s = ring_allgather(&ring, 1);
    s.pieces[0].start = Rat::new(-1, 2);
    fails(&s, &ring, "piece 0: [-1/2, 1) of shard 0 is not a non-empty interval within [0, 1)");
    s.pieces[0] = Piece { shard: 7, ..Piece::whole(0) };
    fails(&s, &ring, "piece 0: shard 7 does not exist (4 shards)");
    // A shard without pieces: its data never moves.
    let mut s = ring_allgather(&ring, 1);
    s.pieces[2].end = Rat::new(1, 2);
    s.pieces[3] = Piece { shard: 2, start: Rat::new(1, 2), end: Rat::from_integer(1) };
    fails(&s, &ring, "shard 3 has no pieces");
}

#[test]
fn wrong_op() {
    let ring = topo("ring:4");
    let mut s = ring_allgather(&ring, 1);
    s.transfers[3].op = Op::Reduce;
    let v = fails(
        &s,
        &ring,
        "transfer 3 (step 0, rank 3 -> 0, piece 3 = shard 3 [0, 1)): op is reduce, but allgather only copies",
    );
    assert_eq!(v.transfer, Some(3));
    let sw = topo("switch:4");
    let mut b = tree_broadcast(&sw);
    b.transfers[2].op = Op::Reduce;
    fails(&b, &sw, "op is reduce, but broadcast only copies");
}

#[test]
fn shortened_shards() {
    let ring = topo("ring:4");
    let mut s = ring_allgather(&ring, 1);
    s.shards[0] = Rat::new(1, 8);
    fails(&s, &ring, "shard sizes sum to 7/8, not 1");

    let mut ar = ring_allreduce(&ring);
    ar.shards = vec![Rat::new(1, 4); 4];
    ar.shards[3] = Rat::new(1, 8);
    fails(&ar, &ring, "shard sizes sum to 7/8, not 1");

    // Unequal shards that do sum to 1 are fine for allreduce, not for allgather.
    let mut ar = ring_allreduce(&ring);
    ar.shards = vec![Rat::new(1, 2), Rat::new(1, 4), Rat::new(1, 8), Rat::new(1, 8)];
    assert!(verify(&ar, &ring).is_ok());
    let mut s = ring_allgather(&ring, 1);
    s.shards = vec![Rat::new(1, 2), Rat::new(1, 4), Rat::new(1, 8), Rat::new(1, 8)];
    fails(&s, &ring, "shard 0 has size 1/2, but allgather shards are 1/N = 1/4");
    s.shards.pop();
    fails(&s, &ring, "allgather needs 4 shards (one per rank), found 3");
}

#[test]
fn header_and_index_checks() {
    let ring = topo("ring:4");
    let s = ring_allgather(&ring, 1);
    fails(&s, &topo("ring:5"), "the schedule is for 4 ranks but topology 'ring:5' has 5");

    let sw = topo("switch:4");
    let mut b = tree_broadcast(&sw);
    b.root = 4;
    fails(&b, &sw, "root 4 is not a rank (N = 4)");
    let mut b = tree_broadcast(&sw);
    b.root = 1; // rank 0 no longer holds the data it sends
    fails(&b, &sw, "rank 0 sends piece 0 before it holds it");
    let mut b = tree_broadcast(&sw);
    b.shards.push(Rat::from_integer(0));
    fails(&b, &sw, "broadcast needs exactly 1 shard, found 2");

    let mut s = ring_allgather(&ring, 1);
    s.transfers[0].piece = 4;
    fails(&s, &ring, "transfer 0 (step 0, rank 0 -> 1, piece 4): the piece does not exist (4 pieces)");
    let mut s = ring_allgather(&ring, 1);
    s.transfers[0].dst = 4;
    let v = fails(&s, &ring, "rank 4 does not exist (N = 4)");
    assert_eq!(v.rank, Some(4));
    let mut s = ring_allgather(&ring, 1);
    s.transfers[0].dst = 0;
    fails(&s, &ring, "a rank sends to itself");
    let mut s = ring_allgather(&ring, 1);
    s.transfers[0].after.push(12);
    fails(&s, &ring, "depends on transfer 12, which does not exist (12 transfers)");
}

#[test]
fn receiving_twice() {
    let sw = topo("switch:4");
    let mut b = tree_broadcast(&sw);
    // A second 0 -> 2.
    b.transfers.push(b.transfers[1].clone());
    let v = fails(&b, &sw, "transfer 3 (rank 0 -> 2, piece 0 = shard 0 [0, 1)): rank 2 receives piece 0 twice (transfer 1 delivered it already)");
    assert_eq!(v.rank, Some(2));
    // Sending the root its own data.
    let mut b = tree_broadcast(&sw);
    let route = Router::new(&sw).route(1, 0).unwrap();
    b.add(Transfer::new(0, 1, 0, route, Op::Copy, vec![0], None));
    fails(&b, &sw, "rank 0 receives piece 0 twice (it holds it from the start)");
}

/// Ring allreduce on `ring:n` built directly (2 n (n - 1) transfers).
fn big_ring_allreduce(n: usize) -> (Topology, Schedule) {
    let ring = topo(&format!("ring:{n}"));
    let mut s = Schedule::new(Collective::Allreduce, n, 0, "ring");
    for r in 0..n {
        s.add_piece(Piece::whole(r));
    }
    let link: Vec<usize> =
        (0..n).map(|r| ring.link_between(ring.rank_node(r), ring.rank_node((r + 1) % n)).unwrap()).collect();
    // Step t (0 <= t < 2(n-1)): rank r sends piece (r - t - 1) mod n (reduce-scatter: the
    // chain of piece p starts at p + 1 and ends at p), reducing for t < n - 1.
    let mut delivered = vec![usize::MAX; n];
    for t in 0..2 * (n - 1) {
        let mut now = vec![usize::MAX; n];
        for r in 0..n {
            let piece = (r + 2 * n - 1 - t) % n;
            let after = if t == 0 { vec![] } else { vec![delivered[r]] };
            let op = if t < n - 1 { Op::Reduce } else { Op::Copy };
            now[(r + 1) % n] = s.add(Transfer::new(piece, r, (r + 1) % n, vec![link[r]], op, after, Some(t as u32)));
        }
        delivered = now;
    }
    (ring, s)
}

#[test]
fn direct_ring_allreduce_passes_and_races_are_caught() {
    let n = 24;
    let (ring, s) = big_ring_allreduce(n);
    assert_eq!(verify(&s, &ring), Ok(Report { transfers: 2 * n * (n - 1), pieces: n, depth: 2 * (n - 1) }));
    // The allgather of piece p starts at rank p once its reduction is complete; drop that
    // wait for one piece.
    let mut bad = s.clone();
    let i = (n - 1) * n + 5; // step n - 1, rank 5: sends piece 5 (complete there)
    assert_eq!((bad.transfers[i].piece, bad.transfers[i].op), (5, Op::Copy));
    bad.transfers[i].after.clear();
    // Now the allgather of piece 5 is unordered with the whole reduce-scatter of it; the
    // first (rank, piece) where that shows: rank 0 sends its partial sum of piece 5 at step
    // 18 while the allgather's copy of piece 5 into rank 0 (step 41) no longer waits for it.
    let v = fails(&bad, &ring, "race on piece 5 at rank 0 with transfer 432 (step 18, rank 0 -> 1");
    assert_eq!(v.transfer, Some(41 * n + 23));
}

/// Tree allreduce (binary-tree reduce then broadcast, pipelined) on a switch:
/// its race checks need backward searches (the broadcast's copy into a rank must wait for
/// that rank's send up the tree, through the root).
#[test]
fn tree_allreduce_passes() {
    // 16 ranks: the tree is 4 hops deep (15 -> 7 -> 3 -> 1 -> 0); the timing at 1024 ranks
    // is `make bench` (verify_large).
    let n = 16;
    let sw = topo(&format!("switch:{n}"));
    let mut router = Router::new(&sw);
    let mut b = Schedule::new(Collective::Broadcast, n, 0, "tree");
    b.add_piece(Piece::whole(0));
    let mut into = vec![usize::MAX; n];
    for i in 1..n {
        let parent = (i - 1) / 2;
        let after = if parent == 0 { vec![] } else { vec![into[parent]] };
        let route = router.route(parent, i).unwrap();
        into[i] = b.add(Transfer::new(0, parent, i, route, Op::Copy, after, None));
    }
    let b = pipelined(&b, 64).unwrap();
    let ar = compose(&reverse(&b, &sw, &sw).unwrap(), &b, Collective::Allreduce).unwrap();
    let report = verify(&ar, &sw).unwrap();
    assert_eq!((report.transfers, report.pieces, report.depth), (2 * 64 * (n - 1), 64, 2 * 4));
}

/// Allreduce on complete:2 through a receive buffer (scratch slot 2): each rank sends its
/// value into the other's slot 2, then adds slot 2 into its own value, after its own send.
/// Transfers: 0 = 0 -> 1, 1 = 1 -> 0, 2 = local add at 0, 3 = local add at 1.
fn scratch_allreduce() -> (Topology, Schedule) {
    let topo = topo("complete:2");
    let mut router = Router::new(&topo);
    let mut s = Schedule::new(Collective::Allreduce, 2, 0, "scratch");
    s.shards = vec![Rat::from_integer(1)];
    let p = s.add_piece(Piece::whole(0));
    for (src, dst) in [(0, 1), (1, 0)] {
        let route = router.route(src, dst).unwrap();
        let t = Transfer {
            piece: p,
            src,
            dst,
            route,
            op: Op::Copy,
            after: vec![],
            step: Some(0),
            src_slot: 0,
            dst_slot: 2,
            count: 1,
        };
        s.add(t);
    }
    for r in 0..2 {
        let after = vec![1 - r, r]; // the receive into slot 2, and r's own send of slot 0
        let route = Vec::new();
        s.add(Transfer {
            piece: p,
            src: r,
            dst: r,
            route,
            op: Op::Reduce,
            after,
            step: Some(0),
            src_slot: 2,
            dst_slot: 0,
            count: 1,
        });
    }
    (topo, s)
}

#[test]
fn scratch_slots_pass_and_round_trip_through_json() {
    let (topo, s) = scratch_allreduce();
    assert!(s.uses_scratch());
    let r = verify(&s, &topo).unwrap();
    assert_eq!((r.transfers, r.depth), (4, 2));
    let text = crate::ir::json::write(&s, &topo);
    assert!(text.contains("\"src_slot\": 0, \"dst_slot\": 2") && text.contains("\"route\": [1]"), "{text}");
    let (back, _, _) = crate::ir::json::read(&text).unwrap();
    assert_eq!(back.transfers, s.transfers);
    // Slots are only written when used: a plain schedule's file has none.
    let ring = topo_ring();
    assert!(!crate::ir::json::write(&ring_allreduce(&ring), &ring).contains("slot"));
    // Reversal and composition do not take scratch schedules.
    assert!(compose(&s, &s, Collective::Allreduce).is_err());
}

fn topo_ring() -> Topology {
    topo("ring:4")
}

#[test]
fn scratch_slot_mistakes_are_caught() {
    let (topo, good) = scratch_allreduce();
    // The add into rank 0's value does not wait for rank 0's send of it.
    let mut s = good.clone();
    s.transfers[2].after = vec![1];
    fails(&s, &topo, "race on piece 0 at rank 0 with transfer 0");
    // A second message into rank 1's receive buffer, unordered with the add that reads it.
    let mut s = good.clone();
    let extra = Transfer { after: vec![2], step: Some(1), ..s.transfers[1].clone() }; // after rank 0's add
    s.add(Transfer { src: 0, dst: 1, route: good.transfers[0].route.clone(), ..extra });
    fails(&s, &topo, "at rank 1 (scratch slot 2)");
    // Reading a scratch slot nothing wrote, and reducing into one (scratch is not zeroed).
    let mut s = good.clone();
    s.transfers[2].src_slot = 1;
    fails(&s, &topo, "reads scratch slot 1 of rank 0 before anything is written to it");
    let mut s = good.clone();
    s.transfers[0].op = Op::Reduce;
    fails(&s, &topo, "reduces into scratch slot 2 of rank 1, which holds nothing yet");
    // A local transfer needs two slots and no route; scratch is for reductions only.
    let mut s = good.clone();
    s.transfers[2].src_slot = 0;
    fails(&s, &topo, "a rank sends to itself (same rank and slot)");
    let mut s = good.clone();
    s.transfers[2].route = good.transfers[0].route.clone();
    fails(&s, &topo, "a local transfer (rank 0, slot 2 -> 0) has a route");
    let ring = topo_ring();
    let mut s = ring_allgather(&ring, 1);
    s.transfers[0].dst_slot = 1;
    fails(&s, &ring, "uses scratch slots, which only reductions have (allgather copies)");
    // Local transfers may depend on their own step; transfers over links may not.
    let mut s = good.clone();
    s.transfers[2].step = None;
    s.transfers[3].step = Some(1);
    verify(&s, &topo).unwrap();
    let mut s = good.clone();
    s.add(Transfer { after: vec![2], dst_slot: 3, ..good.transfers[0].clone() });
    fails(&s, &topo, "depends on transfer 2 of step 0, which is not an earlier step");
}

/// A reduction of 100,000 transfers or more runs its value and race passes side by side: the
/// verdicts are those of one pass after the other (`parallel::single_threaded`), the value
/// pass's violation first when both find one. ring:230's allreduce has 105,340 transfers; a
/// copy of one of its reductions with no dependency both adds a contribution twice and races.
#[test]
fn a_large_reductions_passes_side_by_side_agree_with_one_after_the_other() {
    let t = topo("ring:230");
    let compact = crate::synth::run(&t, Collective::Allreduce, "ring", &Default::default()).unwrap();
    let s = crate::ir::orbit::expand(&compact).unwrap();
    assert!(s.transfers.len() >= 100_000 && s.symmetry.is_none(), "{}", s.transfers.len());
    assert!(!crate::ir::ranges::has_ranges(&s));
    let alone = |s: &Schedule| crate::parallel::single_threaded(|| verify(s, &t));
    assert_eq!(verify(&s, &t), alone(&s));
    assert!(verify(&s, &t).is_ok());
    let last = s.transfers.iter().rposition(|x| x.op == Op::Reduce).unwrap();
    let mut twice = s.clone();
    twice.add(Transfer { after: vec![], ..s.transfers[last].clone() });
    let got = verify(&twice, &t).unwrap_err();
    assert!(got.message.contains("double reduction"), "{got}");
    assert_eq!(Err(got), alone(&twice));
    // a race alone: an overwrite of a rank's own value no transfer waits for
    let mut raced = s.clone();
    let first = &s.transfers[0];
    raced.add(Transfer { op: Op::Copy, after: vec![], ..first.clone() });
    let got = verify(&raced, &t).unwrap_err();
    assert_eq!(Err(got), alone(&raced));
}
