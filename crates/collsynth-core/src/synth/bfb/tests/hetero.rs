//! Tests of latency-aware BFB (LP (14)): equal latencies reproduce the bandwidth-weighted
//! split with time alpha + load (M/N)/B; a huge-latency in-link is avoided and dropped; two
//! used links equalise their finish times exactly. Every schedule passes `verify`.

use super::*;
use crate::rational::to_fraction_string;
use crate::synth::{self, Request};
use crate::topology::TopologyBuilder;
use crate::verify::verify;
use crate::zoo::from_spec;

fn r(p: i128, q: i128) -> Rat {
    Rat::new(p, q)
}

fn detail(s: &Schedule, key: &str) -> String {
    s.provenance.details.text(key).unwrap_or_else(|| panic!("no detail {key}"))
}

/// v1, v2 -> {a, b} -> u -> {v1, v2}: u's step 2 gets two shards through a -> u and b -> u.
/// Ranks v1 = 0, v2 = 1, a = 2, b = 3, u = 4; the other links have latency 1 and bandwidth 1.
fn two_links(alpha_a: f64, bw_a: Rat, alpha_b: f64, bw_b: Rat) -> Topology {
    let mut b = TopologyBuilder::new("two-links");
    let id: Vec<usize> = ["v1", "v2", "a", "b", "u"].iter().map(|n| b.compute(*n, None)).collect();
    let [v1, v2, a, bb, u] = id[..] else { unreachable!() };
    let one = Rat::from_integer(1);
    for (x, y) in [(v1, a), (v1, bb), (v2, a), (v2, bb), (u, v1), (u, v2)] {
        b.link(x, y, one, 1.0);
    }
    b.link(a, u, bw_a, alpha_a);
    b.link(bb, u, bw_b, alpha_b);
    b.build().unwrap()
}

fn link(t: &Topology, src: usize, dst: usize) -> u32 {
    t.links.iter().position(|l| l.src == src && l.dst == dst).unwrap() as u32
}

/// N = 5 and M = 5000 bytes: a shard over 1 GB/s takes exactly 1 us.
const M5: i128 = 5000;

fn verified(t: &Topology, m: Rat) -> (BfbPlan, Schedule) {
    let p = crate::synth::bfb::hetero::plan(t, m).unwrap();
    let s = crate::synth::bfb::hetero::allgather(t, m).unwrap();
    verify(&s, t).unwrap_or_else(|v| panic!("{}: {v}", t.name));
    assert_eq!(detail(&s, "hetero"), "true");
    assert_eq!(detail(&s, "hetero_time_us_exact"), format!("\"{}\"", to_fraction_string(&p.time_sum())));
    (p, s)
}

#[test]
fn equal_latencies_match_plain_bfb() {
    let t = from_spec("torus:4x4").unwrap();
    let alpha = crate::synth::bfb::hetero::latency_rat(t.links[0].latency).unwrap();
    assert!(t.links.iter().all(|l| crate::synth::bfb::hetero::latency_rat(l.latency).unwrap() == alpha));
    let m = Rat::from_integer(1 << 30);
    let plain = plan(&t).unwrap();
    let (h, _) = verified(&t, m);
    let shard_us = m / Rat::from_integer(16 * 1000);
    for u in 0..16 {
        for step in 1..=plain.steps() {
            // The latency-aware split is a bandwidth-optimal one: same busiest link.
            assert_eq!(h.optimum(u, step), plain.optimum(u, step), "({u}, {step})");
            assert_eq!(h.time(u, step), alpha + plain.optimum(u, step) * shard_us, "({u}, {step})");
        }
    }
    assert_eq!(h.tau(), plain.tau());
    let steps = Rat::from_integer(plain.steps() as i128);
    assert_eq!(h.time_sum(), alpha * steps + plain.load_sum() * shard_us);
    assert!(h.dropped().is_empty());
}

#[test]
fn huge_latency_link_is_avoided_and_dropped() {
    let one = Rat::from_integer(1);
    let t = two_links(1.0, one, 1000.0, one);
    let (p, s) = verified(&t, Rat::from_integer(M5));
    // Step 2 of u: both shards over a -> u: U = alpha_a + (M/N)/B_a * 2 = 1 + 2.
    assert_eq!(p.time(4, 2), r(3, 1));
    let slow = link(&t, 3, 4);
    assert!(p.dropped().contains(&(4, 2, slow)));
    assert!(!s.transfers.iter().any(|x| x.step == Some(1) && x.route == [slow as usize]));
    // Step 1 must use b -> u (b's own shard): U = 1000 + 1, and that is the step's time.
    assert_eq!(p.time(4, 1), r(1001, 1));
    assert_eq!(p.step_time(1), r(1001, 1));
    // Without the latency term the two links share step 2 evenly.
    assert_eq!(plan(&t).unwrap().optimum(4, 2), one);
}

#[test]
fn two_used_links_finish_together() {
    // alpha_a = 1, B_a = 1; alpha_b = 2, B_b = 2; 2 shards of 1 us per GB/s:
    // 1 + x = 2 + (2 - x) / 2  =>  x = 4/3, U = 7/3 (both links carry traffic).
    let t = two_links(1.0, Rat::from_integer(1), 2.0, Rat::from_integer(2));
    let (p, s) = verified(&t, Rat::from_integer(M5));
    assert_eq!(p.time(4, 2), r(7, 3));
    let x: Rat = s
        .transfers
        .iter()
        .filter(|x| x.step == Some(1) && x.route == [link(&t, 2, 4) as usize])
        .map(|x| s.piece_fraction(x.piece) * Rat::from_integer(5))
        .sum();
    assert_eq!(x, r(4, 3));
    assert!(!p.dropped().iter().any(|&(u, step, _)| (u, step) == (4, 2)));
    // Non-decimal-friendly latency: 0.1 is 1/10 exactly.
    assert_eq!(crate::synth::bfb::hetero::latency_rat(0.1).unwrap(), r(1, 10));
}

#[test]
fn option_plumbing() {
    let t = from_spec("torus:3x3").unwrap();
    let req = |v: &str| Request {
        options: [("hetero".to_string(), v.to_string())].into_iter().collect(),
        size: Some(Rat::from_integer(9000)),
        ..Default::default()
    };
    for c in [Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce] {
        let s = synth::run(&t, c, "bfb", &req("true")).unwrap();
        verify(&s, &t).unwrap();
        assert_eq!(detail(&s, "hetero"), "true");
        let off = synth::run(&t, c, "bfb", &req("0")).unwrap();
        assert!(!off.provenance.details.iter().any(|(k, _)| k == "hetero"));
    }
    assert!(synth::run(&t, Collective::Allgather, "bfb", &req("maybe")).is_err());
    let e = from_spec("line(ring:4)").unwrap();
    assert!(synth::run(&e, Collective::Allgather, "bfb", &req("1")).is_err());
}
