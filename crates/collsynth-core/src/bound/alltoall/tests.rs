use super::*;
use crate::zoo::from_spec;

fn rate(spec: &str) -> AllToAll {
    alltoall(&from_spec(spec).unwrap()).unwrap()
}

#[test]
fn complete_graph_sends_directly() {
    // Every pair has its own link: the rate is the link bandwidth.
    let a = rate("complete:5,bw=10");
    assert!(a.exact && (a.rate_gbps - 10.0).abs() < 1e-6, "{a:?}");
}

#[test]
fn unidirectional_ring_pays_the_bandwidth_tax() {
    // ring:4, bw 1: 4 links over sum of distances 4 * (1 + 2 + 3) = 24: f = 1/6, which the
    // LP reaches (every route is the unique shortest one).
    let a = rate("ring:4,bw=1");
    assert!(a.exact && (a.rate_gbps - 1.0 / 6.0).abs() < 1e-6, "{a:?}");
    assert!((bandwidth_tax(&from_spec("ring:4,bw=1").unwrap()) - 1.0 / 6.0).abs() < 1e-12);
}

#[test]
fn switch_is_limited_by_each_rank_s_uplink() {
    // switch:4 with 10 GB/s links: a rank sends 3 commodities through one uplink: f = 10/3.
    let a = rate("switch:4,bw=10");
    assert!(a.exact && (a.rate_gbps - 10.0 / 3.0).abs() < 1e-6, "{a:?}");
}

#[test]
fn large_graphs_use_the_estimate() {
    // torus:16x16: 256 ranks x 1024 links is above the LP limit.
    let a = rate("torus:16x16,bw=1");
    assert!(!a.exact);
    // 1024 links / (256 * average distance sum 256 * 8 = 2048 hops per source) = 1/512.
    assert!((a.rate_gbps - 1024.0 / (256.0 * 2048.0)).abs() < 1e-12, "{a:?}");
}
