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
