//! Symbolic execution, race check and postconditions.
//!
//! Copy collectives track, per (rank, piece), the unique transfer that delivered the piece
//! (or that the rank held it from the start). Reductions track, per (rank, slot, piece) — a
//! *cell* — the set of ranks whose contributions the value sums, as a bitset row in one flat
//! `Vec<u64>`; a row is created only for the cells some transfer writes (a data cell starts
//! as `{rank}`, a scratch cell empty and unreadable until written).

use super::order::Dag;
use super::{plain, rank_list, Cx, Violation};
use crate::ir::{Collective, Op, Transfer, DATA};

const NONE: u32 = u32::MAX;

/// Transfers from which a reduction's value and race passes run side by side.
const PARALLEL_PASSES: usize = 100_000;

pub(super) fn run(cx: &Cx, dag: &mut Dag) -> Result<(), Violation> {
    if !cx.s.collective.is_reduction() {
        return copy(cx, dag);
    }
    let cells = Cells::new(cx);
    // The value and race passes are independent reads of the schedule and the order (only the
    // race pass asks for ancestors): on a large schedule they take a core each. The first
    // violation is the value pass's, as when they run one after the other.
    let order = std::mem::take(&mut dag.order);
    let side_by_side = cx.s.transfers.len() >= PARALLEL_PASSES && crate::parallel::threads(2) > 1;
    let (values, raced) =
        crate::parallel::join(side_by_side, || reduce(cx, &order, &cells), || races(cx, &order, dag, &cells));
    dag.order = order;
    let values = values?;
    raced?;
    values.postcondition(cx)
}

// ---------------------------------------------------------------------------------------
// Copy collectives (allgather, allgatherv, broadcast)

fn copy(cx: &Cx, dag: &mut Dag) -> Result<(), Violation> {
    let s = cx.s;
    let np = s.pieces.len();
    let initially = |r: usize, p: usize| match s.collective {
        Collective::Broadcast => r == s.root,
        _ => s.pieces[p].shard == r,
    };
    // delivered[r * np + p]: the transfer that brought piece p to rank r.
    let mut delivered = vec![NONE; s.n_ranks * np];
    for k in 0..dag.order.len() {
        let i = dag.order[k] as usize;
        let t = &s.transfers[i];
        let p = t.piece;
        if !initially(t.src, p) {
            let w = delivered[t.src * np + p];
            if w == NONE || !dag.is_ancestor(s, w as usize, i) {
                let why = if w == NONE {
                    String::new()
                } else {
                    format!(" (it arrives by transfer {w}, which this transfer does not wait for)")
                };
                return Err(Violation {
                    rank: Some(t.src),
                    ..cx.at(i, format!("rank {} sends piece {p} before it holds it{why}", t.src))
                });
            }
        }
        let slot = &mut delivered[t.dst * np + p];
        if initially(t.dst, p) || *slot != NONE {
            let how = if *slot != NONE {
                format!("transfer {} delivered it already", *slot)
            } else {
                String::from("it holds it from the start")
            };
            return Err(Violation {
                rank: Some(t.dst),
                ..cx.at(i, format!("rank {} receives piece {p} twice ({how})", t.dst))
            });
        }
        *slot = i as u32;
    }
    ends_with_every_piece(cx, (0..s.n_ranks).map(|r| (r, r)), np, initially, |i| delivered[i] != NONE)
}

/// The copy collectives' postcondition, flat and per orbit: each of `rows` (a row of the
/// delivered table and its rank) holds every piece it did not start with (`has(row * np + p)`).
pub(super) fn ends_with_every_piece(
    cx: &Cx,
    rows: impl IntoIterator<Item = (usize, usize)>,
    np: usize,
    initially: impl Fn(usize, usize) -> bool,
    has: impl Fn(usize) -> bool,
) -> Result<(), Violation> {
    for (row, r) in rows {
        for p in 0..np {
            if !initially(r, p) && !has(row * np + p) {
                return Err(Violation {
                    rank: Some(r),
                    piece: Some(p),
                    ..plain(format!("rank {r} ends without {}", cx.piece(p)))
                });
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Reductions (reduce-scatter, allreduce, reduce)

/// The contributions each (rank, piece) holds at the end.
struct Values {
    np: usize,
    words: usize,
    /// `row[r * np + p]`: the bitset row of (r, p), `NONE` if never written (then `{r}`).
    row: Vec<u32>,
    bits: Vec<u64>,
}

impl Values {
    fn get(&self, slot: usize) -> Option<&[u64]> {
        let row = self.row[slot];
        (row != NONE).then(|| &self.bits[row as usize * self.words..(row as usize + 1) * self.words])
    }

    fn postcondition(&self, cx: &Cx) -> Result<(), Violation> {
        let s = cx.s;
        let n = s.n_ranks;
        let has = |bits: &[u64], q: usize| bits[q / 64] >> (q % 64) & 1 == 1;
        let check = |r: usize, p: usize| -> Result<(), Violation> {
            let missing: Vec<usize> = match self.get(r * self.np + p) {
                None if n == 1 => return Ok(()),
                None => (0..n).filter(|&q| q != r).collect(),
                Some(bits) if (0..n).step_by(64).all(|q| bits[q / 64] == full_word(n - q)) => return Ok(()),
                Some(bits) => (0..n).filter(|&q| !has(bits, q)).collect(),
            };
            Err(Violation {
                rank: Some(r),
                piece: Some(p),
                ..plain(format!(
                    "rank {r} ends with {} missing contributions from {}",
                    cx.piece(p),
                    rank_list(&missing, 10)
                ))
            })
        };
        for p in 0..self.np {
            match s.collective {
                Collective::ReduceScatter => check(s.pieces[p].shard, p)?,
                Collective::Reduce => check(s.root, p)?,
                _ => (0..n).try_for_each(|r| check(r, p))?,
            }
        }
        Ok(())
    }
}

/// The word of a full set whose first bit is rank `64 k` when `left` ranks are left.
pub(super) fn full_word(left: usize) -> u64 {
    if left >= 64 {
        u64::MAX
    } else {
        (1u64 << left) - 1
    }
}

/// Cell layout shared by the value and race passes: slot-major, so that the data cells
/// (slot 0) are `rank * np + piece`.
struct Cells {
    n: usize,
    np: usize,
    slots: usize,
}

impl Cells {
    fn new(cx: &Cx) -> Cells {
        let slots = cx.s.transfers.iter().map(|t| t.src_slot.max(t.dst_slot) as usize + 1).max().unwrap_or(1);
        Cells { n: cx.s.n_ranks, np: cx.s.pieces.len(), slots }
    }
    fn len(&self) -> usize {
        self.slots * self.n * self.np
    }
    fn at(&self, rank: usize, slot: u8, piece: usize) -> usize {
        (slot as usize * self.n + rank) * self.np + piece
    }
    fn src(&self, t: &Transfer) -> usize {
        self.at(t.src, t.src_slot, t.piece)
    }
    fn dst(&self, t: &Transfer) -> usize {
        self.at(t.dst, t.dst_slot, t.piece)
    }
    /// (rank, slot) of a cell.
    fn rank_slot(&self, cell: usize) -> (usize, usize) {
        let rs = cell / self.np.max(1);
        (rs % self.n, rs / self.n)
    }
}

fn reduce(cx: &Cx, order: &[u32], cells: &Cells) -> Result<Values, Violation> {
    let s = cx.s;
    let (n, np) = (s.n_ranks, s.pieces.len());
    let words = n.div_ceil(64);
    // One row per written cell, allocated at once: a data cell starts as {rank}, a scratch
    // cell empty and not yet written.
    let mut row = vec![NONE; cells.len()];
    let mut rows = 0usize;
    for t in &s.transfers {
        let cell = &mut row[cells.dst(t)];
        if *cell == NONE {
            *cell = rows as u32;
            rows += 1;
        }
    }
    let mut bits = vec![0u64; rows * words];
    let mut written = vec![false; rows];
    for (cell, &r) in row.iter().enumerate() {
        if r != NONE && cell < n * np {
            let rank = cell / np.max(1);
            bits[r as usize * words + rank / 64] |= 1 << (rank % 64);
            written[r as usize] = true;
        }
    }
    for &i in order {
        let i = i as usize;
        let t = &s.transfers[i];
        let (src, dst, p) = (t.src, t.dst, t.piece);
        let dst_row = row[cells.dst(t)] as usize;
        let src_row = row[cells.src(t)];
        if t.src_slot != DATA && (src_row == NONE || !written[src_row as usize]) {
            let what = format!("reads scratch slot {} of rank {src} before anything is written to it", t.src_slot);
            return Err(Violation { rank: Some(src), ..cx.at(i, what) });
        }
        if t.op == Op::Reduce && t.dst_slot != DATA && !written[dst_row] {
            let what = format!(
                "reduces into scratch slot {} of rank {dst}, which holds nothing yet (scratch is not zeroed: copy into it first)",
                t.dst_slot
            );
            return Err(Violation { rank: Some(dst), ..cx.at(i, what) });
        }
        written[dst_row] = true;
        let d = dst_row * words;
        match (t.op, src_row) {
            (Op::Copy, NONE) => {
                bits[d..d + words].fill(0);
                bits[d + src / 64] |= 1 << (src % 64);
            }
            (Op::Copy, sr) => bits.copy_within(sr as usize * words..(sr as usize + 1) * words, d),
            (Op::Reduce, sr) => {
                let overlap = if sr == NONE {
                    let (w, b) = (src / 64, 1u64 << (src % 64));
                    let hit = bits[d + w] & b != 0;
                    bits[d + w] |= b;
                    hit.then_some(src)
                } else {
                    let sr = sr as usize * words;
                    let (from, to) = if sr < d {
                        let (lo, hi) = bits.split_at_mut(d);
                        (&lo[sr..sr + words], &mut hi[..words])
                    } else {
                        let (lo, hi) = bits.split_at_mut(sr);
                        (&hi[..words], &mut lo[d..d + words])
                    };
                    let mut hit = None;
                    for (w, (a, b)) in from.iter().zip(to.iter_mut()).enumerate() {
                        let both = *a & *b;
                        if both != 0 && hit.is_none() {
                            hit = Some(w * 64 + both.trailing_zeros() as usize);
                        }
                        *b |= *a;
                    }
                    hit
                };
                if let Some(x) = overlap {
                    return Err(Violation {
                        rank: Some(dst),
                        ..cx.at(
                            i,
                            format!("double reduction: rank {x}'s contribution to piece {p} reaches rank {dst} twice"),
                        )
                    });
                }
            }
        }
    }
    Ok(Values { np, words, row, bits })
}

/// How a transfer touches a (rank, piece).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// Sends it (reads the partial value).
    Read,
    /// Reduces into it.
    Add,
    /// Overwrites it.
    Write,
}

/// For each access of a cell, in the cell's order: its index, its kind and the run before its
/// own. A run is a stretch of equal reads or equal adds (a write stands alone); every access
/// must come after each member of the previous run, which both the flat check and the
/// per-orbit check (`orbit_sums`) apply.
pub(super) fn previous_runs(
    accesses: impl IntoIterator<Item = Access>,
) -> impl Iterator<Item = (usize, Access, std::ops::Range<usize>)> {
    let (mut prev, mut cur) = (0..0, 0..0);
    let mut cur_access = Access::Read;
    accesses.into_iter().enumerate().map(move |(k, a)| {
        if k > 0 && a == cur_access && a != Access::Write {
            cur.end = k + 1;
        } else {
            prev = std::mem::replace(&mut cur, k..k + 1);
            cur_access = a;
        }
        (k, a, prev.clone())
    })
}

impl Access {
    pub(super) fn describe(self) -> &'static str {
        match self {
            Access::Read => "sends it",
            Access::Add => "reduces into it",
            Access::Write => "overwrites it",
        }
    }
}

/// Every two accesses to one (rank, piece) must be ordered by the DAG, except two reads or
/// two reductions (addition commutes). In topological order, the accesses of one
/// (rank, piece) fall into maximal runs of mutually compatible ones (reads; reductions; a
/// single overwrite); checking every pair of adjacent runs is exact, since a pair further
/// apart is ordered through any member of each run in between.
fn races(cx: &Cx, order: &[u32], dag: &mut Dag, cells: &Cells) -> Result<(), Violation> {
    let s = cx.s;
    let total = cells.len();
    // Accesses of each cell, in topological order (counting sort).
    let mut start = vec![0u32; total + 1];
    for t in &s.transfers {
        start[cells.src(t) + 1] += 1;
        start[cells.dst(t) + 1] += 1;
    }
    for k in 0..total {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut events = vec![0u32; start[total] as usize];
    for &i in order {
        let t = &s.transfers[i as usize];
        for cell in [cells.src(t), cells.dst(t)] {
            events[fill[cell] as usize] = i;
            fill[cell] += 1;
        }
    }
    drop(fill);
    for cell in 0..total {
        let ev = &events[start[cell] as usize..start[cell + 1] as usize];
        if ev.len() < 2 {
            continue;
        }
        let (r, slot) = cells.rank_slot(cell);
        let piece = cell % cells.np;
        let access = |i: u32| {
            let t = &s.transfers[i as usize];
            match t.op {
                _ if cells.src(t) == cell => Access::Read,
                Op::Reduce => Access::Add,
                Op::Copy => Access::Write,
            }
        };
        let place = if slot == 0 { format!("rank {r}") } else { format!("rank {r} (scratch slot {slot})") };
        for (k, a, prev) in previous_runs(ev.iter().map(|&e| access(e))) {
            let e = ev[k];
            for &x in &ev[prev] {
                if !dag.is_ancestor(s, x as usize, e as usize) {
                    let (x, e) = (x as usize, e as usize);
                    return Err(Violation {
                        rank: Some(r),
                        piece: Some(piece),
                        ..cx.at(
                            e,
                            format!(
                                "race on piece {piece} at {place} with {}: that one {} and this one {}, and neither waits for the other",
                                cx.transfer(x),
                                access(x as u32).describe(),
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
