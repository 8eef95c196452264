//! nccl-ring / nccl-tree on the machines, with the values NCCL's rules give by hand.

use super::trees::{btree, dtree, rank_tree};
use super::*;
use crate::api;
use crate::cost::loads::bandwidth_term_us;
use crate::zoo::from_spec;
use std::collections::BTreeSet;

fn gib() -> Rat {
    Rat::from_integer(1 << 30)
}

fn synth(spec: &str, alg: &str, c: Collective) -> (Topology, Schedule) {
    let topo = from_spec(spec).unwrap();
    let done =
        api::synthesize(&topo, c, alg, &Request::default(), gib()).unwrap_or_else(|e| panic!("{spec} {alg}: {e}"));
    (done.topology, done.schedule)
}

/// Bandwidth term (us) of moving `bytes_per_link` bytes of M = 1 GiB over a link of `gbps`.
fn term(fraction: Rat, gbps: i128) -> Rat {
    gib() * fraction / Rat::from_integer(gbps * 1000)
}

fn detail(s: &Schedule, key: &str) -> serde_json::Value {
    s.provenance.details.get(key).unwrap_or_else(|| panic!("no {key}")).clone()
}

#[test]
fn dgx_a100_2_search_one_channel_per_nic_doubled() {
    // NIC path 25 GB/s: speed 24 (first of speedArrayInter <= 25) leaves 1 GB/s per NIC, so
    // one channel per NIC: 8 channels; 24 < 25 so no ncclTopoDupChannels; Postset doubles.
    let topo = from_spec("dgx-a100:2").unwrap();
    let ch = search::search(&topo).unwrap();
    assert!(!ch.fallback);
    assert_eq!((ch.speed, ch.searched, ch.chains.len(), ch.total), (24.0, 8, 8, 16));
    for (c, boxes) in ch.chains.iter().enumerate() {
        // channel c enters each box at NIC c's GPU, then NVSwitch neighbours upwards
        let expect: Vec<Vec<usize>> = (0..2).map(|b| (0..8).map(|i| 8 * b + (c + i) % 8).collect()).collect();
        assert_eq!(boxes, &expect, "channel {c}");
    }
}

#[test]
fn dgx_a100_2_every_nic_carries_a_channel() {
    let topo = from_spec("dgx-a100:2").unwrap();
    let ch = search::search(&topo).unwrap();
    let rings = rings::rings(&topo, &ch, rings::Crossing::Pxn).unwrap();
    let mut all = BTreeSet::new();
    for (c, ring) in rings.iter().enumerate() {
        let nics: BTreeSet<String> = ring
            .routes
            .iter()
            .flatten()
            .map(|&l| topo.nodes[topo.links[l].dst].name.clone())
            .filter(|name| name.contains(".nic"))
            .collect();
        // box 0 -> box 1 and back, both through NIC c of each box
        assert_eq!(nics, BTreeSet::from([format!("box0.nic{c}"), format!("box1.nic{c}")]), "channel {c}");
        all.extend(nics);
    }
    assert_eq!(all.len(), 16);
}

#[test]
fn dgx_a100_2_allreduce_four_times_the_plain_ring() {
    // Every NIC direction carries 2 channels x 2(n-1)/n x M/16 = 60/256 M at 25 GB/s (algbw
    // 320/3 GB/s); the plain ring puts all of it on one NIC pair.
    let (t, s) = synth("dgx-a100:2", "nccl-ring", Collective::Allreduce);
    let nccl = bandwidth_term_us(&s, &t, gib());
    assert_eq!(nccl, term(Rat::new(60, 256), 25));
    let (t, s) = synth("dgx-a100:2", "ring", Collective::Allreduce);
    assert_eq!(bandwidth_term_us(&s, &t, gib()), nccl * Rat::from_integer(4));
}

#[test]
fn single_nvswitch_box_closed_form() {
    // Each channel's ring crosses every GPU's NVSwitch link once each way, so whatever the
    // channel count: allgather (n-1)/n M / B, allreduce 2(n-1)/n M / B (algbw B n/(2(n-1))).
    // Channels: 300 GB/s -> 10 x 30 (beats 7 x 40), dup 20 x 15, postset 40;
    // 450 GB/s -> 15 x 30 (beats 11 x 40; 22 x 20 and 25 x 18 are not more), dup 30, postset 60.
    for (spec, bw, searched, total) in [("dgx-a100:1", 300, 10, 40), ("hgx-h100:1", 450, 15, 60)] {
        let ch = search::search(&from_spec(spec).unwrap()).unwrap();
        assert_eq!((ch.searched, ch.chains.len(), ch.total, ch.speed), (searched, 2 * searched, total, 15.0));
        assert!(ch.chains.iter().all(|c| c == &vec![(0..8).collect::<Vec<_>>()]), "{spec}");
        let (t, s) = synth(spec, "nccl-ring", Collective::Allgather);
        assert_eq!(bandwidth_term_us(&s, &t, gib()), term(Rat::new(7, 8), bw), "{spec}");
        assert_eq!(s.transfers.len(), total * 8 * 7);
        let (t, s) = synth(spec, "nccl-ring", Collective::Allreduce);
        assert_eq!(bandwidth_term_us(&s, &t, gib()), term(Rat::new(14, 8), bw), "{spec}");
        assert_eq!(detail(&s, "nccl_channels"), serde_json::json!(total));
    }
}

/// Box-level parents of ncclGetBtree (k = 0) and its mirror / shift (k = 1).
fn box_parents(n: usize, k: usize) -> Vec<Option<usize>> {
    (0..n).map(|b| dtree(n, b)[k].up).collect()
}

#[test]
fn double_binary_tree_matches_ncclgetdtree_by_hand() {
    // ncclGetBtree: a box's lowest set bit `bit` gives parent (b ^ bit) | (bit << 1), or
    // b ^ bit when that is out of range; box 0 has the one child bit(n) / 2.
    // n = 2: 0 -> 1; mirror: 1 -> 0.
    assert_eq!(box_parents(2, 0), [None, Some(0)]);
    assert_eq!(box_parents(2, 1), [Some(1), None]);
    // n = 3: 0 -> 2 -> 1; shift by one: 1 -> 0 -> 2.
    assert_eq!(box_parents(3, 0), [None, Some(2), Some(0)]);
    assert_eq!(box_parents(3, 1), [Some(1), None, Some(0)]);
    // n = 4: 0 -> 2 -> {1, 3}; mirror: 3 -> 1 -> {2, 0}.
    assert_eq!(box_parents(4, 0), [None, Some(2), Some(0), Some(2)]);
    assert_eq!(box_parents(4, 1), [Some(1), Some(3), Some(1), None]);
    // n = 8: 0 -> 4 -> {2, 6}, 2 -> {1, 3}, 6 -> {5, 7}; mirror: 7 -> 3 -> {5, 1}, ...
    assert_eq!(box_parents(8, 0), [None, Some(2), Some(4), Some(2), Some(0), Some(6), Some(4), Some(6)]);
    assert_eq!(box_parents(8, 1), [Some(1), Some(3), Some(1), Some(7), Some(5), Some(3), Some(5), None]);
    // children and child types: 4's children are 2 (first, type 0) and 6 (second, type 1)
    let four = btree(8, 4);
    assert_eq!((four.down0, four.down1), (Some(2), Some(6)));
    assert_eq!((btree(8, 2).child_type, btree(8, 6).child_type), (0, 1));
    assert_eq!(
        (btree(3, 0).down0, btree(3, 0).down1, btree(3, 2).down0, btree(3, 2).down1),
        (None, Some(2), Some(1), None)
    );
    // the mirror's child type is taken in mirrored numbering: box 2 of 4 is mirrored 1 < 2
    assert_eq!(dtree(4, 2)[1].child_type, 0);
    // no box is an inner node of both trees (n = 8)
    for b in 0..8 {
        let [t1, t2] = dtree(8, b);
        let inner = |t: BoxNode| t.up.is_some() && (t.down0.is_some() || t.down1.is_some());
        assert!(!(inner(t1) && inner(t2)), "box {b}");
    }
}

use super::trees::BoxNode;

#[test]
fn rank_trees_join_box_chains_as_connect_cc_does() {
    // dgx-a100:4 channel 0: chains 8b..8b+7. Tree 1 over boxes 0 -> 2 -> {1, 3}: box 2's head
    // (16) hangs off box 0's chain[0] (child type 1); box 1 (type 0) off box 2's chain[1] = 17;
    // box 3 (type 1) off box 2's chain[0] = 16.
    let chains: Vec<Vec<usize>> = (0..4).map(|b| (8 * b..8 * b + 8).collect()).collect();
    let t = rank_tree(32, &chains, 0);
    assert_eq!(t.top, 0);
    assert_eq!(
        (t.parent[16], t.parent[8], t.parent[24], t.parent[1], t.parent[0]),
        (Some(0), Some(17), Some(16), Some(0), None)
    );
    // tree 2 (mirror) 3 -> 1 -> {2, 0}: box 1 (type 1) off 24; box 2 (type 0) off 9; box 0 (type 1) off 8
    let t = rank_tree(32, &chains, 1);
    assert_eq!(t.top, 24);
    assert_eq!((t.parent[8], t.parent[16], t.parent[0], t.parent[24]), (Some(24), Some(9), Some(8), None));
}

#[test]
fn nccl_tree_on_dgx_a100_2() {
    let (t, s) = synth("dgx-a100:2", "nccl-tree", Collective::Allreduce);
    assert_eq!(detail(&s, "nccl_channels"), serde_json::json!(16));
    // 16 channels x (15 edges up + 15 down)
    assert_eq!(s.transfers.len(), 16 * 30);
    let parents = detail(&s, "nccl_tree_parents");
    // channel 0 tree 1: box 1's head 8 under 0; channel 8 (tree 2): box 0's head 0 under 8
    assert_eq!(parents[0][8], serde_json::json!(0));
    assert_eq!(parents[0][0], serde_json::Value::Null);
    assert_eq!(parents[8][0], serde_json::json!(8));
    assert_eq!(parents[8][8], serde_json::Value::Null);
    // NICs carry 2 x M/16 per direction (1/200 GB/s); the bottleneck is the NVSwitch links:
    // every GPU sends its chain neighbours each channel's data once up and once down, the
    // chains' ends once (7/8 of 2 x M on average, all GPUs alike by the NIC rotation)
    assert_eq!(bandwidth_term_us(&s, &t, gib()), term(Rat::new(7, 4), 300));
}

#[test]
fn every_schedule_verifies_on_the_machines() {
    // api::synthesize verifies; rooted collectives from a non-zero root
    for spec in ["dgx-a100:2", "dgx-a100:3", "hgx-h100:2", "mi250:2", "dgx1", "ring:5", "switch:4"] {
        let topo = from_spec(spec).unwrap();
        for &c in Collective::FIVE {
            let req = Request { root: 1, ..Default::default() };
            api::synthesize(&topo, c, "nccl-ring", &req, gib()).unwrap_or_else(|e| panic!("{spec} {c:?}: {e}"));
        }
        api::synthesize(&topo, Collective::Allreduce, "nccl-tree", &Request::default(), gib())
            .unwrap_or_else(|e| panic!("{spec} tree: {e}"));
    }
}

#[test]
fn rings_across_boxes_concatenate_chains() {
    // every channel's ring visits each box's chain in turn; ring i's routes join order i -> i+1
    let topo = from_spec("hgx-h100:2").unwrap();
    let ch = search::search(&topo).unwrap();
    for ring in rings::rings(&topo, &ch, rings::Crossing::Pxn).unwrap() {
        let n = ring.order.len();
        let mut seen = ring.order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..16).collect::<Vec<_>>());
        for i in 0..n {
            let r = &ring.routes[i];
            assert_eq!(topo.links[r[0]].src, topo.rank_node(ring.order[i]));
            assert_eq!(topo.links[*r.last().unwrap()].dst, topo.rank_node(ring.order[(i + 1) % n]));
        }
        assert!(ring.order[..8].iter().all(|&r| r < 8));
    }
}

fn rings_with(spec: &str, crossing: &str, c: Collective) -> (Topology, Schedule) {
    let topo = from_spec(spec).unwrap();
    let mut req = Request::default();
    req.options.insert("crossing".into(), crossing.into());
    let done = api::synthesize(&topo, c, "nccl-ring", &req, gib()).unwrap();
    (done.topology, done.schedule)
}

/// The fraction of M each link carries, by the links' (source, destination) names.
fn loads_by_name(topo: &Topology, s: &Schedule) -> Vec<(String, String, Rat)> {
    let loads = crate::cost::link_loads(s, topo, Rat::from_integer(1));
    topo.links
        .iter()
        .zip(loads)
        .map(|(l, x)| (topo.nodes[l.src].name.clone(), topo.nodes[l.dst].name.clone(), x))
        .collect()
}

/// `--crossing rail` on hgx-h100:2: every ring leaves a box from a GPU straight over its own
/// rail to the same GPU of the other box (two links, no NVSwitch), every GPU receives over
/// its rail in 1 of 8 channels, so its NVSwitch port carries 7/8 of 15/16 M and its rail
/// 1/8 of it, where NCCL's PXN rings relay through the entry GPU's port (15/16 M on every
/// port). Each ring still visits every rank once, and the default is NCCL's.
#[test]
fn rail_crossing_relieves_the_nvswitch_ports_of_hgx_h100() {
    let (topo, rail) = rings_with("hgx-h100:2", "rail", Collective::Allgather);
    let (_, pxn) = rings_with("hgx-h100:2", "pxn", Collective::Allgather);
    let (_, default) = synth("hgx-h100:2", "nccl-ring", Collective::Allgather);
    assert_eq!((&pxn.pieces, &pxn.transfers), (&default.pieces, &default.transfers));
    let ch = search::search(&topo).unwrap();
    let crossing = rings::Crossing::Rail;
    for ring in rings::rings(&topo, &ch, crossing).unwrap() {
        assert_eq!(ring.order.iter().copied().collect::<BTreeSet<_>>().len(), 16);
        let hops: Vec<usize> = (0..16).filter(|&i| ring.order[i] / 8 != ring.order[(i + 1) % 16] / 8).collect();
        assert_eq!(hops.len(), 2, "{:?}", ring.order);
        for i in hops {
            let (a, b) = (ring.order[i], ring.order[(i + 1) % 16]);
            assert_eq!(a % 8, b % 8, "{:?}", ring.order);
            let names: Vec<&str> =
                ring.routes[i].iter().map(|&l| topo.nodes[topo.links[l].dst].name.as_str()).collect();
            assert_eq!(names, [format!("rail{}", a % 8).as_str(), topo.nodes[topo.rank_node(b)].name.as_str()]);
        }
    }
    let r = |p, q| Rat::new(p, q);
    for (src, dst, x) in loads_by_name(&topo, &rail) {
        match (src.contains("gpu"), dst.as_str()) {
            (false, d) if d.contains("gpu") && src.contains("nvsw") => {
                assert_eq!(x, r(7, 8) * r(15, 16), "{src}->{dst}")
            }
            (false, d) if d.contains("gpu") => assert_eq!(x, r(1, 8) * r(15, 16), "{src}->{dst}"),
            _ => {}
        }
    }
    for (src, dst, x) in loads_by_name(&topo, &pxn) {
        if src.contains("nvsw") {
            assert_eq!(x, r(15, 16), "{src}->{dst}");
        }
    }
    let mut bad = Request::default();
    bad.options.insert("crossing".into(), "diagonal".into());
    let e = api::synthesize(&topo, Collective::Allgather, "nccl-ring", &bad, gib()).err();
    assert_eq!(e, Some(CollsynthError::bad("--crossing: 'diagonal' is not one of pxn, rail")));
}

/// On one box there is no crossing: `rail` rings are NCCL's.
#[test]
fn rail_crossing_on_one_box_is_nccls_ring() {
    let (_, rail) = rings_with("dgx-a100:1", "rail", Collective::Allgather);
    let (_, pxn) = rings_with("dgx-a100:1", "pxn", Collective::Allgather);
    assert_eq!(rail.transfers, pxn.transfers);
}

#[test]
fn max_channels_caps_the_channels_as_nccl_max_nchannels() {
    let topo = from_spec("hgx-h100:1").unwrap();
    let (_, all) = synth("hgx-h100:1", "nccl-ring", Collective::Allreduce);
    let total = detail(&all, "nccl_channels").as_u64().unwrap() as usize;
    assert!(total > 3, "{total}");
    for alg in ["nccl-ring", "nccl-tree"] {
        let req = Request { options: [("max-channels".to_string(), "3".to_string())].into(), ..Request::default() };
        let done = api::synthesize(&topo, Collective::Allreduce, alg, &req, gib()).unwrap();
        assert_eq!(detail(&done.schedule, "nccl_channels"), 3, "{alg}");
        // Each channel carries 1/3 of the data: a third as many transfers as pieces per channel.
        let (_, full) = synth("hgx-h100:1", alg, Collective::Allreduce);
        let per = |s: &Schedule, c: usize| s.transfers.len() / c;
        assert_eq!(per(&done.schedule, 3), per(&full, detail(&full, "nccl_channels").as_u64().unwrap() as usize));
        for bad in ["0", "x", "-1"] {
            let req = Request { options: [("max-channels".to_string(), bad.to_string())].into(), ..Request::default() };
            let e = api::synthesize(&topo, Collective::Allreduce, alg, &req, gib()).err().expect("refused");
            assert!(matches!(e, CollsynthError::BadInput(_)), "{alg} {bad}: {e:?}");
        }
    }
}
