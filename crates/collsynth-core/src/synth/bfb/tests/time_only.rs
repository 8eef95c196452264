//! `--time-only` against the full path: on every case below the plan-only costs equal the
//! emitted schedule's `latency_bandwidth_costs`, `alpha_beta` terms (bit for bit), `steps` and
//! `provenance.details`, for the three collectives, with and without `chunks` / `hetero`.

use crate::api;
use crate::cost::{alpha_beta, latency_bandwidth_costs};
use crate::ir::Collective;
use crate::rational::Rat;
use crate::synth::bfb::time_only::{time_only, TimeOnly};
use crate::synth::Request;
use crate::zoo::from_spec;

const THREE: [Collective; 3] = [Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce];

fn request(options: &[(&str, &str)]) -> Request {
    Request { options: options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), ..Request::default() }
}

/// Time-only and the verified full path at `size`, asserting they agree; returns time-only.
fn agree(spec: &str, c: Collective, options: &[(&str, &str)], size: Rat) -> TimeOnly {
    let topo = from_spec(spec).unwrap();
    let req = request(options);
    // `api::synthesize` plans for the bytes nccl-tests moves (api::moved_size): so does the time.
    let size = api::moved_size(c, topo.n_ranks(), size).moved;
    let quick = time_only(&topo, c, &req, size).unwrap();
    let full = api::synthesize(&topo, c, "bfb", &req, size).unwrap().schedule;
    // A compact allgather is costed on its quotient, as `api::evaluate` does.
    let (full, _) = api::cost_view(&full, &topo, size).unwrap();
    let ab = alpha_beta(&full, &topo, size, 1).unwrap();
    let what = format!("{spec} {} {options:?}", c.name());
    assert_eq!(quick.direct, latency_bandwidth_costs(&full, &topo), "{what}");
    assert_eq!(quick.steps, full.steps(), "{what}");
    assert_eq!(quick.n_ranks, full.n_ranks, "{what}");
    assert_eq!(quick.latency_us.to_bits(), ab.latency_us.to_bits(), "{what}");
    assert_eq!(quick.bandwidth_us.to_bits(), ab.bandwidth_us.to_bits(), "{what}");
    assert_eq!(quick.alpha_beta_us().to_bits(), ab.total_us.to_bits(), "{what}");
    assert_eq!(quick.details, full.provenance.details, "{what}");
    quick
}

fn factor(t: &TimeOnly) -> (usize, Rat) {
    (t.direct.latency_steps, t.direct.bandwidth_factor)
}

#[test]
fn plain_bfb_on_symmetric_and_asymmetric_topologies() {
    let m = Rat::from_integer(1 << 30);
    for spec in ["hypercube:3", "torus:3x4", "circulant:15:1,4,5", "kautz:2:12", "dcirculant:7:1,3", "complete:2"] {
        for c in THREE {
            agree(spec, c, &[], m);
        }
    }
    // The exact values (docs/bfb.md): Π_{2,12} 3 steps, 7/6; C(15,{1,4,5}) 2 steps, 1.
    assert_eq!(factor(&agree("kautz:2:12", Collective::ReduceScatter, &[], m)), (3, Rat::new(7, 6)));
    assert_eq!(factor(&agree("circulant:15:1,4,5", Collective::Allreduce, &[], m)), (4, Rat::from_integer(2)));
}

#[test]
fn heterogeneous_links_and_odd_sizes() {
    // Bandwidths and latencies per dimension; a size that is no multiple of N.
    let m = Rat::from_integer(1_000_003);
    for c in THREE {
        agree("mesh:3x4,bw=50/100,lat=0.5/2", c, &[], m);
        agree("torus:3x3x2,bw=100/100/25", c, &[], m);
    }
}

#[test]
fn with_chunks_and_with_latencies() {
    let m = Rat::from_integer(12 << 20);
    for c in THREE {
        for p in ["1", "3", "7"] {
            agree("circulant:15:1,4,5", c, &[("chunks", p)], m);
            agree("kautz:2:12", c, &[("chunks", p)], m);
        }
        agree("mesh:3x4,bw=50/100,lat=0.5/2", c, &[("hetero", "1")], m);
        agree("dcirculant:7:1,3,lat=3", c, &[("hetero", "yes")], m);
    }
    // C(15, {1, 4, 5}) with P = 1: tau 6/5 (docs/bfb.md).
    let t = agree("circulant:15:1,4,5", Collective::Allgather, &[("chunks", "1")], m);
    assert_eq!(t.direct.bandwidth_factor, Rat::new(6, 5));
}

#[test]
fn mapped_expansions_only_in_their_plain_collectives() {
    let m = Rat::from_integer(1 << 20);
    // Reduce-scatter and allreduce of an expansion are plain BFB: time-only applies.
    agree("line(bipartite:2,2)", Collective::ReduceScatter, &[], m);
    agree("degree*2(ring:4)", Collective::Allreduce, &[], m);
    // The mapped allgather has no plan.
    let topo = from_spec("line(bipartite:2,2)").unwrap();
    let e = time_only(&topo, Collective::Allgather, &Request::default(), m).unwrap_err();
    assert!(e.to_string().contains("mapped from its base"), "{e}");
}

#[test]
fn bad_options_are_bad_input() {
    let topo = from_spec("hypercube:3").unwrap();
    let m = Rat::from_integer(1 << 20);
    let bad = |options: &[(&str, &str)], c: Collective| time_only(&topo, c, &request(options), m).unwrap_err();
    assert!(bad(&[("chunks", "2"), ("hetero", "1")], Collective::Allgather).to_string().contains("cannot be combined"));
    assert!(bad(&[("chunks", "0")], Collective::Allgather).to_string().contains("--chunks"));
    assert!(bad(&[], Collective::Broadcast).to_string().contains("does not support"));
}
