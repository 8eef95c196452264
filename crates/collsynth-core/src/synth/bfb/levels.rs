//! The per-step maxima max_u U*_{u,t} of BFB without a distance matrix, for the profile of a
//! topology of small diameter (what the finder measures: generalized Kautz graphs and the
//! like, diameter about log_d N).
//!
//! With `R_t(x)` the set of ranks within t hops of x, as bitsets,
//! `R_t(x) = R_{t-1}(x) ∪ ⋃_{(w, x) in-link} R_{t-1}(w)`, one OR of N-bit rows per link and
//! level. The sources of rank u at step t are `E = R_t(u) \ R_{t-1}(u)`, and those its k-th
//! in-neighbour w_k can send are `E ∩ R_{t-1}(w_k)` (no source of E is nearer to w_k than
//! t - 1): exactly the sender masks of the plan, built from word ANDs and one bit per
//! (source, shortest-path sender) rather than one distance comparison per (source, in-link).
//! Sources are grouped into the plan's classes (sender masks ascending, with counts), so each
//! subproblem is the plan's own [`Subproblem`] and its optimum is exactly the plan's. Work:
//! D N^2 d / 64 word operations, against N^2 d for the plan's BFS and mask scans, so this
//! pays while D is well below 64; above [`MAX_LEVELS`] it gives up.

use super::graph::Graph;
use super::in_parallel;
use super::solve::{bits, disjoint_optimum, optimum, optimum_from, Subproblem};
use super::transport::Transport;
use crate::flow::Cap;
use crate::hash::Fast;
use crate::rational::Rat;
use std::collections::HashMap;
use std::ops::Range;

/// Beyond this many steps the level sets cost more than the plan's BFS.
const MAX_LEVELS: usize = 48;

/// `max_u U*_{u,t}` (in the plan's units, times sigma) for t = 1..=D, D the diameter; None
/// when some rank has more than 64 in-links (masks are one word here) or D > [`MAX_LEVELS`].
/// With `solved`, only the ranks it marks are solved: the caller guarantees every rank's
/// optima equal some marked rank's (an automorphism's orbit representatives).
pub(super) fn step_maxima(g: &Graph, solved: Option<&[bool]>) -> Option<Vec<Rat>> {
    if g.ins.iter().any(|i| i.len() > 64) {
        return None;
    }
    let words = g.n.div_ceil(64);
    // R_0(x) = {x}.
    let mut prev = vec![0u64; g.n * words];
    for x in 0..g.n {
        prev[x * words + x / 64] |= 1 << (x % 64);
    }
    let mut maxima = Vec::new();
    for _ in 1..=MAX_LEVELS {
        let parts = in_parallel(g.n, |range| level(g, &prev, words, range, solved));
        if parts.iter().all(|p| p.max.is_none()) {
            return Some(maxima);
        }
        maxima.push(parts.iter().filter_map(|p| p.max).max().expect("some rank has sources") * g.sigma);
        prev = parts.into_iter().flat_map(|p| p.rows).collect();
    }
    None
}

/// One level for the ranks of a range: their rows of R_t and their largest optimum (None
/// when none of them has a source at this distance).
struct Level {
    rows: Vec<u64>,
    max: Option<Rat>,
}

fn level(g: &Graph, prev: &[u64], words: usize, range: Range<usize>, solved: Option<&[bool]>) -> Level {
    let row = |x: usize| &prev[x * words..(x + 1) * words];
    let mut rows = Vec::with_capacity(range.len() * words);
    let mut wk = Scratch::default();
    let mut max: Option<Rat> = None;
    let mut fresh: Vec<u64> = Vec::with_capacity(words);
    for u in range {
        let start = rows.len();
        rows.extend_from_slice(row(u));
        for inl in &g.ins[u] {
            for (r, p) in rows[start..].iter_mut().zip(row(inl.from as usize)) {
                *r |= p;
            }
        }
        fresh.clear();
        fresh.extend(rows[start..].iter().zip(row(u)).map(|(r, p)| r & !p));
        if fresh.iter().any(|&w| w != 0) && solved.is_none_or(|s| s[u]) {
            // Only an optimum above the range's largest so far can change its maximum.
            if let Some(optimum) = wk.optimum(g, u, &fresh, prev, max) {
                max = Some(max.map_or(optimum, |m| m.max(optimum)));
            }
        }
    }
    Level { rows, max }
}

/// Per-thread buffers.
#[derive(Default)]
struct Scratch {
    /// Where each in-neighbour's row starts.
    rows: Vec<usize>,
    /// Sources per sender mask of the current (u, t), then sorted into `classes`.
    tally: HashMap<u64, Cap, Fast>,
    classes: Vec<(u64, Cap)>,
    caps: Vec<Cap>,
    transport: Transport,
}

impl Scratch {
    /// U*_{u,t} for the sources `fresh` of u, `prev` the rows of R_{t-1} (what each rank's
    /// in-neighbours hold); None when it is at most `floor` (then it is not computed: the
    /// caller wants only the largest).
    fn optimum(&mut self, g: &Graph, u: usize, fresh: &[u64], prev: &[u64], floor: Option<Rat>) -> Option<Rat> {
        let ins = &g.ins[u];
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        rows.extend(ins.iter().map(|i| i.from as usize * fresh.len()));
        self.classes_of(fresh, prev, &rows);
        self.rows = rows;
        if let Some(optimum) = disjoint_optimum(&self.classes, |k| ins[k].cap) {
            return Some(optimum);
        }
        self.caps.clear();
        self.caps.extend(ins.iter().map(|i| i.cap));
        // A ratio of some set of sources, at most U*: where Newton starts.
        let mut start = None;
        if let Some(floor) = floor {
            if share_bound(&self.classes, |k| ins[k].cap) <= floor {
                return None;
            }
            match self.transport.fits(&self.classes, &self.caps, floor) {
                Ok(()) => return None,
                Err(ratio) => start = Some(ratio),
            }
        }
        let problem = Subproblem::of_classes(self.caps.clone(), &self.classes);
        Some(match start {
            Some(ratio) => optimum_from(&problem, ratio),
            None => optimum(&problem),
        })
    }

    /// `classes` = the (sender mask, count) of the sources `fresh` (each held by some
    /// sender), sorted by mask. Per word of sources: the sources one sender alone holds are
    /// found by two accumulators (held once, held twice) and counted per sender; only those
    /// two or more hold (few: mostly one shortest-path sender per source) are partitioned,
    /// by refining with each sender's word (a part splits into the sources the sender can
    /// and cannot send), equal masks then merged. Word operations only. The senders' sets
    /// are the rows of `sent` (words of `fresh.len()`) starting at `rows`.
    fn classes_of(&mut self, fresh: &[u64], sent: &[u64], rows: &[usize]) {
        self.tally.clear();
        let mut alone = [0 as Cap; 64];
        // A word's parts are nonempty and disjoint: at most 64.
        let mut parts = [(0u64, 0u64); 64];
        for (i, &f) in fresh.iter().enumerate().filter(|(_, &f)| f != 0) {
            let (mut once, mut twice) = (0u64, 0u64);
            for &row in rows {
                let s = sent[row + i] & f;
                twice |= once & s;
                once |= s;
            }
            let single = once & !twice;
            if single != 0 {
                for (k, &row) in rows.iter().enumerate() {
                    alone[k] += (sent[row + i] & single).count_ones() as Cap;
                }
            }
            if twice != 0 {
                let len = refine(twice, rows.iter().map(|&row| sent[row + i]), &mut parts);
                for &(part, mask) in &parts[..len] {
                    *self.tally.entry(mask).or_default() += part.count_ones() as Cap;
                }
            }
        }
        self.classes.clear();
        self.classes.extend(alone.iter().enumerate().filter(|(_, &c)| c > 0).map(|(k, &c)| (1u64 << k, c)));
        // Masks of two or more senders: none equals a single sender's.
        self.classes.extend(self.tally.iter().map(|(&mask, &count)| (mask, count)));
        self.classes.sort_unstable();
    }
}

/// `parts[..len]` = the partition of the sources `word` by which of the senders' words
/// (sender k's the k-th of `senders`) hold them, as (sources, sender mask); `len`.
fn refine(word: u64, senders: impl Iterator<Item = u64>, parts: &mut [(u64, u64); 64]) -> usize {
    parts[0] = (word, 0);
    let mut len = 1;
    for (k, s) in senders.enumerate() {
        if s & word == 0 {
            continue;
        }
        // Parts split off by this sender are already refined by it.
        let before = len;
        for p in 0..before {
            let (part, mask) = parts[p];
            let (inside, outside) = (part & s, part & !s);
            if inside != 0 && outside == 0 {
                parts[p].1 |= 1 << k;
            } else if inside != 0 {
                parts[p].0 = outside;
                parts[len] = (inside, mask | 1 << k);
                len += 1;
            }
        }
    }
    len
}

/// max_k c_k / cap_k, c_k the sources some class gives sender k: an upper bound on the
/// optimum, since splitting every source evenly among its senders loads sender k with at
/// most c_k. Lets a subproblem that cannot raise the level's maximum skip the solver.
fn share_bound(classes: &[(u64, Cap)], cap: impl Fn(usize) -> Cap) -> Rat {
    let mut held = [0 as Cap; 64];
    for &(mask, count) in classes {
        for k in bits(mask) {
            held[k] += count;
        }
    }
    // The largest share, as (count, capacity): compared by cross-multiplying (capacities > 0).
    let (mut top, mut top_cap) = (0, 1);
    for (k, &c) in held.iter().enumerate().filter(|(_, &c)| c > 0) {
        if c * top_cap > top * cap(k) {
            (top, top_cap) = (c, cap(k));
        }
    }
    Rat::new(top, top_cap)
}

#[cfg(test)]
mod tests;
