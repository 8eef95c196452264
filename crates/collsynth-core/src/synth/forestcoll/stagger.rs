//! `--tree-shape boxes-staggered`: the two-level reduce-scatter with its folds ordered.
//!
//! Reversed, a two-level tree ([`super::two_level`]) of root r (box b, position p) is three
//! stages: every other box folds its contributions into its rank at position p (the folds
//! *before the crossing*), that rank sends the partial sum over the switch to r (the
//! crossing), and r's own box folds into r (the folds *at home*). The executions we model are
//! greedy (a transfer goes when its data is ready, links serve FIFO), and in a reduction
//! every leaf is ready at once: all trees' folds start together, share the in-box links to
//! the end, and the crossings, the slowest links (16 GB/s per GCD on `mi250:2`), start only
//! then. A two-stage flow shop fed in the wrong order: the makespan is about the folds plus
//! the crossings rather than the larger of the two (docs/forestcoll.md has the profile).
//!
//! The mirror image of the allgather's order (crossings first, then the in-box trees) is
//! restored with ordering dependencies, each a rank waiting for data it receives itself
//! (so they are real in an MSCCL program: a step's `depid`/`deps` on its own GPU's receive):
//! with trees j = 0..T-1 per position, rank x at position q of box c
//! * sends its folds before the crossing of batch j only after its own fold of batch
//!   j - 3T/8 (the trees of position q of the other boxes, whose sums x sends over the switch)
//!   has arrived: the batches reach the switch one after the other instead of all at the end;
//! * sends its folds at home of batch j only after that fold of batch min(j + T/4, T - 1):
//!   the home folds, which no crossing waits for, run in the crossings' shadow.
//!
//! Dependencies only ever point from a later batch (or a home fold) to an earlier fold before
//! the crossing, so they add no cycle. The offsets 3T/8 and T/4 were chosen by the runtime
//! model on `mi250:2` over both the reduce-scatter and the allreduce, 64 MiB to 4 GiB
//! (docs/forestcoll.md); `boxes-direct`'s forest (T = 64 slots of an LP's shares) has its home
//! folds wait T/2 ahead ([`Offsets::DIRECT`]).

use crate::ir::Schedule;

/// The stagger's two offsets as fractions of T: a fold before the crossing trails its rank's
/// previous one by `lag` batches, a home fold waits for the fold `lead` batches ahead.
#[derive(Debug, Clone, Copy)]
pub struct Offsets {
    lag: (usize, usize),
    lead: (usize, usize),
}

impl Offsets {
    /// `boxes-staggered`: 3T/8 and T/4.
    pub const STAGGERED: Offsets = Offsets { lag: (3, 8), lead: (1, 4) };
    /// `boxes-direct`: 3T/8 and T/2 (its 64 slots: lag 24, lead 32; docs/forestcoll.md).
    pub const DIRECT: Offsets = Offsets { lag: (3, 8), lead: (1, 2) };

    fn lag(self, t: usize) -> usize {
        (self.lag.0 * t / self.lag.1).max(1)
    }

    fn lead(self, t: usize) -> usize {
        self.lead.0 * t / self.lead.1
    }
}

/// Add the ordering dependencies to `rs`, the reverse of the allgather of a two-level forest
/// whose tree i is piece i ([`super::two_level::tree_of`] places it) on the boxes `boxes`
/// (ranks by position) with `t` trees per position. Returns how many were added.
pub fn stagger(rs: &mut Schedule, boxes: &[Vec<usize>], t: usize, offsets: Offsets) -> usize {
    let (nb, g) = (boxes.len(), boxes.first().map_or(0, Vec::len));
    if nb < 2 || g == 0 || rs.pieces.len() != nb * g * t {
        return 0;
    }
    let n = rs.n_ranks;
    let (mut box_of, mut pos_of) = (vec![0; n], vec![0; n]);
    for (b, ranks) in boxes.iter().enumerate() {
        for (p, &r) in ranks.iter().enumerate() {
            (box_of[r], pos_of[r]) = (b, p);
        }
    }
    let piece = |b: usize, j: usize, p: usize| b * g * t + j * g + p;
    // What each (rank, piece) receives.
    let mut received: std::collections::HashMap<(usize, usize), Vec<usize>> = std::collections::HashMap::new();
    for (i, tr) in rs.transfers.iter().enumerate() {
        received.entry((tr.dst, tr.piece)).or_default().push(i);
    }
    let mut added = 0;
    for tr in rs.transfers.iter_mut() {
        let x = tr.src;
        if box_of[x] != box_of[tr.dst] {
            continue; // the crossing waits for its fold already
        }
        let (b, j, _) = super::two_level::tree_of(tr.piece, g, t);
        let c = box_of[x];
        let batch = if c != b {
            match j.checked_sub(offsets.lag(t)) {
                Some(k) => k,
                None => continue,
            }
        } else {
            (j + offsets.lead(t)).min(t - 1)
        };
        for other in (0..nb).filter(|&o| o != c) {
            let pc = piece(other, batch, pos_of[x]);
            for &r in received.get(&(x, pc)).map_or(&[][..], Vec::as_slice) {
                if pc != tr.piece && !tr.after.contains(&r) {
                    tr.after.push(r);
                    added += 1;
                }
            }
        }
    }
    added
}
