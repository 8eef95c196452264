//! The chunk grid: every piece of a schedule as a contiguous run of equal chunks of the
//! M-sized buffer, and where each (rank, piece) lives in the runtime's buffers.

use crate::error::{CollsynthError, Result};
use crate::ir::{Collective, Schedule};
use crate::msccl::Buf;
use crate::rational::Rat;
use num_integer::Integer;

/// Finer grids make runtimes reject sizes (`count % nchunksperloop` must be 0) and blow
/// up XML size; beyond this the schedule is not worth exporting as it is.
pub const MAX_GRID: i128 = 1 << 16;

/// Pieces as chunk ranges of the whole buffer, with the buffer views of the collective.
pub struct Grid {
    pub collective: Collective,
    pub n: usize,
    pub root: usize,
    /// `nchunksperloop`: chunks in the M-sized buffer.
    pub chunks: usize,
    /// First chunk and chunk count of each piece.
    pub range: Vec<(usize, usize)>,
}

impl Grid {
    /// The coarsest grid on which every piece boundary (and, for the allgather family,
    /// every shard boundary) falls: the lcm of the denominators of the boundaries.
    pub fn new(s: &Schedule) -> Result<Grid> {
        let mut offsets = Vec::with_capacity(s.shards.len());
        let mut at = Rat::from_integer(0);
        for f in &s.shards {
            offsets.push(at);
            at += f;
        }
        let bounds: Vec<(Rat, Rat)> = s
            .pieces
            .iter()
            .map(|p| (offsets[p.shard] + s.shards[p.shard] * p.start, offsets[p.shard] + s.shards[p.shard] * p.end))
            .collect();
        let mut lcm: i128 = 1;
        for r in bounds.iter().flat_map(|(a, b)| [a, b]).chain(offsets.iter()) {
            lcm = lcm.lcm(r.denom());
            if lcm > MAX_GRID {
                return Err(CollsynthError::Infeasible(format!(
                    "the schedule's pieces need a grid of more than {MAX_GRID} chunks per loop; \
                     export a coarser schedule (fewer trees or a smaller --pipeline)"
                )));
            }
        }
        let at = |r: &Rat| (r * Rat::from_integer(lcm)).to_integer() as usize;
        let range = bounds.iter().map(|(a, b)| (at(a), at(b) - at(a))).collect();
        Ok(Grid { collective: s.collective, n: s.n_ranks, root: s.root, chunks: lcm as usize, range })
    }

    /// Chunks of one rank's shard (allgather input, reduce-scatter output).
    pub fn shard_chunks(&self) -> usize {
        self.chunks / self.n
    }

    /// Logical input and output chunk counts (`i_chunks`, `o_chunks`).
    pub fn io_chunks(&self) -> (usize, usize) {
        match self.collective {
            Collective::Allgather => (self.shard_chunks(), self.chunks),
            Collective::ReduceScatter => (self.chunks, self.shard_chunks()),
            _ => (self.chunks, self.chunks),
        }
    }

    /// Does `rank` hold piece `p` before anything happens?
    pub fn initially_held(&self, rank: usize, p: usize) -> bool {
        match self.collective {
            Collective::Allgather => self.range[p].0 / self.shard_chunks() == rank,
            Collective::Broadcast => rank == self.root,
            _ => true,
        }
    }

    /// Must `rank` hold piece `p` at the end (in its output)?
    pub fn final_at(&self, rank: usize, p: usize) -> bool {
        match self.collective {
            Collective::ReduceScatter => self.range[p].0 / self.shard_chunks() == rank,
            Collective::Reduce => rank == self.root,
            _ => true,
        }
    }

    /// Chunk offset of piece `p` of `rank` in buffer `buf` (Input / Output views).
    pub fn offset(&self, rank: usize, p: usize, buf: Buf) -> usize {
        let first = self.range[p].0;
        let shifted = matches!(
            (self.collective, buf),
            (Collective::Allgather, Buf::Input) | (Collective::ReduceScatter, Buf::Output)
        );
        if shifted {
            first - rank * self.shard_chunks()
        } else {
            first
        }
    }
}
