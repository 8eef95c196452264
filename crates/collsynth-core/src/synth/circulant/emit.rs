//! IR emission: the round-by-round schedules as step schedules (round j = step j), each
//! transfer `after` the transfer that delivered its block to the sender.
//!
//! Direction: on the topology asked for, virtual rank v of root j is the real rank
//! (j + v) mod p and process r sends to r + skips[k] (the edges of `traff:p`). On the
//! *transpose* (used to build a reduction that is then reversed onto the topology asked
//! for), everything is mirrored: v is rank (j - v) mod p and r sends to r - skips[k]. The
//! circulant pattern is the same either way, so the schedules are equally valid; the
//! mirror only makes every hop a direct link of `traff:p`'s transpose. On other topologies
//! (switch:p, complete:p, anything connected) routes come from [`Router`] (shortest).

use super::schedule::{empty_rounds, Skips};
use crate::error::{CollsynthError, Result};
use crate::ir::{Collective, Op, Piece, Router, Schedule, Transfer};
use crate::rational::Rat;
use crate::topology::Topology;

const NONE: u32 = u32::MAX;

fn rank(base: usize, v: usize, p: usize, forward: bool) -> usize {
    if forward {
        (base + v) % p
    } else {
        (base + p - v % p) % p
    }
}

/// Piece b of n of `shard`: [b/n, (b+1)/n).
fn block_piece(shard: usize, b: usize, n: usize) -> Piece {
    if n == 1 {
        return Piece::whole(shard);
    }
    let nn = n as i128;
    Piece { shard, start: Rat::new(b as i128, nn), end: Rat::new(b as i128 + 1, nn) }
}

/// Broadcast of n blocks from `root` (Algorithm 6).
pub fn broadcast(topo: &Topology, root: usize, n: usize, forward: bool) -> Result<Schedule> {
    let p = topo.n_ranks();
    let mut s = Schedule::new(Collective::Broadcast, p, root, "circulant");
    for b in 0..n {
        s.add_piece(block_piece(0, b, n));
    }
    rooted(topo, &mut s, n, &[root], forward)?;
    Ok(s)
}

/// Irregular allgather (Algorithm 9 with the x-adjustment, erratum 9): every rank j
/// broadcasts its shard (split into n blocks) as the root of its own circulant broadcast;
/// in each round a process sends one block of every buffer to the same to-process.
/// `collective` is Allgatherv (shards from the counts) or Allgather (equal shards).
pub fn allgatherv(
    topo: &Topology,
    collective: Collective,
    shards: Vec<Rat>,
    n: usize,
    forward: bool,
) -> Result<Schedule> {
    let p = topo.n_ranks();
    let mut s = Schedule::new(collective, p, 0, "circulant");
    s.shards = shards;
    for j in 0..p {
        for b in 0..n {
            s.add_piece(block_piece(j, b, n));
        }
    }
    let roots: Vec<usize> = (0..p).collect();
    rooted(topo, &mut s, n, &roots, forward)?;
    Ok(s)
}

/// The transfers of one circulant broadcast per root in `roots` (root i's block b is piece
/// i * n + b), all in lockstep: round j is step j.
fn rooted(topo: &Topology, s: &mut Schedule, n: usize, roots: &[usize], forward: bool) -> Result<()> {
    let p = topo.n_ranks();
    if p < 2 {
        return Ok(());
    }
    let sk = Skips::new(p);
    let q = sk.q();
    let recv = sk.all_recv();
    let send = sk.all_send(&recv);
    let x = empty_rounds(q, n);
    let mut router = Router::new(topo);
    let mut delivered = vec![NONE; roots.len() * n * p];
    let mut pending: Vec<(usize, u32)> = Vec::new();
    for j in 0..n - 1 + q {
        let i = j + x;
        let k = i % q;
        let shift = (q * (i / q)) as i64 - x as i64;
        for (ri, &root) in roots.iter().enumerate() {
            for v in 0..p {
                let t = (v + sk.skips()[k]) % p;
                let got = recv[t * q + k] + shift;
                if send[v * q + k] + shift != got {
                    return Err(CollsynthError::internal(format!("circulant: send/receive mismatch at p = {p}")));
                }
                if got < 0 || t == 0 {
                    continue;
                }
                let piece = ri * n + (got as usize).min(n - 1);
                let (src, dst) = (rank(root, v, p, forward), rank(root, t, p, forward));
                if delivered[piece * p + dst] != NONE {
                    continue; // a capped re-send of block n - 1 it already has
                }
                let after = if v == 0 {
                    Vec::new()
                } else {
                    match delivered[piece * p + src] {
                        NONE => {
                            return Err(CollsynthError::internal(format!(
                                "circulant: rank {src} would send piece {piece} before holding it (p = {p})"
                            )))
                        }
                        w => vec![w as usize],
                    }
                };
                let route = router.route(src, dst)?;
                let idx = s.add(Transfer { piece, src, dst, route, op: Op::Copy, after, step: Some(j as u32) });
                pending.push((piece * p + dst, idx as u32));
            }
        }
        for (slot, idx) in pending.drain(..) {
            delivered[slot] = idx;
        }
    }
    Ok(())
}

/// Regular allgather, Algorithm 7: q rounds; in round k process r sends the
/// skips[k+1] - skips[k] shards it has to r + skips[k] (mirrored: the paper sends to
/// r - skips[k]; see the module docs for why both are the same algorithm). After round k,
/// r holds the shards of r, r - 1, ..., r - skips[k+1] + 1 (forward).
pub fn allgather(topo: &Topology, forward: bool) -> Result<Schedule> {
    let p = topo.n_ranks();
    let mut s = Schedule::new(Collective::Allgather, p, 0, "circulant");
    for j in 0..p {
        s.add_piece(Piece::whole(j));
    }
    if p < 2 {
        return Ok(s);
    }
    let sk = Skips::new(p);
    let sks = sk.skips();
    let mut router = Router::new(topo);
    let mut delivered = vec![NONE; p * p];
    let mut pending: Vec<(usize, u32)> = Vec::new();
    for k in 0..sk.q() {
        for r in 0..p {
            let t = rank(r, sks[k], p, forward);
            for j in 0..sks[k + 1] - sks[k] {
                let shard = rank(r, j, p, !forward);
                let after = if shard == r {
                    Vec::new()
                } else {
                    match delivered[shard * p + r] {
                        NONE => return Err(CollsynthError::internal("circulant allgather: shard not yet held")),
                        w => vec![w as usize],
                    }
                };
                let route = router.route(r, t)?;
                let idx =
                    s.add(Transfer { piece: shard, src: r, dst: t, route, op: Op::Copy, after, step: Some(k as u32) });
                pending.push((shard * p + t, idx as u32));
            }
        }
        for (slot, idx) in pending.drain(..) {
            delivered[slot] = idx;
        }
    }
    Ok(s)
}
