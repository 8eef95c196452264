//! Reduce-scatter and allreduce stated per orbit, verified on the representatives: the
//! symbolic execution, race check and postcondition of `exec` on one cell per orbit.
//!
//! Why it is the flat verdict (docs/schedule-format.md): the value of a cell (rank, slot,
//! piece) is the set of ranks its partial sum counts, and g moves the value of (r, s, p) onto
//! that of (g r, s, g p) as a set: true at the start (data cell {r}, scratch empty) and kept by
//! every orbit of transfers, whose members never touch a common cell (g t and h t touch the
//! same cell only if g moves t's piece, hence its shard, like h: g = h, G being free). So a
//! topological order of the quotient, each orbit run as a whole, is a topological order of
//! the flat schedule; the state is kept for one cell per orbit (representative rank, slot,
//! piece), and a transfer's source value is moved onto its destination's cell. A double
//! reduction, a scratch read too early, a race or a missing contribution at one cell happens
//! at all its images. Race-free schedules give the same values in every topological order,
//! and a race is a violation in every order, so the verdict does not depend on the order.

use super::exec::{full_word, previous_runs, Access};
use super::orbit::Ancestors;
use super::order::Dag;
use super::{plain, rank_list, Cx, Violation};
use crate::ir::orbit::{move_piece, Group, PieceIndex, RankOrbits};
use crate::ir::{Collective, Op, Schedule, DATA};

const NONE: u32 = u32::MAX;

/// The cells of one orbit each: (slot, rank orbit, piece moved back to the orbit's
/// representative rank), and the element that moves the representative cell onto a cell.
struct Canon<'a> {
    s: &'a Schedule,
    group: &'a Group,
    orbits: &'a RankOrbits,
    index: &'a PieceIndex,
    np: usize,
    /// `rank_at[o |G| + e]`: the rank e moves orbit o's representative to.
    rank_at: Vec<usize>,
}

impl Canon<'_> {
    /// The representative cell of (rank, slot, piece) and the g that moves it there.
    fn cell(&self, cx: &Cx, rank: usize, slot: u8, piece: usize) -> Result<(usize, usize), Violation> {
        let g = self.orbits.from_rep[rank];
        let p0 = move_piece(self.s, self.index, self.group.inverse(g), piece)
            .ok_or_else(|| plain(format!("{} has no image under the group", cx.piece(piece))))?;
        let o = self.orbits.orbit[rank];
        Ok(((slot as usize * self.orbits.reps.len() + o) * self.np + p0, g))
    }

    /// Rank q moved by g.
    fn act(&self, g: usize, q: usize) -> usize {
        let order = self.group.order();
        self.rank_at[self.orbits.orbit[q] * order + self.group.compose(g, self.orbits.from_rep[q])]
    }
}

pub(super) fn run(cx: &Cx, s: &Schedule, dag: &Dag, orbits: &RankOrbits, index: &PieceIndex) -> Result<(), Violation> {
    let group = s.symmetry.as_deref().expect("compact");
    let (n, np, order) = (s.n_ranks, s.pieces.len(), group.order());
    let mut rank_at = vec![0usize; orbits.reps.len() * order];
    for r in 0..n {
        rank_at[orbits.orbit[r] * order + orbits.from_rep[r]] = r;
    }
    let canon = Canon { s, group, orbits, index, np, rank_at };
    let slots = s.transfers.iter().map(|t| t.src_slot.max(t.dst_slot) as usize + 1).max().unwrap_or(1);
    let cells = slots * orbits.reps.len() * np;
    // Each representative's source and destination cells, and the elements moving them there.
    let mut ends = Vec::with_capacity(s.transfers.len());
    for t in &s.transfers {
        ends.push((canon.cell(cx, t.src, t.src_slot, t.piece)?, canon.cell(cx, t.dst, t.dst_slot, t.piece)?));
    }
    let words = n.div_ceil(64);
    let mut row = vec![NONE; cells];
    let mut rows = 0usize;
    for &(_, (dst, _)) in &ends {
        if row[dst] == NONE {
            row[dst] = rows as u32;
            rows += 1;
        }
    }
    let mut bits = vec![0u64; rows * words];
    let mut written = vec![false; rows];
    let data_cells = orbits.reps.len() * np;
    for (cell, &r) in row.iter().enumerate().take(data_cells) {
        if r != NONE {
            let rank = orbits.reps[cell / np];
            bits[r as usize * words + rank / 64] |= 1 << (rank % 64);
            written[r as usize] = true;
        }
    }
    let mut moved_set = vec![0u64; words];
    for &a in &dag.order {
        let a = a as usize;
        let t = &s.transfers[a];
        let ((src_cell, gs), (dst_cell, gd)) = ends[a];
        let dst_row = row[dst_cell] as usize;
        let src_row = row[src_cell];
        if t.src_slot != DATA && (src_row == NONE || !written[src_row as usize]) {
            let what = format!("reads scratch slot {} of rank {} before anything is written to it", t.src_slot, t.src);
            return Err(Violation { rank: Some(t.src), ..cx.at(a, what) });
        }
        if t.op == Op::Reduce && t.dst_slot != DATA && !written[dst_row] {
            let what = format!(
                "reduces into scratch slot {} of rank {}, which holds nothing yet (scratch is not zeroed: copy into it first)",
                t.dst_slot, t.dst
            );
            return Err(Violation { rank: Some(t.dst), ..cx.at(a, what) });
        }
        written[dst_row] = true;
        // The source's value as seen from the destination's representative cell:
        // g_d^-1 g_s applied to the representative source value ({t.src} if never written).
        let m = group.compose(group.inverse(gd), gs);
        moved_set.fill(0);
        let mut set = |q: usize| {
            let w = canon.act(m, q);
            moved_set[w / 64] |= 1 << (w % 64);
        };
        if src_row == NONE {
            set(orbits.reps[orbits.orbit[t.src]]);
        } else {
            let base = src_row as usize * words;
            for (w, &word) in bits[base..base + words].iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    set(w * 64 + word.trailing_zeros() as usize);
                    word &= word - 1;
                }
            }
        }
        let d = &mut bits[dst_row * words..(dst_row + 1) * words];
        match t.op {
            Op::Copy => d.copy_from_slice(&moved_set),
            Op::Reduce => {
                let hit = d.iter().zip(&moved_set).enumerate().find(|(_, (x, y))| **x & **y != 0);
                if let Some((w, (x, y))) = hit {
                    // The contributor at the representative cell, moved onto the transfer's.
                    let x = canon.act(gd, w * 64 + (x & y).trailing_zeros() as usize);
                    return Err(Violation {
                        rank: Some(t.dst),
                        ..cx.at(
                            a,
                            format!(
                                "double reduction: rank {x}'s contribution to piece {} reaches rank {} twice",
                                t.piece, t.dst
                            ),
                        )
                    });
                }
                d.iter_mut().zip(&moved_set).for_each(|(x, y)| *x |= y);
            }
        }
    }
    races(cx, s, dag, &ends, cells)?;
    postcondition(cx, s, &canon, &row, &bits, words)
}

/// The race check of `exec` on the representative cells: each representative touches a
/// representative cell through the member `a |G| + g^-1` (g moving the cell onto its own), in
/// the quotient's topological order; adjacent runs of compatible accesses must be ordered.
type Ends = ((usize, usize), (usize, usize));
fn races(cx: &Cx, s: &Schedule, dag: &Dag, ends: &[Ends], cells: usize) -> Result<(), Violation> {
    let group = s.symmetry.as_deref().expect("compact");
    let order = group.order();
    let mut start = vec![0u32; cells + 1];
    for &((src, _), (dst, _)) in ends {
        start[src + 1] += 1;
        start[dst + 1] += 1;
    }
    for k in 0..cells {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    // (flat transfer, access)
    let mut events = vec![(0usize, Access::Read); start[cells] as usize];
    for &a in &dag.order {
        let a = a as usize;
        let t = &s.transfers[a];
        let ((src, gs), (dst, gd)) = ends[a];
        let write = if t.op == Op::Reduce { Access::Add } else { Access::Write };
        for (cell, g, access) in [(src, gs, Access::Read), (dst, gd, write)] {
            events[fill[cell] as usize] = (a * order + group.inverse(g), access);
            fill[cell] += 1;
        }
    }
    drop(fill);
    let mut search = Ancestors::default();
    search.pos = vec![0u32; s.transfers.len()];
    for (k, &a) in dag.order.iter().enumerate() {
        search.pos[a as usize] = k as u32;
    }
    for cell in 0..cells {
        let ev = &events[start[cell] as usize..start[cell + 1] as usize];
        if ev.len() < 2 {
            continue;
        }
        for (k, a, prev) in previous_runs(ev.iter().map(|&(_, a)| a)) {
            let e = ev[k].0;
            for &(x, xa) in &ev[prev] {
                if !search.is_ancestor(s, x, e) {
                    let (rep, g) = (e / order, e % order);
                    let t = &s.transfers[rep];
                    let (r, piece) = if a == Access::Read { (t.src, t.piece) } else { (t.dst, t.piece) };
                    let r = group.rank(g, r);
                    let flat = |y: usize| {
                        let u = &s.transfers[y / order];
                        format!(
                            "flat transfer {y} (rank {} -> {}, image of representative {})",
                            group.rank(y % order, u.src),
                            group.rank(y % order, u.dst),
                            y / order
                        )
                    };
                    return Err(Violation {
                        rank: Some(r),
                        ..cx.at(
                            rep,
                            format!(
                                "its image {} races on {} at rank {r} with {}: that one {} and this one {}, and neither waits for the other",
                                flat(e),
                                cx.piece(piece),
                                flat(x),
                                xa.describe(),
                                a.describe()
                            ),
                        )
                    });
                }
            }
        }
    }
    Ok(())
}

/// Every rank ends with every contribution where the collective promises it: reduce-scatter
/// at each piece's shard owner, allreduce everywhere. The condition moves with the group, so
/// one cell per orbit decides.
fn postcondition(
    cx: &Cx,
    s: &Schedule,
    canon: &Canon,
    row: &[u32],
    bits: &[u64],
    words: usize,
) -> Result<(), Violation> {
    let n = s.n_ranks;
    let full = |r: u32| r != NONE && (0..n).step_by(64).all(|q| bits[r as usize * words + q / 64] == full_word(n - q));
    let check = |rank: usize, p: usize| -> Result<(), Violation> {
        let (cell, g) = canon.cell(cx, rank, DATA, p)?;
        if n == 1 || full(row[cell]) {
            return Ok(());
        }
        let has = |q: usize| {
            let r = row[cell];
            if r == NONE {
                q == canon.orbits.reps[canon.orbits.orbit[rank]]
            } else {
                bits[r as usize * words + q / 64] >> (q % 64) & 1 == 1
            }
        };
        let mut missing: Vec<usize> = (0..n).filter(|&q| !has(q)).map(|q| canon.act(g, q)).collect();
        missing.sort_unstable();
        Err(Violation {
            rank: Some(rank),
            piece: Some(p),
            ..plain(format!(
                "rank {rank} ends with {} missing contributions from {}",
                cx.piece(p),
                rank_list(&missing, 10)
            ))
        })
    };
    match s.collective {
        Collective::ReduceScatter => (0..canon.np).try_for_each(|p| check(s.pieces[p].shard, p)),
        _ => canon.orbits.reps.iter().try_for_each(|&r| (0..canon.np).try_for_each(|p| check(r, p))),
    }
}
