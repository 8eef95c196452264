//! Emission: a recorded [`BfbPlan`] to an allgather [`Schedule`], one `Copy` transfer per piece
//! of every delivery, after the transfer that brought that piece to the sender.

use super::plan::{BfbPlan, Delivery, NodePlan, Via};
use super::BFB;
use crate::error::{CollsynthError, Result};
use crate::ir::{Collective, Op, Piece, Schedule, Transfer};
use crate::rational::Rat;
use num_traits::{One, Zero};

/// The allgather schedule of `p` with pieces cut at `cuts` (per shard, sorted, a superset of
/// the plan's own cuts). Guarantees: pieces tile every shard; each (u, v) delivery is one
/// transfer per piece of shard v over one link into u, after the piece's arrival at the sender.
pub(super) fn emit(p: &BfbPlan, cuts: &[Vec<Rat>]) -> Result<Schedule> {
    if !p.recorded {
        return Err(CollsynthError::internal("bfb: a plan without its deliveries cannot be emitted"));
    }
    let n = p.n;
    let mut e = Emitter::new(n, cuts)?;
    for t in 1..=p.steps {
        for (u, node) in p.nodes.iter().enumerate() {
            let range = node.step_start[t - 1] as usize..node.step_start[t] as usize;
            for d in &node.deliveries[range] {
                e.deliver(node, d, u, t);
            }
        }
    }
    debug_assert!(e.first.iter().enumerate().all(|(i, &f)| (f == u32::MAX) == (i / n == i % n)));
    Ok(e.s)
}

/// The schedule being emitted, with where each delivery starts.
pub(super) struct Emitter {
    pub(super) s: Schedule,
    /// Per shard: the piece bounds `[0, cuts.., 1]` and the index of its first piece.
    pub(super) bounds: Vec<Vec<Rat>>,
    pub(super) base: Vec<usize>,
    /// `first[u * n + v]`: the transfer that delivers piece 0 of shard v to u; the other
    /// pieces of that delivery follow it in piece order.
    pub(super) first: Vec<u32>,
}

impl Emitter {
    pub(super) fn new(n: usize, cuts: &[Vec<Rat>]) -> Result<Emitter> {
        let mut s = Schedule::new(Collective::Allgather, n, 0, BFB.name);
        let bounds: Vec<Vec<Rat>> = cuts
            .iter()
            .map(|c| std::iter::once(Rat::zero()).chain(c.iter().copied()).chain(std::iter::once(Rat::one())).collect())
            .collect();
        let mut base = Vec::with_capacity(n);
        for (v, b) in bounds.iter().enumerate() {
            base.push(s.pieces.len());
            for w in b.windows(2) {
                s.add_piece(Piece { shard: v, start: w[0], end: w[1] });
            }
        }
        let total = s.pieces.len().saturating_mul(n.saturating_sub(1));
        if total > u32::MAX as usize {
            return Err(CollsynthError::bad(format!("bfb: the schedule would have {total} transfers (too many)")));
        }
        s.transfers.reserve_exact(total);
        Ok(Emitter { s, bounds, base, first: vec![u32::MAX; n * n] })
    }

    /// The transfers of one delivery to u at step t, one per piece of the shard, in order.
    pub(super) fn deliver(&mut self, node: &NodePlan, d: &Delivery, u: usize, t: usize) {
        let (n, v) = (self.s.n_ranks, d.src as usize);
        self.first[u * n + v] = self.s.transfers.len() as u32;
        for (j, (link, from)) in senders(node, d, &self.bounds[v]).enumerate() {
            // At step 1 the sender is v itself, which holds its shard from the start.
            let after = if t == 1 { Vec::new() } else { vec![self.first[from as usize * n + v] as usize + j] };
            self.s.transfers.push(Transfer::new(
                self.base[v] + j,
                from as usize,
                u,
                vec![link as usize],
                Op::Copy,
                after,
                Some(t as u32 - 1),
            ));
        }
    }
}

/// The (link, sender) of each piece of delivery `d` to `node`, the pieces bounded by `bounds`
/// (`[0, cuts.., 1]`, a refinement of the delivery's split), in piece order.
pub(super) fn senders<'a>(
    node: &'a NodePlan,
    d: &'a Delivery,
    bounds: &'a [Rat],
) -> impl Iterator<Item = (u32, u32)> + 'a {
    let parts = match d.via {
        Via::Whole { .. } => &[][..],
        Via::Split { first, len } => &node.parts[first as usize..(first + len) as usize],
    };
    let mut k = 0;
    bounds[..bounds.len() - 1].iter().map(move |start| match d.via {
        Via::Whole { link, from } => (link, from),
        Via::Split { .. } => {
            while *start >= parts[k].end {
                k += 1;
            }
            (parts[k].link, parts[k].from)
        }
    })
}
