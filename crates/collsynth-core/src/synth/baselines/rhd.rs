//! `rhd`: recursive doubling allgather (step k: exchange the 2^k shards held with the
//! partner `r XOR 2^k`), recursive halving reduce-scatter (its reversal), Rabenseifner
//! allreduce (reduce-scatter then allgather); these need N a power of two. Broadcast is a
//! binomial tree from the root (any N: at step k, relative ranks v < 2^k send to v + 2^k),
//! reduce its reversal. Routes are shortest paths.

use super::common::{from_copy_forms, part, Paths, ALL_FIVE};
use crate::error::{CollsynthError, Result};
use crate::ir::{Collective, Schedule};
use crate::synth::{Algorithm, Extras, Request};
use crate::topology::Topology;

pub const RHD: Algorithm = Algorithm {
    name: "rhd",
    help: "recursive halving/doubling (Rabenseifner allreduce; N a power of two), binomial-tree broadcast/reduce",
    collectives: ALL_FIVE,
    options: &[],
    synthesize,
    extras: Extras::NONE,
};

fn synthesize(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    let n = topo.n_ranks();
    if matches!(collective, Collective::Allgather | Collective::ReduceScatter | Collective::Allreduce)
        && !n.is_power_of_two()
    {
        return Err(CollsynthError::bad(format!("rhd needs a power-of-two number of ranks (N = {n})")));
    }
    from_copy_forms(topo, collective, req, RHD.name, &|t, _| allgather(t), &|t, _, root| broadcast(t, root))
}

/// Recursive doubling: log2 N steps; at step k rank r sends each of the 2^k shards of its
/// block (ranks agreeing with r above bit k) to `r XOR 2^k`, one transfer per shard.
pub fn allgather(topo: &Topology) -> Result<Schedule> {
    let n = topo.n_ranks();
    if !n.is_power_of_two() {
        return Err(CollsynthError::bad(format!("rhd needs a power-of-two number of ranks (N = {n})")));
    }
    let mut s = Schedule::new(Collective::Allgather, n, 0, RHD.name);
    for shard in 0..n {
        s.add_piece(part(shard, 0, 1));
    }
    let mut paths = Paths::new(topo);
    // delivered[r][shard]: the transfer that brought `shard` to rank r
    let mut delivered: Vec<Vec<Option<usize>>> = vec![vec![None; n]; n];
    let mut k = 0;
    while (1usize << k) < n {
        let bit = 1usize << k;
        let mut arrivals = Vec::new();
        for (r, held) in delivered.iter().enumerate() {
            let partner = r ^ bit;
            let block = r & !(bit - 1);
            for (shard, &after) in held.iter().enumerate().skip(block).take(bit) {
                let id = paths.send(&mut s, shard, r, partner, after, k)?;
                arrivals.push((partner, shard, id));
            }
        }
        for (r, shard, id) in arrivals {
            delivered[r][shard] = Some(id);
        }
        k += 1;
    }
    Ok(s)
}

/// Binomial tree from `root`: with v = (r - root) mod N, at step k every v < 2^k sends to
/// v + 2^k when that is below N; ceil(log2 N) steps.
pub fn broadcast(topo: &Topology, root: usize) -> Result<Schedule> {
    crate::synth::check_root(topo, root)?;
    let n = topo.n_ranks();
    let mut s = Schedule::new(Collective::Broadcast, n, root, RHD.name);
    let piece = s.add_piece(part(0, 0, 1));
    let mut paths = Paths::new(topo);
    let rank = |v: usize| (v + root) % n;
    let mut delivered: Vec<Option<usize>> = vec![None; n];
    let mut k = 0;
    while (1usize << k) < n {
        let bit = 1usize << k;
        for v in (0..bit).filter(|v| v + bit < n) {
            delivered[v + bit] = Some(paths.send(&mut s, piece, rank(v), rank(v + bit), delivered[v], k)?);
        }
        k += 1;
    }
    Ok(s)
}

#[cfg(test)]
mod tests;
