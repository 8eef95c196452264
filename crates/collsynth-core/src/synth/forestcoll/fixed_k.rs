//! Step 5 of ForestColl: the best schedule with exactly `k` trees per root (Alg. 3,
//! Thms 13-15), and the scan over k = 1..K.
//!
//! Thm 13/14: `k` trees per root take time `M U / (N k)` iff they are edge-disjoint in
//! `G({floor(U b_e)})`, and feasibility is monotone in U; U* is the smallest feasible U.
//! The capacities only change at the *breakpoints* `j / b_e`, so U* is one of them. Instead
//! of bisecting on reals and rounding at the end (the paper), we bisect on breakpoints
//! exactly: `r` is always a feasible breakpoint and `l` an infeasible value; a feasible
//! midpoint moves `r` down to the largest breakpoint at or below it (same capacities), an
//! infeasible one moves `l` up; we stop when no breakpoint lies strictly between `l` and
//! `r`. Thm 15 gives a starting `r` within `1 / min b_e` of the lower bound `k / x*`, so
//! few tests are needed (each is N early-stopping max-flows).

use super::optimality::{tree_capacities, TreeTest};
use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use crate::topology::Topology;

/// The smallest U with `k` trees per root feasible on `G({floor(U b_e)})`; `inv` = 1/x*.
pub fn min_u(topo: &Topology, k: i128, inv: Rat, test: &mut TreeTest) -> Result<Rat> {
    let kk = Rat::from_integer(k);
    let lo = kk * inv;
    let mut feasible = |u: Rat| test.passes(&tree_capacities(topo, u), k);
    if feasible(lo)? {
        return Ok(lo);
    }
    let mut bws: Vec<Rat> = topo.links.iter().map(|l| l.bandwidth).collect();
    bws.sort();
    bws.dedup();
    // Thm 15: U = max_e ceil(k b_e / x*) / b_e is feasible (every capacity >= k/x* times G).
    let mut r = bws.iter().map(|&b| (lo * b).ceil() / b).max().expect("links");
    if !feasible(r)? {
        return Err(CollsynthError::internal(format!("fixed-k: Thm 15's U = {r} is not feasible for k = {k}")));
    }
    let mut l = lo;
    loop {
        let next = bws.iter().map(|&b| ((l * b).floor() + Rat::from_integer(1)) / b).min().expect("links");
        if next >= r {
            return Ok(r);
        }
        let mid = (l + r) / Rat::from_integer(2);
        if feasible(mid)? {
            r = bws.iter().map(|&b| (mid * b).floor() / b).max().expect("links");
        } else {
            l = mid;
        }
    }
}

/// `(k, U*_k)` for k = 1..=max_k.
pub fn scan(topo: &Topology, max_k: usize, inv: Rat) -> Result<Vec<(i128, Rat)>> {
    let mut test = TreeTest::new(topo);
    (1..=max_k as i128).map(|k| Ok((k, min_u(topo, k, inv, &mut test)?))).collect()
}
