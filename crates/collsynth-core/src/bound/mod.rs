//! Exact lower bounds on collective time: the bandwidth bound from cuts (ForestColl's
//! optimum, with the bottleneck cut as certificate) and the latency bounds.
//!
//! Units: bandwidths are GB/s, so an inverse throughput is in 1/(GB/s) = seconds per GB
//! (= ns per byte). For allgather, reduce-scatter and allreduce it is the time per byte of a
//! rank's shard (M/N); for broadcast and reduce the time per byte of the whole message.
//!
//! Everything is exact: the bandwidths are scaled to coprime integers once
//! (`cuts::Scaled`) and every comparison is an integer max-flow comparison, never a float.
//!
//! N = 1 (a single rank) has nothing to move: every bound is `inv_throughput = 0` with an
//! empty cut, and [`algbw`] returns `None` (unbounded).

pub mod alltoall;
mod cuts;
pub mod latency;
#[cfg(test)]
mod tests;

use crate::error::Result;
use crate::ir::Collective;
use crate::rational::Rat;
use crate::topology::Topology;
use num_traits::Zero;

/// A bandwidth bound with its certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutBound {
    /// Time per byte (1/(GB/s)): per byte of a rank's shard for allgather / reduce-scatter /
    /// allreduce, per byte of the message for broadcast / reduce. 0 when N = 1.
    pub inv_throughput: Rat,
    /// Node indices (sorted) of the bottleneck side S of the certifying cut: the side the
    /// data leaves (allgather: the argmax set; broadcast: the root's side of the min cut;
    /// reduce-scatter / reduce: the same set, certified on the transpose). Empty when N = 1.
    pub cut: Vec<usize>,
}

impl CutBound {
    fn trivial() -> Self {
        CutBound { inv_throughput: Rat::zero(), cut: Vec::new() }
    }
}

/// Allgather: `max over S ⊂ V with S ∩ Vc ≠ ∅ and Vc ⊄ S of |S ∩ Vc| / B+(S)` (switches may
/// be in S), computed exactly by Newton/Dinkelbach iterations over ForestColl's auxiliary
/// network (see `cuts`); `cut` = the maximizing S.
pub fn allgather(topo: &Topology) -> Result<CutBound> {
    allgather_symmetric(topo, &[])
}

/// [`allgather`], told candidate automorphisms of `topo` (node permutations, e.g. the zoo's
/// `zoo::symmetry::node_generators`): those that are automorphisms cut the max flows to
/// one per rank orbit. Same bound and cut as [`allgather`].
pub fn allgather_symmetric(topo: &Topology, symmetry: &[Vec<usize>]) -> Result<CutBound> {
    if topo.n_ranks() == 1 {
        return Ok(CutBound::trivial());
    }
    cuts::allgather(topo, symmetry)
}

/// Reduce-scatter: the allgather bound of the transpose (every link reversed). The cut is
/// given as node indices, which are the same nodes in both graphs; in `topo` it is the set
/// that data must *enter*: `|S ∩ Vc| / B-(S)`.
pub fn reduce_scatter(topo: &Topology) -> Result<CutBound> {
    if topo.n_ranks() == 1 {
        return Ok(CutBound::trivial());
    }
    reduce_scatter_symmetric(topo, &[])
}

/// [`reduce_scatter`] with candidate automorphisms (see [`allgather_symmetric`]; an
/// automorphism of a topology is one of its transpose).
pub fn reduce_scatter_symmetric(topo: &Topology, symmetry: &[Vec<usize>]) -> Result<CutBound> {
    if topo.n_ranks() == 1 {
        return Ok(CutBound::trivial());
    }
    allgather_symmetric(&crate::ir::transform::transpose(topo), symmetry)
}

/// Broadcast from rank `root`: `1 / min over compute v != root of maxflow(root -> v)`;
/// `cut` = the root's side of that minimum cut (the smallest such side).
pub fn broadcast(topo: &Topology, root: usize) -> Result<CutBound> {
    check_root(topo, root)?;
    if topo.n_ranks() == 1 {
        return Ok(CutBound::trivial());
    }
    cuts::broadcast(topo, root)
}

/// Reduce to rank `root`: the broadcast bound of the transpose (cut: the same node indices).
pub fn reduce(topo: &Topology, root: usize) -> Result<CutBound> {
    check_root(topo, root)?;
    if topo.n_ranks() == 1 {
        return Ok(CutBound::trivial());
    }
    cuts::broadcast(&crate::ir::transform::transpose(topo), root)
}

/// Allreduce as an optimal reduce-scatter followed by an optimal allgather:
/// `inv = inv_rs + inv_ag` (time per byte of M/N). The cut is the certificate of the larger
/// of the two terms (the allgather one on a tie, always on bidirectional networks).
pub fn allreduce_rs_ag(topo: &Topology) -> Result<CutBound> {
    allreduce_rs_ag_symmetric(topo, &[])
}

/// [`allreduce_rs_ag`] with candidate automorphisms (see [`allgather_symmetric`]).
pub fn allreduce_rs_ag_symmetric(topo: &Topology, symmetry: &[Vec<usize>]) -> Result<CutBound> {
    if topo.n_ranks() == 1 {
        return Ok(CutBound::trivial());
    }
    let ag = allgather_symmetric(topo, symmetry)?;
    let rs = reduce_scatter_symmetric(topo, symmetry)?;
    let inv_throughput = ag.inv_throughput + rs.inv_throughput;
    let cut = if rs.inv_throughput > ag.inv_throughput { rs.cut } else { ag.cut };
    Ok(CutBound { inv_throughput, cut })
}

/// Algorithmic bandwidth (GB/s, exact) that a bound allows: `N / inv` for allgather (and
/// allgatherv with equal shards), reduce-scatter and allreduce (whose `inv` is per byte of
/// M/N); `1 / inv` for broadcast and reduce. `None` when `inv` is 0 (N = 1: unbounded).
pub fn algbw(collective: Collective, n_ranks: usize, inv: Rat) -> Option<Rat> {
    if inv <= Rat::zero() {
        return None;
    }
    let data = match collective {
        Collective::Allgather | Collective::Allgatherv | Collective::ReduceScatter | Collective::Allreduce => {
            Rat::from_integer(n_ranks as i128)
        }
        Collective::Broadcast | Collective::Reduce => Rat::from_integer(1),
    };
    Some(data / inv)
}

fn check_root(topo: &Topology, root: usize) -> Result<()> {
    if root >= topo.n_ranks() {
        return crate::bad_input!("root {root} is not a rank (N = {})", topo.n_ranks());
    }
    Ok(())
}
