//! Composition of schedules whose pieces differ: the common refinement is exact and the
//! composed schedule verifies.

use super::*;
use crate::api;
use crate::cost::{bandwidth_term_us, link_loads};
use crate::synth::Request;
use crate::verify::verify;
use crate::zoo::from_spec;

fn r(a: i128, b: i128) -> Rat {
    Rat::new(a, b)
}

fn piece(shard: usize, start: Rat, end: Rat) -> Piece {
    Piece { shard, start, end }
}

/// Two ranks joined both ways (different bandwidths); a reduce-scatter that cuts shard 0 at
/// 1/2 and an allgather that cuts shard 1 at 1/3, each with a cross-piece dependency.
fn different_partitions() -> (Topology, Schedule, Schedule) {
    let mut b = TopologyBuilder::new("pair");
    let (u, v) = (b.compute("u", None), b.compute("v", None));
    b.link(u, v, r(3, 2), 1.0);
    b.link(v, u, r(5, 1), 0.5);
    let t = b.build().unwrap();
    let (uv, vu) = (t.link_between(0, 1).unwrap(), t.link_between(1, 0).unwrap());
    let mut rs = Schedule::new(Collective::ReduceScatter, 2, 0, "hand");
    let a = rs.add_piece(piece(0, r(0, 1), r(1, 2)));
    let bb = rs.add_piece(piece(0, r(1, 2), r(1, 1)));
    let c = rs.add_piece(Piece::whole(1));
    let first = rs.add(Transfer::new(a, 1, 0, vec![vu], Op::Reduce, vec![], Some(0)));
    rs.add(Transfer::new(bb, 1, 0, vec![vu], Op::Reduce, vec![first], Some(1)));
    rs.add(Transfer::new(c, 0, 1, vec![uv], Op::Reduce, vec![], Some(0)));
    let mut ag = Schedule::new(Collective::Allgather, 2, 0, "hand");
    let a = ag.add_piece(Piece::whole(0));
    let bb = ag.add_piece(piece(1, r(0, 1), r(1, 3)));
    let c = ag.add_piece(piece(1, r(1, 3), r(1, 1)));
    ag.add(Transfer::new(a, 0, 1, vec![uv], Op::Copy, vec![], Some(0)));
    let second = ag.add(Transfer::new(bb, 1, 0, vec![vu], Op::Copy, vec![], Some(0)));
    ag.add(Transfer::new(c, 1, 0, vec![vu], Op::Copy, vec![second], Some(1)));
    (t, rs, ag)
}

/// Per-link bytes of `a` then `b` are the sums of their loads (exact).
fn assert_loads_add(t: &Topology, composed: &Schedule, a: &Schedule, b: &Schedule) {
    let size = r(1, 1);
    let want: Vec<Rat> = link_loads(a, t, size).iter().zip(link_loads(b, t, size)).map(|(x, y)| x + y).collect();
    assert_eq!(link_loads(composed, t, size), want, "{}", t.name);
}

#[test]
fn composing_different_partitions_refines_to_common_pieces() {
    let (t, rs, ag) = different_partitions();
    verify(&rs, &t).unwrap();
    verify(&ag, &t).unwrap();
    let ar = compose(&rs, &ag, Collective::Allreduce).unwrap();
    verify(&ar, &t).unwrap();
    let want = vec![
        piece(0, r(0, 1), r(1, 2)),
        piece(0, r(1, 2), r(1, 1)),
        piece(1, r(0, 1), r(1, 3)),
        piece(1, r(1, 3), r(1, 1)),
    ];
    assert_eq!(ar.pieces, want);
    // 4 + 4 transfers: shard 1 of the reduce-scatter and shard 0 of the allgather split in two.
    assert_eq!(ar.transfers.len(), 8);
    assert_eq!(ar.n_steps(), Some(4));
    assert_loads_add(&t, &ar, &rs, &ag);
    // u -> v carries 1/2 (shard 1 reduced) + 1/2 (shard 0 gathered) of M at 3/2 GB/s.
    assert_eq!(bandwidth_term_us(&ar, &t, r(1, 1)), r(2, 3) / r(1000, 1));
}

#[test]
fn refinement_keeps_data_dependencies_per_sub_piece() {
    let (_, rs, ag) = different_partitions();
    let common = common_pieces(&rs, &ag).unwrap();
    let fine = refine(&ag, &common).unwrap();
    // The copy of piece [1/3, 1) waits for [0, 1/3) (a piece it does not carry): kept whole.
    assert_eq!(fine.transfers.len(), 4);
    assert_eq!(fine.transfers[3].after, vec![2]);
    // The reduce-scatter's dependency is within shard 0, which the refinement leaves alone;
    // its shard-1 transfer splits into two independent sub-transfers.
    let fine = refine(&rs, &common).unwrap();
    assert_eq!(fine.transfers.iter().map(|t| t.piece).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    assert_eq!(fine.transfers[1].after, vec![0]);
    assert!(fine.transfers[2].after.is_empty() && fine.transfers[3].after.is_empty());
    // A dependency on a transfer that carries the same sub-piece follows that sub-piece only.
    let split_first = pipelined(&rs, 2).unwrap();
    let fine = refine(&split_first, &common_pieces(&split_first, &rs).unwrap()).unwrap();
    assert_eq!(fine, split_first);
    // Identity on its own pieces.
    assert_eq!(refine(&ag, &ag.pieces).unwrap(), ag);
}

#[test]
fn pieces_that_do_not_refine_are_an_internal_error() {
    let (_, rs, _) = different_partitions();
    let coarse = vec![Piece::whole(0), Piece::whole(1)];
    let err = refine(&rs, &coarse).unwrap_err();
    assert!(matches!(err, CollsynthError::Internal(ref m) if m.contains("do not refine")), "{err:?}");
    let mut other = rs.clone();
    other.shards = vec![r(1, 3), r(2, 3)];
    assert_eq!(
        compose(&rs, &other, Collective::Allreduce).unwrap_err(),
        CollsynthError::internal("composed schedules must share shards")
    );
}

/// ForestColl allreduce on directed graphs (reduce-scatter made on the transpose, with its
/// own k trees per root): verified, and its per-link bytes are exactly those of the
/// reduce-scatter plus the allgather ForestColl makes alone.
#[test]
fn forestcoll_allreduce_on_directed_graphs() {
    for spec in ["kautz:2:12", "line(kautz:2:6)"] {
        let t = from_spec(spec).unwrap();
        assert!(!t.is_bidirectional() || spec.starts_with("line"), "{spec}");
        let mut req = Request::default();
        req.options.insert("allreduce-lp".into(), "never".into());
        let run = |c| crate::synth::run(&t, c, "forestcoll", &req).unwrap();
        let (rs, ag) = (run(Collective::ReduceScatter), run(Collective::Allgather));
        assert_ne!(rs.pieces, ag.pieces, "{spec}: the case needs different partitions");
        let ar = api::synthesize(&t, Collective::Allreduce, "forestcoll", &req, r(1 << 30, 1)).unwrap().schedule;
        verify(&ar, &t).unwrap();
        assert_loads_add(&t, &ar, &rs, &ag);
        // Each half is optimal (exact bounds), so the allreduce's bandwidth term is at most
        // their sum.
        let n = Rat::from_integer(t.n_ranks() as i128);
        let us = |inv: Rat| inv / n / r(1000, 1);
        let rs_us = us(crate::bound::reduce_scatter(&t).unwrap().inv_throughput);
        let ag_us = us(crate::bound::allgather(&t).unwrap().inv_throughput);
        assert_eq!(bandwidth_term_us(&rs, &t, r(1, 1)), rs_us, "{spec}");
        assert_eq!(bandwidth_term_us(&ag, &t, r(1, 1)), ag_us, "{spec}");
        assert!(bandwidth_term_us(&ar, &t, r(1, 1)) <= rs_us + ag_us, "{spec}");
        // The default (LP allowed) also synthesizes and verifies.
        api::synthesize(&t, Collective::Allreduce, "forestcoll", &Request::default(), r(1 << 30, 1)).unwrap();
    }
}

/// The textbook order the fast paths must keep: repeatedly the smallest index whose
/// dependencies are all placed (quadratic, obviously right).
fn smallest_ready_first(s: &Schedule) -> Option<Vec<usize>> {
    let n = s.transfers.len();
    let mut placed = vec![false; n];
    let mut order = Vec::new();
    while order.len() < n {
        let i = (0..n).find(|&i| !placed[i] && s.transfers[i].after.iter().all(|&a| placed[a]))?;
        placed[i] = true;
        order.push(i);
    }
    Some(order)
}

proptest::proptest! {
    /// Random DAGs, dependencies pointing backward only (the list order is topological) or
    /// anywhere along a hidden permutation, and sometimes a cycle: the order is the
    /// textbook one, or both see the cycle.
    #[test]
    fn topological_order_is_smallest_ready_first(
        n in 1usize..24,
        edges in proptest::collection::vec((0usize..24, 0usize..24), 0..40),
        shuffle in proptest::collection::vec(0usize..1000, 24),
        backward in proptest::bool::ANY,
        cycle in proptest::bool::ANY,
    ) {
        let mut perm: Vec<usize> = (0..n).collect();
        if !backward {
            perm.sort_by_key(|&i| shuffle[i]);
        }
        let mut s = Schedule::new(Collective::Broadcast, 2, 0, "dag");
        let p = s.add_piece(Piece::whole(0));
        let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(a, b) in &edges {
            let (a, b) = (a % n, b % n);
            if a < b {
                after[perm[b]].push(perm[a]);
            }
        }
        if cycle && n > 1 {
            after[perm[0]].push(perm[n - 1]);
            after[perm[n - 1]].push(perm[0]);
        }
        for a in after {
            s.add(Transfer::new(p, 0, 1, vec![], Op::Copy, a, None));
        }
        let want = smallest_ready_first(&s);
        match topological_order(&s) {
            Ok(order) => proptest::prop_assert_eq!(Some(order), want),
            Err(_) => proptest::prop_assert!(want.is_none()),
        }
    }
}

/// One order per schedule: inside `with_order` the schedule it was made from gets it, any
/// other schedule (a copy with other dependencies, even of the same length) its own order, and
/// after the call every schedule its own again.
#[test]
fn a_shared_order_answers_only_its_own_schedule() {
    let chain = |backwards: bool| {
        let mut s = Schedule::new(Collective::Broadcast, 2, 0, "dag");
        let p = s.add_piece(Piece::whole(0));
        for i in 0..4usize {
            // forwards: 0 <- 1 <- 2 <- 3; backwards: 3 <- 2 <- 1 <- 0
            let after = match backwards {
                false if i > 0 => vec![i - 1],
                true if i < 3 => vec![i + 1],
                _ => vec![],
            };
            s.add(Transfer::new(p, 0, 1, vec![], Op::Copy, after, None));
        }
        s
    };
    let (a, b) = (chain(false), chain(true));
    let shared = shared_order(&a);
    with_order(&a, &shared, || {
        assert_eq!(topological_order(&a).unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(topological_order(&b).unwrap(), vec![3, 2, 1, 0]);
    });
    // an order handed to another schedule is not used
    with_order(&b, &shared, || assert_eq!(topological_order(&b).unwrap(), vec![3, 2, 1, 0]));
    // nested: the inner call's schedule is answered, the outer one's again afterwards
    let other = shared_order(&b);
    with_order(&a, &shared, || {
        with_order(&b, &other, || assert_eq!(topological_order(&b).unwrap(), vec![3, 2, 1, 0]));
        assert_eq!(topological_order(&a).unwrap(), vec![0, 1, 2, 3]);
    });
    // asked again inside, the order shared there (the verifier's and the evaluation's), not a
    // new one; for another schedule a new one
    let order = |o: &SharedOrder| o.0.as_ref().map(|k| k.order.clone()).unwrap();
    with_order(&a, &shared, || {
        assert!(std::sync::Arc::ptr_eq(&order(&shared_order(&a)), &order(&shared)));
        assert!(!std::sync::Arc::ptr_eq(&order(&shared_order(&b)), &order(&other)));
        assert_eq!(*order(&shared_order(&b)), vec![3, 2, 1, 0]);
    });
    assert!(!std::sync::Arc::ptr_eq(&order(&shared_order(&a)), &order(&shared)));
}

#[test]
fn a_pipeline_past_the_memory_budget_is_refused_before_it_is_cut() {
    let t = from_spec("ring:4").unwrap();
    let s = crate::synth::run(&t, Collective::Allgather, "ring", &Request::default()).unwrap();
    assert_eq!(pipelined(&s, 3).unwrap().transfers.len(), 3 * s.transfers.len());
    for k in [22_369_621, 1 << 40, usize::MAX] {
        let err = pipelined(&s, k).unwrap_err();
        assert!(err.message().starts_with(&format!("--pipeline {k} (12 transfers x {k} sub-chunks) needs ")), "{err}");
        assert!(err.message().contains("above the budget of"), "{err}");
    }
    // the cost models refuse it with their own estimate, before they size a table
    let err = crate::cost::simulate(&s, &t, r(1 << 20, 1), 22_369_621).unwrap_err();
    assert!(err.message().contains("(--memory-budget)"), "{err}");
}
