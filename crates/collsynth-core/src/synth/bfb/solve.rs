//! The exact solver of one BFB subproblem (LP (1) of the direct-connect paper, weighted by
//! link bandwidth): node u at step t receives one whole shard from every source v at
//! distance t, through the in-links (w, u) whose sender w is one hop closer to v.
//!
//! ```text
//! minimise U  s.t.  sum_v x[v][w] <= U * c_w    (every in-link of u, capacity c_w > 0)
//!                   sum_w x[v][w]  = 1          (every source v; w ranges over f(v))
//!                   x >= 0
//! ```
//!
//! Its optimum is the Hall-type bottleneck `U* = max over nonempty J of |J| / c(f(J))`
//! (max-flow min-cut on the network `s -> v` (1), `v -> w` (inf, w in f(v)), `w -> sink`
//! (U c_w): the flow saturates every source iff no cut `J + f(J)` is smaller than |J|).
//! We find it by Newton / Dinkelbach on that parametric network, in exact integers:
//!
//! 1. Start at U = m / c(f(all)) (the ratio of J = all sources), a lower bound on U*.
//! 2. With U = a / b, scale the network by b (sources b, senders a c_w) and run max-flow.
//! 3. If the flow is m b every source is saturated: U >= every ratio, so U = U*. Otherwise
//!    the residual's source side is a minimum cut; its sources J and their senders f(J) have
//!    `b (m - |J|) + a c(f(J)) < m b`, i.e. `|J| / c(f(J)) > U`: take that ratio and repeat.
//!
//! U only grows and always is the ratio of some J, so the loop ends, at U*, after at most
//! as many rounds as there are distinct ratios (in practice one to three). The flow of the
//! last round is an optimal x, in units of 1/b of a shard. No floats, no LP solver.
//!
//! Sources with the same sender set are interchangeable, so a problem groups them into
//! classes (a count per set): the network has one node per class, not per source.

use crate::flow::{Cap, FlowNetwork};
use crate::rational::Rat;
use num_traits::Zero;

/// One subproblem: the capacities of u's in-links (local sender indices `0..caps.len()`)
/// and the sources grouped by sender set. Equal problems have equal solutions, so this is
/// also the cache key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Subproblem {
    /// Capacity of each local sender's link into u (integers, > 0).
    pub caps: Vec<Cap>,
    /// `u64` words per sender-set bitmask: `caps.len().div_ceil(64)`.
    pub words: usize,
    /// Sender set of each class as a bitmask over local senders (`words` words per class,
    /// bit k of word k / 64 = local sender k). Every set is nonempty.
    pub masks: Vec<u64>,
    /// Number of sources in each class (> 0).
    pub counts: Vec<Cap>,
}

impl Subproblem {
    /// A problem from capacities and `(senders, count)` classes; convenient for tests.
    /// Panics on an empty sender set, a sender out of range or a count < 1.
    pub fn new(caps: Vec<Cap>, classes: &[(&[u32], Cap)]) -> Subproblem {
        let words = caps.len().div_ceil(64).max(1);
        let mut masks = vec![0u64; words * classes.len()];
        for (k, (senders, count)) in classes.iter().enumerate() {
            assert!(!senders.is_empty() && *count > 0, "class {k} is empty");
            for &w in senders.iter() {
                assert!((w as usize) < caps.len(), "sender {w} out of range");
                masks[k * words + w as usize / 64] |= 1 << (w % 64);
            }
        }
        Subproblem { caps, words, masks, counts: classes.iter().map(|c| c.1).collect() }
    }

    /// A problem of one-word sender masks (at most 64 senders) from `(mask, count)` classes.
    pub fn of_classes(caps: Vec<Cap>, classes: &[(u64, Cap)]) -> Subproblem {
        Subproblem {
            caps,
            words: 1,
            masks: classes.iter().map(|c| c.0).collect(),
            counts: classes.iter().map(|c| c.1).collect(),
        }
    }

    pub fn n_classes(&self) -> usize {
        self.counts.len()
    }

    /// The local senders of class `k`, ascending.
    pub fn senders(&self, k: usize) -> Vec<u32> {
        self.sender_iter(k).collect()
    }

    /// [`Subproblem::senders`] without collecting them.
    pub fn sender_iter(&self, k: usize) -> impl Iterator<Item = u32> + '_ {
        self.masks[k * self.words..(k + 1) * self.words].iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let b = rest.trailing_zeros();
                    rest &= rest - 1;
                    (i * 64) as u32 + b
                })
            })
        })
    }
}

/// An optimal solution of a [`Subproblem`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Solution {
    /// U*, in shards per unit of capacity (exact; 0 without sources).
    pub optimum: Rat,
    /// Flows are in units of `1 / unit` shard: the denominator of U*.
    pub unit: Cap,
    /// Per class: `(local sender, units)` with units > 0, ascending by sender, summing to
    /// `count * unit`; every link's total is at most `U* c * unit`.
    pub flows: Vec<Vec<(u32, Cap)>>,
    /// Rounds of the Newton iteration (max-flows run).
    pub rounds: usize,
}

/// Solve `p` exactly (see the module docs). Guarantees: `optimum = max_J |J| / c(f(J))`,
/// and `flows` is a feasible assignment attaining it.
pub fn solve(p: &Subproblem) -> Solution {
    let m: Cap = p.counts.iter().sum();
    if m == 0 {
        return Solution { optimum: Rat::zero(), unit: 1, flows: Vec::new(), rounds: 0 };
    }
    let mut net = Network::new(p);
    let start = Rat::new(m, net.used_capacity(p));
    let (ratio, rounds) = net.newton(p, m, start);
    Solution { optimum: ratio, unit: *ratio.denom(), flows: net.flows(), rounds }
}

/// U* of `p` (see [`solve`]) without the flows.
pub fn optimum(p: &Subproblem) -> Rat {
    let m: Cap = p.counts.iter().sum();
    if m == 0 {
        return Rat::zero();
    }
    let mut net = Network::new(p);
    let start = Rat::new(m, net.used_capacity(p));
    net.newton(p, m, start).0
}

/// The optimum of classes whose sender sets are pairwise disjoint (most subproblems of a level:
/// sources with one shortest-path sender each), without the solver: max_k count_k / c(mask_k).
/// Exactly the solver's `max_J |J| / c(f(J))`: f(J) is then the disjoint union of its classes'
/// sets, so each ratio is a mediant of the classes' own and never exceeds the largest. None when
/// two sets meet (or one is empty), for the solver.
pub(super) fn disjoint_optimum(classes: &[(u64, Cap)], cap: impl Fn(usize) -> Cap) -> Option<Rat> {
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

/// U* of `p` (see [`solve`]) without the flows, by Newton from `start`, which the caller
/// guarantees is the ratio |J| / c(f(J)) of some set of sources J (so at most U*; e.g. a Hall
/// violation found by `split`). Guarantees: equal to [`optimum`].
pub fn optimum_from(p: &Subproblem, start: Rat) -> Rat {
    let m: Cap = p.counts.iter().sum();
    Network::new(p).newton(p, m, start).0
}

/// The positions of the set bits of `word`, ascending.
pub(super) fn bits(mut word: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let b = word.trailing_zeros() as usize;
            word &= word - 1;
            b
        })
    })
}

/// The flow network of a problem: node 0 = source, 1 = sink, then one node per class, then
/// one per sender that some class can use (the others cannot help and stay out).
pub(super) struct Network {
    pub(super) flow: FlowNetwork,
    /// Local sender of each sender node (in node order after the classes).
    pub(super) senders: Vec<u32>,
    /// Edge ids: source -> class k is edge k; sender j -> sink is edge `classes + j`; then the
    /// class -> sender edges as (edge, sender node index j), class k's at
    /// `arcs[starts[k]..starts[k + 1]]`.
    pub(super) arcs: Vec<(usize, usize)>,
    pub(super) starts: Vec<usize>,
}

impl Network {
    /// The network with placeholder capacities (every solver round sets them).
    pub(super) fn new(p: &Subproblem) -> Network {
        let classes = p.n_classes();
        let mut node_of = vec![u32::MAX; p.caps.len()];
        let mut senders = Vec::new();
        for k in 0..classes {
            for w in p.sender_iter(k) {
                if node_of[w as usize] == u32::MAX {
                    node_of[w as usize] = senders.len() as u32;
                    senders.push(w);
                }
            }
        }
        // Capacities are placeholders: every round sets them.
        let arcs_count: usize = p.masks.iter().map(|m| m.count_ones() as usize).sum();
        let mut edges: Vec<(usize, usize, Cap)> = Vec::with_capacity(classes + senders.len() + arcs_count);
        edges.extend((0..classes).map(|k| (0, 2 + k, 0)));
        edges.extend((0..senders.len()).map(|j| (2 + classes + j, 1, 0)));
        let mut arcs = Vec::with_capacity(arcs_count);
        let mut starts = Vec::with_capacity(classes + 1);
        for k in 0..classes {
            starts.push(arcs.len());
            for w in p.sender_iter(k) {
                let j = node_of[w as usize] as usize;
                arcs.push((edges.len(), j));
                edges.push((2 + k, 2 + classes + j, 0));
            }
        }
        starts.push(arcs.len());
        // Source -> class -> sender -> sink: layered, so no edge has an antiparallel twin.
        let flow = FlowNetwork::without_antiparallel(2 + classes + senders.len(), &edges);
        Network { flow, senders, arcs, starts }
    }

    /// The class -> sender edges of class `k`, as (edge, sender node index).
    fn class_arcs(&self, k: usize) -> &[(usize, usize)] {
        &self.arcs[self.starts[k]..self.starts[k + 1]]
    }

    /// Newton from `ratio`, the ratio |J| / c(f(J)) of some J (so at most U*): (U*, rounds).
    fn newton(&mut self, p: &Subproblem, m: Cap, mut ratio: Rat) -> (Rat, usize) {
        let mut rounds = 0;
        loop {
            rounds += 1;
            match self.round(p, m, ratio) {
                None => return (ratio, rounds),
                Some(next) => {
                    debug_assert!(next > ratio, "a Newton step must increase U");
                    ratio = next;
                }
            }
        }
    }

    fn used_capacity(&self, p: &Subproblem) -> Cap {
        self.senders.iter().map(|&w| p.caps[w as usize]).sum()
    }

    /// One Newton round at U = `ratio`: `None` if every source is saturated (U = U*), else
    /// the larger ratio |J| / c(f(J)) of the minimum cut found.
    fn round(&mut self, p: &Subproblem, m: Cap, ratio: Rat) -> Option<Rat> {
        let (a, b) = (*ratio.numer(), *ratio.denom());
        let classes = p.n_classes();
        let need = m * b;
        for k in 0..classes {
            self.flow.set_capacity(k, p.counts[k] * b);
        }
        for (j, &w) in self.senders.iter().enumerate() {
            self.flow.set_capacity(classes + j, a * p.caps[w as usize]);
        }
        // "Infinite": above any flow, so a minimum cut never crosses these arcs.
        for &(e, _) in &self.arcs {
            self.flow.set_capacity(e, need + 1);
        }
        if self.flow.max_flow_limited(0, 1, need) == need {
            return None;
        }
        let side = self.flow.min_cut_source_side(0);
        let j: Cap = (0..classes).filter(|&k| side[2 + k]).map(|k| p.counts[k]).sum();
        let c: Cap =
            (0..self.senders.len()).filter(|&s| side[2 + classes + s]).map(|s| p.caps[self.senders[s] as usize]).sum();
        Some(Rat::new(j, c))
    }

    /// The last round's flow per class, as (local sender, units).
    fn flows(&self) -> Vec<Vec<(u32, Cap)>> {
        (0..self.starts.len() - 1)
            .map(|k| {
                let mine = self.class_arcs(k);
                mine.iter().map(|&(e, j)| (self.senders[j], self.flow.flow_on(e))).filter(|&(_, f)| f > 0).collect()
            })
            .collect()
    }
}

/// Split a class's flow among its `members` sources, each needing `unit` units: the members
/// take the senders' units in order, so each member's units are consecutive and at most
/// `senders - 1` members are split. Calls `each(member, parts)` with the member's
/// `(local sender, units)` parts, in member order (one scratch buffer, no allocation per member).
pub fn split_members(flow: &[(u32, Cap)], members: usize, unit: Cap, mut each: impl FnMut(usize, &[(u32, Cap)])) {
    let mut next = flow.iter().copied();
    let mut left: Option<(u32, Cap)> = None;
    let mut parts: Vec<(u32, Cap)> = Vec::with_capacity(4);
    for member in 0..members {
        parts.clear();
        let mut need = unit;
        while need > 0 {
            let (w, have) = match left.take() {
                Some(x) => x,
                None => next.next().expect("a class's flow covers all its members"),
            };
            let take = have.min(need);
            parts.push((w, take));
            need -= take;
            if have > take {
                left = Some((w, have - take));
            }
        }
        each(member, &parts);
    }
}

/// `max over nonempty J of |J| / c(f(J))` by enumerating every subset of classes (whole
/// classes suffice: adding the rest of a class never enlarges f(J)). For tests: exponential.
pub fn brute_force(p: &Subproblem) -> Rat {
    let classes = p.n_classes();
    assert!(classes <= 20, "brute force over {classes} classes");
    let mut best = Rat::zero();
    for set in 1u32..(1 << classes) {
        let mut union = vec![0u64; p.words];
        let mut j: Cap = 0;
        for k in (0..classes).filter(|k| set >> k & 1 == 1) {
            j += p.counts[k];
            for (u, m) in union.iter_mut().zip(&p.masks[k * p.words..(k + 1) * p.words]) {
                *u |= m;
            }
        }
        let c: Cap = (0..p.caps.len()).filter(|&w| union[w / 64] >> (w % 64) & 1 == 1).map(|w| p.caps[w]).sum();
        best = best.max(Rat::new(j, c));
    }
    best
}
