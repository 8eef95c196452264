use super::{select, Selected, Selection};
use crate::api;
use crate::ir::{Collective, Op, Schedule};
use crate::rational::Rat;
use crate::synth::Request;
use crate::topology::Topology;
use crate::zoo;
use proptest::prelude::*;

fn made(spec: &str, c: Collective, alg: &str) -> (Schedule, Topology) {
    let topo = zoo::from_spec(spec).unwrap();
    let done = api::synthesize(&topo, c, alg, &Request::default(), Rat::from_integer(1 << 20)).unwrap();
    (done.schedule, done.topology)
}

/// (src, dst, op, level) of each selected transfer.
fn edges(sel: &[Selected]) -> Vec<(usize, usize, Op, usize)> {
    sel.iter().map(|t| (t.src, t.dst, t.op, t.level)).collect()
}

#[test]
fn ring_allgather_shard_0_is_the_chain_from_rank_0() {
    // ring:4 is the one-way ring i -> i+1: shard 0 goes 0 -> 1 -> 2 -> 3, one link per hop.
    let (s, topo) = made("ring:4", Collective::Allgather, "ring");
    let sel = select(&s, &topo, Selection::Shard(0), Rat::from_integer(1024)).unwrap();
    assert_eq!(edges(&sel), vec![(0, 1, Op::Copy, 0), (1, 2, Op::Copy, 1), (2, 3, Op::Copy, 2)]);
    for t in &sel {
        assert_eq!(t.route, vec![topo.link_between(topo.rank_node(t.src), topo.rank_node(t.dst)).unwrap()]);
        assert_eq!(t.bytes, Rat::from_integer(256)); // a quarter of 1 KiB
        assert_eq!((t.shard, t.step), (0, t.level)); // step t forwards what arrived in step t - 1
    }
}

#[test]
fn ring_allgather_step_1_forwards_the_left_neighbours_shard() {
    // In step 1 rank i sends the shard of rank i - 1 to rank i + 1.
    let (s, topo) = made("ring:4", Collective::Allgather, "ring");
    let sel = select(&s, &topo, Selection::Step(1), Rat::from_integer(1)).unwrap();
    let mut got: Vec<(usize, usize, usize)> = sel.iter().map(|t| (t.src, t.dst, t.shard)).collect();
    got.sort();
    assert_eq!(got, vec![(0, 1, 3), (1, 2, 0), (2, 3, 1), (3, 0, 2)]);
    assert!(sel.iter().all(|t| t.step == 1));
}

#[test]
fn ring_allreduce_shard_0_reduces_into_rank_0_then_broadcasts() {
    // On the one-way ring the reduction chain that ends at rank 0 must start at rank 1:
    // 1 -> 2 -> 3 -> 0 reducing, then 0 -> 1 -> 2 -> 3 copying the sum; levels 0..5.
    let (s, topo) = made("ring:4", Collective::Allreduce, "ring");
    let sel = select(&s, &topo, Selection::Shard(0), Rat::from_integer(4096)).unwrap();
    let want = vec![
        (1, 2, Op::Reduce, 0),
        (2, 3, Op::Reduce, 1),
        (3, 0, Op::Reduce, 2),
        (0, 1, Op::Copy, 3),
        (1, 2, Op::Copy, 4),
        (2, 3, Op::Copy, 5),
    ];
    let mut got = edges(&sel);
    got.sort_by_key(|e| e.3);
    assert_eq!(got, want);
}

#[test]
fn routes_through_a_switch_have_two_hops() {
    // On one switch every route has a reverse of the same length, so the ring runs both ways:
    // shard 2 travels in two halves, each along 3 transfers of rank -> switch -> rank.
    let (s, topo) = made("switch:4", Collective::Allgather, "ring");
    let sel = select(&s, &topo, Selection::Shard(2), Rat::from_integer(1)).unwrap();
    assert_eq!(sel.len(), 6);
    assert!(sel.iter().all(|t| t.bytes == Rat::new(1, 8)));
    for t in &sel {
        assert_eq!(t.route.len(), 2);
        let (a, b) = (&topo.links[t.route[0]], &topo.links[t.route[1]]);
        assert_eq!((a.src, a.dst, b.dst), (topo.rank_node(t.src), b.src, topo.rank_node(t.dst)));
        assert_eq!(topo.nodes[a.dst].kind, crate::topology::NodeKind::Switch);
    }
}

#[test]
fn out_of_range_and_broken_schedules_are_bad_input() {
    let (s, topo) = made("ring:4", Collective::Allgather, "ring");
    let err = |sel| select(&s, &topo, sel, Rat::from_integer(1)).unwrap_err().to_string();
    assert!(err(Selection::Shard(4)).contains("shard 4: the schedule has 4 shards (0..3)"));
    assert!(err(Selection::Step(3)).contains("step 3: the schedule has 3 steps (0..2)"));
    assert!(select(&s, &topo, Selection::Step(0), Rat::from_integer(-1)).is_err());
    let mut bad = s.clone();
    bad.transfers[5].route = vec![99];
    assert!(select(&bad, &topo, Selection::Shard(0), Rat::from_integer(1))
        .unwrap_err()
        .to_string()
        .contains("unknown link 99"));
    let mut bad = s.clone();
    bad.transfers[0].piece = 99;
    assert!(select(&bad, &topo, Selection::Step(0), Rat::from_integer(1)).is_err());
    let mut cyclic = s.clone();
    cyclic.transfers[0].after = vec![0];
    assert!(select(&cyclic, &topo, Selection::Shard(0), Rat::from_integer(1)).is_err());
}

#[test]
fn forestcoll_shard_is_one_spanning_tree_per_piece() {
    // dgx-a100:1 (8 GPUs on NVSwitches): every piece of shard 3 reaches the 7 other ranks once,
    // each transfer one level below the transfer that delivered the piece to its sender.
    let (s, topo) = made("dgx-a100:1", Collective::Allgather, "forestcoll");
    let sel = select(&s, &topo, Selection::Shard(3), Rat::from_integer(1)).unwrap();
    let pieces: std::collections::BTreeSet<usize> = sel.iter().map(|t| t.piece).collect();
    assert_eq!(sel.len(), 7 * pieces.len());
    for p in pieces {
        let tree: Vec<&Selected> = sel.iter().filter(|t| t.piece == p).collect();
        let mut reached: Vec<usize> = tree.iter().map(|t| t.dst).collect();
        reached.sort();
        assert_eq!(reached, vec![0, 1, 2, 4, 5, 6, 7]);
        for t in &tree {
            let parent = tree.iter().find(|u| u.dst == t.src).map_or(0, |u| u.level + 1);
            assert_eq!(t.level, parent, "piece {p}: {} -> {}", t.src, t.dst);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Shards and steps each partition the transfers; levels follow the dependencies.
    #[test]
    fn shards_and_steps_partition_the_transfers(topo in crate::testing::arb_topology(6), c in 0usize..3, alg in 0usize..2) {
        let c = [Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce][c];
        let alg = ["ring", "forestcoll"][alg];
        let Ok(done) = api::synthesize(&topo, c, alg, &Request::default(), Rat::from_integer(1 << 20)) else {
            return Ok(());
        };
        let (s, t) = (&done.schedule, &done.topology);
        let one = Rat::from_integer(1);
        for by_shard in [true, false] {
            let n = if by_shard { s.shards.len() } else { s.steps() };
            let mut seen = vec![0usize; s.transfers.len()];
            for k in 0..n {
                let sel = if by_shard { Selection::Shard(k) } else { Selection::Step(k) };
                for x in select(s, t, sel, one).unwrap() {
                    seen[x.transfer] += 1;
                    prop_assert_eq!(x.route.clone(), s.transfers[x.transfer].route.clone());
                }
            }
            prop_assert!(seen.iter().all(|&x| x == 1));
        }
        let level = s.levels().unwrap();
        for (i, tr) in s.transfers.iter().enumerate() {
            let want = tr.after.iter().map(|&a| level[a] + 1).max().unwrap_or(0);
            prop_assert_eq!(level[i], want);
        }
        prop_assert_eq!(level.iter().max().map_or(0, |l| l + 1), s.depth());
    }
}
