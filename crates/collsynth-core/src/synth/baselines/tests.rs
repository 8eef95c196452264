//! Cross-cutting tests of the baselines: registry, every algorithm x collective x topology.

use crate::ir::{Collective, Op, Schedule};
use crate::synth::{self, Request};
use crate::zoo::from_spec;

const TOPOLOGIES: &[&str] =
    &["ring:5", "ring:8", "biring:6", "biring:8", "torus:4x4", "switch:8", "mesh:3x3", "dgx-a100:1"];

/// Every (algorithm, collective, topology, root) that applies, synthesized through `synth::run`.
fn all_schedules() -> Vec<(String, Schedule, crate::topology::Topology)> {
    let mut out = Vec::new();
    for spec in TOPOLOGIES {
        let topo = from_spec(spec).unwrap();
        let n = topo.n_ranks();
        for alg in super::ALGORITHMS {
            for &c in alg.collectives {
                if alg.name == "rhd" && !n.is_power_of_two() && !c.is_rooted() {
                    continue;
                }
                let roots = if c.is_rooted() { vec![0, n - 1, n / 2] } else { vec![0] };
                for root in roots {
                    let req = Request { root, ..Default::default() };
                    let label = format!("{} {} on {spec} (root {root})", alg.name, c.name());
                    let s = synth::run(&topo, c, alg.name, &req).unwrap_or_else(|e| panic!("{label}: {e}"));
                    out.push((label, s, topo.clone()));
                }
            }
        }
    }
    out
}

#[test]
fn registry() {
    let names: Vec<&str> = synth::algorithms().iter().map(|a| a.name).collect();
    for name in ["ring", "direct", "rhd", "dbt"] {
        assert!(names.contains(&name));
        let a = synth::find(name).unwrap();
        assert!(a.options.is_empty());
        assert!(!a.help.is_empty());
    }
    let dbt = synth::find("dbt").unwrap();
    assert_eq!(dbt.collectives, &[Collective::Broadcast, Collective::Reduce, Collective::Allreduce]);
    let topo = from_spec("switch:4").unwrap();
    assert!(synth::run(&topo, Collective::Allgather, "dbt", &Request::default()).is_err());
    assert!(synth::run(&topo, Collective::Allgatherv, "ring", &Request::default()).is_err());
}

#[test]
fn every_schedule_is_well_formed() {
    for (label, s, topo) in all_schedules() {
        let n = topo.n_ranks();
        assert_eq!(s.n_ranks, n, "{label}");
        assert!(crate::ir::transform::topological_order(&s).is_ok(), "{label}");
        for (i, t) in s.transfers.iter().enumerate() {
            assert!(t.step.is_some(), "{label}: transfer {i} without a step");
            // the route is a path of links from src to dst
            let mut at = topo.rank_node(t.src);
            for &l in &t.route {
                assert_eq!(topo.links[l].src, at, "{label}: transfer {i}");
                at = topo.links[l].dst;
            }
            assert_eq!(at, topo.rank_node(t.dst), "{label}: transfer {i}");
            assert_ne!(t.src, t.dst, "{label}");
            for &a in &t.after {
                let d = &s.transfers[a];
                assert!(d.step < t.step, "{label}: transfer {i} runs before its dependency {a}");
            }
            // a copy waits for the transfer that delivered its piece to the sender
            if t.op == Op::Copy {
                for &a in &t.after {
                    let d = &s.transfers[a];
                    assert_eq!(d.piece, t.piece, "{label}");
                    assert_eq!(d.dst, t.src, "{label}");
                }
            }
        }
        let want_op = |c: Collective| match c {
            Collective::ReduceScatter | Collective::Reduce => Some(Op::Reduce),
            Collective::Allgather | Collective::Broadcast => Some(Op::Copy),
            _ => None,
        };
        if let Some(op) = want_op(s.collective) {
            assert!(s.transfers.iter().all(|t| t.op == op), "{label}");
        }
        // every rank receives each piece once (copies) / sends each piece once (reductions)
        let (copies, reduces): (Vec<_>, Vec<_>) = s.transfers.iter().partition(|t| t.op == Op::Copy);
        let mut got = std::collections::HashSet::new();
        for t in copies {
            assert!(got.insert((t.dst, t.piece)), "{label}: rank {} receives piece {} twice", t.dst, t.piece);
        }
        let mut sent = std::collections::HashSet::new();
        for t in reduces {
            assert!(sent.insert((t.src, t.piece)), "{label}: rank {} reduces piece {} twice", t.src, t.piece);
        }
    }
}

#[test]
fn every_schedule_verifies() {
    for (label, s, topo) in all_schedules() {
        if let Err(v) = crate::verify::verify(&s, &topo) {
            panic!("{label}: {}", v.message);
        }
    }
    // unidirectional and switched topologies of other shapes too
    for spec in ["dgx-a100:2", "kautz:2:12", "dcirculant:16:1,7", "fat-tree:4"] {
        let topo = from_spec(spec).unwrap();
        for alg in super::ALGORITHMS {
            for &c in alg.collectives {
                let s = match synth::run(&topo, c, alg.name, &Request { root: 1, ..Default::default() }) {
                    Ok(s) => s,
                    Err(e) => {
                        assert!(alg.name == "rhd" && !topo.n_ranks().is_power_of_two(), "{spec}: {e}");
                        continue;
                    }
                };
                if let Err(v) = crate::verify::verify(&s, &topo) {
                    panic!("{} {} on {spec}: {}", alg.name, c.name(), v.message);
                }
            }
        }
    }
}
