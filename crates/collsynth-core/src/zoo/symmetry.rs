//! Candidate translation groups of the zoo's Cayley-graph families. A rank is read as a
//! mixed-radix vector of `Z_{d0} x Z_{d1} x ..` (`d0` fastest, the numbering of `torus`,
//! `hypercube` and `hamming`); translating by `v` adds `v` digit-wise. These are candidates
//! only: the caller checks that the translations are automorphisms of the topology it holds
//! (a topology file may reuse a zoo name), see `synth::forestcoll::symmetric`.

use super::Spec;
use crate::topology::Topology;

/// Moduli to try for `topo`, most specific first: the family's own coordinates when its name
/// is a `torus`, `hypercube` or `hamming` spec, then the cyclic group `Z_N` (rings, circulants,
/// complete graphs and anything else numbered around a cycle).
pub fn translation_candidates(topo: &Topology) -> Vec<Vec<usize>> {
    let n = topo.n_ranks();
    let mut out = Vec::new();
    if let Ok(spec) = Spec::parse(&topo.name) {
        let dims = match spec.family.as_str() {
            "torus" => spec.dims(0, 1).ok(),
            "hypercube" => spec.int(0, "n", 1, 20).ok().map(|d| vec![2; d]),
            "hamming" => spec.ints(0, "n,q").ok().and_then(|v| match v[..] {
                [d, q] => Some(vec![q; d]),
                _ => None,
            }),
            _ => None,
        };
        let size = |d: &Vec<usize>| d.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
        out.extend(dims.filter(|d| d.len() > 1 && size(d) == Some(n)));
    }
    out.push(vec![n]);
    out
}

/// Node permutations generating candidate automorphisms of the switched machine families:
/// `dgx-a100:N` (box shift `box{j}` -> `box{j+1}`, and GPU shift `gpu{i}` -> `gpu{i+1}` with its
/// NIC, which swaps the rails `ib0` and `ib1`), `mi250:N` (box shift) and `switch:N` (rank
/// shift). Empty when the name is no such spec or a renamed node is missing. Candidates only,
/// like [`translation_candidates`].
pub fn switched_generators(topo: &Topology) -> Vec<Vec<usize>> {
    let Ok(spec) = Spec::parse(&topo.name) else { return Vec::new() };
    let Some(count) = spec.args.first().and_then(|a| a.first()).and_then(|a| a.parse::<usize>().ok()) else {
        return Vec::new();
    };
    let index: std::collections::HashMap<&str, usize> =
        topo.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let rename = |f: &dyn Fn(&str) -> Option<String>| -> Option<Vec<usize>> {
        topo.nodes
            .iter()
            .map(|n| f(&n.name).map_or(index.get(n.name.as_str()).copied(), |m| index.get(m.as_str()).copied()))
            .collect()
    };
    let box_shift = |name: &str| {
        let (j, rest) = name.strip_prefix("box")?.split_once('.')?;
        Some(format!("box{}.{rest}", (j.parse::<usize>().ok()? + 1) % count))
    };
    let gpu_shift = |name: &str| {
        if let Some(r) = name.strip_prefix("ib") {
            return Some(format!("ib{}", 1 - r.parse::<usize>().ok()?.min(1)));
        }
        let (bx, rest) = name.split_once('.')?;
        let kind = ["gpu", "nic"].into_iter().find(|k| rest.starts_with(k))?;
        let i: usize = rest[kind.len()..].parse().ok()?;
        Some(format!("{bx}.{kind}{}", (i + 1) % 8))
    };
    let rank_shift = |name: &str| Some(format!("n{}", (name.strip_prefix('n')?.parse::<usize>().ok()? + 1) % count));
    let perms: Vec<Option<Vec<usize>>> = match spec.family.as_str() {
        "dgx-a100" => vec![rename(&box_shift), rename(&gpu_shift)],
        "mi250" => vec![rename(&box_shift)],
        "switch" => vec![rename(&rank_shift)],
        _ => Vec::new(),
    };
    perms.into_iter().collect::<Option<Vec<_>>>().unwrap_or_default()
}
