//! [`Sampler::Sets`](super::engine::Sampler::Sets): TACOS's matching on point-to-point networks
//! whose links all cost the same (meshes, tori, unwound switches), with exact candidate sets.
//!
//! With one link cost, every transfer started at an event arrives at the next, so at each
//! event every link is free, nothing is in flight and no chunk ever arrives twice (no
//! replacement, nothing discarded). Then a destination's candidates are one exact set instead
//! of lazily cleaned per-link lists:
//!
//! * `lists[d]`: the chunks d lacks that some in-neighbour holds, each once (a chunk joins
//!   when its first in-neighbour gets it, `seen` remembers that, and leaves when d picks it);
//! * `cnt[l]`: how many chunks link l's source holds that its destination lacks and has not
//!   picked at this event, so "does l offer anything" is one load;
//! * `bits`: per chunk, one bit per rank for "holds" and one for "seen", interleaved, so a rank
//!   and its neighbours (a mesh: v ± 1, v ± width) are answered by one or two cache lines.
//!
//! A pick walks `lists[d]` in random order and takes the first entry the source of a link still
//! free at d holds (uniform over the union of what the free
//! links can supply, as every sampler); the link is then uniform among the free ones whose
//! source holds it (every link costs the same: all tie). The distribution of every pick is
//! the reference's; the random stream differs from [`Sampler::Lists`]'s.
//!
//! Each event is one pass over ranges of ranks (64-aligned, so each word of `bits` has one
//! writer) on all cores, fused: in rank order, the previous event's arrivals at a rank (its
//! holds bits), lagged by the largest link span (a mesh row) ahead of the matching that reads
//! them, then the offers into a rank (pulled from its in-neighbours' picks, in the order the
//! separate offer pass made them), then its matching (its lists, in-link counts and random
//! stream), so a chunk's lines around a rank are fetched once per event, not once per pass.
//! Arrivals within the lag of another range are applied first, behind a barrier.

use super::engine::{huge_vec, on_threads, prefetch, Match, Outcome, NONE, PREFETCH_AHEAD};
use super::network::Net;
use super::rng::{self, Rng};
use crate::error::{CollsynthError, Result};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Barrier;

/// Ranks per range below which one range runs (threads cost tens of microseconds).
const RANGE_MIN: usize = 1024;

/// Holds and seen bits, chunk-major, interleaved per 64 ranks.
struct Bits {
    rw: usize,
    words: Vec<AtomicU64>,
}

impl Bits {
    fn new(chunks: usize, n: usize) -> Bits {
        let rw = n.div_ceil(64);
        Bits { rw, words: huge_vec(2 * chunks * rw, || AtomicU64::new(0)) }
    }

    #[inline]
    fn word(&self, c: u32, v: usize, seen: bool) -> &AtomicU64 {
        &self.words[2 * (c as usize * self.rw + v / 64) + seen as usize]
    }

    #[inline]
    fn get(&self, c: u32, v: usize, seen: bool) -> bool {
        self.word(c, v, seen).load(Relaxed) >> (v % 64) & 1 == 1
    }

    /// Only the range owning v writes v's words (ranges are 64-aligned): load and store.
    #[inline]
    fn set(&self, c: u32, v: usize, seen: bool) {
        let w = self.word(c, v, seen);
        w.store(w.load(Relaxed) | 1 << (v % 64), Relaxed);
    }

    #[inline]
    fn holds(&self, c: u32, v: usize) -> bool {
        self.get(c, v, false)
    }

    /// Hint the CPU to load the line of (c, v) (no effect on results).
    #[inline]
    fn prefetch(&self, c: u32, v: usize) {
        prefetch(self.word(c, v, false));
    }
}

/// The per-rank state of ranks `d0..` (and their in-links from `l0`).
struct Range<'a> {
    d0: usize,
    l0: usize,
    lists: &'a mut [Vec<u32>],
    cnt: &'a mut [u32],
    rngs: &'a mut [Rng],
    missing: &'a mut [u32],
    /// Ranks of the range that still lack something.
    active: Vec<u32>,
}

/// One range's picks at one event, rank by rank.
struct Picks {
    d0: usize,
    /// (link, chunk, the link's source), in matching order.
    picks: Vec<(u32, u32, u32)>,
    /// `picks[pos[v - d0]..pos[v - d0 + 1]]` are rank v's.
    pos: Vec<u32>,
}

impl Picks {
    /// No picks for ranks `d0..d1`.
    fn none(d0: usize, d1: usize) -> Picks {
        Picks { d0, picks: Vec::new(), pos: vec![0; d1 - d0 + 1] }
    }

    fn of(&self, v: usize) -> &[(u32, u32, u32)] {
        let i = v - self.d0;
        &self.picks[self.pos[i] as usize..self.pos[i + 1] as usize]
    }

    fn clear(&mut self) {
        self.picks.clear();
        self.pos.clear();
    }

    /// Rank d's picks start here (ranks since the last opened one have none).
    fn open(&mut self, d: usize) {
        let at = self.picks.len() as u32;
        self.pos.resize(self.pos.len().max(d - self.d0 + 1), at);
    }
}

/// What every pass reads.
struct Ctx<'a> {
    net: &'a Net,
    bits: &'a Bits,
    bounds: &'a [usize],
    /// Per rank, at `net.in_start[x]..`: its in-links with their sources (link, source), in
    /// increasing source order.
    pull: Vec<(u32, u32)>,
    /// The largest |source - destination| of a link.
    lag: usize,
}

impl Ctx<'_> {
    /// Rank v's picks in `prev` (one entry per range).
    fn picks_of<'p>(&self, prev: &'p [Picks], v: usize) -> &'p [(u32, u32, u32)] {
        prev[self.bounds.partition_point(|&b| b <= v) - 1].of(v)
    }
}

impl Range<'_> {
    /// Match destination d: append (link, chunk) picks to `out`.
    fn match_dest(&mut self, ctx: &Ctx, d: usize, f: &mut Vec<u32>, out: &mut Vec<(u32, u32, u32)>) {
        let (net, bits) = (ctx.net, ctx.bits);
        let ins = net.in_start[d] as usize..net.in_start[d + 1] as usize;
        f.clear();
        f.extend(ins.clone().filter(|&l| self.cnt[l - self.l0] > 0).map(|l| l as u32));
        let src = |l: u32| net.vlinks[l as usize].src as usize;
        let i = d - self.d0;
        // The set is walked in random order without replacement (a partial Fisher-Yates
        // shuffle): `list[..unseen]` is not yet drawn at this event. A chunk passed over was
        // supplied by no free link, and links only leave `f`, so it never is later: the first
        // supplied chunk of the walk is uniform over what the free links still supply.
        let mut unseen = self.lists[i].len();
        while !f.is_empty() {
            let (list, rng) = (&mut self.lists[i], &mut self.rngs[i]);
            let supplied = |c: u32| f.iter().any(|&l| bits.holds(c, src(l)));
            let c = loop {
                assert!(unseen > 0, "sets: a link counts a chunk its destination's set lacks");
                let r = rng.below(unseen);
                unseen -= 1;
                list.swap(r, unseen);
                if supplied(list[unseen]) {
                    // Out of the set: swap it with the last entry (drawn, or itself).
                    let last = list.len() - 1;
                    list.swap(unseen, last);
                    break list.pop().expect("drawn");
                }
            };
            let holders = f.iter().filter(|&&l| bits.holds(c, src(l))).count();
            let mut k = rng.below(holders);
            let l = *f
                .iter()
                .find(|&&l| {
                    bits.holds(c, src(l)) && {
                        k = k.wrapping_sub(1);
                        k == usize::MAX
                    }
                })
                .expect("a holder");
            out.push((l, c, src(l) as u32));
            // c is taken: no in-link offers it any more.
            for l2 in ins.clone() {
                if bits.holds(c, src(l2 as u32)) {
                    self.cnt[l2 - self.l0] -= 1;
                }
            }
            f.retain(|&x| x != l && self.cnt[x as usize - self.l0] > 0);
        }
    }

    /// One event's pass over this range (range `g`): the arrivals and offers of the previous
    /// event (`prev`, every range's picks), fused with this event's matching (picks into
    /// `cur`). Ranks go in order, lagged: a rank's arrivals are applied before the matching of
    /// any rank they are in-neighbour of (at most `lag` ranks back), the offers into a rank
    /// just before its own matching, so a chunk's lines around a rank are touched together.
    /// Arrivals other ranges read (ranks within `lag` of a boundary) come first, then all
    /// ranges wait at `barrier`.
    fn pass(&mut self, ctx: &Ctx, prev: &[Picks], g: usize, cur: &mut Picks, barrier: &Barrier) {
        let (a, b) = (ctx.bounds[g], ctx.bounds[g + 1]);
        let lo = if g > 0 { (a + ctx.lag).min(b) } else { a };
        let hi = if g + 2 < ctx.bounds.len() { b.saturating_sub(ctx.lag).max(lo) } else { b };
        self.arrive(ctx, &prev[g], a..lo);
        self.arrive(ctx, &prev[g], hi..b);
        barrier.wait();
        // Arrivals of ranks `ar..hi` are still due.
        let mut ar = lo;
        let mut due = |r: &mut Self, upto: usize| {
            let upto = upto.clamp(ar, hi);
            r.arrive(ctx, &prev[g], ar..upto);
            ar = upto;
        };
        cur.clear();
        let active = std::mem::take(&mut self.active);
        let mut next = Vec::with_capacity(active.len());
        let mut f = Vec::new();
        let live = |r: &Self, x: u32| r.missing[x as usize - r.d0] > 0;
        // Stages, by distance ahead of the matching: the offers' lines, the offers (then the
        // draws' list entries), the draws' chunk lines.
        let (po, pp, pc) = (2 * PREFETCH_AHEAD, PREFETCH_AHEAD, PREFETCH_AHEAD / 2);
        for j in 0..active.len() + po {
            if let Some(&x) = active.get(j) {
                self.prefetch_offers(ctx, prev, x as usize);
            }
            if let Some(&x) = (j + pp).checked_sub(po).and_then(|i| active.get(i)) {
                due(self, x as usize + 1);
                if live(self, x) {
                    self.pull(ctx, prev, x as usize);
                    self.prefetch_draws(ctx, x as usize, false);
                }
            }
            if let Some(&x) = (j + pc).checked_sub(po).and_then(|i| active.get(i)) {
                if live(self, x) {
                    self.prefetch_draws(ctx, x as usize, true);
                }
            }
            let Some(&d) = j.checked_sub(po).and_then(|i| active.get(i)) else { continue };
            due(self, d as usize + ctx.lag + 1);
            if !live(self, d) {
                continue;
            }
            next.push(d);
            if !self.lists[d as usize - self.d0].is_empty() {
                cur.open(d as usize);
                self.match_dest(ctx, d as usize, &mut f, &mut cur.picks);
            }
        }
        due(self, hi);
        cur.open(b);
        self.active = next;
    }

    /// Prefetch the lines the offers into x will touch (no effect on results).
    fn prefetch_offers(&self, ctx: &Ctx, prev: &[Picks], x: usize) {
        for p in ctx.net.in_start[x] as usize..ctx.net.in_start[x + 1] as usize {
            for &(_, c, _) in ctx.picks_of(prev, ctx.pull[p].1 as usize) {
                ctx.bits.prefetch(c, x);
            }
        }
        let list = &self.lists[x - self.d0];
        prefetch(list.as_ptr().wrapping_add(list.len()));
    }

    /// Prefetch the list entries of d's draws as they fall when each is accepted at once (a
    /// draw, then the link's, per in-link that offers something), or with `chunk`, read them
    /// (prefetched earlier) and prefetch their lines at d's in-neighbours. Only a hint.
    fn prefetch_draws(&self, ctx: &Ctx, d: usize, chunk: bool) {
        let (i, net) = (d - self.d0, ctx.net);
        let list = &self.lists[i];
        let ins = net.in_start[d] as usize..net.in_start[d + 1] as usize;
        let picks = ins.clone().filter(|&l| self.cnt[l - self.l0] > 0).count().min(list.len());
        let mut rng = self.rngs[i].clone();
        for k in 0..picks {
            let r = rng.below(list.len() - k);
            rng.next_u64(); // the link's draw
            if !chunk {
                prefetch(&list[r]);
                continue;
            }
            for l in ins.clone() {
                ctx.bits.prefetch(list[r], net.vlinks[l].src as usize);
            }
        }
    }

    /// The previous event's picks of ranks `ranks` (this range's) arrive: set their bits.
    fn arrive(&mut self, ctx: &Ctx, mine: &Picks, ranks: std::ops::Range<usize>) {
        for d in ranks {
            let got = mine.of(d);
            for &(_, c, _) in got {
                ctx.bits.set(c, d, false);
            }
            self.missing[d - self.d0] -= got.len() as u32;
        }
    }

    /// The offers into x of what its in-neighbours got at the previous event (x's own arrivals
    /// applied): in-neighbours in increasing order, each one's picks in its matching order, so
    /// x's set gains chunks in the order the arrivals were made.
    fn pull(&mut self, ctx: &Ctx, prev: &[Picks], x: usize) {
        let net = ctx.net;
        for p in net.in_start[x] as usize..net.in_start[x + 1] as usize {
            let (l, v) = ctx.pull[p];
            for &(_, c, u) in ctx.picks_of(prev, v as usize) {
                if u as usize != x {
                    self.offer_one(ctx.bits, l, c, x);
                }
            }
        }
    }

    /// Link l offers c to x: one more for l if x lacks c; x's set gains c unless it had it.
    fn offer_one(&mut self, bits: &Bits, l: u32, c: u32, x: usize) {
        if !bits.holds(c, x) {
            self.cnt[l as usize - self.l0] += 1;
            if !bits.get(c, x, true) {
                bits.set(c, x, true);
                self.lists[x - self.d0].push(c);
            }
        }
    }
}

/// Run the matching with [`Sampler::Sets`](super::engine::Sampler::Sets) (`net` point-to-point,
/// every link of one cost) on `threads` threads; the outcome is the same for any count.
pub(super) fn run(net: &Net, sources: &[u32], seed: u64, materialize: bool, threads: usize) -> Result<Outcome> {
    run_in_ranges(net, sources, seed, materialize, threads.clamp(1, net.n.div_ceil(RANGE_MIN).max(1)))
}

/// [`run`] on `ranges` ranges of ranks (64-aligned, so small networks may leave some empty),
/// each on its own thread.
pub(super) fn run_in_ranges(
    net: &Net,
    sources: &[u32],
    seed: u64,
    materialize: bool,
    ranges: usize,
) -> Result<Outcome> {
    let n = net.n;
    let chunks = sources.len();
    debug_assert!(!net.shared && net.uniform);
    let cost = net.vlinks.first().map_or(0.0, |v| v.cost);
    let bits = Bits::new(chunks, n);
    let mut lists = vec![Vec::new(); n];
    let mut cnt = vec![0u32; net.vlinks.len()];
    let mut missing = vec![chunks as u32; n];
    let mut rngs: Vec<Rng> = (0..n).map(|d| Rng::new(rng::restart_seed(seed, d + 1))).collect();
    let mut remaining = (n * chunks) as u64;
    for (c, &s) in sources.iter().enumerate() {
        bits.set(c as u32, s as usize, false);
        missing[s as usize] -= 1;
        remaining -= 1;
    }
    for (c, &s) in sources.iter().enumerate() {
        for &(l, x) in &net.out_v[s as usize] {
            let (c, x) = (c as u32, x as usize);
            if !bits.holds(c, x) {
                cnt[l as usize] += 1;
                if !bits.get(c, x, true) {
                    bits.set(c, x, true);
                    lists[x].push(c);
                }
            }
        }
    }
    let bounds: Vec<usize> = (0..=ranges).map(|g| if g == ranges { n } else { g * n / ranges / 64 * 64 }).collect();
    let link_bounds: Vec<usize> = bounds.iter().map(|&d| net.in_start[d] as usize).collect();
    let mut pull: Vec<(u32, u32)> = net.vlinks.iter().enumerate().map(|(l, v)| (l as u32, v.src)).collect();
    for x in 0..n {
        pull[net.in_start[x] as usize..net.in_start[x + 1] as usize].sort_by_key(|&(_, v)| v);
    }
    let lag = net.vlinks.iter().map(|v| v.src.abs_diff(v.dst) as usize).max().unwrap_or(0);
    let ctx = Ctx { net, bits: &bits, bounds: &bounds, pull, lag };
    let mut parts: Vec<Range> = {
        let mut lists = split(&mut lists, &bounds).into_iter();
        let mut rngs = split(&mut rngs, &bounds).into_iter();
        let mut missing = split(&mut missing, &bounds).into_iter();
        let mut cnt = split(&mut cnt, &link_bounds).into_iter();
        (0..ranges)
            .map(|g| {
                let missing = missing.next().unwrap();
                let active = (bounds[g]..bounds[g + 1]).filter(|&d| missing[d - bounds[g]] > 0).map(|d| d as u32);
                Range {
                    d0: bounds[g],
                    l0: link_bounds[g],
                    active: active.collect(),
                    lists: lists.next().unwrap(),
                    cnt: cnt.next().unwrap(),
                    rngs: rngs.next().unwrap(),
                    missing,
                }
            })
            .collect()
    };
    let mut matches = Vec::new();
    let mut deliver = if materialize { vec![NONE; chunks * n] } else { Vec::new() };
    let (mut t, mut events, mut parallel_events) = (0.0f64, 0usize, 0usize);
    let none = || (0..ranges).map(|g| Picks::none(bounds[g], bounds[g + 1])).collect::<Vec<_>>();
    let (mut prev, mut picked) = (none(), none());
    let barrier = Barrier::new(ranges);
    while remaining > 0 {
        let work = parts.iter_mut().zip(picked.iter_mut()).enumerate().collect();
        on_threads(work, |(g, (p, cur))| p.pass(&ctx, &prev, g, cur, &barrier));
        let count: usize = picked.iter().map(|p| p.picks.len()).sum();
        if count == 0 {
            break;
        }
        let start = t;
        t += cost;
        events += 1;
        parallel_events += (ranges > 1) as usize;
        remaining -= count as u64;
        if materialize {
            for &(l, c, _) in picked.iter().flat_map(|p| &p.picks) {
                deliver[c as usize * n + net.vlinks[l as usize].dst as usize] = matches.len() as u32;
                matches.push(Match { vlink: l, chunk: c, start, end: t, wasted: false });
            }
        }
        std::mem::swap(&mut prev, &mut picked);
    }
    if remaining > 0 {
        return Err(CollsynthError::bad(format!(
            "tacos: {remaining} (chunk, rank) postconditions cannot be satisfied (a rank cannot be reached \
             through ranks that need the chunk)"
        )));
    }
    Ok(Outcome { time_us: t, matches, deliver, events, replacements: 0, discarded: 0, parallel_events })
}

/// The disjoint pieces `s[bounds[g]..bounds[g + 1]]`.
fn split<'a, T>(mut s: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut pieces = Vec::with_capacity(bounds.len() - 1);
    for w in bounds.windows(2) {
        let (piece, rest) = std::mem::take(&mut s).split_at_mut(w[1] - w[0]);
        pieces.push(piece);
        s = rest;
    }
    pieces
}
