use super::testutil::*;
use super::*;
use crate::ir::transform::pipelined;
use crate::rational::to_f64;
use crate::zoo::from_spec;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-300)
}

/// The agreement test: on a ring allreduce both models give exactly
/// 2 (N-1) (alpha + M / (N b)), through the one interface.
#[test]
fn ring_allreduce_both_models_exact() {
    for n in [2usize, 3, 4, 8, 16] {
        for (bw, lat) in [("100", "1"), ("12.5", "0.5"), ("0.001", "3"), ("400Gbps", "0"), ("0.3", "2.25")] {
            let topo = from_spec(&format!("ring:{n},bw={bw},lat={lat}")).unwrap();
            let s = ring_allreduce_n(&topo);
            assert_eq!(s.steps(), 2 * (n - 1));
            let (b, alpha) = (topo.links[0].bandwidth, topo.links[0].latency);
            for m in [n as i128 * 12_345, n as i128 * (1 << 20), 0] {
                let size = Rat::from_integer(m);
                let per_step_bw = to_f64(&(size / Rat::from_integer(n as i128) / (b * Rat::from_integer(1000))));
                let want = 2.0 * (n as f64 - 1.0) * (alpha + per_step_bw);
                for model in Model::ALL {
                    let got = time_us(model, &s, &topo, size, 1).unwrap();
                    assert!(close(got, want), "ring:{n} bw={bw} lat={lat} M={m} {}: {got} != {want}", model.name());
                }
                let e = alpha_beta(&s, &topo, size, 1).unwrap();
                assert!(close(e.latency_us, 2.0 * (n as f64 - 1.0) * alpha) || alpha == 0.0);
                assert_eq!(e.total_us, e.latency_us + e.bandwidth_us);
                let r = simulate(&s, &topo, size, 1).unwrap();
                assert_eq!(r.transfers, 2 * n * (n - 1));
            }
        }
    }
}

/// Pipelining is applied as `ir::transform::pipelined`: simulating with k sub-chunks is
/// bit-for-bit the same as simulating the split schedule, and the analytic model does
/// not change at all.
#[test]
fn pipeline_is_split() {
    let cases = [("ring:5,bw=0.7,lat=0.3", 1_000_003i128), ("ring:4,lat=0", 10), ("switch:4,bw=25,lat=0.5", 999)];
    for (spec, m) in cases {
        let topo = from_spec(spec).unwrap();
        let s = ring_allreduce_n(&topo);
        let size = Rat::from_integer(m);
        for k in [2usize, 3, 7] {
            let split_s = pipelined(&s, k).unwrap();
            let a = simulate(&s, &topo, size, k).unwrap();
            let b = simulate(&split_s, &topo, size, 1).unwrap();
            assert_eq!(a.time_us.to_bits(), b.time_us.to_bits(), "{spec} k={k}");
            assert_eq!((a.transfers, a.busiest_link), (b.transfers, b.busiest_link));
            assert_eq!(a.busiest_link_busy_us.to_bits(), b.busiest_link_busy_us.to_bits());
            let e1 = alpha_beta(&s, &topo, size, 1).unwrap();
            let ek = alpha_beta(&s, &topo, size, k).unwrap();
            let es = alpha_beta(&split_s, &topo, size, 1).unwrap();
            assert_eq!(e1.total_us, ek.total_us);
            assert!(close(es.total_us, e1.total_us), "{spec} k={k}");
        }
    }
}

#[test]
fn bad_input_is_an_error() {
    let topo = from_spec("ring:3").unwrap();
    let s = ring_allreduce_n(&topo);
    let one = Rat::from_integer(1);
    for model in Model::ALL {
        assert!(time_us(model, &s, &topo, -one, 1).is_err());
        assert!(time_us(model, &s, &topo, one, 0).is_err());
        // a pipeline beyond what the models hold is refused before any table is sized
        let most = MAX_CHUNK_TRANSFERS / s.transfers.len();
        let e = time_us(model, &s, &topo, one, most + 1).unwrap_err().to_string();
        assert!(e.contains("chunk transfers the models hold"), "{e}");
        assert!(time_us(model, &s, &topo, one, usize::MAX).is_err());
        let mut bad = s.clone();
        bad.transfers[0].route = vec![99];
        assert!(time_us(model, &bad, &topo, one, 1).is_err());
        let mut bad = s.clone();
        bad.transfers[0].after = vec![999];
        assert!(time_us(model, &bad, &topo, one, 1).is_err());
        let mut cyc = s.clone();
        let child = s.transfers.iter().position(|t| t.after.contains(&0)).unwrap();
        cyc.transfers[0].after = vec![child];
        cyc.transfers[0].step = None;
        assert!(time_us(model, &cyc, &topo, one, 1).is_err(), "cycle must fail ({})", model.name());
        assert!(time_us(model, &s, &from_spec("ring:4").unwrap(), one, 1).is_err());
    }
    assert_eq!(Model::parse("simulator").unwrap(), Model::Simulator);
    assert_eq!(Model::parse("alpha-beta").unwrap(), Model::AlphaBeta);
    assert!(Model::parse("magic").is_err());
}

/// Exact results of every flat consumer on synthesized schedules, written down from the
/// models before their internals were rewritten for speed: the simulator, the
/// runtime simulator under each protocol and slice count, the protocol estimates, the
/// alpha-beta model and the link loads must stay bit for bit what they were.
/// ForestColl's reduce-scatter then allgather composed from its flat allgather (rank by rank),
/// with `s`'s provenance: the schedule as it was before both were stated per orbit.
fn rank_major_allreduce(topo: &crate::topology::Topology, s: crate::ir::Schedule) -> crate::ir::Schedule {
    use crate::ir::transform::{compose, reverse};
    let ag = crate::synth::forestcoll::allgather(topo, None).unwrap();
    let mut old = compose(&reverse(&ag, topo, topo).unwrap(), &ag, crate::ir::Collective::Allreduce).unwrap();
    old.root = 0;
    old.provenance = s.provenance;
    old
}

#[test]
fn flat_consumers_keep_their_exact_results() {
    use crate::cost::runtime::{estimates_us, runtime, sim::makespan_us, Protocol};
    use crate::ir::Collective;
    let cases: [(&str, Collective, &str); 8] = [
        ("torus:4x4", Collective::Allgather, "forestcoll"),
        ("hypercube:3", Collective::Allgather, "bfb"),
        ("dgx-a100:2", Collective::Allreduce, "forestcoll"),
        ("ring:8", Collective::Allreduce, "ring"),
        ("rfs:2,2,4", Collective::Allreduce, "tacos"),
        ("mesh:3x3", Collective::Allgather, "tacos"),
        ("dgx-a100:2", Collective::Allreduce, "nccl-ring"),
        ("dgx-a100:2", Collective::Allreduce, "nccl-tree"),
    ];
    let mut got: Vec<u64> = Vec::new();
    for (spec, c, alg) in cases {
        let topo = from_spec(spec).unwrap();
        let s = match alg {
            // BFB's flat plan of every rank, as pinned (its compact form moves parts between
            // sources of one class: tests/compact.rs).
            "bfb" => crate::synth::bfb::allgather(&topo).unwrap(),
            _ => crate::synth::run(&topo, c, alg, &Default::default()).unwrap(),
        };
        // The flat consumers: ForestColl's allgather on a torus is stated per orbit now.
        let s = crate::ir::orbit::expand(&s).unwrap();
        // ForestColl's allreduce is too, and its expansion is orbit-major: the consumers get
        // the flat composition they were pinned on (same transfers, rank-major order).
        let s = if alg == "forestcoll" && c == Collective::Allreduce { rank_major_allreduce(&topo, s) } else { s };
        for m in [Rat::from_integer(1 << 20), Rat::new(1_000_000_007, 3)] {
            for k in [1, 3] {
                let r = simulate(&s, &topo, m, k).unwrap();
                got.push(r.time_us.to_bits());
                got.push(r.busiest_link_busy_us.to_bits());
                got.push(r.busiest_link.map_or(u64::MAX, |l| l as u64));
                got.push(alpha_beta(&s, &topo, m, k).unwrap().total_us.to_bits());
                for p in Protocol::ALL {
                    got.push(makespan_us(&s, &topo, m, p, k).unwrap().to_bits());
                }
            }
            got.extend(estimates_us(&s, &topo, m).unwrap().map(f64::to_bits));
            got.push(runtime(&s, &topo, m).unwrap().time_us.to_bits());
            let loads: Rat = link_loads(&s, &topo, m).into_iter().sum();
            got.push(to_f64(&loads).to_bits());
            got.push(to_f64(&bandwidth_term_us(&s, &topo, m)).to_bits());
        }
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in &got {
        h = (h ^ x).wrapping_mul(0x0000_0100_0000_01b3);
    }
    // torus:4x4 at 1 MiB, k = 1: simulator time, busiest link's busy time and index,
    // alpha-beta, runtime makespan under LL, LL128, Simple; then k = 3's simulator time
    // (17.4576 us, 17.4576, link 0, 6.4576, 6.94912, ..., 47.4576).
    let first: [u64; 8] = [
        4625607095235552845,
        4625607095235552845,
        0,
        4618956629665814832,
        4619510031988026119,
        4617960505485834518,
        4617849825021392260,
        4631875880736871202,
    ];
    assert_eq!(&got[..8], &first);
    // An earlier model change (a fold that is not the last pays its own connection's step).
    assert_eq!((got.len(), h), (320, 0xffab_f4b5_0e03_5e47), "a flat consumer's result changed");
}
