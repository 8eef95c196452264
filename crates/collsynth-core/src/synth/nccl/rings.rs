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

/// Where a ring leaves a box (`--crossing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crossing {
    /// NCCL's (crossNic 0, PXN): from the box's last GPU through its switch to the GPU the
    /// channel entered by, then over that GPU's NIC. The entry GPU's switch port carries the
    /// relayed data besides its own.
    Pxn,
    /// Each box's chain rotated so that the box's last GPU reaches the next box's first GPU
    /// over its own NIC or rail (`rail_chains`): no relay, so a GPU that receives over its
    /// rail in a channel receives nothing over its switch port there.
    Rail,
}

impl Crossing {
    /// `--crossing pxn|rail` (default pxn).
    pub fn parse(req: &crate::synth::Request) -> Result<Crossing> {
        match req.options.get("crossing").map(String::as_str) {
            None | Some("pxn") => Ok(Crossing::Pxn),
            Some("rail") => Ok(Crossing::Rail),
            Some(v) => Err(CollsynthError::bad(format!("--crossing: '{v}' is not one of pxn, rail"))),
        }
    }
}

/// The ring of every channel after duplication (`channels.chains`), on `topo`.
pub fn rings(topo: &Topology, channels: &Channels, crossing: Crossing) -> Result<Vec<Ring>> {
    let mut paths = Paths::new(topo);
    let mut out = Vec::with_capacity(channels.chains.len());
    for boxes in &channels.chains {
        let boxes = match crossing {
            Crossing::Pxn => boxes.clone(),
            Crossing::Rail => rail_chains(&mut paths, boxes)?,
        };
        let order: Vec<usize> = boxes.concat();
        let mut routes = Vec::with_capacity(order.len());
        for (b, chain) in boxes.iter().enumerate() {
            for w in chain.windows(2) {
                routes.push(paths.route(w[0], w[1])?);
            }
            let next = &boxes[(b + 1) % boxes.len()];
            let (last, entry, next_entry) = (chain[chain.len() - 1], chain[0], next[0]);
            let r = match crossing {
                Crossing::Rail => paths.route(last, next_entry)?,
                Crossing::Pxn => {
                    let mut r = paths.route(last, entry)?;
                    if boxes.len() >= 2 {
                        r.extend(paths.route(entry, next_entry)?);
                    }
                    r
                }
            };
            routes.push(r);
        }
        out.push(Ring { order, routes });
    }
    Ok(out)
}

/// A channel's chains (box by box) reordered for [`Crossing::Rail`]: box 0's chain as
/// given; box b + 1's starts at its GPU nearest (fewest links) to box b's last, ties to the
/// same position in the box (a rail joins equal positions); the last box's ends at its GPU
/// nearest box 0's first. The rest of each chain keeps its order. Where the last box's
/// first and last would be one GPU (a box of one, or three boxes and more meeting badly),
/// its chain is left to start as computed and the route back is the shortest one.
pub(crate) fn rail_chains(paths: &mut Paths, boxes: &[Vec<usize>]) -> Result<Vec<Vec<usize>>> {
    let mut out: Vec<Vec<usize>> = Vec::with_capacity(boxes.len());
    let position = |b: usize, g: usize| boxes[b].iter().copied().min().map_or(0, |low| g.abs_diff(low));
    let nearest = |paths: &mut Paths, from: (usize, usize), to: usize| -> Result<usize> {
        let mut best: Option<((usize, bool, usize), usize)> = None;
        for &g in &boxes[to] {
            let key = (paths.distance(from.1, g)?, position(to, g) != position(from.0, from.1), g);
            if best.is_none_or(|(k, _)| key < k) {
                best = Some((key, g));
            }
        }
        Ok(best.map_or(boxes[to][0], |(_, g)| g))
    };
    for b in 0..boxes.len() {
        if b == 0 || boxes[b].len() < 2 {
            out.push(boxes[b].clone());
            continue;
        }
        let prev = *out[b - 1].last().expect("a box has a GPU");
        let entry = nearest(paths, (b - 1, prev), b)?;
        let mut chain = vec![entry];
        let exit = if b + 1 == boxes.len() { Some(nearest(paths, (0, boxes[0][0]), b)?) } else { None };
        let exit = exit.filter(|&x| x != entry);
        chain.extend(boxes[b].iter().copied().filter(|&g| g != entry && Some(g) != exit));
        chain.extend(exit);
        out.push(chain);
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
