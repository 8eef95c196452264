use super::*;
use crate::api;
use crate::rational::rat;
use crate::synth::Request;
use crate::zoo::from_spec;

fn costs(spec: &str, c: Collective, alg: &str) -> LatencyBandwidthCosts {
    let topo = from_spec(spec).unwrap();
    let done = api::synthesize(&topo, c, alg, &Request::default(), rat(1 << 20)).unwrap();
    latency_bandwidth_costs(&done.schedule, &done.topology)
}

#[test]
fn ring_allgather_and_allreduce_on_a_unidirectional_ring() {
    // N-1 steps of one hop; every link carries M/N per step: T_B = (N-1)/N * M/B.
    let c = costs("ring:8", Collective::Allgather, "ring");
    let want = |l, f, m, o| LatencyBandwidthCosts {
        latency_steps: l,
        bandwidth_factor: f,
        moore_steps: Some(m),
        optimum_factor: o,
    };
    assert_eq!(c, want(7, Rat::new(7, 8), 7, Rat::new(7, 8)));
    let c = costs("ring:8", Collective::Allreduce, "ring");
    assert_eq!(c, want(14, Rat::new(14, 8), 14, Rat::new(14, 8)));
}

#[test]
fn direct_allgather_on_a_complete_graph_is_one_step_and_optimal() {
    // K_5: B = 4 links; each link carries M/5 in one step: (1/5) / b * 4b = 4/5.
    let c = costs("complete:5", Collective::Allgather, "direct");
    assert_eq!((c.latency_steps, c.bandwidth_factor), (1, Rat::new(4, 5)));
    assert_eq!((c.moore_steps, c.optimum_factor), (Some(1), Rat::new(4, 5)));
}

#[test]
fn switches_have_no_moore_bound() {
    let c = costs("switch:4", Collective::Allgather, "ring");
    assert_eq!((c.moore_steps, c.optimum_factor), (None, Rat::new(3, 4)));
}
