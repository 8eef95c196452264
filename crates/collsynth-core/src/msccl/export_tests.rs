//! Every synthesizer's output, for every collective it supports, on a set of topologies,
//! exports to an XML that passes the validator in both dialects.

use super::*;
use crate::api;
use crate::ir::Collective;
use crate::rational::rat;
use crate::synth::{self, Request};
use crate::zoo::from_spec;

fn export_all(spec: &str, dialect: Dialect, fused: bool) -> usize {
    let topo = from_spec(spec).unwrap();
    let mut count = 0;
    for alg in synth::algorithms() {
        for &c in alg.collectives.iter().filter(|c| **c != Collective::Allgatherv) {
            for root in if c.is_rooted() { vec![0, topo.n_ranks() - 1] } else { vec![0] } {
                let req = Request { root, ..Request::default() };
                let Ok(done) = api::synthesize(&topo, c, alg.name, &req, rat(1 << 30)) else { continue };
                let o = lower::Options { dialect, fused, ..lower::Options::default() };
                let e = export(&done.schedule, &o, true)
                    .unwrap_or_else(|e| panic!("{spec} {} {} root {root}: {e}", alg.name, c.name()));
                let v = validate(&e.xml, Some(&done.topology)).unwrap();
                assert!(v.execution.is_empty(), "{spec} {} {}: {:?}", alg.name, c.name(), v.execution);
                let accepted = v.dialects.iter().find(|(d, _)| *d == dialect).unwrap();
                assert!(accepted.1.is_empty(), "{spec} {} {}: {:?}", alg.name, c.name(), accepted.1);
                count += 1;
            }
        }
    }
    count
}

#[test]
fn every_algorithm_exports_valid_xml_on_small_topologies() {
    for spec in ["ring:4", "biring:5", "switch:4", "torus:2x4", "dgx-a100:1", "hypercube:3", "mesh:2x3"] {
        assert!(export_all(spec, Dialect::New, true) >= 5, "{spec}");
    }
}

#[test]
fn old_dialect_and_unfused_exports_are_valid() {
    for spec in ["ring:5", "switch:3", "torus:2x4"] {
        assert!(export_all(spec, Dialect::Old, true) >= 5);
        assert!(export_all(spec, Dialect::New, false) >= 5);
    }
}
