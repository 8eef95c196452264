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
//! subproblem is the plan's own [`Problem`] and its optimum is exactly the plan's. Work:
//! D N^2 d / 64 word operations, against N^2 d for the plan's BFS and mask scans, so this
//! pays while D is well below 64; above [`MAX_LEVELS`] it gives up.

use super::solve::{solve, Problem};
use super::{in_parallel, Fast, Graph};
use crate::flow::Cap;
use crate::rational::Rat;
use std::collections::HashMap;
use std::ops::Range;

/// Beyond this many steps the level sets cost more than the plan's BFS.
const MAX_LEVELS: usize = 48;

/// `max_u U*_{u,t}` (in the plan's units, times sigma) for t = 1..=D, D the diameter; None
/// when some rank has more than 64 in-links (masks are one word here) or D > [`MAX_LEVELS`].
pub(super) fn step_maxima(g: &Graph) -> Option<Vec<Rat>> {
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
        let parts = in_parallel(g.n, |range| level(g, &prev, words, range));
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

fn level(g: &Graph, prev: &[u64], words: usize, range: Range<usize>) -> Level {
    let row = |x: usize| &prev[x * words..(x + 1) * words];
    let mut rows = Vec::with_capacity(range.len() * words);
    let mut wk = Scratch { mask: vec![0; g.n], ..Scratch::default() };
    let mut max: Option<Rat> = None;
    for u in range {
        let start = rows.len();
        rows.extend_from_slice(row(u));
        for inl in &g.ins[u] {
            for (r, p) in rows[start..].iter_mut().zip(row(inl.from as usize)) {
                *r |= p;
            }
        }
        let fresh: Vec<u64> = rows[start..].iter().zip(row(u)).map(|(r, p)| r & !p).collect();
        if fresh.iter().any(|&w| w != 0) {
            let optimum = wk.optimum(g, u, &fresh, |k| row(g.ins[u][k].from as usize));
            max = Some(max.map_or(optimum, |m| m.max(optimum)));
        }
    }
    Level { rows, max }
}

/// Per-thread buffers and the cache of solved subproblems (optimum only).
#[derive(Default)]
struct Scratch {
    /// Sender mask of each rank as a source of the current (u, t); zero between uses.
    mask: Vec<u64>,
    counts: HashMap<u64, Cap, Fast>,
    cache: HashMap<Problem, Rat, Fast>,
}

impl Scratch {
    /// U*_{u,t} for the sources `fresh` of u, `sent(k)` the ranks within t - 1 hops of u's
    /// k-th in-neighbour.
    fn optimum<'a>(&mut self, g: &Graph, u: usize, fresh: &[u64], sent: impl Fn(usize) -> &'a [u64]) -> Rat {
        let ins = &g.ins[u];
        for k in 0..ins.len() {
            for (i, (&f, &s)) in fresh.iter().zip(sent(k)).enumerate() {
                for v in bits(f & s) {
                    self.mask[i * 64 + v] |= 1 << k;
                }
            }
        }
        self.counts.clear();
        for (i, &f) in fresh.iter().enumerate() {
            for v in bits(f) {
                *self.counts.entry(std::mem::take(&mut self.mask[i * 64 + v])).or_default() += 1;
            }
        }
        let mut classes: Vec<(u64, Cap)> = self.counts.iter().map(|(&m, &c)| (m, c)).collect();
        classes.sort_unstable();
        let problem = Problem {
            caps: ins.iter().map(|i| i.cap).collect(),
            words: 1,
            masks: classes.iter().map(|c| c.0).collect(),
            counts: classes.iter().map(|c| c.1).collect(),
        };
        if let Some(&hit) = self.cache.get(&problem) {
            return hit;
        }
        let optimum = solve(&problem).optimum;
        self.cache.insert(problem, optimum);
        optimum
    }
}

/// The positions of the set bits of `word`, ascending.
fn bits(mut word: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let b = word.trailing_zeros() as usize;
            word &= word - 1;
            b
        })
    })
}
