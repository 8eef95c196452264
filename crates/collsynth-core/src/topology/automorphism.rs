//! Node permutations that carry a topology onto itself (or onto its transpose): the one check
//! behind ForestColl's symmetric fast path and BFB's isomorphisms G -> G^T.

use super::Topology;
use std::collections::HashMap;

/// Links grouped by (source, destination) node, each list ordered by (bandwidth, latency,
/// id): under a link-preserving permutation, parallel links correspond position-wise.
pub type LinkPairs = HashMap<(u32, u32), Vec<usize>>;

/// The [`LinkPairs`] of `topo`.
pub fn link_pairs(topo: &Topology) -> LinkPairs {
    let mut map: LinkPairs = HashMap::new();
    for (i, l) in topo.links.iter().enumerate() {
        map.entry((l.src as u32, l.dst as u32)).or_default().push(i);
    }
    for list in map.values_mut() {
        list.sort_by_key(|&i| (topo.links[i].bandwidth, topo.links[i].latency.to_bits(), i));
    }
    map
}

/// Whether `perm` is a permutation of the nodes that keeps compute nodes compute and maps
/// every node pair's links onto those of the image pair (`reverse`: of the reversed image
/// pair, i.e. onto the transpose), one to one with equal bandwidths and latencies.
pub fn maps_links(topo: &Topology, pairs: &LinkPairs, perm: &[usize], reverse: bool) -> bool {
    let n = topo.n_nodes();
    let mut seen = vec![false; n];
    if perm.len() != n || perm.iter().any(|&x| x >= n || std::mem::replace(&mut seen[x], true)) {
        return false;
    }
    let same = |x: usize, y: usize| {
        let (a, b) = (&topo.links[x], &topo.links[y]);
        a.bandwidth == b.bandwidth && a.latency.to_bits() == b.latency.to_bits()
    };
    (0..n).all(|v| topo.is_compute(v) == topo.is_compute(perm[v]))
        && pairs.iter().all(|(&(a, b), list)| {
            let (a, b) = (perm[a as usize] as u32, perm[b as usize] as u32);
            let image = if reverse { (b, a) } else { (a, b) };
            pairs
                .get(&image)
                .is_some_and(|img| img.len() == list.len() && img.iter().zip(list).all(|(&x, &y)| same(x, y)))
        })
}
