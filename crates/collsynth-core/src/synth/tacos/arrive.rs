//! The arrivals of one event, in two phases over ranges of ranks (one range per thread on
//! point-to-point networks, where virtual links are numbered by destination and a range of
//! ranks owns the lists of its in-links; one range on shared networks):
//!
//! A. each range takes the chunks arriving at its ranks (replacing a chunk the rank already
//!    has, see [`replacement`]) and lists, per range, the offers each delivery makes: its
//!    rank's out-links, except the one back to the sender, which has the chunk;
//! B. each range appends the offers to its ranks' in-link lists, skipping chunks the rank
//!    already has.
//!
//! B sees every delivery of the event and A none of its offers (those chunks reached the
//! sender after the transfer started, so a replacement may not take them), so the result does
//! not depend on the number of ranges or on the order of arrivals within an event.

use super::engine::{holds, prefetch, Match, NONE, PREFETCH_AHEAD};
use super::network::Net;
use super::rng::Rng;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// Per (chunk c, rank v), at `c * n + v`: how c reached v, when the engine needs it. Each
/// slot is written once, by the thread that owns v, and read by any.
pub(super) enum Stamps {
    /// Every link costs the same: every event is a multiple of that cost, so a chunk in a
    /// list before the current event reached the sender by the start of any transfer
    /// arriving now.
    None,
    /// Time-only mode on links of different costs: the arrival time (f64 bits).
    Time(Vec<AtomicU64>),
    /// Materializing: the delivering match (NONE at the chunk's source).
    Match(Vec<AtomicU32>),
}

impl Stamps {
    fn set(&self, i: usize, t: f64, id: u32) {
        match self {
            Stamps::None => {}
            Stamps::Time(a) => a[i].store(t.to_bits(), Relaxed),
            Stamps::Match(a) => a[i].store(id, Relaxed),
        }
    }

    /// When the chunk of slot i reached its rank (0 for its source).
    fn arrived(&self, i: usize, matches: &[Match]) -> f64 {
        match self {
            Stamps::None => 0.0,
            Stamps::Time(a) => f64::from_bits(a[i].load(Relaxed)),
            Stamps::Match(a) => match a[i].load(Relaxed) {
                NONE => 0.0,
                m => matches[m as usize].end,
            },
        }
    }

    /// The delivering match per slot (materializing; empty otherwise).
    pub(super) fn into_matches(self) -> Vec<u32> {
        match self {
            Stamps::Match(a) => a.into_iter().map(AtomicU32::into_inner).collect(),
            _ => Vec::new(),
        }
    }
}

/// What both phases read and do not change.
pub(super) struct Ctx<'a> {
    pub net: &'a Net,
    pub words: usize,
    pub matches: &'a [Match],
    pub stamps: &'a Stamps,
    /// Range g holds ranks `bounds[g]..bounds[g + 1]`.
    pub bounds: &'a [usize],
    pub t: f64,
    /// [`super::engine::Sampler::Direct`]: no candidate lists (then one range).
    pub direct: bool,
}

/// The state of the ranks `d0..d1`: their holdings rows, missing counts, in-link lists
/// (virtual links from `l0`), random streams and dirty flags.
pub(super) struct Part<'a> {
    pub d0: usize,
    pub l0: usize,
    pub has: &'a mut [u64],
    pub missing: &'a mut [u32],
    pub lists: &'a mut [Vec<u32>],
    pub rngs: &'a mut [Rng],
    pub is_dirty: &'a mut [bool],
    /// How many of this range's ranks are not dirty: at 0 a marking loop has nothing to do
    /// (on shared networks one arrival marks every rank behind the sender's port).
    pub clean: usize,
    /// Shared networks (one range): the chunk-major holdings, row c = the ranks holding c.
    pub holders: &'a mut [u64],
}

/// What phase A of one range produced.
#[derive(Default)]
pub(super) struct Delivered {
    /// (match, chunk it delivered), or NONE when it was discarded.
    pub outcomes: Vec<(u32, u32)>,
    /// Per range: (virtual link, chunk, its destination) offers into that range's ranks.
    offers: Vec<Vec<(u32, u32, u32)>>,
    /// Ranks that may be able to receive again (newly marked dirty).
    pub marks: Vec<u32>,
    pub delivered: u64,
    pub replacements: usize,
}

impl Part<'_> {
    fn word(&self, ctx: &Ctx, v: usize, c: u32) -> usize {
        (v - self.d0) * ctx.words + (c as usize >> 6)
    }

    fn has(&self, ctx: &Ctx, v: usize, c: u32) -> bool {
        holds(self.has, (v - self.d0) * ctx.words, c)
    }

    fn mark(&mut self, v: u32, marks: &mut Vec<u32>) {
        let flag = &mut self.is_dirty[v as usize - self.d0];
        if !*flag {
            *flag = true;
            self.clean -= 1;
            marks.push(v);
        }
    }

    /// Phase A for the arrivals `ids` at this range's ranks (in match order per rank).
    pub fn take(&mut self, ctx: &Ctx, ids: &[u32]) -> Delivered {
        let net = ctx.net;
        let n = net.n;
        let mut out = Delivered { offers: vec![Vec::new(); ctx.bounds.len() - 1], ..Delivered::default() };
        for (j, &id) in ids.iter().enumerate() {
            if let Some(&a) = ids.get(j + PREFETCH_AHEAD) {
                let m = &ctx.matches[a as usize];
                prefetch(&self.has[self.word(ctx, net.vlinks[m.vlink as usize].dst as usize, m.chunk)]);
            }
            let m = ctx.matches[id as usize];
            let v = &net.vlinks[m.vlink as usize];
            let (u, d) = (v.src, v.dst as usize);
            if net.shared && self.clean > 0 {
                for &x in net.hops_of(m.vlink).iter().flat_map(|h| &net.res_dsts[h.res as usize]) {
                    self.mark(x, &mut out.marks);
                }
            } else {
                self.mark(d as u32, &mut out.marks);
            }
            let c = if !self.has(ctx, d, m.chunk) {
                m.chunk
            } else if let Some(c) = self.replacement(ctx, &m, u, d) {
                out.replacements += 1;
                c
            } else {
                out.outcomes.push((id, NONE));
                continue;
            };
            let w = self.word(ctx, d, c);
            self.has[w] |= 1 << (c & 63);
            if !self.holders.is_empty() {
                self.holders[c as usize * n.div_ceil(64) + (d >> 6)] |= 1 << (d & 63);
            }
            self.missing[d - self.d0] -= 1;
            out.delivered += 1;
            ctx.stamps.set(c as usize * n + d, ctx.t, id);
            if self.missing[d - self.d0] == 0 {
                for &l in &net.in_v[d] {
                    self.lists[l as usize - self.l0] = Vec::new();
                }
            }
            out.outcomes.push((id, c));
            if ctx.direct {
                // No lists to append to (one range): phase B's marks, made here. A neighbour
                // that gets c later in this phase is marked by its own arrival anyway.
                for &(_, nb) in &net.out_v[d] {
                    if self.clean == 0 {
                        break;
                    }
                    let x = nb as usize;
                    if !self.is_dirty[x] && nb != u && self.missing[x] > 0 && !self.has(ctx, x, c) {
                        self.mark(nb, &mut out.marks);
                    }
                }
                continue;
            }
            for &(l, nb) in &net.out_v[d] {
                if nb != u {
                    out.offers[ctx.bounds.partition_point(|&b| b <= nb as usize) - 1].push((l, c, nb));
                }
            }
        }
        out
    }

    /// Chunk replacement (the strict variant): match m brought d a chunk it already has, so it
    /// carries instead a uniformly random chunk of its link's list that d lacks and the sender
    /// u held when the transfer started; None when there is none (the transfer is discarded).
    fn replacement(&mut self, ctx: &Ctx, m: &Match, u: u32, d: usize) -> Option<u32> {
        let row = (d - self.d0) * ctx.words;
        let held = |c: u32| ctx.stamps.arrived(c as usize * ctx.net.n + u as usize, ctx.matches) <= m.start;
        if ctx.direct {
            // No lists: the link's would hold exactly the chunks u has and d lacks (one range,
            // so u's row is here); drawn in increasing chunk order.
            debug_assert_eq!(self.d0, 0);
            let urow = u as usize * ctx.words;
            let mut options = Vec::new();
            for w in 0..ctx.words {
                let mut bits = self.has[urow + w] & !self.has[row + w];
                while bits != 0 {
                    let c = (w * 64) as u32 + bits.trailing_zeros();
                    bits &= bits - 1;
                    if held(c) {
                        options.push(c);
                    }
                }
            }
            return (!options.is_empty()).then(|| options[self.rngs[d - self.d0].below(options.len())]);
        }
        let options: Vec<u32> = self.lists[m.vlink as usize - self.l0]
            .iter()
            .copied()
            .filter(|&c| !holds(self.has, row, c) && held(c))
            .collect();
        (!options.is_empty()).then(|| options[self.rngs[d - self.d0].below(options.len())])
    }

    /// Phase B for range `g`: append the offers of every range's phase A into this range's
    /// ranks, in range order; returns the ranks that got something.
    pub fn offer(&mut self, ctx: &Ctx, all: &[Delivered], g: usize) -> Vec<u32> {
        let mut marks = Vec::new();
        for offers in all.iter().map(|a| &a.offers[g]) {
            for (j, &(l, c, d)) in offers.iter().enumerate() {
                if let Some(&(la, ca, da)) = offers.get(j + PREFETCH_AHEAD) {
                    prefetch(&self.has[self.word(ctx, da as usize, ca)]);
                    let list = &self.lists[la as usize - self.l0];
                    prefetch(list.as_ptr().wrapping_add(list.len()));
                }
                let d = d as usize;
                if self.missing[d - self.d0] > 0 && !self.has(ctx, d, c) {
                    if !ctx.direct {
                        self.lists[l as usize - self.l0].push(c);
                    }
                    self.mark(d as u32, &mut marks);
                }
            }
        }
        marks
    }
}
