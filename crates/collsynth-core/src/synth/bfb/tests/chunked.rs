//! Tests of chunked BFB (App. E.2), exact: with P a multiple of every cut's denominator the
//! rounding changes nothing; otherwise the rounded tau lies between the LP optimum and
//! Theorem 20's bound, every schedule verifies, and every piece is a whole number of 1/P chunks.

use super::plan::quoted;
use super::step_cost;
use super::*;
use crate::ir::Schedule;
use crate::synth::{self, Request};
use crate::topology::TopologyBuilder;
use crate::verify::verify;
use crate::zoo::from_spec;
use num_integer::Integer;
use num_traits::One;

fn topo(spec: &str) -> Topology {
    from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn detail(s: &Schedule, key: &str) -> Option<String> {
    s.provenance.details.text(key)
}

/// Every piece starts and ends at a multiple of 1/P of its shard.
fn pieces_in_chunks(s: &Schedule, p: usize) -> bool {
    let p = Rat::from_integer(p as i128);
    s.pieces.iter().all(|x| (x.start * p).is_integer() && (x.end * p).is_integer())
}

/// The chunked allgather of `t` with P = `p`: verified, D steps, pieces in 1/P chunks, its
/// step cost from the transfers equal to the plan's, and the details reporting all three.
fn checked(t: &Topology, p: usize) -> (BfbPlan, Schedule) {
    let pl = crate::synth::bfb::chunked::plan(t, p).unwrap();
    let s = crate::synth::bfb::chunked::allgather(t, p).unwrap();
    verify(&s, t).unwrap_or_else(|v| panic!("{} P={p}: {v}", t.name));
    assert_eq!(s.n_steps().unwrap_or(0) as usize, pl.steps());
    assert!(pieces_in_chunks(&s, p), "{} P={p}", t.name);
    assert_eq!(step_cost(&s, t), pl.load_sum() / Rat::from_integer(t.n_ranks() as i128), "{} P={p}", t.name);
    assert_eq!(detail(&s, "chunks"), Some(p.to_string()));
    assert_eq!(detail(&s, "tau"), Some(quoted(&pl.tau()).to_string()));
    assert_eq!(detail(&s, "tau_fractional"), Some(quoted(&pl.tau_fractional()).to_string()));
    (pl, s)
}

/// lcm of the denominators of every cut point of the unchunked plan: rounding to P chunks is a
/// no-op exactly when P is a multiple of it.
fn cut_lcm(pl: &BfbPlan) -> i128 {
    (0..pl.n).flat_map(|v| pl.cuts(v).iter().map(|c| *c.denom())).fold(1, |a, b| a.lcm(&b))
}

/// The Figure 5 neighbourhood (see `tests.rs`): u2 splits v1 and v2 2/3 + 1/3.
fn figure5() -> Topology {
    let mut b = TopologyBuilder::new("figure5");
    let names = ["v1", "v2", "w1", "w2", "w3", "u1", "u2"];
    let id: Vec<usize> = names.iter().map(|n| b.compute(*n, None)).collect();
    let [v1, v2, w1, w2, w3, u1, u2] = id[..] else { unreachable!() };
    let one = Rat::from_integer(1);
    let links =
        [(v1, w1), (v1, w2), (v2, w2), (v2, w3), (w1, u1), (w2, u1), (w1, u2), (w3, u2), (u1, v1), (u2, v2), (w2, u2)];
    for (a, c) in links {
        b.link(a, c, one, 1.0);
    }
    b.build().unwrap()
}

#[test]
fn multiples_of_every_denominator_keep_the_optimum() {
    // Figure 5's other steps add halves to u2's thirds: its cuts need P a multiple of 6.
    let cases =
        [(topo("torus:4x4"), 4), (topo("torus:4x4"), 8), (topo("hypercube:3"), 3), (figure5(), 6), (figure5(), 12)];
    for (t, p) in &cases {
        let exact = plan(t).unwrap();
        assert_eq!(*p as i128 % cut_lcm(&exact), 0, "{}: P = {p} is not a multiple of every denominator", t.name);
        let (pl, s) = checked(t, *p);
        assert_eq!(pl.tau(), exact.tau(), "{} P={p}", t.name);
        assert_eq!(pl.tau_fractional(), exact.tau(), "{} P={p}", t.name);
        assert_eq!(detail(&s, "tau"), detail(&s, "tau_fractional"));
    }
    assert_eq!(checked(&topo("torus:4x4"), 4).0.tau(), Rat::new(15, 16));
    // Figure 5 with P = 1: u2 cannot split v1 or v2, so some link carries a whole shard at
    // step 2 (U = 1 instead of 2/3); still verified, never below the LP.
    let (pl, _) = checked(&figure5(), 1);
    assert!(pl.tau() >= pl.tau_fractional());
}

#[test]
fn theorem_20_bound_on_kautz_and_circulant() {
    for spec in ["kautz:2:12", "circulant:15:1,4,5"] {
        let t = topo(spec);
        let exact = plan(&t).unwrap();
        let n = t.n_ranks() as i128;
        // d = the largest out-degree (links are unit-bandwidth here, so also B).
        let d = (0..t.n_ranks()).map(|x| t.out_links(t.rank_node(x)).len()).max().unwrap() as i128;
        assert!(d >= 2);
        for p in [1usize, 2, 3, 7] {
            let (pl, _) = checked(&t, p);
            let steps = pl.steps() as u32;
            let slack = Rat::new(d * (d.pow(steps) - 1), (d - 1) * p as i128 * n);
            assert_eq!(pl.tau_fractional(), exact.tau(), "{spec} P={p}");
            assert!(pl.tau() >= exact.tau(), "{spec} P={p}: {} < LP {}", pl.tau(), exact.tau());
            assert!(pl.tau() <= exact.tau() + slack, "{spec} P={p}: {} above LP {} + {slack}", pl.tau(), exact.tau());
            if spec.starts_with("circulant") && p == 1 {
                // Not vacuous: whole shards cost C(15, {1, 4, 5}) 6/5 against the LP's 1.
                assert_eq!((pl.tau(), exact.tau()), (Rat::new(6, 5), Rat::one()));
            }

            let rs = crate::synth::bfb::chunked::reduce_scatter(&t, p).unwrap();
            verify(&rs, &t).unwrap_or_else(|v| panic!("{spec} RS P={p}: {v}"));
            assert!(pieces_in_chunks(&rs, p));
            let ar = crate::synth::bfb::chunked::allreduce(&t, p).unwrap();
            verify(&ar, &t).unwrap_or_else(|v| panic!("{spec} AR P={p}: {v}"));
            assert!(pieces_in_chunks(&ar, p));
            let sum = |key: &str| {
                let parse = |k: &str| {
                    let v = detail(&ar, k).unwrap();
                    crate::rational::parse_exact(v.trim_matches('"')).unwrap()
                };
                parse(&format!("rs_{key}")) + parse(&format!("ag_{key}"))
            };
            assert_eq!(detail(&ar, "tau"), Some(quoted(&sum("tau")).to_string()));
            assert_eq!(detail(&ar, "tau_fractional"), Some(quoted(&sum("tau_fractional")).to_string()));
            assert_eq!(detail(&ar, "chunks"), Some(p.to_string()));
        }
    }
}

#[test]
fn rounding_rule() {
    let mut out = Vec::new();
    // x = (1/6, 2/6, 3/6), P = 4: y^LP = (2/3, 4/3, 2): floors (0, 1, 2), one chunk left, to
    // the largest fractional part (2/3, sender 0).
    crate::synth::bfb::chunked::round(&[(0, 1), (1, 2), (2, 3)], 6, 4, &mut out);
    assert_eq!(out, vec![(0, 1), (1, 1), (2, 2)]);
    // Ties go to the lower sender; a sender rounded to 0 chunks disappears.
    crate::synth::bfb::chunked::round(&[(3, 1), (5, 1)], 2, 1, &mut out);
    assert_eq!(out, vec![(3, 1)]);
    // Exact splits are kept.
    crate::synth::bfb::chunked::round(&[(0, 1), (1, 2)], 3, 6, &mut out);
    assert_eq!(out, vec![(0, 2), (1, 4)]);
}

#[test]
fn bad_chunks_and_mapped_expansions() {
    let t = topo("torus:3x3");
    assert!(matches!(crate::synth::bfb::chunked::allgather(&t, 0), Err(CollsynthError::BadInput(_))));
    for v in ["0", "x", "-1"] {
        let mut req = Request::default();
        req.options.insert("chunks".into(), v.into());
        let err = synth::run(&t, Collective::Allgather, "bfb", &req).unwrap_err();
        assert!(matches!(err, CollsynthError::BadInput(_)), "--chunks {v}");
    }
    let mut req = Request::default();
    req.options.insert("chunks".into(), "4".into());
    let s = synth::run(&t, Collective::Allgather, "bfb", &req).unwrap();
    assert_eq!(detail(&s, "chunks"), Some("4".into()));
    // Without the option nothing changes and no chunk keys appear.
    let plain = synth::run(&t, Collective::Allgather, "bfb", &Request::default()).unwrap();
    assert_eq!(detail(&plain, "chunks"), None);
    assert_eq!(detail(&plain, "tau_fractional"), None);
    assert_eq!(detail(&plain, "tau"), Some(quoted(&plan(&t).unwrap().tau()).to_string()));
    // A mapped expansion's allgather is rejected; its reduce-scatter is plain BFB and chunks.
    let e = topo("line(bipartite:2,2)");
    match synth::run(&e, Collective::Allgather, "bfb", &req) {
        Err(CollsynthError::BadInput(m)) => assert!(m.contains("--chunks applies to plain BFB topologies"), "{m}"),
        other => panic!("expected BadInput, got {other:?}"),
    }
    let rs = synth::run(&e, Collective::ReduceScatter, "bfb", &req).unwrap();
    verify(&rs, &e).unwrap();
    assert!(pieces_in_chunks(&rs, 4));
}
