use super::*;
use crate::zoo::from_spec;

/// The oracle: every variant simulated at `bytes`, the fastest (ties: the first) and its time.
fn fastest(variants: &[Variant], topo: &Topology, bytes: u64) -> Result<(usize, f64)> {
    let mut best = (0, f64::INFINITY);
    for (i, v) in variants.iter().enumerate() {
        let t = time_of(v, topo, bytes)?;
        if t < best.1 {
            best = (i, t);
        }
    }
    Ok(best)
}

#[test]
fn powers_include_both_ends() {
    assert_eq!(powers(1024, 4096, 2), [1024, 2048, 4096]);
    assert_eq!(powers(1000, 5000, 4), [1000, 1024, 4096, 5000]);
    assert_eq!(powers(7, 7, 2), [7]);
    assert_eq!(powers(1, u64::MAX, 4).len(), 33);
}

/// Brute force over every byte count: each size's window holds a variant within the
/// tolerance of the fastest there, and the windows tile the range.
#[test]
fn windows_match_the_fastest_variant_at_every_size() {
    for (spec, c) in [("ring:4", Collective::Allreduce), ("switch:4", Collective::Allgather)] {
        let topo = from_spec(spec).unwrap();
        let vs = variants(&topo, c, "auto", &Request::default(), 1, 3000).unwrap();
        assert!(vs.len() >= 3, "{spec}: {}", vs.len());
        let ws = windows(&vs, &topo, 1, 3000).unwrap();
        assert_eq!(ws[0].min_bytes, 1);
        assert_eq!(ws.last().unwrap().max_bytes, 3000);
        for pair in ws.windows(2) {
            assert_eq!(pair[0].max_bytes + 1, pair[1].min_bytes, "{spec}: windows tile the range");
            assert_ne!(pair[0].variant, pair[1].variant);
        }
        for w in &ws {
            for b in w.min_bytes..=w.max_bytes {
                let mine = time_of(&vs[w.variant], &topo, b).unwrap();
                let best = fastest(&vs, &topo, b).unwrap().1;
                assert!(
                    (1.0 - TOLERANCE) * mine <= best * (1.0 + 1e-12),
                    "{spec} at {b} B: {} takes {mine}, best {best}",
                    vs[w.variant].label
                );
            }
        }
    }
}

#[test]
fn bad_ranges_and_options_are_bad_input() {
    let topo = from_spec("ring:4").unwrap();
    let o = crate::msccl::lower::Options::default();
    let err = |r: (u64, u64), req: &Request| {
        export_windows(&topo, Collective::Allgather, "auto", req, r, &o, None).err().expect("refused").to_string()
    };
    assert!(err((0, 10), &Request::default()).contains("1 <= MIN <= MAX"));
    assert!(err((10, 5), &Request::default()).contains("1 <= MIN <= MAX"));
    let mut req = Request::default();
    req.options.insert("ranks".into(), "0-1".into());
    assert!(err((1, 10), &req).contains("--ranks"));
}

/// dgx-a100:2 allgather from 1 KiB to 4 GiB: several windows, each file's minBytes /
/// maxBytes its window's, each file the variant chosen (exported exactly, verified by the
/// exporter), and the old runtime's limit of four algorithms enforced.
#[test]
fn dgx_allgather_exports_one_file_per_window() {
    let topo = from_spec("dgx-a100:2").unwrap();
    let o = crate::msccl::lower::Options::default();
    let (lo, hi) = (1 << 10, 1 << 32);
    let out = export_windows(&topo, Collective::Allgather, "auto", &Request::default(), (lo, hi), &o, None).unwrap();
    assert!(out.len() >= 2, "one variant is not the fastest from 1 KiB to 4 GiB: {}", out.len());
    assert_eq!(out[0].window.min_bytes, lo);
    assert_eq!(out.last().unwrap().window.max_bytes, hi);
    let mut protocols = std::collections::BTreeSet::new();
    for w in &out {
        let p = &w.export.exported.program;
        assert_eq!((p.min_bytes, p.max_bytes), (w.window.min_bytes, w.window.max_bytes), "{}", w.label);
        assert!(w.export.exported.xml.contains(&format!("minBytes=\"{}\"", w.window.min_bytes)));
        protocols.insert(p.proto.name());
    }
    // each file in the protocol the model assumed for its window: LL at 1 KiB, another one
    // (LL128 or Simple) for the large windows
    for w in &out {
        let v = Variant { schedule: w.export.schedule.clone(), pipeline: w.pipeline, label: w.label.clone() };
        assert_eq!(w.export.exported.program.proto, window_protocol(&v, &topo, &w.window).unwrap(), "{}", w.label);
    }
    assert_eq!(out[0].export.exported.program.proto.name(), "LL");
    assert!(protocols.len() >= 2, "{protocols:?}");
}

/// ForestColl is tried as asked, in each of its forms the user did not set (the shallow
/// shape), and each of those shrunk; a set option is never overridden.
#[test]
fn requests_cover_forms_and_their_shrunk_forms() {
    let suffixes = |req: &Request| requests("forestcoll", req).into_iter().map(|(_, s)| s).collect::<Vec<_>>();
    assert_eq!(
        suffixes(&Request::default()),
        [
            "",
            " --tree-shape shallow",
            " --tree-shape shallow-all",
            " --tree-shape boxes",
            " --tree-shape boxes-staggered",
            " --tree-shape boxes-weighted",
            " --tree-shape boxes-direct",
            " --max-trees 1",
            " --tree-shape shallow --max-trees 1",
            " --tree-shape shallow-all --max-trees 1",
            " --tree-shape boxes --max-trees 1",
            " --tree-shape boxes-staggered --max-trees 1",
            " --tree-shape boxes-weighted --max-trees 1",
            " --tree-shape boxes-direct --max-trees 1"
        ]
    );
    let mut req = Request::default();
    req.options.insert("tree-shape".into(), "budget".into());
    assert_eq!(suffixes(&req), ["", " --max-trees 1"]);
    req.options.insert("max-trees".into(), "2".into());
    assert_eq!(suffixes(&req), [""]);
    assert_eq!(suffixes(&Request::default()).len(), 14);
    assert_eq!(requests("ring", &Request::default()).len(), 1);
}

/// Merging for the old runtime: at most `max` windows, still tiling the range on the old
/// edges, each served by the variant with the least slowdown on its union (checked against
/// every variant), and no merge when there are few enough windows.
#[test]
fn merged_windows_tile_the_range_with_the_least_slowdown() {
    let topo = from_spec("dgx-a100:2").unwrap();
    let (lo, hi) = (1 << 10, 1 << 32);
    let vs = variants(&topo, Collective::Allgather, "auto", &Request::default(), lo, hi).unwrap();
    let ws = windows(&vs, &topo, lo, hi).unwrap();
    assert!(ws.len() > 2, "{}", ws.len());
    let edges: Vec<u64> = ws.iter().map(|w| w.min_bytes).collect();
    let same = merge_windows(ws.clone(), &vs, &topo, ws.len()).unwrap();
    assert_eq!(
        same.iter().map(|w| (w.min_bytes, w.variant)).collect::<Vec<_>>(),
        ws.iter().map(|w| (w.min_bytes, w.variant)).collect::<Vec<_>>()
    );
    let two = merge_windows(ws, &vs, &topo, 2).unwrap();
    assert_eq!(two.len(), 2);
    assert_eq!((two[0].min_bytes, two[1].max_bytes), (lo, hi));
    assert_eq!(two[0].max_bytes + 1, two[1].min_bytes);
    assert!(edges.contains(&two[1].min_bytes));
    let mut times = Times::default();
    for w in &two {
        let range = (w.min_bytes, w.max_bytes);
        for v in 0..vs.len() {
            assert!(w.slowdown <= times.slowdown(&vs, &topo, v, range).unwrap() + 1e-12, "{range:?}");
        }
        assert!(w.slowdown >= 1.0);
    }
}

/// The windows try the interleaved cuts `auto` tries: on dgx-a100:2 the reduce-scatter's
/// fastest variant at 64 MiB is `auto`'s own pick (the `shallow-all` forest interleaved at
/// depth 4), at `auto`'s time, where the plainly pipelined variants are 6 % slower.
#[test]
fn windows_try_the_interleaved_cuts_auto_tries() {
    let topo = from_spec("dgx-a100:2").unwrap();
    let (c, bytes) = (Collective::ReduceScatter, 64u64 << 20);
    let size = Rat::from_integer(bytes as i128);
    let vs = variants(&topo, c, "auto", &Request::default(), bytes, bytes).unwrap();
    let (i, t) = fastest(&vs, &topo, bytes).unwrap();
    assert_eq!(vs[i].label, "forestcoll --tree-shape shallow-all (interleaved 4)");
    let auto = synthesize(&topo, c, "auto", &Request::default(), size).unwrap().schedule;
    assert_eq!(auto.provenance.details.get("auto_pipeline_order").and_then(|v| v.as_str()), Some("interleaved"));
    let auto_us = time_us(Model::Runtime, &auto, &topo, size, 1).unwrap();
    assert!((t - auto_us).abs() < 1e-6 && (t - 315.9).abs() < 0.05, "{t} {auto_us}");
    let plain: Vec<Variant> = vs.into_iter().filter(|v| !v.label.contains("interleaved")).collect();
    let (_, plain_us) = fastest(&plain, &topo, bytes).unwrap();
    assert!(plain_us > 1.06 * t, "{plain_us}");
}

const HI: u64 = 1 << 20;

/// The export chooses again after it drops or replaces a variant, with the times it already
/// has: the windows are the ones a fresh choice over the new list gives (a time kept under a
/// stale index would pick another variant or report another time).
#[test]
fn times_kept_across_choices_follow_the_variants() {
    let topo = from_spec("ring:4").unwrap();
    let mut vs = variants(&topo, Collective::Allreduce, "auto", &Request::default(), 1, HI).unwrap();
    let mut times = Times::default();
    let first = windows_timed(&vs, &topo, 1, HI, &mut times).unwrap();
    assert!(first.len() >= 2, "{first:?}");
    // drop the first window's variant, as the export does with one the runtime refuses
    let gone = first[0].variant;
    vs.remove(gone);
    times.removed(gone);
    assert_eq!(windows_timed(&vs, &topo, 1, HI, &mut times).unwrap(), windows(&vs, &topo, 1, HI).unwrap());
    // replace the (new) first window's variant with another program, as a shrunk export does
    let w = windows(&vs, &topo, 1, HI).unwrap();
    let (v, other) = (w[0].variant, (w[0].variant + 1) % vs.len());
    vs[v] = vs[other].clone();
    times.replaced(v);
    assert_eq!(windows_timed(&vs, &topo, 1, HI, &mut times).unwrap(), windows(&vs, &topo, 1, HI).unwrap());
    // and with the bookkeeping skipped, the kept times mislead the choice
    let mut vs = variants(&topo, Collective::Allreduce, "auto", &Request::default(), 1, HI).unwrap();
    let mut stale = Times::default();
    windows_timed(&vs, &topo, 1, HI, &mut stale).unwrap();
    vs.remove(gone);
    assert_ne!(windows_timed(&vs, &topo, 1, HI, &mut stale).unwrap(), windows(&vs, &topo, 1, HI).unwrap());
}
