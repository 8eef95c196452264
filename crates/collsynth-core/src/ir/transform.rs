//! The shared transformations, written once: reversal (allgather -> reduce-scatter,
//! broadcast -> reduce), composition (reduce-scatter + allgather -> allreduce, reduce +
//! broadcast -> allreduce), splitting into pipeline chunks, graph transposition, moving a
//! schedule onto other ranks and links (an isomorphism), and running schedules side by side
//! on slices of every shard; [`interleaved()`]: pipeline chunks listed round by round.

use super::{orbit, Collective, Op, Piece, Schedule, Transfer};
use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use crate::topology::{Topology, TopologyBuilder};

pub mod interleaved;
pub use interleaved::interleaved;

/// Transfers in an order where every transfer follows its dependencies (Kahn's algorithm,
/// smallest index first among ready ones). Errors on a dependency cycle or a bad index.
///
/// Inside [`with_order`] of `s` the order is the one computed there, not recomputed.
pub fn topological_order(s: &Schedule) -> Result<Vec<usize>> {
    if let Some(order) = KNOWN.with_borrow(|k| k.as_ref().filter(|k| k.is(s)).map(|k| k.order.clone())) {
        return Ok(order.as_ref().clone());
    }
    kahn(s)
}

/// A schedule's topological order, computed once for the consumers of one evaluation
/// ([`with_order`]); it holds nothing when there is none (a cycle, a bad index: each consumer
/// then reports it itself).
#[derive(Clone)]
pub struct SharedOrder(Option<Known>);

/// `s`'s [`topological_order`], to share ([`with_order`]): inside a [`with_order`] for `s`,
/// the order already shared there (the verifier's and the evaluation's, `api`).
pub fn shared_order(s: &Schedule) -> SharedOrder {
    if let Some(known) = KNOWN.with_borrow(|k| k.as_ref().filter(|k| k.is(s)).cloned()) {
        return SharedOrder(Some(known));
    }
    SharedOrder(kahn(s).ok().map(|order| Known { at: Known::key(s), order: std::sync::Arc::new(order) }))
}

/// An order and the schedule it is for: the schedule's address and its transfer list's
/// (start, length).
#[derive(Clone)]
struct Known {
    at: (usize, usize, usize),
    order: std::sync::Arc<Vec<usize>>,
}

impl Known {
    fn key(s: &Schedule) -> (usize, usize, usize) {
        (s as *const Schedule as usize, s.transfers.as_ptr() as usize, s.transfers.len())
    }
    fn is(&self, s: &Schedule) -> bool {
        self.at == Known::key(s)
    }
}

thread_local! {
    /// The order [`with_order`] hands out on this thread.
    static KNOWN: std::cell::RefCell<Option<Known>> = const { std::cell::RefCell::new(None) };
}

/// `f()` with every [`topological_order`] of `s` on this thread answered by `order` (made by
/// [`shared_order`] from this `s`, else ignored): the simulators, alpha-beta, the step count
/// and the protocol estimate each ask for it, and on a schedule of millions of transfers with
/// forward dependencies (a reversed reduce-scatter) each Kahn pass costs a tenth of a second.
/// `s` stays borrowed for the whole call, so it cannot change meanwhile, and no other
/// schedule can sit at its address.
pub fn with_order<T>(s: &Schedule, order: &SharedOrder, f: impl FnOnce() -> T) -> T {
    /// Restores the enclosing order however `f` ends.
    struct Restore(Option<Known>);
    impl Drop for Restore {
        fn drop(&mut self) {
            KNOWN.set(self.0.take());
        }
    }
    let Some(known) = order.0.as_ref().filter(|k| k.is(s)) else { return f() };
    let _restore = Restore(KNOWN.replace(Some(known.clone())));
    f()
}

fn kahn(s: &Schedule) -> Result<Vec<usize>> {
    debug_assert!(!super::ranges::has_ranges(s), "the order of expanded ranges (ir::ranges::flat)");
    let n = s.transfers.len();
    let mut backward = true;
    for (i, t) in s.transfers.iter().enumerate() {
        if let Some(&a) = t.after.iter().find(|&&a| a >= n) {
            return Err(CollsynthError::bad(format!("transfer {i} depends on unknown transfer {a}")));
        }
        backward &= t.after.iter().all(|&a| a < i);
    }
    // Every dependency earlier in the list (as synthesizers emit them): the smallest ready
    // index is always the next one, so the order is the list's own.
    if backward {
        return Ok((0..n).collect());
    }
    // Dependents in CSR: a's are children[first[a]..first[a + 1]].
    let mut indegree = vec![0u32; n];
    let mut first = vec![0usize; n + 1];
    for (i, t) in s.transfers.iter().enumerate() {
        indegree[i] = t.after.len() as u32;
        for &a in &t.after {
            first[a + 1] += 1;
        }
    }
    for a in 0..n {
        first[a + 1] += first[a];
    }
    let mut children = vec![0usize; first[n]];
    let mut fill = first.clone();
    for (i, t) in s.transfers.iter().enumerate() {
        for &a in &t.after {
            children[fill[a]] = i;
            fill[a] += 1;
        }
    }
    // The smallest ready index is the smaller of the heap's top, which holds the transfers
    // that became ready behind the scan, and the first ready index at or after the scan.
    let mut late: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = std::collections::BinaryHeap::new();
    let mut scan = 0usize;
    let mut order = Vec::with_capacity(n);
    loop {
        while scan < n && indegree[scan] != 0 {
            scan += 1;
        }
        let i = match late.peek() {
            Some(&std::cmp::Reverse(h)) if scan >= n || h < scan => {
                late.pop();
                h
            }
            _ if scan < n => {
                scan += 1;
                scan - 1
            }
            _ => break,
        };
        order.push(i);
        for &c in &children[first[i]..first[i + 1]] {
            indegree[c] -= 1;
            if indegree[c] == 0 && c < scan {
                late.push(std::cmp::Reverse(c));
            }
        }
    }
    if order.len() != n {
        let stuck = (0..n).find(|&i| indegree[i] > 0).unwrap_or(0);
        return Err(CollsynthError::bad(format!("dependency cycle (deadlock) through transfer {stuck}")));
    }
    Ok(order)
}

/// The transpose of `topo`: every link reversed, nodes and ranks unchanged. A schedule made
/// on the transpose and then [`reverse`]d runs on `topo` (direct-connect paper, appendix B).
pub fn transpose(topo: &Topology) -> Topology {
    let mut b = TopologyBuilder::new(format!("transpose({})", topo.name));
    for n in &topo.nodes {
        b.node(n.name.clone(), n.kind, n.group.as_deref());
    }
    for l in &topo.links {
        b.link(l.dst, l.src, l.bandwidth, l.latency);
    }
    b.build().expect("the transpose of a valid topology is valid")
}

/// Reverse a copy schedule (allgather, allgatherv, broadcast) made on `made_on` into the
/// matching reduction (reduce-scatter, reduce) on `target`: every transfer runs backwards
/// as a Reduce along the reversed route, and every dependency flips. `made_on` is either
/// `target` itself (every route reversible) or its transpose.
///
/// A compact schedule (`ir::orbit`) reverses orbit by orbit into a compact one with the same
/// group (its links those of `target`): the reverse of `g t` is `g` applied to the reverse of
/// `t`, and flat transfer `a |G| + g`'s dependents are the images under g of its
/// representative's, so the expansion of the result is the reverse of the expansion.
pub fn reverse(s: &Schedule, made_on: &Topology, target: &Topology) -> Result<Schedule> {
    if super::ranges::has_ranges(s) {
        return reverse(super::ranges::flat(s)?.as_ref(), made_on, target);
    }
    let collective = match s.collective {
        Collective::Allgather | Collective::Allgatherv => Collective::ReduceScatter,
        Collective::Broadcast => Collective::Reduce,
        c => return Err(CollsynthError::internal(format!("cannot reverse a {} schedule", c.name()))),
    };
    if s.uses_scratch() {
        return Err(CollsynthError::internal("cannot reverse a schedule that uses scratch slots"));
    }
    let mut dependents = dependents(s);
    let last_step = s.n_steps().unwrap_or(0);
    let mut out = Schedule { collective, transfers: Vec::with_capacity(s.transfers.len()), ..s.clone() };
    for (i, t) in s.transfers.iter().enumerate() {
        let route = t
            .route
            .iter()
            .rev()
            .map(|&l| {
                let link = &made_on.links[l];
                target.link_between(link.dst, link.src).ok_or_else(|| {
                    CollsynthError::internal(format!(
                        "cannot reverse link {} -> {}",
                        made_on.nodes[link.src].name, made_on.nodes[link.dst].name
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        out.transfers.push(Transfer::new(
            t.piece,
            t.dst,
            t.src,
            route,
            Op::Reduce,
            std::mem::take(&mut dependents[i]),
            t.step.map(|st| last_step - 1 - st),
        ));
    }
    if let Some(group) = &s.symmetry {
        out.symmetry = Some(orbit::on_topology(group, made_on, target)?);
    }
    Ok(out)
}

/// For every transfer, the transfers that wait for it; for a compact `s`, the flat transfers
/// that wait for each representative: flat `b |G| + h` waits for `a |G| + h e` when
/// representative b lists `a |G| + e`, so `a |G|` (h e the identity) has `b |G| + e^-1`.
fn dependents(s: &Schedule) -> Vec<Vec<usize>> {
    let order = s.symmetry.as_ref().map_or(1, |g| g.order());
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); s.transfers.len()];
    for (i, t) in s.transfers.iter().enumerate() {
        for &x in &t.after {
            let (a, e) = (x / order, x % order);
            let back = s.symmetry.as_ref().map_or(0, |g| g.inverse(e));
            dependents[a].push(i * order + back);
        }
    }
    dependents
}

/// Run `second` after `first` on the same shards (allreduce = reduce-scatter then
/// allgather, or reduce then broadcast); when their pieces differ, both are first
/// [`refine`]d to their [`common_pieces`]. A transfer of `second` that sends piece p from rank
/// u waits for every transfer of `first` that delivers p to u. Steps of `second` follow
/// those of `first`.
///
/// Two compact schedules with the same group and pieces compose orbit by orbit into a compact
/// one (flat order: `first`'s orbits, then `second`'s, as the flat composition of their
/// expansions); any other pair with a compact one composes their flat forms.
pub fn compose(first: &Schedule, second: &Schedule, collective: Collective) -> Result<Schedule> {
    if super::ranges::has_ranges(first) || super::ranges::has_ranges(second) {
        let (a, b) = (super::ranges::flat(first)?, super::ranges::flat(second)?);
        return compose(a.as_ref(), b.as_ref(), collective);
    }
    match (&first.symmetry, &second.symmetry) {
        (None, None) => {}
        (Some(a), Some(b)) if a == b && first.pieces == second.pieces && first.shards == second.shards => {
            return compose_compact(first, second, collective)
        }
        _ => return compose(orbit::flat(first)?.as_ref(), orbit::flat(second)?.as_ref(), collective),
    }
    if first.uses_scratch() || second.uses_scratch() {
        return Err(CollsynthError::internal("cannot compose schedules that use scratch slots"));
    }
    if first.shards != second.shards {
        return Err(CollsynthError::internal("composed schedules must share shards"));
    }
    if first.pieces != second.pieces {
        // E.g. a reduce-scatter made on the transpose and an allgather made on the graph cut
        // their shards differently (k trees per root each): both move to the common pieces.
        let common = common_pieces(first, second)?;
        return compose(&refine(first, &common)?, &refine(second, &common)?, collective);
    }
    let offset = first.transfers.len();
    let step_offset = first.n_steps().unwrap_or(0);
    let mut into: std::collections::HashMap<(usize, usize), Vec<usize>> = Default::default();
    for (i, t) in first.transfers.iter().enumerate() {
        into.entry((t.dst, t.piece)).or_default().push(i);
    }
    let mut out = first.clone();
    out.collective = collective;
    out.provenance = second.provenance.clone();
    for t in &second.transfers {
        let mut after: Vec<usize> = t.after.iter().map(|a| a + offset).collect();
        after.extend(into.get(&(t.src, t.piece)).into_iter().flatten().copied());
        out.transfers.push(Transfer { after, step: t.step.map(|s| s + step_offset), ..t.clone() });
    }
    Ok(out)
}

/// [`compose`] of two compact schedules with one group and the same pieces: representative
/// b of `second` sending piece p from rank u waits for every flat transfer `a |G| + g` of
/// `first` delivering p to u; since G is free on ranks, g is fixed by `g dst_a = u`, so the
/// transfers of `first` are indexed by (rank orbit, piece moved back to the orbit's
/// representative rank).
fn compose_compact(first: &Schedule, second: &Schedule, collective: Collective) -> Result<Schedule> {
    let group = first.symmetry.as_deref().expect("compact");
    if first.uses_scratch() || second.uses_scratch() {
        return Err(CollsynthError::internal("cannot compose schedules that use scratch slots"));
    }
    let order = group.order();
    let orbits = orbit::RankOrbits::new(group, first.n_ranks).map_err(CollsynthError::internal)?;
    let index = orbit::PieceIndex::new(&first.pieces);
    let canonical = |r: usize, p: usize| -> Result<(usize, usize, usize)> {
        let g = *orbits.from_rep.get(r).ok_or_else(|| CollsynthError::internal(format!("rank {r} out of range")))?;
        let p0 = orbit::move_piece(first, &index, group.inverse(g), p)
            .ok_or_else(|| CollsynthError::internal(format!("piece {p} has no image")))?;
        Ok((orbits.orbit[r], p0, g))
    };
    let mut into: std::collections::HashMap<(usize, usize), Vec<(usize, usize)>> = Default::default();
    for (a, t) in first.transfers.iter().enumerate() {
        let (o, p0, g) = canonical(t.dst, t.piece)?;
        into.entry((o, p0)).or_default().push((a, g));
    }
    let offset = first.transfers.len() * order;
    let step_offset = first.n_steps().unwrap_or(0);
    let mut out = first.clone();
    out.collective = collective;
    out.provenance = second.provenance.clone();
    for t in &second.transfers {
        let (o, p0, g) = canonical(t.src, t.piece)?;
        let mut after: Vec<usize> = t.after.iter().map(|a| a + offset).collect();
        let delivered = into.get(&(o, p0)).into_iter().flatten();
        after.extend(delivered.map(|&(a, h)| a * order + group.compose(g, group.inverse(h))));
        out.transfers.push(Transfer { after, step: t.step.map(|s| s + step_offset), ..t.clone() });
    }
    Ok(out)
}

/// The coarsest pieces that refine the pieces of both `a` and `b` (which share shards): per
/// shard, the intervals between consecutive endpoints of either's pieces, ordered by shard
/// and start. Exact: every endpoint is kept as the rational it is.
pub fn common_pieces(a: &Schedule, b: &Schedule) -> Result<Vec<Piece>> {
    let mut cuts: Vec<Vec<Rat>> = vec![Vec::new(); a.shards.len()];
    for p in a.pieces.iter().chain(&b.pieces) {
        let c = cuts
            .get_mut(p.shard)
            .ok_or_else(|| CollsynthError::internal(format!("piece of unknown shard {}", p.shard)))?;
        c.extend([p.start, p.end]);
    }
    let mut out = Vec::new();
    for (shard, c) in cuts.iter_mut().enumerate() {
        c.sort();
        c.dedup();
        out.extend(c.windows(2).map(|w| Piece { shard, start: w[0], end: w[1] }));
    }
    Ok(out)
}

/// `s` on `pieces`, a refinement of its own (sorted by shard and start, each of its pieces a
/// run of consecutive ones): transfer i becomes one transfer per sub-piece of its piece, in
/// order. A copy depends on its dependency's copy of the same sub-piece when that
/// dependency carries it (the data it waits for), else on every copy of the dependency.
/// Steps, routes, ops and per-link bytes are kept.
pub fn refine(s: &Schedule, pieces: &[Piece]) -> Result<Schedule> {
    assert!(s.is_flat(), "transforms take flat schedules (ir::orbit::flat)");
    let not_refined = |p: &Piece| {
        CollsynthError::internal(format!(
            "pieces do not refine piece [{}, {}) of shard {}",
            crate::rational::to_fraction_string(&p.start),
            crate::rational::to_fraction_string(&p.end),
            p.shard
        ))
    };
    let key = |p: &Piece| (p.shard, p.start);
    let runs = s
        .pieces
        .iter()
        .map(|p| {
            let lo = pieces.partition_point(|q| key(q) < key(p));
            let hi = pieces.partition_point(|q| key(q) < (p.shard, p.end));
            let run = &pieces[lo..hi];
            let tiles = !run.is_empty()
                && run.iter().all(|q| q.shard == p.shard)
                && run[0].start == p.start
                && run[run.len() - 1].end == p.end
                && run.windows(2).all(|w| w[0].end == w[1].start);
            if tiles {
                Ok(lo..hi)
            } else {
                Err(not_refined(p))
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let run_of = |i: usize| s.transfers.get(i).and_then(|t| runs.get(t.piece)).cloned();
    let mut base = Vec::with_capacity(s.transfers.len());
    let mut total = 0;
    for (i, t) in s.transfers.iter().enumerate() {
        base.push(total);
        total += run_of(i)
            .ok_or_else(|| CollsynthError::internal(format!("transfer {i} has unknown piece {}", t.piece)))?
            .len();
    }
    let mut out = Schedule { pieces: pieces.to_vec(), transfers: Vec::with_capacity(total), ..s.clone() };
    for (i, t) in s.transfers.iter().enumerate() {
        for piece in run_of(i).expect("checked above") {
            let mut after = Vec::with_capacity(t.after.len());
            for &d in &t.after {
                let dep = run_of(d)
                    .ok_or_else(|| CollsynthError::internal(format!("transfer {i} depends on unknown transfer {d}")))?;
                if dep.contains(&piece) {
                    after.push(base[d] + piece - dep.start);
                } else {
                    after.extend((0..dep.len()).map(|j| base[d] + j));
                }
            }
            out.transfers.push(Transfer { piece, after, ..t.clone() });
        }
    }
    Ok(out)
}

/// Split every piece into `k` equal sub-pieces (pipelining): transfer i becomes k
/// transfers, the j-th carrying sub-piece j and depending on the j-th copies of its
/// dependencies. Steps are kept. `pipelined(s, 1)` is `s`. Refused (BadInput) when the
/// result would not fit the memory budget ([`crate::budget`]).
pub fn pipelined(s: &Schedule, k: usize) -> Result<Schedule> {
    assert!(s.is_flat(), "transforms take flat schedules (ir::orbit::flat)");
    if k <= 1 {
        return Ok(s.clone());
    }
    check_pipelined_memory(s, k)?;
    let kk = k as i128;
    let mut out = Schedule { pieces: Vec::with_capacity(s.pieces.len() * k), transfers: Vec::new(), ..s.clone() };
    for p in &s.pieces {
        let width = p.len() / Rat::from_integer(kk);
        for j in 0..kk {
            let start = p.start + width * Rat::from_integer(j);
            let end = if j == kk - 1 { p.end } else { start + width };
            out.pieces.push(Piece { shard: p.shard, start, end });
        }
    }
    out.transfers.reserve(s.transfers.len() * k);
    for t in &s.transfers {
        for j in 0..k {
            out.transfers.push(Transfer {
                piece: t.piece * k + j,
                after: t.after.iter().map(|&a| a * k + j).collect(),
                ..t.clone()
            });
        }
    }
    Ok(out)
}

/// Bytes a flat schedule's transfer holds beyond its route and dependencies: the struct
/// and two heap blocks' bookkeeping.
const TRANSFER_BYTES: u128 = (std::mem::size_of::<Transfer>() + 32) as u128;

/// Refuse `pipelined(s, k)` above the memory budget: k copies of every piece and transfer
/// (with its route and dependencies), plus what the cost models size per chunk transfer.
pub fn check_pipelined_memory(s: &Schedule, k: usize) -> Result<()> {
    let per_copy: u128 = s.pieces.len() as u128 * std::mem::size_of::<Piece>() as u128
        + s.transfers.iter().map(|t| TRANSFER_BYTES + 8 * (t.route.len() + t.after.len()) as u128).sum::<u128>();
    crate::budget::check_memory(
        &format!("--pipeline {k} ({} transfers x {k} sub-chunks)", s.transfers.len()),
        Some(k as u128),
        per_copy,
    )
}

/// `s` moved by a graph map: rank r becomes `ranks[r]` (a permutation), link l becomes
/// `links[l]` (of the target topology), and with N shards (one per rank) shard v becomes
/// shard `ranks[v]`; the root of a rooted collective too. Pieces, ops, dependencies and steps are kept. Guarantees:
/// if the maps send every route of `s` onto a route of the target between the mapped ranks,
/// the result is the same collective there, with the same steps and per-step link loads.
pub fn relabel(s: &Schedule, ranks: &[usize], links: &[usize]) -> Schedule {
    assert!(s.is_flat(), "transforms take flat schedules (ir::orbit::flat)");
    let per_rank = s.shards.len() == s.n_ranks && !s.collective.is_rooted();
    let pieces = s
        .pieces
        .iter()
        .map(|p| Piece { shard: if per_rank { ranks[p.shard] } else { p.shard }, ..p.clone() })
        .collect();
    let transfers = s
        .transfers
        .iter()
        .map(|t| Transfer {
            src: ranks[t.src],
            dst: ranks[t.dst],
            route: t.route.iter().map(|&l| links[l]).collect(),
            ..t.clone()
        })
        .collect();
    let root = if s.collective.is_rooted() { ranks[s.root] } else { s.root };
    Schedule { root, pieces, transfers, ..s.clone() }
}

/// Run `parts` side by side: part i moves the slice `[o_i, o_i + w_i)` of every shard
/// (w_i its weight, o_i the weights before it; weights positive, summing to 1), its piece
/// [a, b) becoming [o_i + w_i a, o_i + w_i b). Transfers keep their steps (so part i's step
/// t runs with every other part's step t) and their dependencies within their part. All
/// parts must be the same collective on the same ranks and shards, without scratch slots.
/// Guarantees: the result is that collective (each slice is delivered by its part).
pub fn side_by_side(parts: &[(&Schedule, Rat)]) -> Result<Schedule> {
    assert!(parts.iter().all(|(p, _)| p.is_flat()), "transforms take flat schedules (ir::orbit::flat)");
    let Some(&(first, _)) = parts.first() else {
        return Err(CollsynthError::internal("side_by_side needs at least one schedule"));
    };
    let same =
        |s: &Schedule| s.collective == first.collective && s.n_ranks == first.n_ranks && s.shards == first.shards;
    if !parts.iter().all(|(s, _)| same(s) && !s.uses_scratch()) {
        return Err(CollsynthError::internal("side_by_side needs one collective on the same ranks and shards"));
    }
    let one = Rat::from_integer(1);
    if parts.iter().any(|(_, w)| *w <= Rat::from_integer(0)) || parts.iter().map(|(_, w)| *w).sum::<Rat>() != one {
        return Err(CollsynthError::internal("side_by_side weights must be positive and sum to 1"));
    }
    let mut out = Schedule { pieces: Vec::new(), transfers: Vec::new(), ..first.clone() };
    let mut offset = Rat::from_integer(0);
    for &(s, w) in parts {
        let (piece_base, transfer_base) = (out.pieces.len(), out.transfers.len());
        out.pieces.extend(s.pieces.iter().map(|p| Piece {
            shard: p.shard,
            start: offset + w * p.start,
            end: offset + w * p.end,
        }));
        out.transfers.extend(s.transfers.iter().map(|t| Transfer {
            piece: piece_base + t.piece,
            after: t.after.iter().map(|a| transfer_base + a).collect(),
            ..t.clone()
        }));
        offset += w;
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
