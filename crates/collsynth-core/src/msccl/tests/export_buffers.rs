//! Every exported XML is deadlock-free under the runtime's buffers (calls, 2 or 8 per
//! connection, interleaved iterations of the buffer loop) at every maxAllowedCount: on zoo
//! topologies and on random ones (directed, asymmetric, switches, several boxes), for every
//! algorithm and collective that applies.

use super::interp::{self, Aliasing, Buffers};
use super::model::MAX_COUNT;
use super::*;
use crate::api;
use crate::cost::runtime::order::Lowering;
use crate::ir::Collective;
use crate::rational::rat;
use crate::synth::{self, Request};
use crate::zoo::from_spec;
use proptest::prelude::*;
use std::cell::Cell;

/// A program uses fused steps (a receive and a send in one step).
fn fused(p: &Program) -> bool {
    p.gpus.iter().flat_map(|g| &g.tbs).flat_map(|t| &t.steps).any(|s| s.kind.sends() && s.kind.receives())
}

/// Export every algorithm x collective that applies to `topo` (fused, Simple and LL) and
/// assert: the export succeeds (no internal error: its self-check found no deadlock at any
/// m), and independently, at m = 1 with `iterations` interleaved loops, no deadlock and
/// nothing wrong in every mode the XML claims. Returns (cases, fused cases).
fn export_and_run(topo: &Topology, iterations: usize) -> (usize, usize) {
    let (mut cases, mut with_fusion) = (0, 0);
    for alg in synth::algorithms() {
        for &c in alg.collectives.iter().filter(|c| **c != Collective::Allgatherv) {
            let req = Request { root: topo.n_ranks() - 1, ..Request::default() };
            let Ok(done) = api::synthesize(topo, c, alg.name, &req, rat(1 << 20)) else { continue };
            for proto in [Protocol::Simple, Protocol::LL] {
                let o = lower::Options { proto, ..lower::Options::default() };
                let e = match export(&done.schedule, &o, true) {
                    Ok(e) => e,
                    Err(crate::error::CollsynthError::Infeasible(_)) => continue,
                    Err(e) => panic!("{} {} {}: {e}", topo.name, alg.name, c.name()),
                };
                let p = &e.program;
                for (claimed, aliasing) in [(p.inplace, Aliasing::InPlace), (p.outofplace, Aliasing::OutOfPlace)] {
                    if claimed {
                        let b = Buffers { proto, max_count: 1, iterations };
                        let out = interp::run(p, aliasing, Some(b));
                        assert!(out.is_ok(), "{} {} {} {proto:?}: {out:?}", topo.name, alg.name, c.name());
                    }
                }
                cases += 1;
                with_fusion += usize::from(fused(p));
            }
        }
    }
    (cases, with_fusion)
}

#[test]
fn zoo_exports_never_deadlock_at_max_allowed_count_1() {
    let mut total = (0, 0);
    for spec in ["ring:6", "torus:2x4", "switch:5", "dgx-a100:1", "hypercube:3", "kautz:2:6", "mesh:2x3"] {
        let (cases, f) = export_and_run(&from_spec(spec).unwrap(), 3);
        assert!(cases >= 8, "{spec}: {cases}");
        total = (total.0 + cases, total.1 + f);
    }
    eprintln!("zoo: {} exports, {} of them with fused steps", total.0, total.1);
    assert!(total.1 > 0, "no export kept fused steps");
}

thread_local! {
    static CASES: Cell<(usize, usize, usize)> = const { Cell::new((0, 0, 0)) };
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10))]
    #[test]
    fn random_topology_exports_never_deadlock_at_max_allowed_count_1(
        t in crate::testing::arb_topology(8)
    ) {
        let (cases, f) = export_and_run(&t, interp::ITERATIONS);
        CASES.with(|c| {
            let (n, e, fu) = c.get();
            c.set((n + 1, e + cases, fu + f));
            eprintln!("random topologies so far: {} topologies, {} exports, {} fused", n + 1, e + cases, fu + f);
        });
    }
}

/// The real files (`tests/data/msccl-xml/`, and the large TE-CCL file from the shared data beside
/// the repository when present): each verdict under the call model, with why.
#[test]
fn real_files_agree_with_the_runtime_model() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = [root.join("../../tests/data/msccl-xml"), root.join("../../../shared/data/msccl-xml")];
    // (file, largest cnt, distinct maxAllowedCount values run). All cnt are at most 4, so
    // calls per step are few; none deadlocks at any m, with two interleaved iterations at
    // m = 1: the fused ForestColl and MSCCLang steps have cnt 1 (one call, as before), and
    // TE-CCL's cnt 2..4 steps are plain `s`/`r` pairs in dependency order.
    let want = [
        ("forestcoll-a100x1-allgather.xml", 1, vec![1]),
        ("forestcoll-a100x1-allreduce.xml", 1, vec![1]),
        ("msccl-tools-dgx1-allgather-2steps.xml", 1, vec![1]),
        ("mscclang-ring3-allreduce.xml", 1, vec![1]),
        ("mscclang-ring4-allgather.xml", 1, vec![1]),
        ("teccl-amd32-allgather.xml", 4, vec![1, 2, 3, 4]),
    ];
    // Every file kept in the repository has its row; only the TE-CCL one may be absent.
    let kept = std::fs::read_dir(&dirs[0]).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned());
    let kept: Vec<String> = kept.filter(|n| n.ends_with(".xml")).collect();
    assert_eq!(kept.len(), want.len() - 1);
    assert!(kept.iter().all(|n| want.iter().any(|w| w.0 == n)), "{kept:?}");
    for (name, top, ms) in want {
        let Some(path) = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) else { continue };
        let v = validate(&std::fs::read_to_string(path).unwrap(), None).unwrap();
        assert!(v.ok(), "{name}: {:?}", v.execution);
        let p = v.program.unwrap();
        let cnt = p.gpus.iter().flat_map(|g| &g.tbs).flat_map(|t| &t.steps).map(|s| s.cnt).max();
        assert_eq!((cnt, interp::distinct_max_counts(&p)), (Some(top), ms), "{name}");
        for m in 1..=top {
            for aliasing in [Aliasing::InPlace, Aliasing::OutOfPlace] {
                if (aliasing == Aliasing::InPlace && p.inplace) || (aliasing == Aliasing::OutOfPlace && p.outofplace) {
                    assert!(interp::run(&p, aliasing, Some(Buffers::at(p.proto, m))).is_ok(), "{name} m = {m}");
                }
            }
        }
    }
}

/// BFB's allgather on mesh:2x3 fuses steps of several chunks; whole steps as messages (the
/// old model) pass, but in runtime calls it hangs, so `export` writes it unfused and says why.
#[test]
fn a_fused_program_that_hangs_in_calls_is_exported_unfused() {
    let topo = from_spec("mesh:2x3").unwrap();
    let done = api::synthesize(&topo, Collective::Allgather, "bfb", &Request::default(), rat(1 << 20)).unwrap();
    let o = lower::Options::default();
    let f = lower::lower_with(&done.schedule, &o, true).unwrap();
    assert!(fused(&f));
    let whole_steps = Buffers { proto: Protocol::Simple, max_count: MAX_COUNT - 1, iterations: 1 };
    assert!(interp::run(&f, Aliasing::InPlace, Some(whole_steps)).is_ok());
    let problems = interp::check(&f);
    assert!(problems[0].starts_with("in-place: deadlock with Simple (2 calls per connection), maxAllowedCount 1,"));
    // The numbered lowering (`msccl::export`; `api::export_msccl` writes the timed one here,
    // which the runtime model runs faster and whose fused steps do not hang).
    let e = crate::msccl::export(&done.schedule, &o, true).unwrap();
    assert!(!fused(&e.program));
    let note = e.unfused_because.clone().unwrap();
    assert!(note.starts_with("the fused program would hang the runtime (in-place: deadlock with Simple"), "{note}");
    assert!(note.contains("maxAllowedCount 1, 2 iterations); exported without fused steps"), "{note}");
    assert!(note.ends_with("(at most 27 steps per rank instead of 26)"), "{note}");
    // The same bytes on every link.
    let loads = |p: &Program| interp::link_loads(p, &topo).unwrap();
    assert_eq!(loads(&f), loads(&e.program));
    let chosen = api::export_msccl(&done.schedule, &topo, &o, true).unwrap();
    assert!(chosen.fallback.is_none() && fused(&chosen.exported.program));
    assert_eq!(loads(&f), loads(&chosen.exported.program));
}

/// When the chosen lowering's fused program would hang the runtime, export writes the
/// fastest unfused lowering (the runtime model's choice with fused steps off) and judges that
/// program, not the fused one it failed: mesh:2x3's BFB allreduce at 1 KiB in Simple.
#[test]
fn the_unfused_program_written_is_the_one_judged() {
    let topo = from_spec("mesh:2x3").unwrap();
    let bytes = 1024;
    let done = api::synthesize(&topo, Collective::Allreduce, "bfb", &Request::default(), rat(bytes)).unwrap();
    let o = lower::Options::default();
    let e = api::export_msccl_at(&done.schedule, &topo, &o, true, true, bytes as u64).unwrap();
    assert!(!fused(&e.exported.program));
    let note = e.exported.unfused_because.clone().unwrap();
    assert!(note.ends_with("(at most 120 steps per rank, as many as fused)"), "{note}");
    let judged = e.judged.expect("the unfused program is judged");
    let cut = crate::ir::transform::pipelined(&done.schedule, e.exported.pipeline).unwrap();
    let time = |o: &lower::Options| crate::cost::runtime::exported(&cut, &topo, rat(bytes), o).unwrap().unwrap();
    let (fused_lowering, fused_time) = time(&o);
    let plain = lower::Options { fused: false, ..o.clone() };
    let (lowering, unfused_time) = time(&plain);
    // Judged as written: the unfused program's own time.
    let as_written = api::judge_program(&e.exported.program, &topo, bytes as u64).unwrap();
    assert_eq!((judged.protocol, judged.time_us), (as_written.protocol, as_written.time_us));
    assert_eq!(judged.protocol, unfused_time.protocol.name());
    // Another program than the fused one (here the model runs it 0.3 ns faster).
    assert!((unfused_time.time_us - 14.40372).abs() < 1e-9 && (fused_time.time_us - 14.40401).abs() < 1e-9);
    // The fused program of the lowering chosen first (timed, by depth) is the one that hangs;
    // the fastest unfused lowering is another (numbered).
    assert_eq!((fused_lowering.lowering, lowering.lowering), (Lowering::TimedDepth, Lowering::Numbered));
    let k = e.exported.pipeline;
    let f = lower::lower_with(&done.schedule, &lower::Options { pipeline: k, ..fused_lowering.options }, true).unwrap();
    assert!(interp::check(&f)[0].starts_with("in-place: deadlock with Simple"));
    // The program written is the unfused lowering judged, byte for byte.
    let written =
        lower::lower_with(&done.schedule, &lower::Options { pipeline: k, ..lowering.options }, false).unwrap();
    assert!(written == e.exported.program);
}

/// The replacement for a fused program that hangs is the fastest unfused lowering over every
/// sub-chunk depth: hypercube:3's ForestColl reduce-scatter at 1 MiB in Simple, whose fastest
/// fused program (4 sub-chunks, 13.26 us) hangs and whose unfused lowerings run in 13.04,
/// 13.37 and 14.02 us at 4, 2 and 1 (the fused ones at 2 and 1 are slower than 13.26).
#[test]
fn a_hung_fused_program_is_replaced_by_the_fastest_unfused_one() {
    let topo = from_spec("hypercube:3").unwrap();
    let bytes = 1 << 20;
    let done =
        api::synthesize(&topo, Collective::ReduceScatter, "forestcoll", &Request::default(), rat(bytes)).unwrap();
    let flat = crate::ir::orbit::flat(&done.schedule).unwrap();
    let o = lower::Options::default();
    let time = |k: usize, fused: bool| {
        let cut = crate::ir::transform::pipelined(&flat, k).unwrap();
        let o = lower::Options { fused, ..o.clone() };
        crate::cost::runtime::exported(&cut, &topo, rat(bytes), &o).unwrap().unwrap()
    };
    let (first, t) = time(4, true);
    assert!([2, 1].iter().all(|&k| time(k, true).1.time_us > t.time_us));
    let hung = lower::lower_with(&flat, &lower::Options { pipeline: 4, ..first.options }, true).unwrap();
    assert!(!interp::check(&hung).is_empty(), "the fastest fused program hangs");
    let unfused: Vec<f64> = [4, 2, 1].iter().map(|&k| time(k, false).1.time_us).collect();
    let e = api::export_msccl_at(&done.schedule, &topo, &o, true, true, bytes as u64).unwrap();
    assert_eq!(e.exported.pipeline, 4);
    assert!(e.exported.unfused_because.is_some());
    assert!((unfused[0] - 13.03841).abs() < 1e-6 && unfused[1] > unfused[0] && unfused[2] > unfused[0], "{unfused:?}");
    // Judged as written: the program's own time, not the lowering's estimate.
    let as_written = api::judge_program(&e.exported.program, &topo, bytes as u64).unwrap();
    assert_eq!(e.judged.unwrap().time_us, as_written.time_us);
}
