//! Appendix A.6's split schedule on `bi(G)`: verified, its measured (T_L, tau) exactly G's
//! on 2-cycle-free bases (dcirculants, a line graph, Kautz graphs), reduce-scatter and
//! allreduce by reversal / composition, the `auto` choice against BFB on the union, and the
//! options' errors.

use crate::api;
use crate::cost::latency_bandwidth_costs;
use crate::ir::{Collective, Schedule};
use crate::rational::Rat;
use crate::synth::Request;
use crate::zoo::from_spec;

fn r(p: i128, q: i128) -> Rat {
    Rat::new(p, q)
}

fn request(options: &[(&str, &str)]) -> Request {
    Request { options: options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), ..Request::default() }
}

/// The verified schedule (api::synthesize verifies) of bfb with `options`.
fn synth(spec: &str, c: Collective, options: &[(&str, &str)]) -> Schedule {
    let topo = from_spec(spec).unwrap();
    api::synthesize(&topo, c, "bfb", &request(options), Rat::from_integer(1 << 20)).unwrap().schedule
}

/// Measured (T_L, tau) of a schedule on its topology.
fn measured(spec: &str, s: &Schedule) -> (usize, Rat) {
    let c = latency_bandwidth_costs(s, &from_spec(spec).unwrap());
    (c.latency_steps, c.bandwidth_factor)
}

/// A detail's JSON text as a value, so that the comparison ignores spacing.
fn json(text: Option<String>) -> Option<serde_json::Value> {
    text.map(|t| serde_json::from_str(&t).expect("JSON text"))
}

fn detail(s: &Schedule, key: &str) -> Option<String> {
    s.provenance.details.text(key)
}

/// Split on bi(base): the three collectives measure G's allgather values (twice for
/// allreduce) exactly.
fn split_keeps_g(base: &str) -> (usize, Rat) {
    let g = synth(base, Collective::Allgather, &[]);
    let want = measured(base, &g);
    let bi = format!("bi({base})");
    let split = [("bi-method", "split")];
    let ag = synth(&bi, Collective::Allgather, &split);
    assert_eq!(measured(&bi, &ag), want, "{bi} allgather");
    assert_eq!(detail(&ag, "bi_method").as_deref(), Some("\"split\""));
    assert_eq!(measured(&bi, &synth(&bi, Collective::ReduceScatter, &split)), want, "{bi} reduce-scatter");
    let ar = synth(&bi, Collective::Allreduce, &split);
    assert_eq!(measured(&bi, &ar), (2 * want.0, want.1 * 2), "{bi} allreduce");
    want
}

#[test]
fn the_split_keeps_g_latency_and_bandwidth() {
    assert_eq!(split_keeps_g("dcirculant:6:1,2,3,4"), (2, r(5, 6)));
    assert_eq!(split_keeps_g("dcirculant:16:6,7"), (5, r(15, 16)));
    assert_eq!(split_keeps_g("ring:5"), (4, r(4, 5)));
    // A line graph (its mapped schedule, Def 1) and Kautz graphs (isomorphism by search).
    assert_eq!(split_keeps_g("line(dcirculant:6:1,2)"), (4, r(1, 1)));
    assert_eq!(split_keeps_g("kautz:2:12"), (3, r(7, 6)));
    assert_eq!(split_keeps_g("kautz:3:36"), (3, r(13, 12)));
}

#[test]
fn auto_keeps_the_split_where_the_union_loses_tau() {
    // docs/find.md: BFB on bi(dcirculant:6:1,2,3,4) gets T_L 1, tau 4/3; G gets 2, 5/6.
    let spec = "bi(dcirculant:6:1,2,3,4)";
    let s = synth(spec, Collective::Allgather, &[]);
    assert_eq!(measured(spec, &s), (2, r(5, 6)));
    assert_eq!(detail(&s, "bi_method").as_deref(), Some("\"split\""));
    assert_eq!(
        json(detail(&s, "bi_candidates")),
        json(Some("{\"split\": [2, \"5/6\"], \"union\": [1, \"4/3\"]}".into()))
    );
    assert_eq!(detail(&s, "tau").as_deref(), Some("\"5/6\""));
    assert_eq!(detail(&s, "bi_isomorphism").as_deref(), Some("\"structural\""));
    let u = synth(spec, Collective::Allgather, &[("bi-method", "union")]);
    assert_eq!(measured(spec, &u), (1, r(4, 3)));
    assert_eq!(detail(&u, "bi_method").as_deref(), Some("\"union\""));
    // Allreduce follows the choice: 4 steps, 5/3.
    assert_eq!(measured(spec, &synth(spec, Collective::Allreduce, &[])), (4, r(5, 3)));
    let line = "bi(line(dcirculant:6:1,2))";
    let s = synth(line, Collective::Allgather, &[]);
    assert_eq!((measured(line, &s), detail(&s, "bi_method").unwrap()), ((4, r(1, 1)), "\"split\"".into()));
    let construction = detail(&s, "construction").unwrap();
    assert!(construction.contains("A.6 split of line-graph mapping"), "{construction}");
}

#[test]
fn auto_keeps_the_union_where_it_is_as_good() {
    // bi(ring:5) is biring:5: BFB 2 steps at the same tau 4/5 beat the split's 4 steps.
    let s = synth("bi(ring:5)", Collective::Allgather, &[]);
    assert_eq!(measured("bi(ring:5)", &s), (2, r(4, 5)));
    assert_eq!(detail(&s, "bi_method").as_deref(), Some("\"union\""));
    assert_eq!(
        json(detail(&s, "bi_candidates")),
        json(Some("{\"split\": [4, \"4/5\"], \"union\": [2, \"4/5\"]}".into()))
    );
    // Without an isomorphism (the zoo's Diamond is not reverse-symmetric) auto is the union.
    let s = synth("bi(diamond)", Collective::Allgather, &[]);
    assert_eq!(detail(&s, "bi_method").as_deref(), Some("\"union\""));
    assert!(detail(&s, "bi_split").unwrap().contains("no isomorphism to the transpose found"));
}

#[test]
fn merged_two_cycles_never_cost_more() {
    // L(K_{2,2}) has 2-cycles (u>v) <-> (v>u): the union merges them into one link of
    // double bandwidth carrying half of each direction's data, so the split is no slower.
    let (g, bi) = ("line(bipartite:2,2)", "bi(line(bipartite:2,2))");
    let want = measured(g, &synth(g, Collective::Allgather, &[]));
    let got = measured(bi, &synth(bi, Collective::Allgather, &[("bi-method", "split")]));
    assert_eq!(got.0, want.0);
    assert!(got.1 <= want.1, "{got:?} vs {want:?}");
}

#[test]
fn option_errors() {
    let topo = |spec: &str| from_spec(spec).unwrap();
    let err = |spec: &str, options: &[(&str, &str)]| match api::synthesize(
        &topo(spec),
        Collective::Allgather,
        "bfb",
        &request(options),
        Rat::from_integer(1 << 20),
    ) {
        Ok(_) => panic!("{spec} {options:?} should fail"),
        Err(e) => e.to_string(),
    };
    assert!(err("dcirculant:6:1,2", &[("bi-method", "split")]).contains("applies to bi(G) topologies"));
    assert!(err("bi(ring:5)", &[("bi-method", "half")]).contains("not one of auto, split, union"));
    assert!(err("bi(diamond)", &[("bi-method", "split")]).contains("no isomorphism to the transpose found"));
    assert!(err("bi(ring:5)", &[("bi-method", "split"), ("chunks", "2")]).contains("cannot be combined"));
    // With chunks, auto is the union (the split is made of G's exact schedule).
    let s = synth("bi(dcirculant:6:1,2,3,4)", Collective::Allgather, &[("chunks", "2")]);
    assert_eq!(detail(&s, "bi_method").as_deref(), Some("\"union\""));
}

#[test]
fn time_only_takes_the_union_only() {
    use crate::synth::bfb::time_only::time_only;
    let spec = "bi(dcirculant:6:1,2,3,4)";
    let m = Rat::from_integer(1 << 20);
    let e = time_only(&from_spec(spec).unwrap(), Collective::Allgather, &Request::default(), m).unwrap_err();
    assert!(e.to_string().contains("add --bi-method union"), "{e}");
    let union = request(&[("bi-method", "union")]);
    for c in [Collective::Allgather, Collective::Allreduce] {
        let t = time_only(&from_spec(spec).unwrap(), c, &union, m).unwrap();
        let full = synth(spec, c, &[("bi-method", "union")]);
        assert_eq!(t.direct, latency_bandwidth_costs(&full, &from_spec(spec).unwrap()));
        assert_eq!(t.details, full.provenance.details);
    }
}
