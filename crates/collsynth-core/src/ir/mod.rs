//! The schedule IR: one representation that every synthesizer emits and every consumer
//! (verifier, cost model, simulator, exporters) reads.
//!
//! Data is divided into *shards* (exact fractions of the size M) and shards into *pieces*
//! (exact sub-intervals). A schedule is a DAG of *transfers*: one piece from one rank to
//! another along a route of physical links, copied or reduced, after its dependencies.
//! Trees are transfers whose `after` is the parent edge; step schedules also set `step`.
//! Pipelining is not stored: [`transform::pipelined`] applies it when costing or simulating.

pub mod json;
pub mod orbit;
pub mod ranges;
pub mod select;
pub mod transform;

use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use crate::topology::Topology;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collective {
    /// N shards, shard r starts at rank r; every rank ends with every shard.
    Allgather,
    /// Allgather with per-rank shard sizes.
    Allgatherv,
    /// N shards; every rank contributes to every shard; rank r ends with the sum of shard r.
    ReduceScatter,
    /// Any partition into shards; every rank contributes; every rank ends with every sum.
    Allreduce,
    /// One shard at the root; every rank ends with it.
    Broadcast,
    /// One shard; every rank contributes; the root ends with the sum.
    Reduce,
}

impl Collective {
    pub const ALL: [Collective; 6] = [
        Collective::Allgather,
        Collective::Allgatherv,
        Collective::ReduceScatter,
        Collective::Allreduce,
        Collective::Broadcast,
        Collective::Reduce,
    ];

    /// The five collectives every general-purpose synthesizer covers (not allgatherv).
    pub const FIVE: &'static [Collective] = &[
        Collective::Allgather,
        Collective::ReduceScatter,
        Collective::Allreduce,
        Collective::Broadcast,
        Collective::Reduce,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Collective::Allgather => "allgather",
            Collective::Allgatherv => "allgatherv",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::Allreduce => "allreduce",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
        }
    }

    pub fn parse(name: &str) -> Result<Collective> {
        Collective::ALL.into_iter().find(|c| c.name() == name).ok_or_else(|| {
            CollsynthError::bad(format!(
                "unknown collective '{name}' (allgather, allgatherv, reduce-scatter, allreduce, broadcast, reduce)"
            ))
        })
    }

    /// Ranks contribute to a sum (Reduce transfers combine values).
    pub fn is_reduction(self) -> bool {
        matches!(self, Collective::ReduceScatter | Collective::Allreduce | Collective::Reduce)
    }

    /// Has a root rank.
    pub fn is_rooted(self) -> bool {
        matches!(self, Collective::Broadcast | Collective::Reduce)
    }

    /// nccl-tests bus-bandwidth factor for `n` ranks.
    pub fn busbw_factor(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Collective::Allreduce => 2.0 * (n - 1.0) / n,
            Collective::Allgather | Collective::Allgatherv | Collective::ReduceScatter => (n - 1.0) / n,
            Collective::Broadcast | Collective::Reduce => 1.0,
        }
    }

    /// nccl-tests' (size, count) columns for a requested size of `bytes` in elements of `elt`
    /// bytes on `n` ranks, as `setupArgs` (src/common.cu: `count = size / wordSize(type)`) and the
    /// collective's `*GetCollByteCount` set them; the size is `max(sendBytes, expectedBytes)`.
    /// Allgather and reduce-scatter (src/all_gather.cu `AllGatherGetCollByteCount`,
    /// src/reduce_scatter.cu `ReduceScatterGetCollByteCount`): the count is per rank, trimmed to
    /// 16 bytes, `(count / n) & ~(16 / elt - 1)` (since nccl-tests commit 29f4114, 2024-12-18;
    /// 4 elements per rank from d313d20, 2022-09-20; `count / n` before). The others keep the
    /// count whole (`AllReduceGetCollByteCount`, `BroadcastGetCollByteCount`,
    /// `ReduceGetCollByteCount`). Every NCCL type's `elt` (1, 2, 4, 8) divides 16.
    pub fn nccl_tests_count(self, bytes: u64, elt: u64, n: u64) -> (u64, u64) {
        let elt = elt.max(1);
        let count = bytes / elt;
        match self {
            Collective::Allgather | Collective::Allgatherv | Collective::ReduceScatter => {
                let per_rank = (count / n.max(1)) & !((16 / elt).max(1) - 1);
                (per_rank * n.max(1) * elt, per_rank)
            }
            _ => (count * elt, count),
        }
    }

    /// The bytes nccl-tests moves for a collective of size `size` (its M, the size it is asked
    /// for) on `n` ranks, in every NCCL type: allgather and reduce-scatter trim each rank's part
    /// to a multiple of 16 bytes, `16 n floor(M / (16 n))` ([`Collective::nccl_tests_count`]'s
    /// size for any `elt` dividing 16), which is 0 below 16 n bytes; the others move M (their
    /// count is whole elements: M itself in bytes, which is what we model, having no data type).
    /// Allgatherv has unequal parts and no nccl-tests counterpart: M.
    pub fn bytes_moved(self, size: Rat, n: usize) -> Rat {
        match self {
            Collective::Allgather | Collective::ReduceScatter => {
                let unit = Rat::from_integer(16 * n.max(1) as i128);
                (size / unit).floor() * unit
            }
            _ => size,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// The destination's value of the piece becomes the source's.
    Copy,
    /// The source's partial sum is added into the destination's.
    Reduce,
}

/// A sub-interval `[start, end)` of shard `shard`, as exact fractions of the shard.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Piece {
    pub shard: usize,
    pub start: Rat,
    pub end: Rat,
}

impl Piece {
    pub fn whole(shard: usize) -> Piece {
        Piece { shard, start: Rat::from_integer(0), end: Rat::from_integer(1) }
    }
    pub fn len(&self) -> Rat {
        self.end - self.start
    }
}

/// One piece moved from rank `src` to rank `dst` along `route` (link indices of the
/// schedule's topology, consecutive), after every transfer in `after`.
///
/// Slots: every rank holds one value per piece in slot [`DATA`] (the collective's buffer)
/// and, for reductions, may use scratch slots 1, 2, ... (zero-size extra buffers that are
/// not part of the result: start empty, are never read before written, and are ignored by
/// the postcondition). A *local* transfer (`src == dst`, empty route) moves a value
/// between two slots of one rank: Träff's census (Algorithm 8) needs a receive buffer and a
/// partial sum next to the rank's own value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    pub piece: usize,
    pub src: usize,
    pub dst: usize,
    pub route: Vec<usize>,
    pub op: Op,
    pub after: Vec<usize>,
    pub step: Option<u32>,
    /// Slot read at `src` and slot written at `dst` ([`DATA`] unless scratch is used).
    pub src_slot: u8,
    pub dst_slot: u8,
    /// A *range transfer* ([`ranges`]) when above 1: it stands for the `count` transfers of
    /// pieces `piece..piece + count`, alike but for their pieces and dependencies.
    pub count: u32,
}

/// The slot of the collective's own buffer; higher slots are scratch.
pub const DATA: u8 = 0;

impl Transfer {
    /// A transfer between the ranks' data slots (what every synthesizer but the census emits).
    pub fn new(
        piece: usize,
        src: usize,
        dst: usize,
        route: Vec<usize>,
        op: Op,
        after: Vec<usize>,
        step: Option<u32>,
    ) -> Self {
        Transfer { piece, src, dst, route, op, after, step, src_slot: DATA, dst_slot: DATA, count: 1 }
    }

    /// Moves data between two slots of one rank (no link).
    pub fn is_local(&self) -> bool {
        self.src == self.dst
    }

    /// Reads or writes a scratch slot.
    pub fn uses_scratch(&self) -> bool {
        (self.src_slot, self.dst_slot) != (DATA, DATA)
    }
}

/// The runtime that executes a schedule; the runtime cost model charges what it does per
/// step (docs/simulator.md). A synthesizer that reproduces a runtime's own kernels says so;
/// everything else runs as written, under MSCCL's interpreter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Executor {
    /// MSCCL's interpreter runs the DAG as written (every schedule exports to MSCCL XML).
    #[default]
    Msccl,
    /// NCCL's ring kernel (`runRing`, NCCL_ALGO_RING): every transfer is one step of a
    /// channel's loop.
    NcclRing,
    /// NCCL's tree kernel (`runTreeSplit`, NCCL_ALGO_TREE): every transfer is one level of a
    /// channel's tree, up or down.
    NcclTree,
}

impl Executor {
    pub const ALL: [Executor; 3] = [Executor::Msccl, Executor::NcclRing, Executor::NcclTree];

    /// The name in the schedule file (`provenance.executor`) and in `--json`.
    pub fn name(self) -> &'static str {
        match self {
            Executor::Msccl => "msccl",
            Executor::NcclRing => "nccl_ring_kernel",
            Executor::NcclTree => "nccl_tree_kernel",
        }
    }

    pub fn parse(text: &str) -> Result<Executor> {
        Executor::ALL.into_iter().find(|e| e.name() == text).ok_or_else(|| {
            CollsynthError::bad(format!("unknown executor '{text}' (msccl, nccl_ring_kernel, nccl_tree_kernel)"))
        })
    }
}

/// Where a schedule came from: algorithm, options and the topology it was made for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Provenance {
    /// Which runtime executes it (MSCCL's interpreter unless a synthesizer says otherwise).
    pub executor: Executor,
    pub algorithm: String,
    pub options: Vec<(String, String)>,
    pub topology_hash: String,
    /// Facts about the result that `synth --json` reports next to the cost (ForestColl's `k`
    /// and `trees`, a synthesizer's own estimate, ...).
    pub details: Details,
}

/// A synthesizer's facts about its result, typed in serde's data model and kept in the order
/// the synthesizer states them: readers take numbers and strings as they are, never parse
/// text back. Setting a key again replaces its value in place.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Details(Vec<(String, serde_json::Value)>);

impl Details {
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `key` to `value` (an integer, float, string, `Vec`, `serde_json::json!` value...).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) {
        let (key, value) = (key.into(), value.into());
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// Builder form of [`Details::set`].
    pub fn with(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.set(key, value);
        self
    }

    pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The JSON text of `key`'s value, as the schedule file writes it (`"3/4"` with its quotes).
    pub fn text(&self, key: &str) -> Option<String> {
        self.get(key).map(serde_json::Value::to_string)
    }

    /// The value of `key` when it is a whole number.
    pub fn usize(&self, key: &str) -> Option<usize> {
        self.get(key).and_then(serde_json::Value::as_u64).and_then(|v| usize::try_from(v).ok())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every entry of `other`, set in order (a key already here takes `other`'s value).
    pub fn extend(&mut self, other: Details) {
        for (k, v) in other.0 {
            self.set(k, v);
        }
    }

    /// The details as one JSON object, in their order.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(self.0.iter().cloned().collect())
    }
}

impl FromIterator<(String, serde_json::Value)> for Details {
    fn from_iter<I: IntoIterator<Item = (String, serde_json::Value)>>(iter: I) -> Self {
        let mut d = Details::new();
        for (k, v) in iter {
            d.set(k, v);
        }
        d
    }
}

/// An exact rational as a detail value: the `"p/q"` string of docs/contracts.md's `_exact` keys.
pub fn exact_value(r: &crate::rational::Rat) -> serde_json::Value {
    serde_json::Value::String(crate::rational::to_fraction_string(r))
}

/// A whole number as a detail value (`i128` counts: JSON numbers hold 64 bits, beyond that
/// the exact decimal string).
pub fn whole_value(v: i128) -> serde_json::Value {
    i64::try_from(v).map_or_else(|_| serde_json::Value::String(v.to_string()), serde_json::Value::from)
}

/// A rational as a detail value in floating point (the key next to its `_exact` twin).
pub fn decimal_value(r: &crate::rational::Rat) -> serde_json::Value {
    crate::rational::to_f64(r).into()
}

/// True for a provenance detail that is a wall-clock time (key ending in `_seconds`, such as
/// ForestColl's `stage_seconds`): `--json` reports it, the schedule file never holds it, so
/// that the same input always gives the same file bytes.
pub fn is_timing(key: &str) -> bool {
    key.ends_with("_seconds")
}

/// A schedule for one collective on one topology (plain data; see module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub collective: Collective,
    pub n_ranks: usize,
    /// Root rank of broadcast / reduce (0 otherwise).
    pub root: usize,
    /// Fraction of the size M in each shard; sums to 1.
    pub shards: Vec<Rat>,
    pub pieces: Vec<Piece>,
    pub transfers: Vec<Transfer>,
    pub provenance: Provenance,
    /// `None` for a flat schedule. `Some(G)`: the schedule is stated per orbit of G
    /// ([`orbit`]): `transfers[a]` is orbit a's representative, the flat transfer `a |G| + g`
    /// is its image under g, and `after` holds flat indices. Consumers that need every
    /// transfer call [`orbit::flat`].
    pub symmetry: Option<std::sync::Arc<orbit::Group>>,
}

impl Schedule {
    /// An empty schedule with the standard shards of `collective` (allgather and the
    /// reductions: N equal shards; broadcast and reduce: one).
    pub fn new(collective: Collective, n_ranks: usize, root: usize, algorithm: &str) -> Schedule {
        let shards = match collective {
            Collective::Broadcast | Collective::Reduce => vec![Rat::from_integer(1)],
            _ => vec![Rat::new(1, n_ranks as i128); n_ranks],
        };
        Schedule {
            collective,
            n_ranks,
            root,
            shards,
            pieces: Vec::new(),
            transfers: Vec::new(),
            provenance: Provenance { algorithm: algorithm.to_string(), ..Default::default() },
            symmetry: None,
        }
    }

    /// Add a piece; returns its index.
    pub fn add_piece(&mut self, piece: Piece) -> usize {
        self.pieces.push(piece);
        self.pieces.len() - 1
    }

    /// Add a transfer; returns its index.
    pub fn add(&mut self, t: Transfer) -> usize {
        self.transfers.push(t);
        self.transfers.len() - 1
    }

    /// Some transfer reads or writes a scratch slot (see [`Transfer`]).
    pub fn uses_scratch(&self) -> bool {
        self.transfers.iter().any(Transfer::uses_scratch)
    }

    /// Fraction of M that piece `p` is.
    pub fn piece_fraction(&self, p: usize) -> Rat {
        let piece = &self.pieces[p];
        self.shards[piece.shard] * piece.len()
    }

    /// Number of steps (max step + 1) of a step schedule, `None` if no transfer has a step.
    pub fn n_steps(&self) -> Option<u32> {
        self.transfers.iter().filter_map(|t| t.step).max().map(|s| s + 1)
    }

    /// Depth of the DAG: the longest chain of transfers (a tree schedule's deepest tree).
    pub fn depth(&self) -> usize {
        if ranges::has_ranges(self) {
            return ranges::flat(self).map_or(0, |s| s.depth());
        }
        if self.symmetry.is_some() {
            // The flat DAG's depth is its quotient's: g t is as deep as t.
            return orbit::representatives(self).depth();
        }
        // A cycle has no depth: 0, as for an empty schedule (the verifier reports the cycle).
        self.levels().map_or(0, |level| level.into_iter().max().map_or(0, |l| l + 1))
    }

    /// Each transfer's level in the DAG: 0 without dependencies, else one more than its
    /// deepest dependency (the depth is the deepest level + 1). `BadInput` on a cycle.
    pub fn levels(&self) -> Result<Vec<usize>> {
        let mut level = vec![0usize; self.transfers.len()];
        for i in transform::topological_order(self)? {
            level[i] = self.transfers[i].after.iter().map(|&a| level[a] + 1).max().unwrap_or(0);
        }
        Ok(level)
    }

    /// Communication steps or rounds: `n_steps` for a step schedule, else the DAG depth.
    pub fn steps(&self) -> usize {
        self.n_steps().map(|s| s as usize).unwrap_or_else(|| self.depth())
    }
}

/// Shortest routes between ranks (fewest hops; BFS over links in canonical order, so
/// deterministic). One BFS per source rank, computed on first use and cached.
pub struct Router<'a> {
    topo: &'a Topology,
    /// `via[src_rank]`: for every node, the link that reaches it on the BFS tree.
    via: Vec<Option<Vec<usize>>>,
}

impl<'a> Router<'a> {
    pub fn new(topo: &'a Topology) -> Self {
        Router { topo, via: vec![None; topo.n_ranks()] }
    }

    fn bfs(&self, src: usize) -> Vec<usize> {
        let topo = self.topo;
        let s = topo.rank_node(src);
        let mut via = vec![usize::MAX; topo.n_nodes()];
        let mut queue = std::collections::VecDeque::from([s]);
        let mut seen = vec![false; topo.n_nodes()];
        seen[s] = true;
        while let Some(u) = queue.pop_front() {
            for i in topo.out_links(u) {
                let w = topo.links[i].dst;
                if !seen[w] {
                    seen[w] = true;
                    via[w] = i;
                    queue.push_back(w);
                }
            }
        }
        via
    }

    /// The route from rank `src` to rank `dst` as link indices (empty when equal).
    /// Validated topologies connect all ranks, so a route always exists.
    pub fn route(&mut self, src: usize, dst: usize) -> Result<Vec<usize>> {
        // Routed synthesizers ask for one route per transfer: the poll that stops them at the
        // memory budget or on Ctrl-C.
        crate::budget::check_cancelled()?;
        if self.via[src].is_none() {
            self.via[src] = Some(self.bfs(src));
        }
        let via = self.via[src].as_ref().expect("just computed");
        let (s, mut v) = (self.topo.rank_node(src), self.topo.rank_node(dst));
        let mut route = Vec::new();
        while v != s {
            let l = *via
                .get(v)
                .filter(|&&l| l != usize::MAX)
                .ok_or_else(|| CollsynthError::internal(format!("no route from rank {src} to rank {dst}")))?;
            route.push(l);
            v = self.topo.links[l].src;
        }
        route.reverse();
        Ok(route)
    }
}

#[cfg(test)]
mod tests;
