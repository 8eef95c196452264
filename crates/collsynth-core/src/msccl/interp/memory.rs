//! Chunk memory of a rank: the symbolic values cells hold, the (buffer, offset) -> cell map
//! with the runtime's in-place aliasing, and the collective's initial and required values.

use super::super::model::{Buf, Program};
use super::Aliasing;
use crate::ir::Collective;

/// A set of ranks (the contributions summed into a value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Bits(Box<[u64]>);

impl Bits {
    fn empty(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64).max(1)].into_boxed_slice())
    }
    pub fn single(n: usize, r: usize) -> Bits {
        let mut b = Bits::empty(n);
        b.0[r / 64] |= 1 << (r % 64);
        b
    }
    pub fn all(n: usize) -> Bits {
        let mut b = Bits::empty(n);
        (0..n).for_each(|r| b.0[r / 64] |= 1 << (r % 64));
        b
    }
    pub fn intersection(&self, o: &Bits) -> Bits {
        Bits(self.0.iter().zip(o.0.iter()).map(|(a, b)| a & b).collect())
    }
    pub fn union(&self, o: &Bits) -> Bits {
        Bits(self.0.iter().zip(o.0.iter()).map(|(a, b)| a | b).collect())
    }
    /// `self` minus `o`.
    pub fn minus(&self, o: &Bits) -> Bits {
        Bits(self.0.iter().zip(o.0.iter()).map(|(a, b)| a & !b).collect())
    }
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
    pub fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
    pub fn ranks(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &w)| (0..64).filter(move |b| w >> b & 1 == 1).map(move |b| i * 64 + b))
    }
    /// `{0,1,2}`; runs of four or more ranks are written `a-b` to keep lines short.
    pub fn show(&self) -> String {
        let ranks: Vec<usize> = self.ranks().collect();
        let mut parts = Vec::new();
        let mut i = 0;
        while i < ranks.len() {
            let mut j = i;
            while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
                j += 1;
            }
            if j - i >= 3 {
                parts.push(format!("{}-{}", ranks[i], ranks[j]));
            } else {
                parts.extend(ranks[i..=j].iter().map(|r| r.to_string()));
            }
            i = j + 1;
        }
        format!("{{{}}}", parts.join(","))
    }
    /// "rank 1" or "ranks {1,2}".
    pub fn show_ranks(&self) -> String {
        match self.count() {
            1 => format!("rank {}", self.ranks().next().unwrap_or(0)),
            _ => format!("ranks {}", self.show()),
        }
    }
}

/// A value: logical chunk `chunk` of the M-sized buffer, summed over the ranks in `contrib`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Value {
    pub chunk: u32,
    pub contrib: Bits,
}

impl Value {
    /// "chunk 5 of rank 1" or "chunk 5 summed over ranks {0,1,2}".
    pub fn show(&self) -> String {
        match self.contrib.count() {
            1 => format!("chunk {} of {}", self.chunk, self.contrib.show_ranks()),
            _ => format!("chunk {} summed over ranks {}", self.chunk, self.contrib.show()),
        }
    }
}

/// What a cell holds. `Bad` is the result of an operation already reported as wrong: it
/// propagates silently so one mistake gives one line, not a cascade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cell {
    Empty,
    Bad,
    Val(Value),
}

/// Where the buffers of every rank live in its cell array, and the collective's contract.
pub(super) struct Layout {
    pub coll: Collective,
    /// Root of broadcast / reduce (`Program::root`).
    pub root: usize,
    pub ngpus: usize,
    pub aliasing: Aliasing,
    /// Logical chunk counts of the input and output buffers (from nchunksperloop, since a
    /// generator may declare 0 for a buffer it reaches only through the in-place alias).
    pub in_len: usize,
    pub out_len: usize,
    /// Cells before the scratch buffer.
    main_len: usize,
    /// Scratch chunks per rank.
    s_len: Vec<usize>,
}

impl Layout {
    /// The layout of `p` (gpus indexed by rank); errors when the chunk counts do not tile.
    pub fn new(p: &Program, aliasing: Aliasing, s_len: Vec<usize>) -> Result<Layout, String> {
        let (n, c) = (p.ngpus, p.nchunksperloop);
        if n == 0 || c == 0 {
            return Err(format!("ngpus {n} and nchunksperloop {c} must be positive"));
        }
        let tiles = !matches!(p.collective, Collective::Allgather | Collective::ReduceScatter) || c % n == 0;
        if !tiles {
            return Err(format!("nchunksperloop {c} of a {} is not a multiple of ngpus {n}", p.collective.name()));
        }
        let (in_len, out_len) = super::logical_lens(p);
        let main_len = match aliasing {
            Aliasing::OutOfPlace => in_len + out_len,
            Aliasing::InPlace => in_len.max(out_len),
        };
        Ok(Layout { coll: p.collective, root: p.root(), ngpus: n, aliasing, in_len, out_len, main_len, s_len })
    }

    /// First cell of the input (resp. output) view of `rank` ([`Aliasing::view_bases`]): the
    /// send buffer's cells come first, then the receive buffer's (the one buffer in place).
    fn bases(&self, rank: usize) -> (usize, usize) {
        let recv_first = match self.aliasing {
            Aliasing::OutOfPlace => self.in_len,
            Aliasing::InPlace => 0,
        };
        let cell = |(in_recv, chunk): (bool, usize)| if in_recv { recv_first + chunk } else { chunk };
        let (i, o) = self.aliasing.view_bases(self.coll, rank, (self.in_len, self.out_len));
        (cell(i), cell(o))
    }

    /// The cell of chunk `off` of `buf` at `rank`, or None when out of bounds.
    pub fn cell(&self, rank: usize, buf: Buf, off: i64) -> Option<usize> {
        let off = usize::try_from(off).ok()?;
        let (ib, ob) = self.bases(rank);
        match buf {
            Buf::Input => (off < self.in_len).then_some(ib + off),
            Buf::Output => (off < self.out_len).then_some(ob + off),
            Buf::Scratch => (off < *self.s_len.get(rank)?).then_some(self.main_len + off),
        }
    }

    /// Length of a buffer at `rank` (logical for input and output).
    pub fn len(&self, rank: usize, buf: Buf) -> usize {
        match buf {
            Buf::Input => self.in_len,
            Buf::Output => self.out_len,
            Buf::Scratch => self.s_len.get(rank).copied().unwrap_or(0),
        }
    }

    /// The cells of `rank` before the program runs.
    pub fn initial(&self, rank: usize) -> Vec<Cell> {
        let mut cells = vec![Cell::Empty; self.main_len + self.s_len.get(rank).copied().unwrap_or(0)];
        let (ib, _) = self.bases(rank);
        for j in 0..self.in_len {
            let chunk = if self.coll == Collective::Allgather { rank * self.in_len + j } else { j };
            cells[ib + j] = Cell::Val(Value { chunk: chunk as u32, contrib: Bits::single(self.ngpus, rank) });
        }
        cells
    }

    /// The value output chunk `j` of `rank` must hold at the end (None: unconstrained).
    /// Broadcast and reduce use `Program::root` (MSCCL XML has no root attribute).
    pub fn expected(&self, rank: usize, j: usize) -> Option<Value> {
        let n = self.ngpus;
        let (chunk, contrib) = match self.coll {
            Collective::Allgather => (j, Bits::single(n, j / self.in_len)),
            Collective::ReduceScatter => (rank * self.out_len + j, Bits::all(n)),
            Collective::Allreduce => (j, Bits::all(n)),
            Collective::Broadcast => (j, Bits::single(n, self.root)),
            Collective::Reduce if rank == self.root => (j, Bits::all(n)),
            Collective::Reduce | Collective::Allgatherv => return None,
        };
        Some(Value { chunk: chunk as u32, contrib })
    }

    /// Problems with `rank`'s final cells, one line per output chunk.
    pub fn check_final(&self, rank: usize, cells: &[Cell], out: &mut Vec<String>) {
        let (_, ob) = self.bases(rank);
        for j in 0..self.out_len {
            let Some(want) = self.expected(rank, j) else { continue };
            let at = format!("rank {rank} output chunk {j}");
            match cells.get(ob + j) {
                Some(Cell::Val(v)) if *v == want => {}
                Some(Cell::Val(v)) => out.push(format!("{at} holds {} but {}", v.show(), self.needs(v, &want))),
                Some(Cell::Empty) | None => out.push(format!("{at} holds nothing")),
                Some(Cell::Bad) => {} // reported where it went wrong
            }
        }
    }

    /// "allreduce needs all 4 ranks (missing {3})" or "allgather needs chunk 5 of rank 1".
    fn needs(&self, got: &Value, want: &Value) -> String {
        let name = self.coll.name();
        let all = want.contrib.count() == self.ngpus && self.ngpus > 1;
        if got.chunk == want.chunk && all && got.contrib.minus(&want.contrib).is_empty() {
            let missing = want.contrib.minus(&got.contrib);
            return format!("{name} needs all {} ranks (missing {})", self.ngpus, missing.show());
        }
        if all {
            return format!("{name} needs chunk {} summed over all {} ranks", want.chunk, self.ngpus);
        }
        format!("{name} needs {}", want.show())
    }
}

/// "input chunk 3".
pub(super) fn cell_name(buf: Buf, off: usize) -> String {
    let b = match buf {
        Buf::Input => "input",
        Buf::Output => "output",
        Buf::Scratch => "scratch",
    };
    format!("{b} chunk {off}")
}
