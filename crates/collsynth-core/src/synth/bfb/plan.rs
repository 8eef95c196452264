//! The planner: every (u, t) subproblem solved (LP (1), or its chunked / latency-aware
//! variants), every source's split decided, and the [`BfbPlan`]'s accessors (steps, optima,
//! tau, per-step latencies, provenance details).

use super::graph::{Graph, InLink};
use super::solve::{solve, split_members, Solution, Subproblem};
use super::{chunked, hetero, in_parallel};
use crate::error::Result;
use crate::flow::Cap;
use crate::hash::Fast;
use crate::ir::Details;
use crate::rational::Rat;
use crate::topology::Topology;
use num_traits::Zero;
use std::collections::HashMap;
use std::ops::Range;

/// How u gets a source's shard at its step.
#[derive(Debug, Clone, Copy)]
pub(super) enum Via {
    /// Whole, from rank `from` over link `link`.
    Whole { link: u32, from: u32 },
    /// In consecutive parts `parts[first..first + len]` of the node's plan.
    Split { first: u32, len: u32 },
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Delivery {
    pub(super) src: u32,
    pub(super) via: Via,
}

/// A part of a source's shard ending at `end` (it starts where the previous part ends, or
/// at 0), from rank `from` over link `link`.
#[derive(Debug, Clone)]
pub(super) struct Part {
    pub(super) link: u32,
    pub(super) from: u32,
    pub(super) end: Rat,
}

/// Everything u receives, by step.
#[derive(Debug, Default)]
pub(super) struct NodePlan {
    /// `deliveries[step_start[t - 1]..step_start[t]]`: the sources at distance t.
    pub(super) step_start: Vec<u32>,
    pub(super) deliveries: Vec<Delivery>,
    pub(super) parts: Vec<Part>,
}

/// The solved BFB allgather of a topology, before emission (see [`plan`]).
#[derive(Debug)]
pub struct BfbPlan {
    pub(super) n: usize,
    pub(super) steps: usize,
    /// `optima[u * steps + t - 1]` = U*_{u,t} in shards per GB/s; with chunks, the rounded
    /// split's busiest link instead (what the schedule takes).
    pub(super) optima: Vec<Rat>,
    /// P chunks per shard, if chunked; then `fractional` holds the LP optima (else empty).
    pub(super) chunks: Option<Cap>,
    pub(super) fractional: Vec<Rat>,
    /// `alphas[u * steps + t - 1]`: the largest latency (µs) of an in-link of u that carries
    /// data at step t (0 without sources).
    pub(super) alphas: Vec<f64>,
    /// Whether every delivery was recorded (`nodes`, `cuts`): only then can it be emitted.
    pub(super) recorded: bool,
    pub(super) nodes: Vec<NodePlan>,
    /// Per shard, the interior cut points (sorted, distinct) of the splits (empty when not
    /// `recorded`).
    pub(super) cuts: Vec<Vec<Rat>>,
    /// Largest and smallest total in-link bandwidth of a rank (GB/s).
    pub(super) max_ingress: Rat,
    pub(super) min_ingress: Rat,
    /// (u, t) subproblems with sources, and how many were solved (the rest were cache hits).
    pub(super) subproblems: usize,
    pub(super) solved: usize,
    /// Latency-aware ([`mod@hetero`]): then `times[u * steps + t - 1]` = U_{u,t} (µs) and
    /// `dropped` the (u, t, link) whose latency reaches it.
    pub(super) hetero: bool,
    pub(super) times: Vec<Rat>,
    pub(super) dropped: Vec<(u32, u32, u32)>,
}

/// Solve every (u, t) subproblem of `topo` (no switches; else `BadInput`). Guarantees: each
/// [`BfbPlan::optimum`] is exactly LP (1)'s optimum (bandwidth-weighted), and the per-source
/// splits attain it.
pub fn plan(topo: &Topology) -> Result<BfbPlan> {
    plan_full(topo, None, None)
}

/// [`plan`], or with `chunks` = P every split rounded to whole 1/P chunks ([`mod@chunked`]),
/// then the optima are the rounded splits' and [`BfbPlan::tau_fractional`] the LP's; or with
/// `hetero` = M (bytes) the latency-aware plan ([`mod@hetero`]): then the splits minimise each
/// (u, t)'s time, [`BfbPlan::time`], and the optima are the busiest link's load of those splits
/// (what the schedule takes, like the chunked ones).
pub(super) fn plan_full(topo: &Topology, chunks: Option<Cap>, hetero: Option<Rat>) -> Result<BfbPlan> {
    plan_mode(topo, chunks, hetero, true)
}

/// [`plan_full`]; with `record` = false the deliveries are not recorded (no `nodes`, no
/// `cuts`: the plan cannot be emitted), which skips handing every class's flow to its
/// sources when no per-source rounding or load is needed. The optima and per-step
/// latencies are the same either way (the links that carry data at (u, t) are the senders
/// with flow, or with chunks / latencies the senders with a load).
pub(super) fn plan_mode(topo: &Topology, chunks: Option<Cap>, hetero: Option<Rat>, record: bool) -> Result<BfbPlan> {
    let mut g = Graph::new(topo)?;
    if let Some(m) = hetero {
        let alpha = topo.links.iter().map(|l| hetero::latency_rat(l.latency)).collect::<Result<Vec<Rat>>>()?;
        g.hetero = Some((alpha, hetero::scale(g.sigma, m, g.n)));
    }
    let outs = in_parallel(g.n, |range| plan_range(&g, range, chunks, record));
    Ok(assemble(&g, outs, chunks, hetero.is_some(), record))
}

/// Rank 0's plan alone, recorded, for a topology on which a group acts regularly on the
/// ranks (`compact`): every rank's plan is rank 0's moved by the automorphism that takes 0
/// there, so the steps are the diameter and the optima's maximum over ranks is rank 0's.
/// The plan's `nodes` and optima cover rank 0 only; its [`BfbPlan::tau`] and details are
/// the whole plan's.
pub(super) fn plan_rank0(topo: &Topology) -> Result<BfbPlan> {
    let g = Graph::around(topo, 0)?;
    let out = plan_range(&g, 0..g.n.min(1), None, true);
    Ok(assemble(&g, vec![out], None, false, true))
}

/// The plan made of the threads' `outs`, in node order.
fn assemble(g: &Graph, outs: Vec<RangeOut>, chunks: Option<Cap>, hetero: bool, record: bool) -> BfbPlan {
    let mut p = BfbPlan {
        n: g.n,
        steps: g.steps,
        optima: Vec::with_capacity(g.n * g.steps),
        chunks,
        fractional: Vec::new(),
        alphas: Vec::with_capacity(g.n * g.steps),
        recorded: record,
        nodes: Vec::with_capacity(g.n),
        cuts: vec![Vec::new(); g.n],
        max_ingress: Rat::zero(),
        min_ingress: Rat::zero(),
        subproblems: 0,
        solved: 0,
        hetero,
        times: Vec::new(),
        dropped: Vec::new(),
    };
    for out in outs {
        p.times.extend(out.times);
        p.dropped.extend(out.dropped);
        p.optima.extend(out.optima);
        p.fractional.extend(out.fractional);
        p.alphas.extend(out.alphas);
        p.nodes.extend(out.nodes);
        for (v, c) in out.cuts {
            p.cuts[v as usize].push(c);
        }
        p.subproblems += out.subproblems;
        p.solved += out.solved;
    }
    for c in &mut p.cuts {
        c.sort_unstable();
        c.dedup();
    }
    (p.min_ingress, p.max_ingress) = g.ingress_bounds();
    p
}

/// What one thread produces for its range of nodes.
pub(super) struct RangeOut {
    pub(super) nodes: Vec<NodePlan>,
    pub(super) optima: Vec<Rat>,
    /// The LP optima, only when chunked.
    pub(super) fractional: Vec<Rat>,
    pub(super) alphas: Vec<f64>,
    pub(super) cuts: Vec<(u32, Rat)>,
    /// With `hetero`: every (u, t)'s time U (µs) and its dropped links (u, t, link).
    pub(super) times: Vec<Rat>,
    pub(super) dropped: Vec<(u32, u32, u32)>,
    pub(super) subproblems: usize,
    pub(super) solved: usize,
}

/// Per-thread scratch space and the cache of solved subproblems.
#[derive(Default)]
pub(super) struct Worker {
    pub(super) cache: HashMap<Subproblem, Solution, Fast>,
    /// Sender bitmask of every source of the current node (`words` per source).
    pub(super) masks: Vec<u64>,
    /// Sources of the current node ordered by (distance, mask, rank).
    pub(super) order: Vec<u32>,
    /// P chunks per shard, if chunked.
    pub(super) chunks: Option<Cap>,
    /// Subproblems solved outside the cache (hetero: latencies differ per node, so no reuse).
    pub(super) uncached: usize,
    /// Record every delivery (see [`plan_mode`]).
    pub(super) record: bool,
}

pub(super) fn plan_range(g: &Graph, range: Range<usize>, chunks: Option<Cap>, record: bool) -> RangeOut {
    let mut wk = Worker { chunks, record, ..Worker::default() };
    let mut out = RangeOut {
        nodes: Vec::with_capacity(range.len()),
        optima: Vec::new(),
        fractional: Vec::new(),
        alphas: Vec::new(),
        cuts: Vec::new(),
        times: Vec::new(),
        dropped: Vec::new(),
        subproblems: 0,
        solved: 0,
    };
    for u in range {
        let node = plan_node(g, u, &mut wk, &mut out);
        if record {
            out.nodes.push(node);
        }
    }
    out.solved = wk.cache.len() + wk.uncached;
    out
}

/// Bitmask words for a node with `senders` in-links.
pub(super) fn mask_words(senders: usize) -> usize {
    senders.div_ceil(64).max(1)
}

/// Sender masks of every rank v as a source for u: bit k set iff in-neighbour k of u is one
/// hop closer to v than u is (so it holds v's shard one step before u needs it).
pub(super) fn sender_masks(g: &Graph, u: usize, masks: &mut Vec<u64>) {
    let (n, ins) = (g.n, &g.ins[u]);
    let words = mask_words(ins.len());
    masks.clear();
    masks.resize(n * words, 0);
    let row = g.row(u);
    for (k, inl) in ins.iter().enumerate() {
        let (word, bit) = (k / 64, 1u64 << (k % 64));
        for (v, (&dw, &du)) in g.row(inl.from as usize).iter().zip(row).enumerate() {
            if dw as u32 + 1 == du as u32 {
                masks[v * words + word] |= bit;
            }
        }
    }
}

/// Sources of u (all ranks but u) ordered by (distance, mask, rank); returns where each
/// distance starts (`starts[t - 1]..starts[t]`).
pub(super) fn order_sources(g: &Graph, u: usize, masks: &[u64], order: &mut Vec<u32>) -> Vec<usize> {
    let (n, row) = (g.n, g.row(u));
    let mut starts = vec![0usize; g.steps + 1];
    for &d in row.iter().filter(|&&d| d > 0) {
        starts[d as usize] += 1;
    }
    for t in 1..=g.steps {
        starts[t] += starts[t - 1];
    }
    order.clear();
    order.resize(n.saturating_sub(1), 0);
    // fill[t]: where the next source at distance t goes.
    let mut fill: Vec<usize> = std::iter::once(0).chain(starts.iter().copied()).take(g.steps + 1).collect();
    for (v, &d) in row.iter().enumerate().filter(|(_, &d)| d > 0) {
        order[fill[d as usize]] = v as u32;
        fill[d as usize] += 1;
    }
    for t in 1..=g.steps {
        sort_by_mask(&mut order[starts[t - 1]..starts[t]], masks, g.ins[u].len());
    }
    starts
}

/// Bits of a rank in a packed sort key: ranks are below [`MAX_RANKS`] = 2^14.
pub(super) const RANK_BITS: u32 = 14;

/// Sort sources by (mask, rank), masks over `senders` in-links. One-word masks sort as packed
/// integers: u64 when mask and rank fit (up to 50 in-links, half the bytes to move and
/// compare), else u128.
pub(super) fn sort_by_mask(sources: &mut [u32], masks: &[u64], senders: usize) {
    let words = mask_words(senders);
    if senders as u32 + RANK_BITS <= u64::BITS {
        let mut keys: Vec<u64> = sources.iter().map(|&v| masks[v as usize] << RANK_BITS | v as u64).collect();
        keys.sort_unstable();
        for (s, k) in sources.iter_mut().zip(keys) {
            *s = (k & ((1 << RANK_BITS) - 1)) as u32;
        }
    } else if words == 1 {
        let mut keys: Vec<u128> = sources.iter().map(|&v| (masks[v as usize] as u128) << 32 | v as u128).collect();
        keys.sort_unstable();
        for (s, k) in sources.iter_mut().zip(keys) {
            *s = k as u32;
        }
    } else {
        let mask = |v: u32| &masks[v as usize * words..(v as usize + 1) * words];
        sources.sort_unstable_by(|&a, &b| mask(a).cmp(mask(b)).then(a.cmp(&b)));
    }
}

pub(super) fn plan_node(g: &Graph, u: usize, wk: &mut Worker, out: &mut RangeOut) -> NodePlan {
    let words = mask_words(g.ins[u].len());
    sender_masks(g, u, &mut wk.masks);
    let mut order = std::mem::take(&mut wk.order);
    let starts = order_sources(g, u, &wk.masks, &mut order);
    let mut node = NodePlan { step_start: Vec::with_capacity(g.steps + 1), ..Default::default() };
    if wk.record {
        node.deliveries.reserve(order.len());
    }
    for t in 1..=g.steps {
        node.step_start.push(node.deliveries.len() as u32);
        let sources = &order[starts[t - 1]..starts[t]];
        let chunked = wk.chunks.is_some();
        if sources.is_empty() {
            out.optima.push(Rat::zero());
            out.alphas.push(0.0);
            if chunked {
                out.fractional.push(Rat::zero());
            }
            if g.hetero.is_some() {
                out.times.push(Rat::zero());
            }
            continue;
        }
        out.subproblems += 1;
        let (taken, optimum, alpha) = plan_step(g, u, sources, words, wk, &mut node, &mut out.cuts);
        out.optima.push(taken * g.sigma);
        out.alphas.push(alpha);
        if chunked {
            out.fractional.push(optimum * g.sigma);
        }
        if let Some((alpha, _)) = &g.hetero {
            // The optimum is the time U; an in-link whose latency reaches it carries nothing
            // (App. E.3's removed links; see `hetero`).
            out.times.push(optimum);
            let slow = g.ins[u].iter().filter(|i| alpha[i.link as usize] >= optimum);
            out.dropped.extend(slow.map(|i| (u as u32, t as u32, i.link)));
        }
    }
    node.step_start.push(node.deliveries.len() as u32);
    wk.order = order;
    node
}

/// Classes of `sources` (sorted by mask): the runs of equal masks, as ranges.
pub(super) fn classes(sources: &[u32], masks: &[u64], words: usize) -> Vec<Range<usize>> {
    let mask = |v: u32| &masks[v as usize * words..(v as usize + 1) * words];
    // One-word masks compare as integers (a slice comparison is a call to memcmp).
    let same = |a: u32, b: u32| if words == 1 { masks[a as usize] == masks[b as usize] } else { mask(a) == mask(b) };
    let mut runs = Vec::new();
    let mut begin = 0;
    for i in 1..=sources.len() {
        if i == sources.len() || !same(sources[i], sources[begin]) {
            runs.push(begin..i);
            begin = i;
        }
    }
    runs
}

/// Solve (u, t) for `sources` (sorted by mask) and record every source's delivery (unless
/// `wk.record` is off); returns (the recorded splits' busiest link, U*) in shards per unit
/// of scaled capacity: equal unless chunked, where each split is first rounded to whole
/// chunks. With `hetero`, U* is LP (14)'s time (µs) instead and the first is the
/// latency-aware split's busiest link. Third: the largest latency of a link carrying data.
pub(super) fn plan_step(
    g: &Graph,
    u: usize,
    sources: &[u32],
    words: usize,
    wk: &mut Worker,
    node: &mut NodePlan,
    cuts: &mut Vec<(u32, Rat)>,
) -> (Rat, Rat, f64) {
    let ins = &g.ins[u];
    let runs = classes(sources, &wk.masks, words);
    let mut problem = Subproblem {
        caps: ins.iter().map(|i| i.cap).collect(),
        words,
        masks: Vec::with_capacity(runs.len() * words),
        counts: Vec::with_capacity(runs.len()),
    };
    for r in &runs {
        let v = sources[r.start] as usize;
        problem.masks.extend_from_slice(&wk.masks[v * words..(v + 1) * words]);
        problem.counts.push(r.len() as Cap);
    }
    let owned;
    let sol = match &g.hetero {
        Some((alpha, k)) => {
            let local: Vec<Rat> = ins.iter().map(|i| alpha[i.link as usize]).collect();
            owned = hetero::solve(&problem, &local, *k);
            wk.uncached += 1;
            &owned
        }
        // One lookup (hash and key comparison) per (u, t); the key is not needed afterwards.
        None => wk.cache.entry(problem).or_insert_with_key(solve),
    };
    // Chunked or hetero: per local sender, the chunks (units) it carries at this step; and one
    // source's rounding.
    let track = wk.chunks.is_some() || g.hetero.is_some();
    let mut loads: Vec<Cap> = vec![0; if track { ins.len() } else { 0 }];
    let mut rounded: Vec<(u32, Cap)> = Vec::new();
    // Without recording, the split among a class's sources matters only for per-source
    // rounding or loads.
    let runs = if wk.record || track { &runs[..] } else { &[] };
    for (k, r) in runs.iter().enumerate() {
        let members = &sources[r.clone()];
        split_members(&sol.flows[k], members.len(), sol.unit, |i, parts| {
            let v = members[i];
            let (parts, unit) = match wk.chunks {
                None => {
                    if track {
                        for &(w, y) in parts {
                            loads[w as usize] += y;
                        }
                    }
                    (parts, sol.unit)
                }
                Some(p) => {
                    chunked::round(parts, sol.unit, p, &mut rounded);
                    for &(w, y) in &rounded {
                        loads[w as usize] += y;
                    }
                    (&rounded[..], p)
                }
            };
            if !wk.record {
                return;
            }
            let via = if parts.len() == 1 {
                let inl = ins[parts[0].0 as usize];
                Via::Whole { link: inl.link, from: inl.from }
            } else {
                split_parts(ins, v, parts, unit, node, cuts)
            };
            node.deliveries.push(Delivery { src: v, via });
        });
    }
    let taken = match wk.chunks {
        None if track => {
            loads.iter().zip(ins).map(|(&y, inl)| Rat::new(y, sol.unit * inl.cap)).max().unwrap_or_default()
        }
        None => sol.optimum,
        Some(p) => loads.iter().zip(ins).map(|(&y, inl)| Rat::new(y, p * inl.cap)).max().unwrap_or_default(),
    };
    let carrying: Vec<usize> = if track {
        (0..ins.len()).filter(|&w| loads[w] > 0).collect()
    } else {
        sol.flows.iter().flatten().map(|&(w, _)| w as usize).collect()
    };
    let alpha = carrying.into_iter().map(|w| g.latency[ins[w].link as usize]).fold(0.0f64, f64::max);
    (taken, sol.optimum, alpha)
}

/// Record a split delivery of source v: consecutive intervals of lengths units / unit in
/// sender order, and their interior cut points.
pub(super) fn split_parts(
    ins: &[InLink],
    v: u32,
    parts: &[(u32, Cap)],
    unit: Cap,
    node: &mut NodePlan,
    cuts: &mut Vec<(u32, Rat)>,
) -> Via {
    let first = node.parts.len() as u32;
    let mut done: Cap = 0;
    for (i, &(w, units)) in parts.iter().enumerate() {
        done += units;
        let end = Rat::new(done, unit);
        if i + 1 < parts.len() {
            cuts.push((v, end));
        }
        let inl = ins[w as usize];
        node.parts.push(Part { link: inl.link, from: inl.from, end });
    }
    Via::Split { first, len: parts.len() as u32 }
}

impl BfbPlan {
    /// Number of steps: the diameter D.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// U*_{u,t}: LP (1)'s optimum for rank u at step t (1-based), in shards per GB/s
    /// (shards per link for unit bandwidths); 0 when no source is at distance t.
    pub fn optimum(&self, u: usize, t: usize) -> Rat {
        assert!((1..=self.steps).contains(&t) && u < self.n, "no subproblem ({u}, {t})");
        self.optima[u * self.steps + t - 1]
    }

    /// max_u U*_{u,t}: the time of step t is this times the shard size M / N.
    pub fn step_max(&self, t: usize) -> Rat {
        (0..self.n).map(|u| self.optimum(u, t)).max().unwrap_or_default()
    }

    /// The largest latency (µs) of a link that carries data at step t: what the step costs
    /// in the analytic model besides its bandwidth term.
    pub fn step_latency(&self, t: usize) -> f64 {
        (0..self.n).map(|u| self.alphas[u * self.steps + t - 1]).fold(0.0f64, f64::max)
    }

    /// Sum over steps of [`BfbPlan::step_max`]: T_B = (M / N) * this.
    pub fn load_sum(&self) -> Rat {
        (1..=self.steps).map(|t| self.step_max(t)).sum()
    }

    /// The bandwidth factor tau = T_B / (M / B) with B the largest ingress bandwidth of a
    /// rank (the paper's node bandwidth d * b; for Kautz-type graphs whose self-loops the zoo
    /// drops, that is the loop-counted degree the paper uses). Exact.
    pub fn tau(&self) -> Rat {
        self.factor(&self.optima)
    }

    /// The LP optimum's bandwidth factor: [`BfbPlan::tau`] of the unchunked plan. Chunked, the
    /// schedule's `tau` is at least this and at most Theorem 20's bound above it.
    pub fn tau_fractional(&self) -> Rat {
        match self.chunks {
            None => self.tau(),
            Some(_) => self.factor(&self.fractional),
        }
    }

    /// P, if every shard is in P chunks.
    pub fn chunks(&self) -> Option<Cap> {
        self.chunks
    }

    /// [`bandwidth_factor`] of `optima` (see [`BfbPlan::tau`]).
    pub(super) fn factor(&self, optima: &[Rat]) -> Rat {
        bandwidth_factor(optima, self.steps, self.max_ingress, self.n)
    }

    /// Theorem 17's BW-optimality: tau = (N - 1) / N, i.e. T_B = (N - 1)/N * M / B. Needs
    /// every rank's ingress to equal B, so it implies [`BfbPlan::meets_ingress_bound`].
    pub fn bandwidth_optimal(&self) -> bool {
        self.n <= 1 || self.tau() == Rat::new(self.n as i128 - 1, self.n as i128)
    }

    /// Whether T_B meets the lower bound of any allgather on this topology,
    /// (N - 1)/N * M / (smallest ingress): a rank receives N - 1 shards through its in-links.
    /// Weaker than [`BfbPlan::bandwidth_optimal`] when ingress differs between ranks (a
    /// Kautz graph whose dropped self-loops leave some ranks one in-link short).
    pub fn meets_ingress_bound(&self) -> bool {
        self.n <= 1 || self.load_sum() * self.min_ingress == Rat::from_integer(self.n as i128 - 1)
    }

    /// (u, t) subproblems with at least one source, and how many distinct ones were solved
    /// (the others were identical to one solved before on the same thread).
    pub fn subproblems(&self) -> (usize, usize) {
        (self.subproblems, self.solved)
    }

    /// Interior cut points of shard v's pieces (sorted).
    pub fn cuts(&self, v: usize) -> &[Rat] {
        &self.cuts[v]
    }

    /// `provenance.details` entries, keys prefixed with `prefix`.
    pub(super) fn details(&self, prefix: &str) -> Details {
        let mut d = Details::new()
            .with(format!("{prefix}bfb_steps"), self.steps)
            .with(format!("{prefix}tau"), quoted(&self.tau()))
            .with(format!("{prefix}bandwidth_optimal"), self.bandwidth_optimal());
        if self.chunks.is_some() {
            d.set(format!("{prefix}tau_fractional"), quoted(&self.tau_fractional()));
        }
        d
    }

    /// With `hetero`: the time (µs) of rank u's step t, LP (14)'s optimum (0 without sources).
    pub fn time(&self, u: usize, t: usize) -> Rat {
        assert!(self.hetero && (1..=self.steps).contains(&t) && u < self.n, "no hetero subproblem ({u}, {t})");
        self.times[u * self.steps + t - 1]
    }

    /// With `hetero`: max_u U_{u,t}, the time of step t (µs).
    pub fn step_time(&self, t: usize) -> Rat {
        (0..self.n).map(|u| self.time(u, t)).max().unwrap_or_default()
    }

    /// With `hetero`: the allgather's time, sum over steps of [`BfbPlan::step_time`] (µs); else 0.
    pub fn time_sum(&self) -> Rat {
        if !self.hetero {
            return Rat::zero();
        }
        (1..=self.steps).map(|t| self.step_time(t)).sum()
    }

    /// With `hetero`: the (u, t, link) whose latency reaches U_{u,t}, so LP (14) drops them.
    pub fn dropped(&self) -> &[(u32, u32, u32)] {
        &self.dropped
    }

    /// Every detail of a one-phase schedule (allgather or reduce-scatter) made from this plan.
    pub(super) fn one_phase_details(&self) -> Details {
        let mut d = self.details("");
        d.extend(self.chunk_details());
        d.extend(self.hetero_details(self.time_sum()));
        d
    }

    /// `hetero` = true and `time_us` = `time` (exact) when latency-aware (unprefixed).
    pub(super) fn hetero_details(&self, time: Rat) -> Details {
        if !self.hetero {
            return Details::new();
        }
        // Not `time_us`: that key is the simulator's float time next to the details in `--json`.
        Details::new()
            .with("hetero", true)
            .with("hetero_time_us", crate::ir::decimal_value(&time))
            .with("hetero_time_us_exact", quoted(&time))
    }

    /// `chunks` = P when chunked (unprefixed: one P for a whole schedule).
    pub(super) fn chunk_details(&self) -> Details {
        self.chunks.map(|p| ("chunks".to_string(), p.into())).into_iter().collect()
    }
}

/// sum_t max_u `optima[u * steps + t - 1]` * B / N over the ranks u whose optima are given
/// (all of them in a [`BfbPlan`]), with B = `max_ingress` and N = `n` ranks: the bandwidth
/// factor tau (0 for a single rank).
pub(super) fn bandwidth_factor(optima: &[Rat], steps: usize, max_ingress: Rat, n: usize) -> Rat {
    if n <= 1 || steps == 0 {
        return Rat::zero();
    }
    let step_max = |t: usize| optima.chunks(steps).map(|row| row[t - 1]).max().unwrap_or_default();
    let sum: Rat = (1..=steps).map(step_max).sum();
    sum * max_ingress / Rat::from_integer(n as i128)
}

pub(super) fn quoted(r: &Rat) -> serde_json::Value {
    crate::ir::exact_value(r)
}
