//! The compact form against its expansion: same verdicts (mutations included) and the same
//! costs, bit for bit.

use super::*;
use crate::api;
use crate::cost;
use crate::ir::transform::{compose, reverse};
use crate::ir::Collective;
use crate::synth::{self, Request};
use crate::topology::Topology;
use crate::verify::verify;
use crate::zoo;

/// Small tori, hypercubes, circulants, rings and switched machines (boxes on a fabric, ranks
/// on a switch): ForestColl states their allgathers per orbit.
const SYMMETRIC: &[&str] =
    &["torus:4x4", "torus:3x5", "hypercube:3", "circulant:8:1,3", "ring:6", "biring:5", "dgx-a100:2", "switch:6"];

/// ForestColl states all three per orbit (reduce-scatter reverses the allgather, allreduce
/// composes the two, both orbit by orbit).
const COLLECTIVES: [Collective; 3] = [Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce];

fn compact(spec: &str) -> (Topology, Schedule) {
    compact_of(spec, Collective::Allgather)
}

fn compact_of(spec: &str, c: Collective) -> (Topology, Schedule) {
    let topo = zoo::from_spec(spec).unwrap();
    let s = synth::run(&topo, c, "forestcoll", &Request::default()).unwrap();
    assert!(s.is_compact(), "{spec}: forestcoll's {} is stated per orbit", c.name());
    (topo, s)
}

/// The pieces and transfers of a flat schedule, every `after` sorted (the transforms list
/// dependencies in the order they find them; the set is what counts).
fn sorted_after(mut s: Schedule) -> (Vec<Piece>, Vec<Transfer>) {
    s.transfers.iter_mut().for_each(|t| t.after.sort_unstable());
    (s.pieces, s.transfers)
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
        for c in COLLECTIVES {
            let (topo, s) = compact_of(spec, c);
            let group = s.symmetry.clone().unwrap();
            let flat = expand(&s).unwrap();
            assert_eq!(flat.transfers.len(), s.n_transfers());
            assert_eq!(flat.transfers.len(), s.transfers.len() * group.order());
            assert_eq!(group.order(), topo.n_ranks(), "{spec}: the group is regular");
            let (a, b) = (verify(&s, &topo).unwrap(), verify(&flat, &topo).unwrap());
            assert_eq!(a, b, "{spec} {}: the compact report counts the flat transfers", c.name());
        }
        let (topo, s) = compact(spec);
        let flat = expand(&s).unwrap();
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
fn reductions_expand_to_the_flat_transforms() {
    // Reversal and composition orbit by orbit give exactly the flat transforms of the
    // expansions, transfer for transfer, in orbit-major order.
    for spec in SYMMETRIC {
        let (topo, ag) = compact(spec);
        let (_, rs) = compact_of(spec, Collective::ReduceScatter);
        let (_, ar) = compact_of(spec, Collective::Allreduce);
        let (flat_ag, flat_rs) = (expand(&ag).unwrap(), expand(&rs).unwrap());
        let two_way = topo
            .links
            .iter()
            .all(|l| topo.link_between(l.dst, l.src).is_some_and(|r| topo.links[r].bandwidth == l.bandwidth));
        if two_way {
            let made_on_topo = reverse(&flat_ag, &topo, &topo).unwrap();
            assert!(sorted_after(made_on_topo) == sorted_after(flat_rs.clone()), "{spec}: reduce-scatter");
        }
        let composed = compose(&flat_rs, &flat_ag, Collective::Allreduce).unwrap();
        assert!(sorted_after(expand(&ar).unwrap()) == sorted_after(composed), "{spec}: allreduce");
        // Composing the compact forms directly gives the compact allreduce's transfers.
        let direct = compose(&rs, &ag, Collective::Allreduce).unwrap();
        assert!(direct.is_compact());
        assert!(direct.transfers == ar.transfers, "{spec}");
    }
}

#[test]
fn a_transposed_reduce_scatter_keeps_its_group() {
    // A one-way ring: reduce-scatter is the reverse of the transpose's allgather, and the
    // group moves onto the ring's own links.
    let topo = zoo::from_spec("ring:6").unwrap();
    let t = crate::ir::transform::transpose(&topo);
    assert_ne!(t.links, topo.links, "ring:6 is one way");
    let ag_t = synth::run(&t, Collective::Allgather, "forestcoll", &Request::default()).unwrap();
    let rs = reverse(&ag_t, &t, &topo).unwrap();
    assert!(rs.is_compact());
    assert_eq!(rs.symmetry.as_ref().unwrap().gens[0].links.len(), topo.links.len());
    assert!(verify(&rs, &topo).is_ok());
    let flat = reverse(&expand(&ag_t).unwrap(), &t, &topo).unwrap();
    assert!(sorted_after(expand(&rs).unwrap()) == sorted_after(flat));
}

/// Broken variants of a compact schedule: representatives dropped, wrong routes, wrong and
/// missing dependencies, and for reductions a copy in place of a reduction.
fn mutants(s: &Schedule, topo: &Topology) -> Vec<(String, Schedule)> {
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
        if s.transfers[a].op == crate::ir::Op::Reduce {
            let mut m = s.clone();
            m.transfers[a].op = crate::ir::Op::Copy;
            cases.push((format!("copy instead of reduce {a}"), m));
        }
    }
    cases
}

#[test]
fn mutations_get_the_same_verdict() {
    for spec in SYMMETRIC {
        for c in COLLECTIVES {
            let (topo, s) = compact_of(spec, c);
            assert_mutations_agree(&format!("{spec} {}", c.name()), &topo, &s);
        }
    }
}

/// Every mutation of the compact `s` ([`mutants`]) gets the verdict its expansion gets, and
/// most break it.
pub(crate) fn assert_mutations_agree(what_of: &str, topo: &Topology, s: &Schedule) {
    let cases = mutants(s, topo);
    let mut wrong = 0;
    for (what, m) in &cases {
        let (v, f) = (verdict(m, topo), flat_verdict(m, topo));
        assert_eq!(v, f, "{what_of}: {what}: compact says {v}, flat says {f}");
        wrong += usize::from(!v);
    }
    assert!(wrong > cases.len() / 3, "{what_of}: the mutations must break most schedules ({wrong} of {})", cases.len());
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
    for (spec, c) in SYMMETRIC.iter().flat_map(|s| COLLECTIVES.map(|c| (s, c))) {
        let (topo, s) = compact_of(spec, c);
        assert_costs_agree(&format!("{spec} {}", c.name()), &topo, &s, size);
    }
}

/// Every cost of the compact `s` at `size` (whole-byte shards) is its expansion's, bit for bit.
pub(crate) fn assert_costs_agree(spec: &str, topo: &Topology, s: &Schedule, size: crate::rational::Rat) {
    {
        let flat = expand(s).unwrap();
        let q = quotient(s, topo).unwrap();
        let order = s.symmetry.as_ref().unwrap().order();
        for k in [1, 3] {
            let (a, b) = (cost::simulate(&q, topo, size, k).unwrap(), cost::simulate(&flat, topo, size, k).unwrap());
            assert_eq!(a.time_us.to_bits(), b.time_us.to_bits(), "{spec} k={k}");
            assert_eq!(a.busiest_link, b.busiest_link, "{spec}");
            assert_eq!(a.busiest_link_busy_us.to_bits(), b.busiest_link_busy_us.to_bits(), "{spec}");
            assert_eq!(a.transfers * order, b.transfers);
            assert_eq!(cost::alpha_beta(&q, topo, size, k).unwrap(), cost::alpha_beta(&flat, topo, size, k).unwrap());
        }
        let loads = cost::link_loads(&flat, topo, size);
        let rep = link_orbits(s.symmetry.as_ref().unwrap(), topo.links.len());
        let qloads = cost::link_loads(&q, topo, size);
        for l in 0..topo.links.len() {
            assert_eq!(loads[l], qloads[rep[l]], "{spec}: link {l}");
        }
        assert_eq!(cost::bandwidth_term_us(&q, topo, size), cost::bandwidth_term_us(&flat, topo, size));
        assert_eq!(
            cost::runtime::runtime_copies(&q, topo, size, order).unwrap(),
            cost::runtime::runtime(&flat, topo, size).unwrap(),
            "{spec}"
        );
        let b = api::bounds(topo, s.collective, 0).unwrap();
        let (e, f) = (api::evaluate(s, topo, size, 2, &b).unwrap(), api::evaluate(&flat, topo, size, 2, &b).unwrap());
        assert_eq!(e.time_us.to_bits(), f.time_us.to_bits(), "{spec}");
        assert_eq!(e.sf_time_us.to_bits(), f.sf_time_us.to_bits(), "{spec}");
        assert_eq!(e.runtime, f.runtime, "{spec}");
        assert_eq!((e.optimality, e.steps, e.direct), (f.optimality, f.steps, f.direct), "{spec}");
        assert_eq!(e.alpha_beta_us.to_bits(), f.alpha_beta_us.to_bits(), "{spec}");
        assert_eq!(s.depth(), flat.depth());
        assert_eq!(api::simulate(s, topo, size, 2).unwrap(), cost::simulate(&flat, topo, size, 2).unwrap());
        assert_eq!(api::runtime(s, topo, size).unwrap(), cost::runtime::runtime(&flat, topo, size).unwrap());
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
    // 2^20 is costed at the 16-byte trim nccl-tests moves (api::moved_size), which splits into
    // whole bytes: below 16 N = 240 bytes the size asked is costed, and 100 splits mid-byte.
    for bytes in [1 << 20, 15 << 20, 100] {
        let size = crate::rational::Rat::from_integer(bytes);
        assert_eq!(bytes_move_with_group(&s, size), bytes % 15 == 0);
        let (e, f) =
            (api::evaluate(&s, &topo, size, 1, &b).unwrap(), api::evaluate(&flat, &topo, size, 1, &b).unwrap());
        assert_eq!(e.time_us.to_bits(), f.time_us.to_bits(), "{bytes}");
        assert_eq!(e.sf_time_us.to_bits(), f.sf_time_us.to_bits(), "{bytes}");
        assert_eq!(e.runtime, f.runtime, "{bytes}");
    }
}

/// Rings whose rotation is no automorphism of the topology (a snake through a torus, a
/// hypercube's Gray code) or is one (rings, a switch): stated per orbit of the rotation as a
/// group on the used links only.
const RINGS: &[&str] = &["torus:4x4", "torus:3x4", "hypercube:3", "ring:6", "biring:5", "switch:5"];

fn ring_of(spec: &str, c: Collective) -> (Topology, Schedule, Schedule) {
    use crate::synth::baselines::ring::synthesize_ring;
    let topo = zoo::from_spec(spec).unwrap();
    let compact = synthesize_ring(&topo, c, &Request::default(), true).unwrap();
    let flat = synthesize_ring(&topo, c, &Request::default(), false).unwrap();
    (topo, compact, flat)
}

#[test]
fn rings_per_orbit_expand_to_the_flat_ring() {
    for spec in RINGS {
        for c in COLLECTIVES {
            let (topo, s, flat) = ring_of(spec, c);
            let group = s.symmetry.clone().unwrap_or_else(|| panic!("{spec} {}: per orbit", c.name()));
            assert!(group.used_links_only());
            assert_eq!(s.transfers.len() * topo.n_ranks(), flat.transfers.len(), "{spec}");
            let expanded = expand(&s).unwrap();
            if c == Collective::Allgather {
                // The expansion is the flat ring, transfer for transfer, in its order.
                assert!(expanded.transfers == flat.transfers, "{spec}");
            } else {
                // The reductions' transfers are the flat ring's (the reversed half in another order).
                let key = |s: &Schedule| {
                    let mut v: Vec<_> = s
                        .transfers
                        .iter()
                        .map(|t| (t.piece, t.src, t.dst, t.route.clone(), t.step, t.op == crate::ir::Op::Copy))
                        .collect();
                    v.sort();
                    v
                };
                assert_eq!(key(&expanded), key(&flat), "{spec} {}", c.name());
            }
            assert_eq!(verify(&s, &topo).unwrap(), verify(&flat, &topo).unwrap(), "{spec} {}", c.name());
            let size = crate::rational::Rat::from_integer(315 << 20);
            let b = api::bounds(&topo, c, 0).unwrap();
            let (e, f) =
                (api::evaluate(&s, &topo, size, 2, &b).unwrap(), api::evaluate(&expanded, &topo, size, 2, &b).unwrap());
            assert_eq!(e.time_us.to_bits(), f.time_us.to_bits(), "{spec} {}", c.name());
            assert_eq!(e.sf_time_us.to_bits(), f.sf_time_us.to_bits(), "{spec} {}", c.name());
            assert_eq!(e.runtime, f.runtime, "{spec} {}", c.name());
            assert_eq!((e.optimality, e.steps), (f.optimality, f.steps), "{spec}");
            assert_eq!(e.alpha_beta_us.to_bits(), f.alpha_beta_us.to_bits(), "{spec}");
            let cases = mutants(&s, &topo);
            let mut wrong = 0;
            for (what, m) in &cases {
                let (v, w) = (verdict(m, &topo), flat_verdict(m, &topo));
                assert_eq!(v, w, "{spec} {}: {what}: compact says {v}, flat says {w}", c.name());
                wrong += usize::from(!v);
            }
            assert!(wrong > cases.len() / 3, "{spec}: {wrong} of {}", cases.len());
        }
    }
}

#[test]
fn a_group_on_used_links_must_map_them_onto_links_alike() {
    let (topo, s, _) = ring_of("torus:4x4", Collective::Allgather);
    assert!(verify(&s, &topo).is_ok());
    // The rotation taken as an automorphism of the whole torus: it is none.
    let g = s.symmetry.as_ref().unwrap();
    assert!(Generator::from_nodes(&topo, g.gens[0].nodes.clone()).is_err());
    // A route through a link the rotation moves to no link.
    let bad = (0..topo.links.len()).find(|&l| g.gens[0].links[l] == NO_LINK).unwrap();
    let mut m = s.clone();
    let link = &topo.links[bad];
    let (a, b) = (topo.rank_of(link.src).unwrap(), topo.rank_of(link.dst).unwrap());
    m.transfers[0].src = a;
    m.transfers[0].dst = b;
    m.transfers[0].route = vec![bad];
    let why = verify(&m, &topo).unwrap_err().message;
    assert!(why.contains("no link"), "{why}");
    assert!(!flat_verdict(&m, &topo));
    // Unequal bandwidths on the used links: the group is refused.
    let mut slow = topo.clone();
    let l0 = s.transfers[0].route[0];
    slow.links[l0].bandwidth /= crate::rational::Rat::from_integer(2);
    let why = verify(&s, &slow).unwrap_err().message;
    assert!(why.contains("bandwidth"), "{why}");
}

#[test]
fn a_group_on_used_links_round_trips_through_format_2() {
    let (topo, s, _) = ring_of("torus:4x4", Collective::Allreduce);
    let text = crate::ir::json::write(&s, &topo);
    assert!(text.contains("\"links\":\"used\""), "{}", &text[..text.find("\"pieces\"").unwrap()]);
    let (back, t2, _) = crate::ir::json::read(&text).unwrap();
    assert_eq!((&back.transfers, &back.symmetry), (&s.transfers, &s.symmetry));
    assert_eq!(crate::ir::json::write(&back, &t2), text);
    assert!(verify(&back, &t2).is_ok());
    // Read as a group of whole-topology automorphisms, the rotation is refused.
    let e = crate::ir::json::read(&text.replacen(",\"links\":\"used\"", "", 1).replacen("\"links\":\"used\",", "", 1))
        .unwrap_err();
    assert!(e.to_string().contains("no link"), "{e}");
}
