//! IR emission: the round-by-round schedules as step schedules (round j = step j), each
//! transfer `after` the transfer that delivered its block to the sender.
//!
//! Direction: on the topology asked for, virtual rank v of root j is the real rank
//! (j + v) mod p and process r sends to r + skips\[k\] (the edges of `traff:p`). On the
//! *transpose* (used to build a reduction that is then reversed onto the topology asked
//! for), everything is mirrored: v is rank (j - v) mod p and r sends to r - skips\[k\]. The
//! circulant pattern is the same either way, so the schedules are equally valid; the
//! mirror only makes every hop a direct link of `traff:p`'s transpose. On other topologies
//! (switch:p, complete:p, anything connected) routes come from [`Router`] (shortest).

use super::schedule::{empty_rounds, Skips};
use crate::error::{CollsynthError, Result};
use crate::ir::{Collective, Op, Piece, Router, Schedule, Transfer, DATA};
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
                let idx = s.add(Transfer::new(piece, src, dst, route, Op::Copy, after, Some(j as u32)));
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
/// skips\[k+1\] - skips\[k\] shards it has to r + skips\[k\] (mirrored: the paper sends to
/// r - skips\[k\]; see the module docs for why both are the same algorithm). After round k,
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
                let idx = s.add(Transfer::new(shard, r, t, route, Op::Copy, after, Some(k as u32)));
                pending.push((shard * p + t, idx as u32));
            }
        }
        for (slot, idx) in pending.drain(..) {
            delivered[slot] = idx;
        }
    }
    Ok(s)
}

/// Scratch slots of the census: the running sum S (without the rank's own value) and the
/// receive buffer B. The rank's DATA slot holds x_r ⊕ S throughout, which is the paper's
/// O = x_r ⊕ S of line 10 ready to send, and the result at the end (line 15).
pub const CENSUS_SUM: u8 = 1;
pub const CENSUS_RECV: u8 = 2;

/// Allreduce by census, Algorithm 8 with k in line 3 (erratum 8): q rounds of the whole
/// buffer. Mirrored like the other emitters: rank x sends to x + d_k and receives from
/// x - d_k, where d_k = skips\[k\] - 1 and the message is S when skips\[k+1\] is odd, else
/// d_k = skips\[k\] and the message is x ⊕ S. After round k, S of x sums x - 1, ...,
/// x - (skips[k+1] - 1). Per round and rank: one send into the partner's B, then two local
/// reductions of B (into S — a copy in round 0, none in the last round — and into DATA),
/// both at the same step, after the round's receive and the rank's own send of the slot they
/// change; the next send into B waits for both (the receive buffer is free again).
pub fn census(topo: &Topology) -> Result<Schedule> {
    let p = topo.n_ranks();
    let mut s = Schedule::new(Collective::Allreduce, p, 0, "circulant");
    s.shards = vec![Rat::from_integer(1)];
    s.add_piece(Piece::whole(0));
    if p < 2 {
        return Ok(s);
    }
    let sk = Skips::new(p);
    let (sks, q) = (sk.skips(), sk.q());
    let mut router = Router::new(topo);
    // The last local reductions into S and into DATA at each rank (transfer indices).
    let mut into_sum: Vec<Option<usize>> = vec![None; p];
    let mut into_data: Vec<Option<usize>> = vec![None; p];
    let mut sends = vec![0usize; p];
    for k in 0..q {
        let odd = 2 * sks[k] > sks[k + 1];
        let (d, slot) = if odd { (sks[k] - 1, CENSUS_SUM) } else { (sks[k], DATA) };
        let step = Some(k as u32);
        for x in 0..p {
            let y = (x + d) % p;
            let wrote = if odd { into_sum[x] } else { into_data[x] };
            // After the last write of what x sends, and once y's B has been consumed.
            let after: Vec<usize> = [wrote, into_sum[y], into_data[y]].into_iter().flatten().collect();
            let route = router.route(x, y)?;
            let t = Transfer {
                piece: 0,
                src: x,
                dst: y,
                route,
                op: Op::Copy,
                after,
                step,
                src_slot: slot,
                dst_slot: CENSUS_RECV,
                count: 1,
            };
            sends[x] = s.add(t);
        }
        for x in 0..p {
            let recv = sends[(x + p - d) % p];
            let local = |dst_slot: u8, op: Op, own_send: bool| Transfer {
                piece: 0,
                src: x,
                dst: x,
                route: Vec::new(),
                op,
                after: if own_send { vec![recv, sends[x]] } else { vec![recv] },
                step,
                src_slot: CENSUS_RECV,
                dst_slot,
                count: 1,
            };
            if k + 1 < q {
                let op = if k == 0 { Op::Copy } else { Op::Reduce };
                into_sum[x] = Some(s.add(local(CENSUS_SUM, op, odd)));
            }
            into_data[x] = Some(s.add(local(DATA, Op::Reduce, !odd)));
        }
    }
    Ok(s)
}
