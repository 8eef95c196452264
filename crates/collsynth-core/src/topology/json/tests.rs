use super::*;

fn err(text: &str) -> String {
    match read(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

const TWO: &str = r#"{"name": "two", "nodes": [{"name": "a", "type": "compute"}, {"name": "b", "type": "compute"}],
    "links": [{"src": "a", "dst": "b", "bandwidth": "100Gbps", "latency": "500ns", "bidirectional": true}]}"#;

#[test]
fn reads_units_and_round_trips() {
    let t = read(TWO).unwrap().topology;
    assert_eq!(t.links.len(), 2);
    assert_eq!(t.links[0].bandwidth, Rat::new(25, 2));
    assert_eq!(t.links[0].latency, 0.5);
    let text = write(&t);
    assert_eq!(write(&read(&text).unwrap().topology), text);
    assert!(text.contains("\"bandwidth\": 12.5, \"latency\": 0.5, \"bidirectional\": true"));
}

#[test]
fn merges_parallel_links() {
    let t = read(
        r#"{"nodes": [{"name": "a", "type": "compute"}, {"name": "b", "type": "compute"}],
        "links": [{"src": "a", "dst": "b", "bandwidth": 1, "latency": 2, "bidirectional": true},
                  {"src": "a", "dst": "b", "bandwidth": 2, "latency": 1}]}"#,
    )
    .unwrap()
    .topology;
    let ab = &t.links[t.link_between(0, 1).unwrap()];
    assert_eq!((ab.bandwidth, ab.latency), (Rat::from_integer(3), 1.0));
    assert_eq!(t.links[t.link_between(1, 0).unwrap()].bandwidth, Rat::from_integer(1));
}

#[test]
fn warns_on_unknown_keys() {
    let text = TWO.replace("\"name\": \"two\"", "\"name\": \"two\", \"colour\": 1");
    let w = read(&text).unwrap().warnings;
    assert_eq!(w, vec!["unknown key 'colour' ignored".to_string()]);
}

#[test]
fn every_bad_input_has_its_message() {
    let n2 = r#""nodes": [{"name": "a", "type": "compute"}, {"name": "b", "type": "compute"}]"#;
    let link = |body: &str| format!(r#"{{{n2}, "links": [{body}, {{"src": "b", "dst": "a", "bandwidth": 1}}]}}"#);
    assert!(err("{\"nodes\": [").starts_with("malformed JSON at line 1"));
    assert!(err("[1]").contains("top level must be a JSON object"));
    assert!(err(r#"{"nodes": 3}"#).contains("nodes: expected a list"));
    assert!(err(r#"{"nodes": [{"name": 1, "type": "compute"}]}"#).contains("nodes[0].name: expected a string"));
    assert!(err(r#"{"nodes": [{"name": "a", "type": "gpu"}]}"#).contains("nodes[0].type"));
    assert!(err(r#"{"nodes": [{"name": "a", "type": "compute"}, {"name": "a", "type": "compute"}]}"#)
        .contains("nodes[1]: duplicate node name 'a'"));
    assert!(err(&link(r#"{"src": "a", "dst": "z", "bandwidth": 1}"#)).contains("links[0].dst: unknown node 'z'"));
    assert!(err(&link(r#"{"src": "a", "dst": "a", "bandwidth": 1}"#)).contains("links[0]: self-loop on node 'a'"));
    assert!(err(&link(r#"{"src": "a", "dst": "b", "bandwidth": 0}"#)).contains("links[0]: bandwidth must be positive"));
    assert!(err(&link(r#"{"src": "a", "dst": "b", "bandwidth": -5}"#)).contains("bandwidth must be positive"));
    assert!(err(&link(r#"{"src": "a", "dst": "b", "bandwidth": "NaN"}"#))
        .contains("links[0].bandwidth: cannot read bandwidth 'NaN'"));
    assert!(err(&link(r#"{"src": "a", "dst": "b", "bandwidth": "lots"}"#)).contains("links[0].bandwidth"));
    assert!(
        err(&link(r#"{"src": "a", "dst": "b", "bandwidth": true}"#)).contains("links[0].bandwidth: expected a number")
    );
    assert!(err(&link(r#"{"src": "a", "dst": "b", "bandwidth": 1, "latency": -1}"#))
        .contains("latency must be a finite number >= 0"));
    assert!(err(&link(r#"{"src": "a", "dst": "b", "bandwidth": 1, "latency": "NaN"}"#)).contains("links[0].latency"));
    assert!(err(&link(r#"{"src": "a", "dst": "b", "bandwidth": 1, "latency": "soon"}"#)).contains("links[0].latency"));
    assert!(err(&link(r#"{"src": "a", "dst": "b"}"#)).contains("links[0]: missing 'bandwidth'"));
    assert!(err(r#"{"nodes": [{"name": "s", "type": "switch"}], "links": []}"#).contains("no compute node"));
    assert!(err(&format!(r#"{{{n2}, "links": [{{"src": "a", "dst": "b", "bandwidth": 1}}]}}"#))
        .contains("no path from 'b' to 'a'"));
    let lone_switch = r#"{"nodes": [{"name": "a", "type": "compute"}, {"name": "b", "type": "compute"},
        {"name": "s", "type": "switch"}], "links": [{"src": "a", "dst": "b", "bandwidth": 1, "bidirectional": true}]}"#;
    assert!(err(lone_switch).contains("switch 's' has no links"));
    assert!(err(r#"{"nodes": [{"name": "a", "type": "compute"}], "links": []}"#).contains("one compute node ('a')"));
    for bad in ["2", "\"abc\"", "\"1\"", "1.5", "0", "null", "-1"] {
        let text = TWO.replace("\"name\": \"two\"", &format!("\"name\": \"two\", \"version\": {bad}"));
        assert!(err(&text).starts_with("version: "), "{bad}");
    }
    assert!(read(&TWO.replace("\"name\": \"two\"", "\"name\": \"two\", \"version\": 1")).is_ok());
    // Python's json writes large and small floats with a signed exponent: read exactly
    let py = link(r#"{"src": "a", "dst": "b", "bandwidth": 1e+2, "latency": 1e-05}"#);
    let t = read(&py).unwrap().topology;
    assert_eq!(t.links[t.link_between(0, 1).unwrap()].bandwidth, Rat::from_integer(100));
    // zero latency is fine
    assert!(read(&link(r#"{"src": "a", "dst": "b", "bandwidth": 1, "latency": 0}"#)).is_ok());
}

/// Property tests: JSON round trips of random topologies.
mod proptests {
    use super::*;
    use proptest::prelude::*;

    /// A random strongly connected topology: a ring over every node (compute and switch)
    /// plus random extra links with decimal bandwidths, some parallel.
    fn arb_topology() -> impl Strategy<Value = Topology> {
        (2usize..7, 0usize..4)
            .prop_flat_map(|(nc, ns)| {
                let n = nc + ns;
                let extra = proptest::collection::vec((0..n, 0..n, 1u32..100_000, 0u32..5, 0u32..3000), 0..20);
                let kinds = proptest::collection::vec(any::<bool>(), n);
                (Just((nc, ns)), extra, kinds)
            })
            .prop_map(|((nc, ns), extra, groups)| {
                let mut b = TopologyBuilder::new("random \"quoted\" name");
                for (i, grouped) in groups.iter().enumerate() {
                    if i < nc {
                        b.compute(format!("c{i}"), grouped.then_some("box0"));
                    } else {
                        b.switch(format!("s{}", i - nc), grouped.then_some("box1"));
                    }
                }
                let n = nc + ns;
                if n > 1 {
                    for i in 0..n {
                        b.link(i, (i + 1) % n, Rat::new(25, 2), 0.5);
                    }
                }
                for (u, v, bw, scale, lat) in extra {
                    if u != v {
                        b.link(u, v, Rat::new(bw as i128, 10i128.pow(scale)), lat as f64 / 7.0);
                    }
                }
                b.build().expect("strongly connected by construction")
            })
    }

    proptest! {
        #[test]
        fn json_round_trip_is_byte_stable(t in arb_topology()) {
            let text = write(&t);
            let back = read(&text).unwrap();
            prop_assert!(back.warnings.is_empty());
            prop_assert_eq!(&back.topology, &t);
            prop_assert_eq!(write(&back.topology), text);
        }
    }
}
