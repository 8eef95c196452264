//! Closed forms of the runtime model on a ring and a switch, the class table, the protocol
//! choice, and the bound against the simulator.

use super::bound::{effective_topology, latency_floor, time_bound_us};
use super::classes::{classify, params, LinkClass, ALL_CLASSES};
use super::*;
use crate::cost::testutil::{link, ring_allgather};
use crate::ir::{Collective, Op, Piece, Schedule, Transfer};
use crate::topology::TopologyBuilder;
use crate::zoo;

const MIB: i128 = 1 << 20;

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} != {b}");
}

/// One piece from rank 0 to rank 1 along `route`.
fn one_transfer(topo: &Topology, route: Vec<usize>) -> Schedule {
    let mut s = Schedule::new(Collective::Broadcast, topo.n_ranks(), 0, "one");
    let p = s.add_piece(Piece::whole(0));
    s.add(Transfer::new(p, 0, 1, route, Op::Copy, vec![], None));
    s
}

/// a -(100 GB/s, 1 us)-> sw -(50 GB/s, 2 us)-> b, generic classes.
fn two_hop_switch() -> Topology {
    let mut b = TopologyBuilder::new("two-hop");
    let (x, y) = (b.compute("a", None), b.compute("b", None));
    let sw = b.switch("sw", None);
    b.link(x, sw, Rat::from_integer(100), 1.0);
    b.link(sw, y, Rat::from_integer(50), 2.0);
    b.link(y, x, Rat::from_integer(100), 1.0);
    b.build().unwrap()
}

#[test]
fn one_hop_is_base_plus_latency_plus_bytes_whatever_the_slices() {
    // ring:4: 100 GB/s = 10^5 bytes/us, 1 us; generic: no overhead, full bandwidth.
    let topo = zoo::from_spec("ring:4").unwrap();
    let s = one_transfer(&topo, vec![link(&topo, 0, 1)]);
    for (m, k) in [(MIB, 1), (16 * MIB, 8), (5 * MIB + 3, 3)] {
        let r = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::Simple).unwrap();
        assert_eq!(r.slices, k);
        close(r.time_us, 8.4 + 1.0 + m as f64 / 1e5);
    }
}

#[test]
fn a_switch_cuts_through_at_the_slowest_hop() {
    // Store-and-forward would pay both hops' bytes (M/100 + M/50); cut-through pays the
    // slowest hop once plus both latencies: 2 slices or 8, the same.
    let topo = two_hop_switch();
    let sw = topo.node_index("sw").unwrap();
    let route =
        vec![topo.link_between(topo.rank_node(0), sw).unwrap(), topo.link_between(sw, topo.rank_node(1)).unwrap()];
    let s = one_transfer(&topo, route);
    for m in [4 * MIB, 16 * MIB] {
        let r = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::Simple).unwrap();
        assert_eq!(r.slices, (m / (2 * MIB)) as usize);
        close(r.time_us, 8.4 + 1.0 + 2.0 + m as f64 / 5e4);
    }
    // The legacy simulator stores and forwards the whole piece: more than the above.
    let legacy = crate::cost::simulate(&s, &topo, Rat::from_integer(16 * MIB), 1).unwrap();
    close(legacy.time_us, 1.0 + 2.0 + 16.0 * MIB as f64 / 1e5 + 16.0 * MIB as f64 / 5e4);
}

#[test]
fn ring_allgather_closed_forms() {
    // ring:4 allgather, shard M/4 in k slices of s = M / (4 k 10^5) us, latency 1 us.
    let topo = zoo::from_spec("ring:4").unwrap();
    let s = ring_allgather(&topo, &[0, 1, 2, 3]);
    // Bandwidth regime ((k - 1) s >= 1 us): every link busy back to back,
    // time = base + 3 k s + 1.
    let m = 4 * 4 * 2 * MIB; // k = 4 slices of 2 MiB, s = 20.97 us
    let r = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::Simple).unwrap();
    assert_eq!(r.slices, 4);
    close(r.time_us, 8.4 + 3.0 * m as f64 / 4e5 + 1.0);
    // One slice: 3 steps of (1 us + M / 4 / 10^5).
    let m = 4 * MIB;
    let r = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::Simple).unwrap();
    assert_eq!(r.slices, 1);
    close(r.time_us, 8.4 + 3.0 * (1.0 + m as f64 / 4e5));
}

#[test]
fn protocols_scale_bandwidth_and_slices() {
    let topo = zoo::from_spec("ring:4").unwrap();
    let s = one_transfer(&topo, vec![link(&topo, 0, 1)]);
    let m = 3 * MIB;
    let ll = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::LL).unwrap();
    assert_eq!(ll.slices, 96);
    close(ll.time_us, 3.6 + 1.0 + 2.0 * m as f64 / 1e5);
    let ll128 = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::LL128).unwrap();
    assert_eq!(ll128.slices, 6); // ceil(3 MiB / 576,000)
    close(ll128.time_us, 10.0 + 1.0 + 16.0 / 15.0 * m as f64 / 1e5);
}

#[test]
fn the_tuner_picks_ll_for_small_and_simple_for_large() {
    let topo = zoo::from_spec("dgx-a100:1").unwrap();
    let s = crate::api::synthesize(&topo, Collective::Allgather, "ring", &Default::default(), Rat::from_integer(MIB))
        .unwrap()
        .schedule;
    assert_eq!(choose_protocol(&s, &topo, Rat::from_integer(1024)).unwrap(), Protocol::LL);
    assert_eq!(choose_protocol(&s, &topo, Rat::from_integer(1 << 30)).unwrap(), Protocol::Simple);
}

#[test]
fn classes_of_the_zoo_machines() {
    let count = |spec: &str, c: LinkClass| {
        let t = zoo::from_spec(spec).unwrap();
        classify(&t).iter().filter(|&&x| x == c).count()
    };
    // dgx-a100:2: 16 GPUs x 2 directions to the NVSwitch, to the NIC, and NIC to IB.
    assert_eq!(count("dgx-a100:2", LinkClass::NvSwitch), 32);
    assert_eq!(count("dgx-a100:2", LinkClass::Nic), 32);
    assert_eq!(count("dgx-a100:2", LinkClass::IbSwitch), 32);
    assert_eq!(count("dgx-a100:2", LinkClass::Generic), 0);
    let mi = zoo::from_spec("mi250:2").unwrap();
    assert_eq!(count("mi250:2", LinkClass::IbSwitch), 64);
    assert_eq!(count("mi250:2", LinkClass::Xgmi), mi.links.len() - 64);
    let dgx1 = zoo::from_spec("dgx1").unwrap();
    assert_eq!(count("dgx1", LinkClass::NvLink), dgx1.links.len());
    assert_eq!(count("hgx-h100:2", LinkClass::IbSwitch), 32);
    let torus = zoo::from_spec("torus:4x4").unwrap();
    assert_eq!(count("torus:4x4", LinkClass::Generic), torus.links.len());
    for c in ALL_CLASSES {
        let p = params(c);
        assert_eq!(p.class, c);
        assert!(p.efficiency > Rat::from_integer(0) && p.efficiency <= Rat::from_integer(1), "{}", p.name);
        assert!(!p.source.is_empty());
    }
}

#[test]
fn bound_on_a_generic_ring() {
    // ring:4 allgather: pairs up to 3 hops apart (3 us); cut bound 3 M / (4 * 100 GB/s).
    let topo = zoo::from_spec("ring:4").unwrap();
    let floor = latency_floor(&topo, Collective::Allgather, 0);
    close(floor.distance_us, 3.0);
    close(floor.min_hop_us, 1.0);
    assert_eq!(floor.start_us, [3.6, 10.0, 8.4]);
    let b = crate::api::bounds(&effective_topology(&topo), Collective::Allgather, 0).unwrap();
    close(to_f64(&b.time_per_byte_us), 3.0 / 4e5);
    // 1 KiB: LL's latency wins: 3.6 + 3 us.
    let (t, p) = time_bound_us(&floor, b.time_per_byte_us, Rat::from_integer(1024));
    assert_eq!(p, Protocol::LL);
    close(t, 6.6);
    // 32 MiB: Simple's bandwidth term: 8.4 + 3 M / 4e5 + 1.
    let m = 32 * MIB;
    let (t, p) = time_bound_us(&floor, b.time_per_byte_us, Rat::from_integer(m));
    assert_eq!(p, Protocol::Simple);
    close(t, 8.4 + 3.0 * m as f64 / 4e5 + 1.0);
    // The ring allgather attains it at 32 MiB (bandwidth regime above).
    let s = ring_allgather(&topo, &[0, 1, 2, 3]);
    close(runtime_time(&s, &topo, Rat::from_integer(m), Protocol::Simple).unwrap().time_us, t);
}

#[test]
fn effective_topology_scales_by_class() {
    let topo = zoo::from_spec("dgx-a100:2").unwrap();
    let eff = effective_topology(&topo);
    for ((a, b), c) in topo.links.iter().zip(&eff.links).zip(classify(&topo)) {
        assert_eq!(b.bandwidth, a.bandwidth * params(c).efficiency);
    }
}

/// gpu0 -> NVSwitch -> gpu1 on dgx-a100:1, as a `op` transfer of piece 0.
fn nvswitch_hop(topo: &Topology, op: Op) -> Schedule {
    let sw = topo.node_index("box0.nvsw").unwrap();
    let route =
        vec![topo.link_between(topo.rank_node(0), sw).unwrap(), topo.link_between(sw, topo.rank_node(1)).unwrap()];
    let coll = if op == Op::Copy { Collective::Broadcast } else { Collective::Reduce };
    let mut s = Schedule::new(coll, topo.n_ranks(), if op == Op::Copy { 0 } else { 1 }, "hop");
    let p = s.add_piece(Piece::whole(0));
    s.add(Transfer::new(p, 0, 1, route, op, vec![], None));
    s
}

#[test]
fn a_connection_is_capped_by_its_thread_block() {
    // NVSwitch at 300 x 57/80 = 213.75 GB/s effective, but one thread block copies at 80 and
    // reduces at 48 GB/s: base 8.4 + NVLink overhead 3.4 + M / cap (hop latencies 0).
    let topo = zoo::from_spec("dgx-a100:1").unwrap();
    let m = 8 * MIB;
    let [copy, reduce] = classes::CONNECTION_GBPS;
    for (op, cap) in [(Op::Copy, copy), (Op::Reduce, reduce)] {
        let s = nvswitch_hop(&topo, op);
        let r = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::Simple).unwrap();
        assert_eq!(r.slices, 4);
        close(r.time_us, 8.4 + 3.4 + m as f64 / (cap * 1e3));
    }
    assert_eq!(classes::CONNECTION_GBPS, [80.0, 48.0]);
}

#[test]
fn received_contributions_are_processed_one_at_a_time() {
    // Ranks 1 and 2 each send a tiny piece to 0 (one overhead each, concurrently); 0 then
    // forwards to 3 after processing both: two more overheads, not one.
    let topo = zoo::from_spec("dgx-a100:1").unwrap();
    let sw = topo.node_index("box0.nvsw").unwrap();
    let hop = |a: usize, b: usize| {
        vec![topo.link_between(topo.rank_node(a), sw).unwrap(), topo.link_between(sw, topo.rank_node(b)).unwrap()]
    };
    let mut s = Schedule::new(Collective::Broadcast, topo.n_ranks(), 0, "join");
    let p = s.add_piece(Piece::whole(0));
    s.add(Transfer::new(p, 1, 0, hop(1, 0), Op::Copy, vec![], None));
    s.add(Transfer::new(p, 2, 0, hop(2, 0), Op::Copy, vec![], None));
    s.add(Transfer::new(p, 0, 3, hop(0, 3), Op::Copy, vec![0, 1], None));
    let r = runtime_time(&s, &topo, Rat::from_integer(0), Protocol::Simple).unwrap();
    close(r.time_us, 8.4 + 3.4 + 2.0 * 3.4);
}

#[test]
fn the_bound_holds_for_every_protocol_on_zoo_schedules() {
    // Directed, switched, direct-connect and machine topologies; every size regime.
    let mut checked = 0;
    for spec in ["ring:5", "torus:3x3", "switch:4", "dgx-a100:1", "dgx1", "mi250:1,gcds=8", "hgx-h100:1"] {
        let topo = zoo::from_spec(spec).unwrap();
        for (coll, algo) in [(Collective::Allgather, "ring"), (Collective::ReduceScatter, "direct")] {
            let Ok(x) = crate::api::synthesize(&topo, coll, algo, &Default::default(), Rat::from_integer(MIB)) else {
                continue;
            };
            for m in [0, 4096, MIB, 64 * MIB] {
                let size = Rat::from_integer(m);
                let (bound, _) = crate::api::time_bound(&x.topology, coll, 0, size).unwrap();
                for p in Protocol::ALL {
                    let t = runtime_time(&x.schedule, &x.topology, size, p).unwrap().time_us;
                    assert!(bound <= t * (1.0 + 1e-12), "{spec} {algo} {m} {p:?}: bound {bound} > {t}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 7 * 4 * 3, "{checked}");
}

#[test]
fn the_latency_floor_samples_sources_on_large_topologies() {
    // ring:1000 is directed: every rank is 999 hops (us) from its predecessor, so the 64
    // sampled sources find the exact maximum; a ring of 500 is computed from every rank.
    for n in [500usize, 1000] {
        let topo = zoo::from_spec(&format!("ring:{n}")).unwrap();
        let floor = latency_floor(&topo, Collective::Allgather, 0);
        close(floor.distance_us, (n - 1) as f64);
        close(latency_floor(&topo, Collective::Broadcast, 7).distance_us, (n - 1) as f64);
    }
}
