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

use super::solve::{optimum_above, solve, Problem};
use super::{in_parallel, Fast, Graph};
use crate::flow::Cap;
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

/// Per-thread buffers and the cache of solved subproblems (optimum only).
#[derive(Default)]
struct Scratch {
    /// Where each in-neighbour's row starts.
    rows: Vec<usize>,
    /// Sources per sender mask of the current (u, t), then sorted into `classes`.
    tally: HashMap<u64, Cap, Fast>,
    classes: Vec<(u64, Cap)>,
    cache: HashMap<Problem, Known, Fast>,
}

/// What is known of a solved subproblem's optimum.
#[derive(Clone, Copy)]
enum Known {
    Exact(Rat),
    /// At most this (a floor it did not exceed).
    AtMost(Rat),
}

impl Scratch {
    /// U*_{u,t} for the sources `fresh` of u, `prev` the rows of R_{t-1} (what each rank's
    /// in-neighbours hold); None when it is known to be at most `floor` (then it is not
    /// computed exactly: the caller wants only the largest).
    fn optimum(&mut self, g: &Graph, u: usize, fresh: &[u64], prev: &[u64], floor: Option<Rat>) -> Option<Rat> {
        let ins = &g.ins[u];
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        rows.extend(ins.iter().map(|i| i.from as usize * fresh.len()));
        let (bound, disjoint) = shares(fresh, prev, &rows, |k| ins[k].cap);
        if disjoint {
            self.rows = rows;
            return Some(bound);
        }
        if floor.is_some_and(|floor| bound <= floor) {
            self.rows = rows;
            return None;
        }
        self.classes_of(fresh, prev, &rows);
        self.rows = rows;
        if let Some(optimum) = disjoint_optimum(&self.classes, |k| ins[k].cap) {
            return Some(optimum);
        }
        let problem = Problem {
            caps: ins.iter().map(|i| i.cap).collect(),
            words: 1,
            masks: self.classes.iter().map(|c| c.0).collect(),
            counts: self.classes.iter().map(|c| c.1).collect(),
        };
        let known = match (self.cache.get(&problem), floor) {
            (Some(&Known::Exact(optimum)), _) => return Some(optimum),
            (Some(&Known::AtMost(bound)), Some(floor)) if bound <= floor => return None,
            (_, None) => Known::Exact(solve(&problem).optimum),
            (_, Some(floor)) => optimum_above(&problem, floor).map_or(Known::AtMost(floor), Known::Exact),
        };
        self.cache.insert(problem, known);
        match known {
            Known::Exact(optimum) => Some(optimum),
            Known::AtMost(_) => None,
        }
    }

    /// `classes` = the (sender mask, count) of the sources `fresh`, sorted by mask: the
    /// partition of each word of sources refined by each sender's word (a part splits into
    /// the sources the sender can and cannot send), then equal masks merged. Word operations
    /// only, on the words that hold sources: senders x parts of the word per word.
    /// The senders' sets are the rows of `sent` (words of `fresh.len()`) starting at `rows`.
    fn classes_of(&mut self, fresh: &[u64], sent: &[u64], rows: &[usize]) {
        self.tally.clear();
        // A word's parts are nonempty and disjoint: at most 64.
        let mut parts = [(0u64, 0u64); 64];
        for (i, &f) in fresh.iter().enumerate().filter(|(_, &f)| f != 0) {
            parts[0] = (f, 0);
            let mut len = 1;
            for (k, &row) in rows.iter().enumerate() {
                let s = sent[row + i];
                if s & f == 0 {
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
            for &(part, mask) in &parts[..len] {
                *self.tally.entry(mask).or_default() += part.count_ones() as Cap;
            }
        }
        self.classes.clear();
        self.classes.extend(self.tally.iter().map(|(&mask, &count)| (mask, count)));
        self.classes.sort_unstable();
    }
}

/// max_k c_k / cap_k, c_k the sources (of `fresh`) sender k holds (its row of `sent`, words
/// of `fresh.len()`, starts at `rows[k]`), and whether every source has exactly one sender.
/// An upper bound on U*: splitting every source evenly among its senders loads sender k with
/// at most c_k. Exactly U* when every source has one sender: the classes are then the
/// senders' own sources, disjoint (see [`disjoint_optimum`]). Word operations only, no
/// classes: most subproblems of a level end here.
fn shares(fresh: &[u64], sent: &[u64], rows: &[usize], cap: impl Fn(usize) -> Cap) -> (Rat, bool) {
    let words = fresh.len();
    let sources: usize = fresh.iter().map(|w| w.count_ones() as usize).sum();
    let (mut held, mut covered) = (0usize, 0usize);
    // The largest share so far, as (count, capacity).
    let mut best: (Cap, Cap) = (0, 1);
    for (k, &row) in rows.iter().enumerate() {
        let c: usize = fresh.iter().zip(&sent[row..row + words]).map(|(f, s)| (f & s).count_ones() as usize).sum();
        held += c;
        let (c, ck) = (c as Cap, cap(k));
        // c / ck > best, compared by cross-multiplying (capacities > 0).
        if c * best.1 > best.0 * ck {
            best = (c, ck);
        }
    }
    for (i, &f) in fresh.iter().enumerate() {
        let any = rows.iter().fold(0u64, |acc, &row| acc | sent[row + i]);
        covered += (f & any).count_ones() as usize;
    }
    (Rat::new(best.0, best.1), covered == sources && held == sources)
}

/// The optimum of classes whose sender sets are pairwise disjoint (most subproblems of a level:
/// sources with one shortest-path sender each), without the solver: max_k count_k / c(mask_k).
/// Exactly the solver's `max_J |J| / c(f(J))`: f(J) is then the disjoint union of its classes'
/// sets, so each ratio is a mediant of the classes' own and never exceeds the largest. None when
/// two sets meet (or one is empty), for the solver.
fn disjoint_optimum(classes: &[(u64, Cap)], cap: impl Fn(usize) -> Cap) -> Option<Rat> {
    let mut union = 0u64;
    // The best ratio so far, as (count, capacity).
    let mut best: Option<(Cap, Cap)> = None;
    for &(mask, count) in classes {
        if mask == 0 || mask & union != 0 {
            return None;
        }
        union |= mask;
        let c: Cap = bits(mask).map(&cap).sum();
        // count / c > best count / best c, compared by cross-multiplying (c > 0).
        if best.is_none_or(|(bn, bc)| count * bc > bn * c) {
            best = Some((count, c));
        }
    }
    best.map(|(n, c)| Rat::new(n, c))
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

#[cfg(test)]
mod tests {
    use super::{disjoint_optimum, shares, Scratch};
    use crate::flow::Cap;
    use crate::synth::bfb::solve::{brute_force, solve, Problem};
    use proptest::prelude::*;

    proptest! {
        /// The refinement's classes equal a per-source count of sender masks, on random bitsets.
        #[test]
        fn refinement_equals_the_per_source_count(
            words in 1usize..4,
            seed in proptest::collection::vec(any::<u64>(), 40),
            senders in 1usize..10,
        ) {
            let at = |i: usize| seed[i % seed.len()].rotate_left(i as u32);
            let sent: Vec<Vec<u64>> = (0..senders).map(|k| (0..words).map(|w| at(k * 7 + w) | at(k + w + 3)).collect()).collect();
            // Only sources some sender has (as in a level: every fresh source has one).
            let fresh: Vec<u64> = (0..words)
                .map(|w| at(w + 11) & sent.iter().fold(0, |acc, s| acc | s[w]))
                .collect();
            let mut a = Scratch::default();
            let flat: Vec<u64> = sent.concat();
            let rows: Vec<usize> = (0..senders).map(|k| k * words).collect();
            a.classes_of(&fresh, &flat, &rows);
            let mut count: std::collections::BTreeMap<u64, Cap> = Default::default();
            for v in (0..64 * words).filter(|&v| fresh[v / 64] >> (v % 64) & 1 == 1) {
                let mask = (0..senders).filter(|&k| sent[k][v / 64] >> (v % 64) & 1 == 1).fold(0u64, |m, k| m | 1 << k);
                *count.entry(mask).or_default() += 1;
            }
            prop_assert_eq!(a.classes, count.into_iter().collect::<Vec<_>>());
        }

        /// The senders' largest share bounds the solver's optimum from above, and is it when no
        /// source has two senders.
        #[test]
        fn shares_bound_the_optimum(
            words in 1usize..3,
            seed in proptest::collection::vec(any::<u64>(), 40),
            senders in 1usize..8,
            caps in proptest::collection::vec(1i128..4, 8),
            sparse in any::<bool>(),
        ) {
            let at = |i: usize| seed[i % seed.len()].rotate_left(i as u32);
            // Sparse sender sets rarely meet, so both outcomes are exercised.
            let sent: Vec<Vec<u64>> = (0..senders)
                .map(|k| (0..words).map(|w| if sparse { at(k * 7 + w) & at(k + w + 3) & at(k + 2 * w + 5) } else { at(k * 7 + w) }).collect())
                .collect();
            let fresh: Vec<u64> = (0..words).map(|w| at(w + 11) & sent.iter().fold(0, |acc, s| acc | s[w])).collect();
            prop_assume!(fresh.iter().any(|&w| w != 0));
            let flat: Vec<u64> = sent.concat();
            let rows: Vec<usize> = (0..senders).map(|k| k * words).collect();
            let (bound, disjoint) = shares(&fresh, &flat, &rows, |k| caps[k]);
            let mut a = Scratch::default();
            a.classes_of(&fresh, &flat, &rows);
            let p = Problem {
                caps: caps[..senders].to_vec(),
                words: 1,
                masks: a.classes.iter().map(|c| c.0).collect(),
                counts: a.classes.iter().map(|c| c.1).collect(),
            };
            let optimum = solve(&p).optimum;
            prop_assert!(optimum <= bound);
            prop_assert_eq!(disjoint, a.classes.iter().all(|c| c.0.count_ones() == 1));
            if disjoint {
                prop_assert_eq!(optimum, bound);
            }
        }

        /// The closed form of disjoint classes equals the solver (and brute force) wherever it
        /// answers, and answers exactly when the sender sets are pairwise disjoint.
        #[test]
        fn disjoint_classes_match_the_solver(
            caps in proptest::collection::vec(1i128..6, 1..12),
            owners in proptest::collection::vec(0usize..6, 12),
            counts in proptest::collection::vec(1i128..9, 6),
            meet in any::<bool>(),
        ) {
            // Class j: the senders j owns (disjoint), plus sender 0 in every class if `meet`.
            let classes: Vec<(u64, Cap)> = (0..6)
                .map(|j| {
                    let own = (0..caps.len()).filter(|&k| owners[k] == j).fold(0u64, |m, k| m | 1 << k);
                    (if meet && own != 0 { own | 1 } else { own }, counts[j])
                })
                .filter(|&(m, _)| m != 0)
                .collect();
            let union = classes.iter().fold(0, |u, c| u | c.0);
            let disjoint = classes.iter().map(|c| c.0.count_ones()).sum::<u32>() == union.count_ones();
            let got = disjoint_optimum(&classes, |k| caps[k]);
            prop_assert_eq!(got.is_some(), disjoint);
            if let Some(optimum) = got {
                let p = Problem { caps: caps.clone(), words: 1, masks: classes.iter().map(|c| c.0).collect(), counts: classes.iter().map(|c| c.1).collect() };
                prop_assert_eq!(optimum, solve(&p).optimum);
                prop_assert_eq!(optimum, brute_force(&p));
            }
        }
    }
}
