use super::*;

fn ring_allgather() -> (Schedule, Topology) {
    let topo = crate::zoo::from_spec("ring:4").unwrap();
    let s = crate::synth::run(&topo, Collective::Allgather, "ring", &Default::default()).unwrap();
    (s, topo)
}

#[test]
fn a_step_beyond_the_transfers_is_refused_before_any_table_is_sized() {
    let (s, topo) = ring_allgather();
    let text = write(&s, &topo);
    let n = s.transfers.len();
    let last = format!("\"step\": {}", s.steps() - 1);
    for (step, ok) in [(n, true), (n + 1, false), (1_000_000_000_000, false)] {
        let edited = text.replacen(&last, &format!("\"step\": {step}"), 1);
        match read(&edited) {
            Ok(_) => assert!(ok, "{step} accepted"),
            Err(e) => {
                assert!(!ok, "{step}: {e}");
                assert!(
                    e.to_string().contains("is beyond the number of transfers") || e.to_string().contains("too large"),
                    "{e}"
                );
            }
        }
    }
}

#[test]
fn timings_are_reported_but_never_written() {
    let (mut s, topo) = ring_allgather();
    let plain = write(&s, &topo);
    s.provenance.details.set("stage_seconds", serde_json::json!({"packing": 0.25}));
    assert_eq!(write(&s, &topo), plain);
    s.provenance.details.set("k", 3);
    let text = write(&s, &topo);
    assert!(!text.contains("stage_seconds") && text.contains("\"k\":3"), "{text}");
}

fn compact_allgather(spec: &str) -> (Schedule, Topology) {
    let topo = crate::zoo::from_spec(spec).unwrap();
    let s = crate::synth::run(&topo, Collective::Allgather, "forestcoll", &Default::default()).unwrap();
    assert!(s.is_compact());
    (s, topo)
}

#[test]
fn a_compact_schedule_round_trips_as_format_2_and_a_flat_one_stays_format_1() {
    let (s, topo) = compact_allgather("torus:4x4");
    let text = write(&s, &topo);
    assert!(text.contains(&format!("\"format\": \"{FORMAT_2}\"")));
    assert!(text.contains("\"symmetry\": {"));
    let (back, t2, _) = read(&text).unwrap();
    assert_eq!((&back.transfers, &back.pieces, &back.symmetry), (&s.transfers, &s.pieces, &s.symmetry));
    assert_eq!(write(&back, &t2), text, "same bytes again");
    let flat = crate::ir::orbit::expand(&s).unwrap();
    let flat_text = write(&flat, &topo);
    assert!(flat_text.contains(&format!("\"format\": \"{FORMAT}\"")));
    assert!(!flat_text.contains("\"symmetry\": {"));
    assert!(text.len() * 2 < flat_text.len(), "{} vs {}: one transfer in 16 is written", text.len(), flat_text.len());
    // A /2 file may hold a flat schedule.
    let (as2, _, _) = read(&flat_text.replacen(FORMAT, FORMAT_2, 1)).unwrap();
    assert_eq!((as2.transfers, as2.symmetry), (flat.transfers, None));
}

#[test]
fn a_bad_symmetry_is_refused_in_one_line() {
    let (s, topo) = compact_allgather("torus:4x4");
    let text = write(&s, &topo);
    let cases = [
        (text.replacen(FORMAT_2, FORMAT, 1), "only a collsynth-schedule/2"),
        (text.replacen("\"generators\":[[", "\"generators\":[[99999,", 1), "permute"),
        (text.replacen("\"order\":16", "\"order\":15", 1), "order"),
        (text.replacen("\"generators\":[", "\"generators\":\"x\",\"was\":[", 1), "expected a list"),
    ];
    for (bad, why) in cases {
        assert_ne!(bad, text);
        let e = read(&bad).unwrap_err().to_string();
        assert!(e.contains(why) && !e.contains('\n'), "{e}");
    }
}

/// The writer streams: fed to a counting sink it makes many small writes (none larger than the
/// header), and the bytes are those of the text writer before streaming (hashes
/// written down from it).
#[test]
fn the_schedule_writer_streams_the_same_bytes() {
    use crate::testing::{fnv1a, CountingWriter};
    let cases = [
        ("torus:3x3", Collective::Allgather, "forestcoll"),
        ("rfs:2,2,4", Collective::Allreduce, "tacos"),
        ("dgx-a100:2", Collective::Allreduce, "nccl-ring"),
        ("hypercube:3", Collective::Allgather, "bfb"),
    ];
    let mut got = Vec::new();
    for (spec, c, alg) in cases {
        let topo = crate::zoo::from_spec(spec).unwrap();
        let s = match alg {
            // BFB's flat plan of every rank, as pinned (see `synth::bfb::tests::compact`).
            "bfb" => crate::synth::bfb::allgather(&topo).unwrap(),
            _ => crate::synth::run(&topo, c, alg, &Default::default()).unwrap(),
        };
        // The hashes were taken from flat schedules; forestcoll's allgather is compact now.
        let s = crate::ir::orbit::expand(&s).unwrap();
        let text = write(&s, &topo);
        let mut sink = CountingWriter::new();
        write_to(&s, &topo, &mut sink).unwrap();
        assert_eq!((sink.total, sink.hash), (text.len(), fnv1a(&text)));
        // No write larger than the header (topology and provenance, which grow with the
        // topology): pieces and transfers go out one by one.
        let header = text.find("\"pieces\"").unwrap();
        assert!(sink.writes > s.transfers.len(), "{spec}: {} writes", sink.writes);
        assert!(sink.largest <= header, "{spec}: one write of {} bytes", sink.largest);
        got.push((text.len(), fnv1a(&text)));
    }
    // (bytes, FNV-1a 64) of the text as written before the writer streamed;
    // the torus:3x3 row re-pinned when ForestColl's allgather became per orbit (orbit-major order).
    assert_eq!(
        got,
        vec![
            (9758, 0x1350ac5f2c63173e),
            (57338, 0x1a18_67ad_9825_a11f),
            (856968, 0xdd16_23d3_e317_59ac),
            (18309, 0xe51a_ca41_6a19_b40a),
        ]
    );
}
