//! NCCL's rings (connect.cc `connectRings`): channel c's ring is the concatenation of the
//! boxes' chains, box b's last GPU sending to box b+1's first (the last box's to the first
//! box's). The hop between boxes leaves through the NIC the channel entered by (crossNic 0):
//! from the last GPU to the entry GPU (PXN, when they differ), then over the network to
//! the next box's entry GPU. Emission follows the ring kernels (`runRing` in
//! src/device/all_gather.h, reduce_scatter.h, all_reduce.h, broadcast.h, reduce.h): allgather
//! in n-1 steps, broadcast as a chain from the root; the reductions are their reversals.

use super::search::Channels;
use crate::error::{CollsynthError, Result};
use crate::ir::{Collective, Op, Piece, Schedule, Transfer};
use crate::synth::baselines::common::Paths;
use crate::topology::Topology;

/// One channel's ring: `routes[i]` leads from `order[i]` to `order[i + 1 mod n]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    pub order: Vec<usize>,
    pub routes: Vec<Vec<usize>>,
}

/// The ring of every channel after duplication (`channels.chains`), on `topo`.
pub fn rings(topo: &Topology, channels: &Channels) -> Result<Vec<Ring>> {
    let mut paths = Paths::new(topo);
    let mut out = Vec::with_capacity(channels.chains.len());
    for boxes in &channels.chains {
        let order: Vec<usize> = boxes.concat();
        let mut routes = Vec::with_capacity(order.len());
        for (b, chain) in boxes.iter().enumerate() {
            for w in chain.windows(2) {
                routes.push(paths.route(w[0], w[1])?);
            }
            let next = &boxes[(b + 1) % boxes.len()];
            let (last, entry, next_entry) = (chain[chain.len() - 1], chain[0], next[0]);
            let mut r = paths.route(last, entry)?;
            if boxes.len() >= 2 {
                r.extend(paths.route(entry, next_entry)?);
            }
            routes.push(r);
        }
        out.push(Ring { order, routes });
    }
    Ok(out)
}

impl Ring {
    /// The same ring on the transpose `t` of `topo`, walked backwards along reversed links.
    pub fn transposed(&self, topo: &Topology, t: &Topology) -> Result<Ring> {
        let n = self.order.len();
        let mut order = self.order.clone();
        order[1..].reverse();
        let mut routes = Vec::with_capacity(n);
        for i in 0..n {
            let j = (2 * n - i - 1) % n;
            let r = self.routes[j]
                .iter()
                .rev()
                .map(|&l| {
                    let link = &topo.links[l];
                    t.link_between(link.dst, link.src)
                        .ok_or_else(|| CollsynthError::internal("the transpose lacks a reversed link"))
                })
                .collect::<Result<Vec<_>>>()?;
            routes.push(r);
        }
        Ok(Ring { order, routes })
    }

    fn send(&self, s: &mut Schedule, piece: usize, i: usize, after: Option<usize>, step: usize) -> usize {
        let n = self.order.len();
        let (src, dst) = (self.order[i], self.order[(i + 1) % n]);
        s.add(Transfer::new(
            piece,
            src,
            dst,
            self.routes[i].clone(),
            Op::Copy,
            after.into_iter().collect(),
            Some(step as u32),
        ))
    }

    /// Ring allgather: at step t position i forwards the shard of position i - t.
    pub fn allgather(&self) -> Schedule {
        let n = self.order.len();
        let mut s = Schedule::new(Collective::Allgather, n, 0, super::NCCL_RING.name);
        for shard in 0..n {
            s.add_piece(Piece::whole(shard));
        }
        let mut delivered = vec![None; n];
        for t in 0..n.saturating_sub(1) {
            let mut next = vec![None; n];
            for i in 0..n {
                let shard = self.order[(i + n - t) % n];
                next[(i + 1) % n] = Some(self.send(&mut s, shard, i, delivered[i], t));
            }
            delivered = next;
        }
        s
    }

    /// Chain broadcast from `root` along the ring (NCCL's ring broadcast).
    pub fn broadcast(&self, root: usize) -> Result<Schedule> {
        let n = self.order.len();
        if root >= n {
            return Err(CollsynthError::bad(format!("--root {root} is not a rank (N = {n})")));
        }
        let mut s = Schedule::new(Collective::Broadcast, n, root, super::NCCL_RING.name);
        let piece = s.add_piece(Piece::whole(0));
        let p0 = self.order.iter().position(|&r| r == root).expect("the ring holds every rank");
        let mut last = None;
        for k in 0..n.saturating_sub(1) {
            last = Some(self.send(&mut s, piece, (p0 + k) % n, last, k));
        }
        Ok(s)
    }
}
