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
    let (t, p) = time_bound_us(&floor, b.time_per_byte_us, None, Rat::from_integer(1024));
    assert_eq!(p, Protocol::LL);
    close(t, 6.6);
    // 32 MiB: Simple's bandwidth term: 8.4 + 3 M / 4e5 + 1.
    let m = 32 * MIB;
    let (t, p) = time_bound_us(&floor, b.time_per_byte_us, None, Rat::from_integer(m));
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

/// On `dgx-a100:1`: ranks 1 and 2 each send a tiny piece to 0 through the NVSwitch, then 0
/// forwards to 3 after both arrived.
fn join_at_rank_0() -> (Topology, Schedule) {
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
    (topo, s)
}

#[test]
fn received_contributions_are_processed_one_at_a_time() {
    // Ranks 1 and 2 each send a tiny piece to 0 (one overhead each, concurrently); 0 then
    // forwards to 3 after processing both: two more overheads, not one.
    let (topo, s) = join_at_rank_0();
    let r = runtime_time(&s, &topo, Rat::from_integer(0), Protocol::Simple).unwrap();
    close(r.time_us, 8.4 + 3.4 + 2.0 * 3.4);
}

/// On `dgx-a100:2`: ranks `from` send a tiny piece to 0 through the NVSwitch, then 0 sends it
/// over its NIC and the IB switch to rank 8 (box 1's GPU 0) after all arrived.
fn fold_then_nic(from: &[usize]) -> (Topology, Schedule) {
    let topo = zoo::from_spec("dgx-a100:2").unwrap();
    let at = |name: &str| topo.node_index(name).unwrap();
    let (sw, nic0, ib, nic8) = (at("box0.nvsw"), at("box0.nic0"), at("ib0"), at("box1.nic0"));
    let path =
        |nodes: &[usize]| -> Vec<usize> { nodes.windows(2).map(|w| topo.link_between(w[0], w[1]).unwrap()).collect() };
    let mut s = Schedule::new(Collective::Broadcast, topo.n_ranks(), 0, "fold");
    let p = s.add_piece(Piece::whole(0));
    for &r in from {
        s.add(Transfer::new(p, r, 0, path(&[topo.rank_node(r), sw, topo.rank_node(0)]), Op::Copy, vec![], None));
    }
    let route = path(&[topo.rank_node(0), nic0, ib, nic8, topo.rank_node(8)]);
    s.add(Transfer::new(p, 0, 8, route, Op::Copy, (0..from.len()).collect(), None));
    (topo, s)
}

#[test]
fn folds_pay_their_own_connections_step() {
    // MSCCL runs each received contribution as a step on its own connection and fuses the
    // last with the send: a third contribution from an NVSwitch peer adds one NVSwitch step
    // (3.4 us under Simple), not another NIC step (28 us, NCCL 2.12 hwLat NET Simple).
    let time = |from: &[usize]| {
        let (topo, s) = fold_then_nic(from);
        runtime_time(&s, &topo, Rat::from_integer(0), Protocol::Simple).unwrap().time_us
    };
    close(time(&[1, 2]) - time(&[1]), 3.4);
    close(time(&[1, 2, 3]) - time(&[1]), 2.0 * 3.4);
    // One contribution: the NVSwitch hop's step, then the NIC's fused step.
    assert!(time(&[1]) >= 8.4 + 3.4 + 28.0, "{}", time(&[1]));
}

#[test]
fn the_bound_holds_for_every_protocol_on_zoo_schedules() {
    // Directed, switched, direct-connect and machine topologies; every size regime.
    let mut checked = 0;
    // The two-box machines' cuts mix classes (NICs start later: the cut's own term).
    let specs = ["ring:5", "torus:3x3", "switch:4", "dgx-a100:1", "dgx1", "mi250:1,gcds=8", "hgx-h100:1"];
    for spec in specs.into_iter().chain(["dgx-a100:2", "mi250:2,gcds=4", "hgx-h100:2"]) {
        let topo = zoo::from_spec(spec).unwrap();
        let cases = [
            (Collective::Allgather, "ring"),
            (Collective::ReduceScatter, "direct"),
            (Collective::Allgather, "nccl-ring"),
            (Collective::Allreduce, "nccl-tree"),
            (Collective::Broadcast, "dbt"),
            (Collective::Reduce, "dbt"),
        ];
        for (coll, algo) in cases {
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
    assert!(checked >= 7 * 4 * 3 * 3, "{checked}");
}

#[test]
fn the_cut_term_starts_a_gcd_pairs_ib_ports_late() {
    // mi250:2 reduce-scatter: the bottleneck cut is the data leaving GCDs 0 and 1 of box 0:
    // their 6 outer xGMI links (2 x 150 GB/s raw, 0.72 efficient, 3.6 us Simple overhead)
    // and their 2 switch up links (2 x 16 GB/s, 0.9, NCCL's 22.5 us step below MSCCL's 28).
    let topo = zoo::from_spec("mi250:2").unwrap();
    let b = crate::api::bounds(&effective_topology(&topo), Collective::ReduceScatter, 0).unwrap();
    let cut = super::bound::cut_term(&topo, Collective::ReduceScatter, &b.cut).unwrap();
    let (xgmi, ib) = (216.0, 28.8);
    close(cut.start_us[Protocol::Simple.index()], 8.4 + (xgmi * 3.6 + ib * 22.5) / (xgmi + ib));
    assert_eq!(cut.time_per_byte_us, b.time_per_byte_us, "the cut is the bound's own");
    close(to_f64(&cut.time_per_byte_us), 30.0 / 32.0 / (xgmi + ib) / 1e3);
    // 64 MiB: the cut's term is the bound, 2.2 us above the smallest overhead's.
    let m = Rat::from_integer(64 * MIB);
    let floor = latency_floor(&topo, Collective::ReduceScatter, 0);
    let (plain, _) = time_bound_us(&floor, b.time_per_byte_us, None, m);
    let (t, p) = crate::api::time_bound(&topo, Collective::ReduceScatter, 0, m).unwrap();
    assert_eq!(p, Protocol::Simple);
    close(plain, 8.4 + 3.6 + 30.0 / 32.0 * (64 * MIB) as f64 / 244.8e3);
    close(t, 8.4 + (xgmi * 3.6 + ib * 22.5) / (xgmi + ib) + 30.0 / 32.0 * (64 * MIB) as f64 / 244.8e3);
    assert!(t > plain + 2.2, "{t} {plain}");
    // One class (a ring): the cut's start is the class's overhead, the bound unchanged.
    let ring = zoo::from_spec("ring:4").unwrap();
    let rb = crate::api::bounds(&effective_topology(&ring), Collective::Allgather, 0).unwrap();
    let rc = super::bound::cut_term(&ring, Collective::Allgather, &rb.cut).unwrap();
    assert_eq!(rc.start_us, latency_floor(&ring, Collective::Allgather, 0).start_us);
    // Allreduce's bound is two phases' (or the LP's), not one cut's.
    assert!(super::bound::cut_term(&topo, Collective::Allreduce, &b.cut).is_none());
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

/// `n` GPUs on one NVSwitch named `box0.nvsw` (300 GB/s per GPU each way, NVSwitch class).
fn nvswitch_box(n: usize) -> Topology {
    let mut b = TopologyBuilder::new("nvswitch-box");
    let gpus: Vec<usize> = (0..n).map(|i| b.compute(format!("gpu{i}"), Some("box0"))).collect();
    let sw = b.switch("box0.nvsw", Some("box0"));
    for &g in &gpus {
        b.link(g, sw, Rat::from_integer(300), 0.0);
        b.link(sw, g, Rat::from_integer(300), 0.0);
    }
    b.build().unwrap()
}

/// A ring allgather over ranks 0..n in order, each hop through the switch `sw`, run by
/// `executor`: at step t rank i forwards the shard it received at step t - 1.
fn switch_ring_allgather(topo: &Topology, executor: crate::ir::Executor) -> Schedule {
    let n = topo.n_ranks();
    let sw = topo.node_index("box0.nvsw").unwrap();
    let hop = |a: usize, b: usize| {
        vec![topo.link_between(topo.rank_node(a), sw).unwrap(), topo.link_between(sw, topo.rank_node(b)).unwrap()]
    };
    let mut s = Schedule::new(Collective::Allgather, n, 0, "switch-ring");
    for r in 0..n {
        s.add_piece(Piece::whole(r));
    }
    let mut last: Vec<Option<usize>> = vec![None; n];
    for t in 0..n - 1 {
        let mut next = vec![None; n];
        for i in 0..n {
            let shard = (i + n - t) % n;
            let id = s.add(Transfer::new(
                shard,
                i,
                (i + 1) % n,
                hop(i, (i + 1) % n),
                Op::Copy,
                last[i].into_iter().collect(),
                Some(t as u32),
            ));
            next[(i + 1) % n] = Some(id);
        }
        last = next;
    }
    s.provenance.executor = executor;
    s
}

#[test]
fn nccl_ring_kernel_pays_one_step_per_ring_step_on_a_switch() {
    // 4 GPUs on an NVSwitch (213.75 GB/s effective, above one thread block's 80 GB/s copy):
    // each of the 3 ring steps moves M/4 in one slice, cut through the switch at the thread
    // block's 80 GB/s, after its step cost: MSCCL's interpreter pays NCCL 2.12's NVLink
    // overhead (3.4 us, Simple), NCCL's ring kernel the fitted kernel step.
    use crate::ir::Executor;
    let topo = nvswitch_box(4);
    let m = 4 * MIB;
    let step = params(LinkClass::NvSwitch).nccl_step_us;
    assert_eq!(step, classes::NCCL_STEP_US);
    for (executor, per_step) in [(Executor::Msccl, 3.4), (Executor::NcclRing, step)] {
        let s = switch_ring_allgather(&topo, executor);
        let r = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::Simple).unwrap();
        assert_eq!(r.slices, 1);
        close(r.time_us, 8.4 + 3.0 * (per_step + m as f64 / 4.0 / 80e3));
    }
}

#[test]
fn nccl_ring_kernel_pays_one_step_per_ring_step_on_a_direct_ring() {
    // dgx1's direct NVLinks (class NVLink, 4/5 efficiency): a ring of 4 GPUs at 50 GB/s is
    // 40 GB/s effective, below the thread block's 80: 3 steps of (step + M/4 / 40 GB/s),
    // with 2 slices per piece pipelining the second step's first slice behind the first.
    use crate::ir::Executor;
    let mut b = TopologyBuilder::new("dgx1:ring4");
    let g: Vec<usize> = (0..4).map(|i| b.compute(format!("gpu{i}"), None)).collect();
    for i in 0..4 {
        b.link(g[i], g[(i + 1) % 4], Rat::from_integer(50), 0.0);
    }
    let topo = b.build().unwrap();
    assert!(classify(&topo).iter().all(|&c| c == LinkClass::NvLink));
    let step = params(LinkClass::NvLink).nccl_step_us;
    let mut s = ring_allgather(&topo, &[0, 1, 2, 3]);
    s.provenance.executor = Executor::NcclRing;
    // One slice: 3 (step + M/4/40e3).
    let m = 4 * MIB;
    let r = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::Simple).unwrap();
    assert_eq!(r.slices, 1);
    close(r.time_us, 8.4 + 3.0 * (step + m as f64 / 4.0 / 40e3));
    // Two slices of x = M/8/40e3 us each, x > step: every link carries its 3 pieces' 6
    // slices back to back after the first step, the kernel step hidden behind the previous
    // slices (a pipeline latency, not an occupancy): base + step + 6 x.
    let m = 16 * MIB;
    let r = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::Simple).unwrap();
    assert_eq!(r.slices, 2);
    let x = m as f64 / 8.0 / 40e3;
    assert!(x > step);
    close(r.time_us, 8.4 + step + 6.0 * x);
}

#[test]
fn nccl_kernels_take_all_contributions_in_one_step() {
    // As received_contributions_are_processed_one_at_a_time, run by NCCL's tree kernel: the
    // forward to rank 3 waits one kernel step after both arrivals, not two.
    use crate::ir::Executor;
    let (topo, mut s) = join_at_rank_0();
    s.provenance.executor = Executor::NcclTree;
    let r = runtime_time(&s, &topo, Rat::from_integer(0), Protocol::Simple).unwrap();
    close(r.time_us, 8.4 + 2.0 * classes::NCCL_STEP_US);
}

#[test]
fn nccl_tree_kernel_bandwidth_and_chunks_follow_nccl_2_12() {
    use crate::ir::Executor;
    let size = |m: i128| Rat::from_integer(m);
    // treeCorrectionFactor[Simple] at 1 MiB (index log2(2^14) = 14) is .5, at 128 MiB (21) .9,
    // beyond 256 MiB 1; the tree kernel reaches .92 of that.
    assert_eq!(nccl::tree_correction(Protocol::Simple, size(MIB)), Rat::new(1, 2));
    assert_eq!(nccl::tree_correction(Protocol::Simple, size(128 * MIB)), Rat::new(9, 10));
    assert_eq!(nccl::tree_correction(Protocol::LL128, size(1 << 30)), Rat::from_integer(1));
    assert_eq!(nccl::tree_correction(Protocol::LL, size(32)), Rat::from_integer(1));
    assert_eq!(nccl::bandwidth_factor(Executor::NcclTree, Protocol::Simple, size(1 << 30)), Rat::new(23, 25));
    assert_eq!(nccl::bandwidth_factor(Executor::NcclRing, Protocol::Simple, size(MIB)), Rat::from_integer(1));
    assert_eq!(nccl::bandwidth_factor(Executor::Msccl, Protocol::LL, size(MIB)), Rat::from_integer(1));
    // 2 nodes x 8: depth 8. 1 MiB per channel, Simple: 512K -> 256K -> 128K (floor of the
    // first rule) -> 64K (2nd: 16 < 32); LL128: 2.8 x 64 / 8 = 22.4 chunks wanted:
    // 614,400 -> ... -> 76,800 raw = 72,000 payload. 8 MiB per channel keeps 307,200 raw.
    close(nccl::tree_chunk_bytes(Protocol::Simple, MIB as f64, 2, 8), 65_536.0);
    close(nccl::tree_chunk_bytes(Protocol::LL128, MIB as f64, 2, 8), 72_000.0);
    close(nccl::tree_chunk_bytes(Protocol::LL128, 8.0 * MIB as f64, 2, 8), 288_000.0);
    close(nccl::tree_chunk_bytes(Protocol::Simple, 64.0 * MIB as f64, 2, 8), 524_288.0);
    assert_eq!(nccl::nodes_and_ppn(&zoo::from_spec("dgx-a100:2").unwrap()), (2, 8));
    assert_eq!(nccl::nodes_and_ppn(&zoo::from_spec("ring:4").unwrap()), (1, 4));
    // Per-connection ceilings: LL128 20 GB/s per channel; a tree connection half its channel's.
    assert_eq!(nccl::connection_cap_gbps(Executor::NcclRing, Protocol::LL128, 2), Some(20.0));
    assert_eq!(nccl::connection_cap_gbps(Executor::NcclTree, Protocol::LL128, 2), Some(10.0));
    assert_eq!(nccl::connection_cap_gbps(Executor::NcclTree, Protocol::Simple, 2), Some(11.8));
    assert_eq!(nccl::connection_cap_gbps(Executor::NcclRing, Protocol::Simple, 2), None);
    assert_eq!(nccl::connection_cap_gbps(Executor::Msccl, Protocol::LL128, 2), None);
}

#[test]
fn nccl_tuner_picks_by_nccl_2_12_tables_on_dgx_a100_2() {
    // NCCL 2.12's own model for 2 x 8 A100 (8 search channels x 24 GB/s; docs/calibration.md
    // works it out) picks for the ring allgather LL (Intel CPU; LL128 on AMD) at 1 MiB, LL128
    // at 16 MiB, Simple from 128 MiB (827 us LL128, 739 Simple: LL128's 20 GB/s per channel
    // cap, which needs the channel count, is not in ours, so ours keeps LL128 at 128 MiB);
    // tree allreduce LL128 up to 128 MiB (Simple's tree hwLat is 28 us a level), Simple at 1 GiB.
    let topo = zoo::from_spec("dgx-a100:2").unwrap();
    let synth = |coll, algo| {
        crate::api::synthesize(&topo, coll, algo, &Default::default(), Rat::from_integer(MIB)).unwrap().schedule
    };
    let ring = synth(Collective::Allgather, "nccl-ring");
    let tree = synth(Collective::Allreduce, "nccl-tree");
    assert_eq!(ring.provenance.executor, crate::ir::Executor::NcclRing);
    assert_eq!(tree.provenance.executor, crate::ir::Executor::NcclTree);
    let sizes = [MIB, 16 * MIB, 128 * MIB, 1 << 30];
    let pick = |s: &Schedule| sizes.map(|m| choose_protocol(s, &topo, Rat::from_integer(m)).unwrap());
    use Protocol::*;
    assert_eq!(pick(&ring), [LL, LL128, LL128, Simple]);
    assert_eq!(pick(&tree), [LL128, LL128, LL128, Simple]);
    // The same ring as written, under MSCCL: its own estimate (overheads, not NCCL's tables).
    let mut msccl = ring.clone();
    msccl.provenance.executor = crate::ir::Executor::Msccl;
    assert_eq!(choose_protocol(&msccl, &topo, Rat::from_integer(1 << 30)).unwrap(), LL128);
}

#[test]
fn busiest_link_closed_form_on_a_ring() {
    // ring:4 allgather: every link carries 3 shards of M/4 at 10^5 bytes/us (LL at half the
    // rate, LL128 at 15/16).
    let topo = zoo::from_spec("ring:4").unwrap();
    let s = ring_allgather(&topo, &[0, 1, 2, 3]);
    let m = 4 * 4 * 2 * MIB;
    let floor = sim::busiest_link_us(&s, &topo, Rat::from_integer(m)).unwrap();
    let simple = 3.0 * m as f64 / 4e5;
    close(floor[Protocol::Simple.index()], simple);
    close(floor[Protocol::LL.index()], 2.0 * simple);
    close(floor[Protocol::LL128.index()], 16.0 / 15.0 * simple);
    // In the bandwidth regime the simulator meets it, plus the base and the last hop.
    let r = runtime_time(&s, &topo, Rat::from_integer(m), Protocol::Simple).unwrap();
    close(r.time_us, 8.4 + simple + 1.0);
}

#[test]
fn busiest_link_is_below_every_simulated_time_and_prunes_no_winner() {
    // The floor `auto` leaves protocols out by: no protocol's simulated time is below it, and
    // the times `protocol_times` keeps have the same fastest as all three simulated.
    let mut pruned = 0;
    for spec in ["dgx-a100:2", "mi250:2", "dgx1", "torus:4x4"] {
        let topo = zoo::from_spec(spec).unwrap();
        for (c, algo) in [
            (Collective::Allgather, "forestcoll"),
            (Collective::Allgather, "nccl-ring"),
            (Collective::Allreduce, "ring"),
        ] {
            let req = crate::synth::Request::default();
            let done = crate::api::synthesize(&topo, c, algo, &req, Rat::from_integer(MIB)).unwrap();
            let s = crate::ir::orbit::flat(&done.schedule).unwrap();
            let t = &done.topology;
            for size in [64 * 1024, 4 * MIB].map(Rat::from_integer) {
                let floor = sim::busiest_link_us(&s, t, size).unwrap();
                let mut all = Vec::new();
                for p in Protocol::ALL {
                    let time = runtime_time(&s, t, size, p).unwrap().time_us;
                    let least = p.base_latency_us() + floor[p.index()];
                    assert!(time >= least * (1.0 - 1e-12), "{spec} {algo} {size} {p:?}: {time} < {least}");
                    all.push(time);
                }
                let kept = crate::cost::tuning::protocol_times(&s, t, size).unwrap();
                pruned += 3 - kept.len();
                let fastest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
                assert_eq!(
                    fastest(&kept.iter().map(|k| k.0).collect::<Vec<_>>()),
                    fastest(&all),
                    "{spec} {algo} {size}"
                );
                // Under a cap (what `auto`'s mixes must beat): a subset of those times, with
                // the same fastest whenever it is below the cap, and none at all when every
                // protocol's floor is above it.
                let least = Protocol::ALL.map(|p| p.base_latency_us() + floor[p.index()]);
                let lowest_floor = least.iter().copied().fold(f64::INFINITY, f64::min);
                for cap in
                    [0.99 * lowest_floor, 0.9 * fastest(&all), fastest(&all), 1.01 * fastest(&all), 2.0 * fastest(&all)]
                {
                    let below = crate::cost::tuning::protocol_times_below(&s, t, size, cap).unwrap();
                    assert!(below.iter().all(|b| kept.contains(b)), "{spec} {algo} {size} {cap}");
                    let times: Vec<f64> = below.iter().map(|b| b.0).collect();
                    assert_eq!(fastest(&times).min(cap), fastest(&all).min(cap), "{spec} {algo} {size} {cap}");
                    if cap < lowest_floor {
                        assert!(below.is_empty(), "{spec} {algo} {size}: {below:?}");
                    }
                }
            }
        }
    }
    // The floor does prune (LL at 4 MiB on the machines).
    assert!(pruned > 0);
}
