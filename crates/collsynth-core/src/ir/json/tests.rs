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
