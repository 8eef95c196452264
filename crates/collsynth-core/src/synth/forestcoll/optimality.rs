//! Steps 1-2 of ForestColl: the exact optimum `1/x*` with its bottleneck cut (Alg. 1 / Thm 1,
//! computed by the shared Newton/Dinkelbach bound of [`crate::bound::allgather`]), then
//! k, U and y of Prop. 3, and the tree-existence test of Thm 5 shared with the fixed-k search.
//!
//! Units: `inv` is `1/x*` in 1/(GB/s) (time per byte of one rank's shard), `U = k / x*` is
//! the paper's capacity scale (a link of `b` GB/s carries `U b` trees), `y = 1/U` GB/s is
//! one tree's bandwidth, and the allgather algbw is `N k / U = N x*`.

use crate::error::{CollsynthError, Result};
use crate::flow::{Cap, FlowNetwork};
use crate::rational::Rat;
use crate::topology::Topology;
use num_integer::Integer;

/// The optimum of one topology (N >= 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Optimum {
    /// `1/x*` in 1/(GB/s), exact.
    pub inv: Rat,
    /// Node indices of the bottleneck cut S* (the side the data leaves).
    pub cut: Vec<usize>,
    /// Smallest number of trees per root reaching the optimum (Prop. 3).
    pub k: i128,
    /// `U = k / x*`: trees per GB/s of link bandwidth.
    pub u: Rat,
}

impl Optimum {
    /// Optimal allgather algbw `N x*` in GB/s.
    pub fn algbw(&self, n: usize) -> Rat {
        Rat::from_integer(n as i128) / self.inv
    }
}

/// `1/x*`, its cut and Prop. 3's k and U. Requires N >= 2.
pub fn optimum(topo: &Topology) -> Result<Optimum> {
    let b = crate::bound::allgather_symmetric(topo, &crate::zoo::symmetry::node_generators(topo))?;
    let inv = b.inv_throughput;
    // Smallest k with k * inv * b_e integral for every link: the lcm of the denominators of
    // inv * b_e (= q / gcd(q, {b_e}) of Prop. 3 with integer bandwidths, and scale-free).
    let mut k: i128 = 1;
    for l in &topo.links {
        let d = *(inv * l.bandwidth).denom();
        k = k.lcm(&d);
    }
    Ok(Optimum { inv, cut: b.cut, k, u: inv * Rat::from_integer(k) })
}

/// Per-link tree capacities `floor(U b_e)` (exact for the optimal U).
pub fn tree_capacities(topo: &Topology, u: Rat) -> Vec<Cap> {
    topo.links.iter().map(|l| (u * l.bandwidth).floor().to_integer()).collect()
}

/// Thm 5 / Thm 10: `k` edge-disjoint spanning out-trees per rank exist in the topology with
/// integer link capacities `caps` iff `min_v maxflow(s -> v) >= N k` where `s` feeds every
/// rank with capacity `k`. Each flow stops as soon as it reaches `N k`.
pub struct TreeTest {
    net: FlowNetwork,
    n_links: usize,
    ranks: Vec<usize>,
    s: usize,
}

impl TreeTest {
    pub fn new(topo: &Topology) -> TreeTest {
        let s = topo.n_nodes();
        let mut edges: Vec<(usize, usize, Cap)> = topo.links.iter().map(|l| (l.src, l.dst, 0)).collect();
        edges.extend(topo.ranks().iter().map(|&u| (s, u, 0)));
        TreeTest { net: FlowNetwork::new(s + 1, &edges), n_links: topo.links.len(), ranks: topo.ranks().to_vec(), s }
    }

    /// Whether the trees exist (see the type docs).
    pub fn passes(&mut self, caps: &[Cap], k: i128) -> Result<bool> {
        for (e, &c) in caps.iter().enumerate() {
            self.net.set_capacity(e, c);
        }
        for r in 0..self.ranks.len() {
            self.net.set_capacity(self.n_links + r, k);
        }
        let need = k.checked_mul(self.ranks.len() as i128).ok_or_else(|| CollsynthError::internal("overflow"))?;
        for &v in &self.ranks {
            if self.net.max_flow_limited(self.s, v, need) < need {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
