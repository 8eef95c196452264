//! `rhd`: recursive doubling allgather (step k: exchange the 2^k shards held with the
//! partner `r XOR 2^k`), recursive halving reduce-scatter (its reversal), Rabenseifner
//! allreduce (reduce-scatter then allgather); these need N a power of two. Broadcast is a
//! binomial tree from the root (any N: at step k, relative ranks v < 2^k send to v + 2^k),
//! reduce its reversal. Routes are shortest paths.

use super::common::{check_root, from_copy_forms, part, Paths, ALL_FIVE};
use crate::error::{CollsynthError, Result};
use crate::ir::{Collective, Schedule};
use crate::synth::{Algorithm, Request};
use crate::topology::Topology;

pub const RHD: Algorithm = Algorithm {
    name: "rhd",
    help: "recursive halving/doubling (Rabenseifner allreduce; N a power of two), binomial-tree broadcast/reduce",
    collectives: ALL_FIVE,
    options: &[],
    synthesize,
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
    check_root(topo, root)?;
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
mod tests {
    use super::*;
    use crate::ir::Op;

    fn run(spec: &str, c: Collective, root: usize) -> Result<Schedule> {
        super::super::common::run_on(spec, synthesize, c, root)
    }

    #[test]
    fn recursive_doubling_allgather() {
        for (spec, n, log) in [("switch:8", 8usize, 3u32), ("torus:4x4", 16, 4), ("biring:2", 2, 1)] {
            let s = run(spec, Collective::Allgather, 0).unwrap();
            assert_eq!(s.n_steps(), Some(log), "{spec}");
            assert_eq!(s.transfers.len(), n * (n - 1), "{spec}");
            for t in &s.transfers {
                let k = t.step.unwrap();
                assert_eq!(t.src ^ t.dst, 1 << k);
                // the shard sent is in the sender's block of 2^k ranks
                assert_eq!(s.pieces[t.piece].shard >> k, t.src >> k);
                // it was delivered by the step before, or it is the sender's own
                match t.after.as_slice() {
                    [] => assert_eq!(s.pieces[t.piece].shard, t.src),
                    [a] => {
                        let d = &s.transfers[*a];
                        assert_eq!((d.dst, d.piece), (t.src, t.piece));
                        assert!(d.step.unwrap() < k);
                    }
                    _ => panic!("one dependency at most"),
                }
            }
            let per_step: Vec<usize> =
                (0..log).map(|k| s.transfers.iter().filter(|t| t.step == Some(k)).count()).collect();
            assert_eq!(per_step, (0..log).map(|k| n << k).collect::<Vec<_>>(), "{spec}");
        }
    }

    #[test]
    fn halving_and_rabenseifner() {
        let rs = run("switch:8", Collective::ReduceScatter, 0).unwrap();
        assert!(rs.transfers.iter().all(|t| t.op == Op::Reduce));
        // recursive halving: 4 shards at the first step across distance 4, then 2, then 1
        for (step, dist, count) in [(0u32, 4usize, 32usize), (1, 2, 16), (2, 1, 8)] {
            let at: Vec<_> = rs.transfers.iter().filter(|t| t.step == Some(step)).collect();
            assert_eq!(at.len(), count);
            assert!(at.iter().all(|t| t.src ^ t.dst == dist));
        }
        let ar = run("switch:8", Collective::Allreduce, 0).unwrap();
        assert_eq!(ar.n_steps(), Some(6));
        assert_eq!(ar.transfers.len(), 2 * 8 * 7);
    }

    #[test]
    fn non_power_of_two_is_bad_input() {
        for c in [Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce] {
            let e = run("ring:6", c, 0).unwrap_err();
            assert_eq!(e, CollsynthError::bad("rhd needs a power-of-two number of ranks (N = 6)"));
        }
    }

    #[test]
    fn binomial_broadcast_any_n() {
        let s = run("biring:6", Collective::Broadcast, 2).unwrap();
        assert_eq!(s.n_steps(), Some(3));
        assert_eq!(s.transfers.len(), 5);
        let hops: Vec<(usize, usize, u32)> = s.transfers.iter().map(|t| (t.src, t.dst, t.step.unwrap())).collect();
        assert_eq!(hops, vec![(2, 3, 0), (2, 4, 1), (3, 5, 1), (2, 0, 2), (3, 1, 2)]);
        let r = run("biring:6", Collective::Reduce, 2).unwrap();
        assert!(r.transfers.iter().all(|t| t.op == Op::Reduce));
        assert_eq!(r.n_steps(), Some(3));
        assert_eq!(r.transfers.iter().filter(|t| t.dst == 2).count(), 3);
    }
}
