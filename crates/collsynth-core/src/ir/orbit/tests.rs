//! The compact form against its expansion: same verdicts (mutations included) and the same
//! costs, bit for bit.

use super::*;
use crate::api;
use crate::cost;
use crate::synth::{self, Request};
use crate::topology::Topology;
use crate::verify::verify;
use crate::zoo;

/// Small tori, hypercubes, circulants, rings and switched machines (boxes on a fabric, ranks
/// on a switch): ForestColl states their allgathers per orbit.
const SYMMETRIC: &[&str] =
    &["torus:4x4", "torus:3x5", "hypercube:3", "circulant:8:1,3", "ring:6", "biring:5", "dgx-a100:2", "switch:6"];

fn compact(spec: &str) -> (Topology, Schedule) {
    let topo = zoo::from_spec(spec).unwrap();
    let s = synth::run(&topo, crate::ir::Collective::Allgather, "forestcoll", &Request::default()).unwrap();
    assert!(s.is_compact(), "{spec}: forestcoll's allgather is stated per orbit");
    (topo, s)
}

fn verdict(s: &Schedule, topo: &Topology) -> bool {
    verify(s, topo).is_ok()
}

fn flat_verdict(s: &Schedule, topo: &Topology) -> bool {
    expand(s).is_ok_and(|f| verify(&f, topo).is_ok())
}

#[test]
fn compact_and_flat_verify_alike() {
    for spec in SYMMETRIC {
        let (topo, s) = compact(spec);
        let group = s.symmetry.clone().unwrap();
        let flat = expand(&s).unwrap();
        assert_eq!(flat.transfers.len(), s.n_transfers());
        assert_eq!(flat.transfers.len(), s.transfers.len() * group.order());
        assert_eq!(group.order(), topo.n_ranks(), "{spec}: the group is regular");
        let (a, b) = (verify(&s, &topo).unwrap(), verify(&flat, &topo).unwrap());
        assert_eq!(a, b, "{spec}: the compact report counts the flat transfers");
        // The expansion is the flat schedule the synthesizer makes without the group, up to
        // the order of the transfers.
        let old = crate::synth::forestcoll::allgather(&topo, None).unwrap();
        let key = |s: &Schedule| {
            let mut v: Vec<_> = s
                .transfers
                .iter()
                .map(|t| {
                    let p = &s.pieces[t.piece];
                    (p.shard, p.start, p.end, t.src, t.dst, t.route.clone())
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(key(&old), key(&flat), "{spec}");
    }
}

#[test]
fn mutations_get_the_same_verdict() {
    for spec in SYMMETRIC {
        let (topo, s) = compact(spec);
        assert_mutations_agree(spec, &topo, &s);
    }
}

/// Every mutation of the compact `s` (a representative dropped, rerouted, made to wait for
/// another member or for nothing) gets the verdict its expansion gets, and most break it.
pub(crate) fn assert_mutations_agree(spec: &str, topo: &Topology, s: &Schedule) {
    {
        let (topo, s) = (topo.clone(), s.clone());
        let order = s.symmetry.as_ref().unwrap().order();
        let mut cases: Vec<(String, Schedule)> = Vec::new();
        for a in 0..s.transfers.len() {
            let mut m = s.clone();
            m.transfers.remove(a);
            for t in &mut m.transfers {
                t.after.retain(|&x| x / order != a);
                t.after.iter_mut().for_each(|x| *x -= if *x / order > a { order } else { 0 });
            }
            cases.push((format!("drop {a}"), m));
            let mut m = s.clone();
            let t = &mut m.transfers[a];
            // A route that leaves from the wrong rank's node.
            if let Some(l) = topo.out_links(topo.rank_node(t.dst)).next() {
                t.route = vec![l];
                cases.push((format!("wrong route {a}"), m));
            }
            for other in [0, order - 1, order / 2] {
                let mut m = s.clone();
                let t = &mut m.transfers[a];
                match t.after.first_mut() {
                    Some(x) => *x = (*x / order) * order + other,
                    None => t.after.push(((a + 1) % s.transfers.len()) * order + other),
                }
                cases.push((format!("dependency {a} element {other}"), m));
            }
            let mut m = s.clone();
            m.transfers[a].after.clear();
            cases.push((format!("no dependency {a}"), m));
        }
        let mut wrong = 0;
        for (what, m) in &cases {
            let (c, f) = (verdict(m, &topo), flat_verdict(m, &topo));
            assert_eq!(c, f, "{spec}: {what}: compact says {c}, flat says {f}");
            wrong += usize::from(!c);
        }
        assert!(
            wrong > cases.len() / 3,
            "{spec}: the mutations must break most schedules ({wrong} of {})",
            cases.len()
        );
    }
}

#[test]
fn a_generator_that_is_no_automorphism_is_refused() {
    let (topo, s) = compact("torus:4x4");
    let mut g = (**s.symmetry.as_ref().unwrap()).clone();
    g.gens[0].nodes.swap(0, 1);
    let bad = Generator::from_nodes(&topo, g.gens[0].nodes.clone());
    let mut m = s.clone();
    match bad {
        Err(_) => {
            m.symmetry = Some(std::sync::Arc::new(g));
            assert!(verify(&m, &topo).is_err());
        }
        Ok(gen) => {
            g.gens[0] = gen;
            m.symmetry = Some(std::sync::Arc::new(Group::new(g.gens).unwrap()));
            assert!(verify(&m, &topo).is_err());
        }
    }
    // A group that fixes ranks (the identity as a generator of order 1 twice is fine, a
    // generator repeated is not free).
    let mut g = (**s.symmetry.as_ref().unwrap()).clone();
    g.gens.push(g.gens[0].clone());
    let mut m = s.clone();
    m.symmetry = Some(std::sync::Arc::new(Group::new(g.gens).unwrap()));
    let why = verify(&m, &topo).unwrap_err().message;
    assert!(why.contains("freely"), "{why}");
}

#[test]
fn quotient_costs_equal_flat_costs() {
    // Whole-byte shards on every topology here (N divides 2^20 * 315).
    let size = crate::rational::Rat::from_integer(315 << 20);
    for spec in SYMMETRIC {
        let (topo, s) = compact(spec);
        assert_costs_agree(spec, &topo, &s, size);
    }
}

/// Every cost of the compact `s` at `size` (whole-byte shards) is its expansion's, bit for bit.
pub(crate) fn assert_costs_agree(spec: &str, topo: &Topology, s: &Schedule, size: crate::rational::Rat) {
    {
        let (topo, s) = (topo.clone(), s.clone());
        let flat = expand(&s).unwrap();
        let q = quotient(&s, &topo).unwrap();
        let order = s.symmetry.as_ref().unwrap().order();
        for k in [1, 3] {
            let (a, b) = (cost::simulate(&q, &topo, size, k).unwrap(), cost::simulate(&flat, &topo, size, k).unwrap());
            assert_eq!(a.time_us.to_bits(), b.time_us.to_bits(), "{spec} k={k}");
            assert_eq!(a.busiest_link, b.busiest_link, "{spec}");
            assert_eq!(a.busiest_link_busy_us.to_bits(), b.busiest_link_busy_us.to_bits(), "{spec}");
            assert_eq!(a.transfers * order, b.transfers);
            assert_eq!(cost::alpha_beta(&q, &topo, size, k).unwrap(), cost::alpha_beta(&flat, &topo, size, k).unwrap());
        }
        let loads = cost::link_loads(&flat, &topo, size);
        let rep = link_orbits(s.symmetry.as_ref().unwrap(), topo.links.len());
        let qloads = cost::link_loads(&q, &topo, size);
        for l in 0..topo.links.len() {
            assert_eq!(loads[l], qloads[rep[l]], "{spec}: link {l}");
        }
        assert_eq!(cost::bandwidth_term_us(&q, &topo, size), cost::bandwidth_term_us(&flat, &topo, size));
        assert_eq!(
            cost::runtime::runtime_copies(&q, &topo, size, order).unwrap(),
            cost::runtime::runtime(&flat, &topo, size).unwrap(),
            "{spec}"
        );
        let b = api::bounds(&topo, s.collective, 0).unwrap();
        let (e, f) =
            (api::evaluate(&s, &topo, size, 2, &b).unwrap(), api::evaluate(&flat, &topo, size, 2, &b).unwrap());
        assert_eq!(e.time_us.to_bits(), f.time_us.to_bits(), "{spec}");
        assert_eq!(e.runtime, f.runtime, "{spec}");
        assert_eq!((e.optimality, e.steps, e.direct), (f.optimality, f.steps, f.direct), "{spec}");
        assert_eq!(e.alpha_beta_us.to_bits(), f.alpha_beta_us.to_bits(), "{spec}");
        assert_eq!(s.depth(), flat.depth());
        assert_eq!(api::simulate(&s, &topo, size, 2).unwrap(), cost::simulate(&flat, &topo, size, 2).unwrap());
        assert_eq!(api::runtime(&s, &topo, size).unwrap(), cost::runtime::runtime(&flat, &topo, size).unwrap());
    }
}

#[test]
fn the_slice_cap_counts_flat_transfers() {
    // Enough transfers that the runtime model's slice cap binds: the quotient alone would
    // get more slices than its flat schedule.
    let (topo, s) = compact("torus:16x16");
    let order = s.symmetry.as_ref().unwrap().order();
    let q = quotient(&s, &topo).unwrap();
    let size = crate::rational::Rat::from_integer(1 << 40);
    let flat = expand(&s).unwrap();
    let right = cost::runtime::runtime_copies(&q, &topo, size, order).unwrap();
    assert_eq!(right, cost::runtime::runtime(&flat, &topo, size).unwrap());
    assert_ne!(right.slices, cost::runtime::runtime(&q, &topo, size).unwrap().slices);
}

#[test]
fn sizes_that_split_shards_mid_byte_are_costed_flat() {
    let (topo, s) = compact("torus:3x5");
    let b = api::bounds(&topo, s.collective, 0).unwrap();
    let flat = expand(&s).unwrap();
    for bytes in [1 << 20, 15 << 20] {
        let size = crate::rational::Rat::from_integer(bytes);
        assert_eq!(bytes_move_with_group(&s, size), bytes % 15 == 0);
        let (e, f) =
            (api::evaluate(&s, &topo, size, 1, &b).unwrap(), api::evaluate(&flat, &topo, size, 1, &b).unwrap());
        assert_eq!(e.time_us.to_bits(), f.time_us.to_bits(), "{bytes}");
        assert_eq!(e.runtime, f.runtime, "{bytes}");
    }
}
