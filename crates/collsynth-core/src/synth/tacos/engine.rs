//! The event-driven greedy link-chunk matching (paper section IV-E/F, as the TACOS
//! reference implementation runs it) on a lazily built time-expanded network: time jumps
//! from one arrival time to the next, and only what changes at an event is touched.
//!
//! At each event time t:
//! 1. arrivals at t are processed (in the order they were matched); a chunk that reached
//!    its destination earlier by another path is *replaced* by a uniformly random chunk the
//!    destination still needs and the sender held when the transfer started (strict
//!    variant of chunk replacement), or the transfer is discarded;
//! 2. every destination with a free in-link considers its unsatisfied postconditions in
//!    uniformly random order; each takes the free in-link whose source holds the chunk with
//!    the lowest link cost (earliest arrival), ties broken uniformly at random.
//!
//! Step 2 for one destination only touches that destination's in-links, so the global
//! shuffle of the reference reduces to an independent random order per destination. We
//! never enumerate the unsatisfied postconditions: "the first chunk in random order that
//! some free in-link can supply" is a uniform draw from the union of what the free in-links
//! can supply, which we sample by rejection from per-link candidate lists (chunks the
//! source got, appended on arrival, stale entries dropped lazily). The distribution of the
//! result is the reference algorithm's; the random stream is our own (splitmix64).

use super::arrive::{Ctx, Delivered, Part, Stamps};
use super::network::Net;
use super::rng::{self, Rng};
use crate::error::{CollsynthError, Result};
use std::collections::BTreeMap;

pub(super) const NONE: u32 = u32::MAX;
const TIE_EPS: f64 = 1e-9;
/// Purge a candidate list when up to 1/PURGE_AT of it may be stale (see `offers`).
const PURGE_AT: usize = 4;
/// ... and only lists this long: short ones stay in cache, where a stale draw is cheap.
const PURGE_MIN: usize = 64;
/// Match on several threads only when this many destinations are waiting (a thread costs
/// tens of microseconds to start).
const PARALLEL_MIN: usize = 512;
const MAX_THREADS: usize = 8;
/// The direct sampler's proposals (a uniformly random chunk the destination lacks) before
/// it draws from the exact union: each costs a row scan, the union |free links| rows.
const DIRECT_TRIES: usize = 16;

/// How a destination's next chunk is drawn (both uniform over the union of what its free
/// in-links can supply; different random streams, so different schedules for one seed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampler {
    /// The reference-identical process: per-link candidate lists, rejection by
    /// multiplicity, the list edits the reference makes (pinned results).
    Lists,
    /// No lists: propose a uniformly random chunk the destination lacks, accept it when a
    /// free in-link's source holds it (chunk-major holdings AND the free sources' mask).
    Direct,
    /// Point-to-point networks whose links all cost the same only: one exact candidate set
    /// per destination and exact per-link counts (module `sets`).
    Sets,
}

/// How many arrivals ahead the arrival loop prefetches the memory an arrival will touch
/// (the holdings words and candidate-list tails of the destination's neighbours): at 10K+
/// NPUs these are cache misses, and issuing them early lets them overlap.
pub(super) const PREFETCH_AHEAD: usize = 8;

/// Hint the CPU to load the cache line at `p` (no effect on results; a no-op off x86-64).
#[inline(always)]
pub(super) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no architectural effect, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A vector of `len` values `f()`, its memory advised to the kernel as huge pages (Linux,
/// before it is first touched): the engine reads its large arrays at random, and with 4 KiB
/// pages at 40K ranks nearly every access is also a TLB miss (a page walk that even a
/// prefetch waits for). No effect on results.
pub(super) fn huge_vec<T>(len: usize, f: impl FnMut() -> T) -> Vec<T> {
    let mut v = Vec::with_capacity(len);
    #[cfg(target_os = "linux")]
    if len * std::mem::size_of::<T>() >= 1 << 22 {
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        const PAGE: usize = 4096;
        let start = (v.as_mut_ptr() as usize).next_multiple_of(PAGE);
        let end = (v.as_mut_ptr() as usize + len * std::mem::size_of::<T>()) / PAGE * PAGE;
        // SAFETY: [start, end) lies inside the vector's own allocation (page-aligned inward);
        // the advice only changes how the kernel backs those pages, never their contents, and
        // a failure (e.g. no transparent huge pages) is harmless, so its result is ignored.
        unsafe {
            madvise(start as *mut std::ffi::c_void, end.saturating_sub(start), MADV_HUGEPAGE);
        }
    }
    v.resize_with(len, f);
    v
}

/// Does the holdings row starting at word `row` hold chunk c?
#[inline]
pub(super) fn holds(has: &[u64], row: usize, c: u32) -> bool {
    has[row + (c as usize >> 6)] >> (c & 63) & 1 == 1
}

/// One matched transfer (kept for the IR when materializing).
#[derive(Debug, Clone, Copy)]
pub struct Match {
    pub vlink: u32,
    pub chunk: u32,
    pub start: f64,
    pub end: f64,
    /// The chunk was discarded on arrival (no replacement possible).
    pub wasted: bool,
}

/// The result of one run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Last useful arrival (us).
    pub time_us: f64,
    /// Every match in start order (empty unless materializing).
    pub matches: Vec<Match>,
    /// `deliver[c * n + v]`: the match that delivered chunk c to rank v (NONE at its source).
    pub deliver: Vec<u32>,
    pub events: usize,
    pub replacements: usize,
    pub discarded: usize,
    /// Events whose matching ran on several threads.
    pub parallel_events: usize,
}

struct State<'a> {
    net: &'a Net,
    n: usize,
    words: usize,
    has: Vec<u64>,
    missing: Vec<u32>,
    busy: Vec<f64>,
    /// Per virtual link: chunks its source got that its destination lacked then (stale
    /// entries are dropped lazily or by a purge), and `missing[dst]` at its last purge.
    lists: Vec<Vec<u32>>,
    purged: Vec<Purged>,
    /// Shared networks: the chunk-major copy of `has` (row c: the ranks holding chunk c),
    /// for `pick`'s multiplicity count over a switch's many in-links; empty otherwise.
    holders: Vec<u64>,
    #[cfg(test)]
    reference: bool,
    direct: bool,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    /// One random stream per destination (its matching and its chunk replacements), so the
    /// result does not depend on how destinations are spread over threads; plus one for the
    /// order of destinations on shared networks.
    rngs: Vec<Rng>,
    rng: Rng,
    /// Threads for matching (1: all on the calling thread), and the matching buffers of
    /// the calling thread.
    threads: usize,
    scratch: Scratch,
    materialize: bool,
    matches: Vec<Match>,
    /// In-flight matches when not materializing (slab with free list).
    free_slots: Vec<u32>,
    /// How and when each chunk reached each rank, where needed.
    stamps: Stamps,
    events: BTreeMap<u64, Vec<u32>>,
    remaining: u64,
    replacements: usize,
    discarded: usize,
    parallel_events: usize,
}

/// What matching reads and does not change.
struct View<'a> {
    net: &'a Net,
    words: usize,
    has: &'a [u64],
    missing: &'a [u32],
    busy: &'a [f64],
    holders: &'a [u64],
    /// [`Sampler::Direct`]: no candidate lists.
    direct: bool,
    /// Tests: match with [`Matcher::pick_reference`].
    #[cfg(test)]
    reference: bool,
}

impl View<'_> {
    #[inline]
    fn has(&self, v: usize, c: u32) -> bool {
        holds(self.has, v * self.words, c)
    }
}

/// Matching for a range of destinations: their in-links' lists (virtual links are numbered
/// by destination, so a range of destinations owns a range of lists) and random streams.
struct Matcher<'v, 'a> {
    view: &'v View<'a>,
    lists: &'v mut [Vec<u32>],
    purged: &'v mut [Purged],
    rngs: &'v mut [Rng],
    /// First virtual link and first destination of the range.
    l0: usize,
    d0: usize,
    scratch: Scratch,
}

/// Buffers of one destination's matching, reused across destinations.
#[derive(Default)]
struct Scratch {
    /// Resources assigned at the current destination (busy until), on top of `View::busy`
    /// (shared networks, where the next link may cross the same port).
    overlay: Vec<(u32, f64)>,
    cand: Vec<u32>,
    /// The free in-links that offer something, and the chunks taken so far.
    f: Vec<u32>,
    /// Shared networks: the positions in `in_v[d]` of the links of `f`.
    fpos: Vec<u32>,
    taken: Vec<u32>,
    /// `pick`: where each free link's list ends, the union as a bitset over chunks, the free
    /// links' sources as a bitset over ranks.
    ends: Vec<usize>,
    bits: Vec<u64>,
    mask: Vec<u64>,
}

/// Per virtual link: `missing[dst]` when its list was last purged (which decides the next
/// purge) and when it was last cleaned of stale entries in any way (purge or `pick`'s exact
/// fallback): while `missing[dst]` still equals `clean`, no entry is stale.
#[derive(Debug, Clone, Copy)]
struct Purged {
    at: u32,
    clean: u32,
}

/// The index of the `k`-th set bit (from 0) of `bits`, which has more than `k`.
pub(super) fn nth_bit(bits: &[u64], mut k: usize) -> u32 {
    for (i, &w) in bits.iter().enumerate() {
        let ones = w.count_ones() as usize;
        if k < ones {
            let mut w = w;
            for _ in 0..k {
                w &= w - 1;
            }
            return (i * 64) as u32 + w.trailing_zeros();
        }
        k -= ones;
    }
    unreachable!("nth_bit: fewer than k + 1 bits set")
}

/// The `k`-th zero bit (from 0) of a holdings row with more than `k` zeros among its chunks
/// (the padding bits above the last chunk are zeros too, but come last).
pub(super) fn nth_zero(row: &[u64], mut k: usize) -> u32 {
    for (i, &w) in row.iter().enumerate() {
        let zeros = w.count_zeros() as usize;
        if k < zeros {
            let mut w = !w;
            for _ in 0..k {
                w &= w - 1;
            }
            return (i * 64) as u32 + w.trailing_zeros();
        }
        k -= zeros;
    }
    unreachable!("nth_zero: fewer than k + 1 zeros")
}

/// The set bits of `bits`, increasing.
#[cfg(any(test, debug_assertions))]
fn bits_to_chunks(bits: &[u64]) -> Vec<u32> {
    (0..bits.len() as u32 * 64).filter(|&c| bits[c as usize >> 6] >> (c & 63) & 1 == 1).collect()
}

impl Matcher<'_, '_> {
    fn list(&mut self, l: u32) -> &mut Vec<u32> {
        &mut self.lists[l as usize - self.l0]
    }

    /// Is l free at t (point-to-point networks: no overlay)?
    fn free(&self, l: u32, t: f64) -> bool {
        self.view.net.hops_of(l).iter().all(|h| self.view.busy[h.res as usize] <= t + h.offset)
    }

    /// Does link `l` (into `d`) offer anything? Purges its list first when it may be mostly
    /// stale: at most `purged[l] - missing[d]` entries went stale since the last purge (d got
    /// each chunk once), and a sequential pass costs far less than drawing stale entries at
    /// random (each a cache miss; short lists are left alone). Purging keeps the valid entries and their multiplicities,
    /// so the sampled distribution is unchanged.
    fn offers(&mut self, l: u32, d: usize) -> bool {
        let (i, view) = (l as usize - self.l0, self.view);
        if view.direct {
            return true; // no lists: `pick_direct` finds what the link's source holds
        }
        let len = self.lists[i].len();
        if len == 0 {
            return false;
        }
        if len >= PURGE_MIN && (self.purged[i].at - view.missing[d]) as usize * PURGE_AT >= len {
            self.lists[i].retain(|&c| !view.has(d, c));
            self.purged[i] = Purged { at: view.missing[d], clean: view.missing[d] };
        }
        !self.lists[i].is_empty()
    }

    /// A chunk uniformly distributed over the union of what the free in-links `f` of `d`
    /// can supply, excluding `taken`; `None` when that union is empty.
    fn pick(&mut self, d: usize) -> Option<u32> {
        #[cfg(test)]
        if self.view.reference {
            return self.pick_reference(d);
        }
        if self.view.direct {
            return self.pick_direct(d);
        }
        let view = self.view;
        let rng = d - self.d0;
        let mut misses = 0;
        // Where each free link's list ends in the concatenation of their lists (a draw is
        // located by binary search instead of a walk over up to hundreds of switch links).
        let mut ends = std::mem::take(&mut self.scratch.ends);
        ends.clear();
        let mut total = 0;
        for &l in &self.scratch.f {
            total += self.lists[l as usize - self.l0].len();
            ends.push(total);
        }
        let by_mask = self.fill_source_mask();
        while misses < 64 {
            if total == 0 {
                break;
            }
            let mut r = self.rngs[rng].below(total);
            let li = ends.partition_point(|&e| e <= r);
            if li > 0 {
                r -= ends[li - 1];
            }
            let l = self.scratch.f[li];
            let c = self.list(l)[r];
            if view.has(d, c) {
                self.list(l).swap_remove(r);
                ends[li..].iter_mut().for_each(|e| *e -= 1);
                total -= 1;
                continue;
            }
            if self.scratch.taken.contains(&c) {
                misses += 1;
                continue;
            }
            let mult = if by_mask { self.mult_by_mask(c) } else { self.mult_by_links(c) };
            debug_assert_eq!(mult, self.mult_by_links(c));
            if mult > 1 && self.rngs[rng].below(mult) != 0 {
                misses += 1;
                continue;
            }
            self.scratch.ends = ends;
            return Some(c);
        }
        self.scratch.ends = ends;
        if total == 0 {
            return None;
        }
        // Exact fallback: purge stale entries and draw from the deduplicated union, in
        // increasing chunk order.
        let mut entries = 0;
        for k in 0..self.scratch.f.len() {
            let i = self.scratch.f[k] as usize - self.l0;
            // Only chunks d received since the list was last cleaned can be stale in it.
            if self.purged[i].clean != view.missing[d] {
                self.lists[i].retain(|&c| !view.has(d, c));
                self.purged[i].clean = view.missing[d];
            }
            entries += self.lists[i].len();
        }
        let chosen = if self.scratch.f.len() * view.words < entries {
            self.union_bits(d);
            let bits = &self.scratch.bits;
            let size: usize = bits.iter().map(|w| w.count_ones() as usize).sum();
            (size > 0).then(|| nth_bit(bits, self.rngs[rng].below(size)))
        } else {
            let union = self.union_of_lists();
            (!union.is_empty()).then(|| union[self.rngs[rng].below(union.len())])
        };
        #[cfg(debug_assertions)]
        {
            self.union_bits(d);
            debug_assert_eq!(self.union_of_lists(), bits_to_chunks(&self.scratch.bits));
        }
        chosen
    }

    /// [`Sampler::Direct`]: propose a uniformly random chunk d lacks; accept it when it is not
    /// taken and some free in-link's source holds it (rejection from a superset: uniform over
    /// the union); after `DIRECT_TRIES` rejections draw from the exact union.
    fn pick_direct(&mut self, d: usize) -> Option<u32> {
        let view = self.view;
        let rng = d - self.d0;
        let rw = view.net.n.div_ceil(64);
        let mask = &mut self.scratch.mask;
        mask.clear();
        mask.resize(rw, 0);
        for &l in &self.scratch.f {
            let src = view.net.vlinks[l as usize].src as usize;
            mask[src >> 6] |= 1 << (src & 63);
        }
        let row = &view.has[d * view.words..(d + 1) * view.words];
        let missing = view.missing[d] as usize;
        let mut chosen = None;
        for _ in 0..DIRECT_TRIES {
            let c = nth_zero(row, self.rngs[rng].below(missing));
            if self.scratch.taken.contains(&c) {
                continue;
            }
            let holders = &view.holders[c as usize * rw..(c as usize + 1) * rw];
            if holders.iter().zip(&self.scratch.mask).any(|(h, m)| h & m != 0) {
                chosen = Some(c);
                break;
            }
        }
        if chosen.is_none() {
            self.union_bits(d);
            let bits = &self.scratch.bits;
            let size: usize = bits.iter().map(|w| w.count_ones() as usize).sum();
            chosen = (size > 0).then(|| nth_bit(bits, self.rngs[rng].below(size)));
        }
        #[cfg(debug_assertions)]
        if let Some(c) = chosen {
            self.union_bits(d);
            debug_assert!(holds(&self.scratch.bits, 0, c), "pick_direct: chunk {c} is not in the union");
        }
        chosen
    }

    /// [`Matcher::pick`] the plain way, for tests: a walk over the lists to locate a draw, the
    /// multiplicity link by link, every list purged and the union sorted in the fallback.
    /// The same random draws and list edits, so the same result.
    #[cfg(test)]
    fn pick_reference(&mut self, d: usize) -> Option<u32> {
        let view = self.view;
        let rng = d - self.d0;
        let mut misses = 0;
        let mut total: usize = self.scratch.f.iter().map(|&l| self.lists[l as usize - self.l0].len()).sum();
        while misses < 64 {
            if total == 0 {
                return None;
            }
            let mut r = self.rngs[rng].below(total);
            let mut li = 0;
            while r >= self.lists[self.scratch.f[li] as usize - self.l0].len() {
                r -= self.lists[self.scratch.f[li] as usize - self.l0].len();
                li += 1;
            }
            let l = self.scratch.f[li];
            let c = self.list(l)[r];
            if view.has(d, c) {
                self.list(l).swap_remove(r);
                total -= 1;
                continue;
            }
            if self.scratch.taken.contains(&c) {
                misses += 1;
                continue;
            }
            let mult = self.mult_by_links(c);
            if mult > 1 && self.rngs[rng].below(mult) != 0 {
                misses += 1;
                continue;
            }
            return Some(c);
        }
        for k in 0..self.scratch.f.len() {
            let i = self.scratch.f[k] as usize - self.l0;
            self.lists[i].retain(|&c| !view.has(d, c));
        }
        let union = self.union_of_lists();
        (!union.is_empty()).then(|| union[self.rngs[rng].below(union.len())])
    }

    /// The union of the free links' lists without `taken`, sorted and deduplicated (lists
    /// purged: every entry a chunk d lacks).
    fn union_of_lists(&self) -> Vec<u32> {
        let mut union = Vec::new();
        for &l in &self.scratch.f {
            let list = &self.lists[l as usize - self.l0];
            union.extend(list.iter().copied().filter(|c| !self.scratch.taken.contains(c)));
        }
        union.sort_unstable();
        union.dedup();
        union
    }

    /// The same union as a bitset over chunks, from the holdings: a link's list holds (besides
    /// stale entries) exactly the chunks its source has and d lacks (every chunk a rank gets
    /// is offered to each out-neighbour that lacks it, entries leave only when stale), so the
    /// union is (OR of the sources' rows) AND NOT d's row, minus `taken`.
    fn union_bits(&mut self, d: usize) {
        let (view, words) = (self.view, self.view.words);
        let bits = &mut self.scratch.bits;
        bits.clear();
        bits.resize(words, 0);
        for &l in &self.scratch.f {
            let src = view.net.vlinks[l as usize].src as usize;
            for (b, h) in bits.iter_mut().zip(&view.has[src * words..(src + 1) * words]) {
                *b |= h;
            }
        }
        for (b, h) in bits.iter_mut().zip(&view.has[d * words..(d + 1) * words]) {
            *b &= !h;
        }
        for &c in &self.scratch.taken {
            bits[c as usize >> 6] &= !(1 << (c & 63));
        }
    }

    /// How many free links' sources hold c, by their holdings rows.
    fn mult_by_links(&self, c: u32) -> usize {
        let view = self.view;
        self.scratch.f.iter().filter(|&&l2| view.has(view.net.vlinks[l2 as usize].src as usize, c)).count()
    }

    /// The same count from the chunk-major holdings (`View::holders`) and the free links'
    /// sources as a bitmask: a few words instead of a row per link.
    fn mult_by_mask(&self, c: u32) -> usize {
        let rw = self.scratch.mask.len();
        let row = &self.view.holders[c as usize * rw..(c as usize + 1) * rw];
        row.iter().zip(&self.scratch.mask).map(|(h, m)| (h & m).count_ones() as usize).sum()
    }

    /// Set `Scratch::mask` to the free links' sources when counting by mask pays (chunk-major
    /// holdings kept, more links than mask words) and the sources are distinct (parallel
    /// links would each count); false when the links are to be counted one by one.
    fn fill_source_mask(&mut self) -> bool {
        let view = self.view;
        if view.holders.is_empty() {
            return false;
        }
        let rw = view.net.n.div_ceil(64);
        if self.scratch.f.len() <= rw {
            return false;
        }
        let mask = &mut self.scratch.mask;
        mask.clear();
        mask.resize(rw, 0);
        for &l in &self.scratch.f {
            let src = view.net.vlinks[l as usize].src as usize;
            let (w, b) = (src >> 6, 1u64 << (src & 63));
            if mask[w] & b != 0 {
                return false;
            }
            mask[w] |= b;
        }
        true
    }

    /// Match the destinations `group` (ascending, point-to-point networks) in order,
    /// prefetching ahead what each will read: its lists' headers, then the element its first
    /// draw will most likely hit (drawn from a copy of its random stream, assuming every
    /// in-link free), then that chunk's holdings words. Prefetches change nothing but timing.
    fn match_group(&mut self, group: &[u32], t: f64, out: &mut Vec<(u32, u32)>) {
        let (a, b) = (2 * PREFETCH_AHEAD, PREFETCH_AHEAD);
        for (i, &d) in group.iter().enumerate() {
            if let Some(&x) = group.get(i + a) {
                self.prefetch_headers(x as usize);
            }
            if let Some(&x) = group.get(i + b) {
                self.prefetch_first_draw(x as usize, false);
            }
            if let Some(&x) = group.get(i + b / 2) {
                self.prefetch_first_draw(x as usize, true);
            }
            self.match_dest(d as usize, t, out);
        }
    }

    /// The list range of destination d's in-links (point-to-point networks).
    fn in_lists(&self, d: usize) -> std::ops::Range<usize> {
        let s = &self.view.net.in_start;
        s[d] as usize - self.l0..s[d + 1] as usize - self.l0
    }

    fn prefetch_headers(&self, d: usize) {
        let lists = &self.lists[self.in_lists(d)];
        prefetch(lists.as_ptr());
        prefetch(lists.as_ptr().wrapping_add(lists.len()));
        prefetch(&self.view.missing[d]);
    }

    /// Locate d's likely first draw; prefetch the list element, or with `chunk`, read it
    /// (prefetched earlier) and prefetch its holdings words at d and at the links' sources.
    fn prefetch_first_draw(&self, d: usize, chunk: bool) {
        let range = self.in_lists(d);
        let lists = &self.lists[range.clone()];
        let total: usize = lists.iter().map(Vec::len).sum();
        if total == 0 {
            return;
        }
        let mut r = self.rngs[d - self.d0].clone().below(total);
        let Some(list) = lists.iter().find(|l| {
            r < l.len() || {
                r -= l.len();
                false
            }
        }) else {
            return;
        };
        if !chunk {
            prefetch(&list[r]);
            return;
        }
        let view = self.view;
        let word = list[r] as usize >> 6;
        prefetch(&view.has[d * view.words + word]);
        for l in range {
            let src = view.net.vlinks[l + self.l0].src as usize;
            prefetch(&view.has[src * view.words + word]);
        }
    }

    /// Match destination `d` at time t: append (virtual link, chunk) pairs to `out`.
    fn match_dest(&mut self, d: usize, t: f64, out: &mut Vec<(u32, u32)>) {
        let view = self.view;
        let net = view.net;
        if view.missing[d] == 0 {
            return;
        }
        self.scratch.f.clear();
        self.scratch.taken.clear();
        self.scratch.overlay.clear();
        let ins = &net.in_v[d];
        if net.shared {
            // Skip every group whose last hop (the rank's switch port) is busy; keep the
            // links in `in_v` order.
            for g in &net.in_groups[d] {
                if view.busy[g.res as usize] > t + g.offset {
                    continue;
                }
                let in_hops = &net.in_hops[d];
                for &p in &g.pos {
                    if in_hops.free(p as usize, view.busy, &[], t) && self.offers(ins[p as usize], d) {
                        self.scratch.f.push(p);
                    }
                }
            }
            self.scratch.f.sort_unstable();
            self.scratch.fpos.clear();
            self.scratch.fpos.extend_from_slice(&self.scratch.f);
            for x in self.scratch.f.iter_mut() {
                *x = ins[*x as usize];
            }
        } else {
            for &l in ins {
                if self.free(l, t) && self.offers(l, d) {
                    self.scratch.f.push(l);
                }
            }
        }
        while !self.scratch.f.is_empty() {
            let Some(c) = self.pick(d) else { break };
            self.scratch.cand.clear();
            let mut best = f64::INFINITY;
            for &l in self.scratch.f.iter() {
                let v = &net.vlinks[l as usize];
                if !view.has(v.src as usize, c) {
                    continue;
                }
                let a = t + v.cost;
                if (a - best).abs() < TIE_EPS {
                    self.scratch.cand.push(l);
                } else if a < best {
                    best = a;
                    self.scratch.cand.clear();
                    self.scratch.cand.push(l);
                }
            }
            let l = self.scratch.cand[self.rngs[d - self.d0].below(self.scratch.cand.len())];
            out.push((l, c));
            self.scratch.taken.push(c);
            if net.shared {
                for h in net.hops_of(l) {
                    self.scratch.overlay.push((h.res, t + h.offset + h.cost));
                }
                // `free(x, t)` with the overlay, read from the rank's in-link hops in order.
                let (in_hops, sc) = (&net.in_hops[d], &mut self.scratch);
                let mut kept = 0;
                for j in 0..sc.f.len() {
                    let (x, p) = (sc.f[j], sc.fpos[j]);
                    if x != l && in_hops.free(p as usize, view.busy, &sc.overlay, t) {
                        (sc.f[kept], sc.fpos[kept]) = (x, p);
                        kept += 1;
                    }
                }
                sc.f.truncate(kept);
                sc.fpos.truncate(kept);
            } else {
                self.scratch.f.retain(|&x| x != l);
            }
        }
    }
}

impl State<'_> {
    #[inline]
    fn mark(&mut self, d: u32) {
        if !self.is_dirty[d as usize] {
            self.is_dirty[d as usize] = true;
            self.dirty.push(d);
        }
    }

    fn assign(&mut self, l: u32, c: u32, t: f64) {
        for h in self.net.hops_of(l) {
            self.busy[h.res as usize] = t + h.offset + h.cost;
        }
        let end = t + self.net.vlinks[l as usize].cost;
        let m = Match { vlink: l, chunk: c, start: t, end, wasted: false };
        let id = match self.free_slots.pop() {
            Some(s) if !self.materialize => {
                self.matches[s as usize] = m;
                s
            }
            _ => {
                self.matches.push(m);
                (self.matches.len() - 1) as u32
            }
        };
        self.events.entry(end.to_bits()).or_default().push(id);
    }

    /// What matching reads, and the per-link and per-destination state it changes.
    fn split(&mut self) -> (View<'_>, &mut [Vec<u32>], &mut [Purged], &mut [Rng]) {
        let view = View {
            net: self.net,
            words: self.words,
            has: &self.has,
            missing: &self.missing,
            busy: &self.busy,
            holders: &self.holders,
            direct: self.direct,
            #[cfg(test)]
            reference: self.reference,
        };
        (view, &mut self.lists, &mut self.purged, &mut self.rngs)
    }

    /// Match every destination in `dirty` at time t. On networks without shared resources
    /// each destination only touches its own in-links, so ranges of destinations are matched
    /// on separate threads and their picks applied afterwards in destination order; on shared
    /// networks one destination's picks are applied before the next is matched.
    fn match_all(&mut self, dirty: &mut [u32], t: f64) {
        if self.net.shared {
            let mut picks: Vec<(u32, u32)> = Vec::new();
            for &d in dirty.iter() {
                picks.clear();
                let scratch = std::mem::take(&mut self.scratch);
                let (view, lists, purged, rngs) = self.split();
                let mut m = Matcher { view: &view, lists, purged, rngs, l0: 0, d0: 0, scratch };
                m.match_dest(d as usize, t, &mut picks);
                self.scratch = m.scratch;
                for &(l, c) in &picks {
                    self.assign(l, c, t);
                }
            }
            return;
        }
        let threads = if dirty.len() < PARALLEL_MIN { 1 } else { self.threads };
        if threads > 1 {
            self.parallel_events += 1;
        }
        dirty.sort_unstable();
        let net = self.net;
        let groups: Vec<&[u32]> = dirty.chunks(dirty.len().div_ceil(threads)).collect();
        // Range g owns destinations d_bounds[g].. and their in-links l_bounds[g]...
        let d_bounds: Vec<usize> =
            std::iter::once(0).chain(groups.iter().map(|g| g[g.len() - 1] as usize + 1)).collect();
        let l_bounds: Vec<usize> = d_bounds.iter().map(|&d| net.in_start[d] as usize).collect();
        let (view, lists, purged, rngs) = self.split();
        let (mut lists, mut purged, mut rngs) = (
            split_at_bounds(lists, &l_bounds, 1).into_iter(),
            split_at_bounds(purged, &l_bounds, 1).into_iter(),
            split_at_bounds(rngs, &d_bounds, 1).into_iter(),
        );
        let jobs: Vec<_> = (0..groups.len())
            .map(|g| {
                let (lists, purged, rngs) = (lists.next().unwrap(), purged.next().unwrap(), rngs.next().unwrap());
                let (l0, d0, scratch) = (l_bounds[g], d_bounds[g], Scratch::default());
                (groups[g], Matcher { view: &view, lists, purged, rngs, l0, d0, scratch })
            })
            .collect();
        let results = on_threads(jobs, |(group, mut m)| {
            let mut out = Vec::new();
            m.match_group(group, t, &mut out);
            out
        });
        for (l, c) in results.into_iter().flatten() {
            self.assign(l, c, t);
        }
    }

    /// Process the arrivals `ids` at t (module `arrive`): on point-to-point networks over
    /// ranges of ranks on separate threads; true when one of them delivered a chunk.
    fn arrive_all(&mut self, ids: &mut [u32], t: f64) -> bool {
        let net = self.net;
        // The direct sampler's replacements read any sender's row: one range.
        let ranges = if net.shared || self.direct || ids.len() < PARALLEL_MIN { 1 } else { self.threads };
        let bounds: Vec<usize> = (0..=ranges).map(|g| g * self.n / ranges).collect();
        let dst = |id: u32| net.vlinks[self.matches[id as usize].vlink as usize].dst as usize;
        let mut groups = Vec::with_capacity(ranges);
        if ranges == 1 {
            groups.push(&ids[..]);
        } else {
            ids.sort_by_key(|&id| dst(id)); // stable: arrivals at one rank keep their order
            let mut rest = &ids[..];
            for &b in &bounds[1..] {
                let (here, after) = rest.split_at(rest.partition_point(|&id| dst(id) < b));
                groups.push(here);
                rest = after;
            }
        }
        let State {
            ref mut has, ref mut missing, ref mut lists, ref mut rngs, ref mut is_dirty, ref mut holders, ..
        } = *self;
        let parts = split_parts(net, self.words, &bounds, has, missing, lists, rngs, is_dirty, holders);
        let ctx = Ctx {
            net,
            words: self.words,
            matches: &self.matches,
            stamps: &self.stamps,
            bounds: &bounds,
            t,
            direct: self.direct,
        };
        let taken = on_threads(parts.into_iter().zip(groups).collect(), |(mut p, ids)| {
            let d = p.take(&ctx, ids);
            (p, d)
        });
        let (parts, delivered): (Vec<Part>, Vec<Delivered>) = taken.into_iter().unzip();
        let offered = on_threads(parts.into_iter().enumerate().collect(), |(g, mut p)| p.offer(&ctx, &delivered, g));
        let mut any = false;
        for d in &delivered {
            for &(id, c) in &d.outcomes {
                if c == NONE {
                    self.matches[id as usize].wasted = true;
                    self.discarded += 1;
                } else {
                    self.matches[id as usize].chunk = c;
                }
                if !self.materialize {
                    self.free_slots.push(id);
                }
            }
            self.remaining -= d.delivered;
            self.replacements += d.replacements;
            any |= d.delivered > 0;
        }
        for marks in delivered.iter().map(|d| &d.marks).chain(&offered) {
            self.dirty.extend_from_slice(marks);
        }
        any
    }
}

/// Split the per-rank state into the ranges `bounds` (one range on shared networks, whose
/// in-links are not numbered by destination).
#[allow(clippy::too_many_arguments)]
fn split_parts<'a>(
    net: &Net,
    words: usize,
    bounds: &[usize],
    has: &'a mut [u64],
    missing: &'a mut [u32],
    lists: &'a mut [Vec<u32>],
    rngs: &'a mut [Rng],
    is_dirty: &'a mut [bool],
    holders: &'a mut [u64],
) -> Vec<Part<'a>> {
    let link_bounds: Vec<usize> =
        if net.shared { vec![0, lists.len()] } else { bounds.iter().map(|&d| net.in_start[d] as usize).collect() };
    let mut has = split_at_bounds(has, bounds, words).into_iter();
    let mut missing = split_at_bounds(missing, bounds, 1).into_iter();
    let mut lists = split_at_bounds(lists, &link_bounds, 1).into_iter();
    let mut rngs = split_at_bounds(rngs, bounds, 1).into_iter();
    let mut is_dirty = split_at_bounds(is_dirty, bounds, 1).into_iter();
    // Kept on shared networks only, which have one range.
    let mut holders = Some(holders);
    (0..bounds.len() - 1)
        .map(|g| {
            let is_dirty = is_dirty.next().unwrap();
            Part {
                d0: bounds[g],
                l0: link_bounds[g],
                has: has.next().unwrap(),
                missing: missing.next().unwrap(),
                lists: lists.next().unwrap(),
                rngs: rngs.next().unwrap(),
                clean: is_dirty.iter().filter(|&&x| !x).count(),
                is_dirty,
                holders: holders.take().unwrap_or_default(),
            }
        })
        .collect()
}

/// The disjoint pieces `s[bounds[g] * scale..bounds[g + 1] * scale]` (bounds ascending).
fn split_at_bounds<'a, T>(mut s: &'a mut [T], bounds: &[usize], scale: usize) -> Vec<&'a mut [T]> {
    s = &mut s[bounds[0] * scale..];
    let mut pieces = Vec::with_capacity(bounds.len() - 1);
    for w in bounds.windows(2) {
        let (piece, rest) = std::mem::take(&mut s).split_at_mut((w[1] - w[0]) * scale);
        pieces.push(piece);
        s = rest;
    }
    pieces
}

/// Run `f` on every item, each on a thread of its own except the last, which runs on the
/// calling thread (one item: no thread at all); the results in item order.
pub(super) fn on_threads<I: Send, R: Send>(mut items: Vec<I>, f: impl Fn(I) -> R + Sync) -> Vec<R> {
    let Some(last) = items.pop() else { return Vec::new() };
    std::thread::scope(|sc| {
        let f = &f;
        let handles: Vec<_> = items.into_iter().map(|it| sc.spawn(move || f(it))).collect();
        let last = f(last);
        let mut out: Vec<R> = handles.into_iter().map(|h| h.join().expect("a TACOS worker thread panicked")).collect();
        out.push(last);
        out
    })
}

/// Run the greedy matching on `net` for chunks whose sources are `sources` (chunk c starts
/// at rank `sources[c]`; every rank needs every chunk), drawing chunks with `sampler`.
pub fn run(net: &Net, sources: &[u32], seed: u64, materialize: bool, sampler: Sampler) -> Result<Outcome> {
    if sampler == Sampler::Sets {
        if net.shared || !net.uniform {
            return Err(CollsynthError::bad(
                "--sampler sets needs a point-to-point network whose links all cost the same (no shared \
                 switch ports: use --switch-mode unwind:D, or another sampler)",
            ));
        }
        return super::sets::run(net, sources, seed, materialize, threads());
    }
    run_picking(net, sources, seed, materialize, threads(), sampler, false)
}

/// Worker threads for TACOS's parallel parts: [`crate::parallel::threads`], at most `MAX_THREADS`.
pub fn threads() -> usize {
    crate::parallel::threads(MAX_THREADS)
}

/// [`run`] with [`Sampler::Lists`] matching on `threads` threads; the outcome is the same for any count.
pub fn run_on(net: &Net, sources: &[u32], seed: u64, materialize: bool, threads: usize) -> Result<Outcome> {
    run_picking(net, sources, seed, materialize, threads, Sampler::Lists, false)
}

/// [`run_on`] with the reference pick ([`Matcher::pick_reference`]); the outcome must be the same.
#[cfg(test)]
pub(super) fn run_reference(net: &Net, sources: &[u32], seed: u64, materialize: bool) -> Result<Outcome> {
    run_picking(net, sources, seed, materialize, 1, Sampler::Lists, true)
}

fn run_picking(
    net: &Net,
    sources: &[u32],
    seed: u64,
    materialize: bool,
    threads: usize,
    sampler: Sampler,
    #[cfg_attr(not(test), allow(unused_variables))] reference: bool,
) -> Result<Outcome> {
    let n = net.n;
    let c_count = sources.len();
    let words = c_count.div_ceil(64);
    let slots = c_count * n;
    let direct = sampler == Sampler::Direct;
    let stamps = if materialize {
        Stamps::Match((0..slots).map(|_| NONE.into()).collect())
    } else if net.uniform && !direct {
        // (The direct sampler's replacements read the sender's holdings row, which may hold
        // chunks that arrived at this very event: it needs the times.)
        Stamps::None
    } else {
        Stamps::Time((0..slots).map(|_| 0.into()).collect())
    };
    let mut st = State {
        net,
        n,
        words,
        has: huge_vec(n * words, || 0),
        missing: vec![c_count as u32; n],
        busy: vec![0.0; net.n_res],
        lists: vec![Vec::new(); net.vlinks.len()],
        purged: vec![Purged { at: c_count as u32, clean: c_count as u32 }; net.vlinks.len()],
        holders: if net.shared || direct { vec![0; c_count * n.div_ceil(64)] } else { Vec::new() },
        #[cfg(test)]
        reference,
        direct,
        dirty: Vec::new(),
        is_dirty: vec![false; n],
        rngs: (0..n).map(|d| Rng::new(rng::restart_seed(seed, d + 1))).collect(),
        rng: Rng::new(seed),
        threads: threads.max(1),
        scratch: Scratch::default(),
        materialize,
        matches: Vec::new(),
        free_slots: Vec::new(),
        stamps,
        events: BTreeMap::new(),
        remaining: (n as u64) * (c_count as u64),
        replacements: 0,
        discarded: 0,
        parallel_events: 0,
    };
    for (c, &s) in sources.iter().enumerate() {
        st.has[s as usize * words + (c >> 6)] |= 1 << (c & 63);
        st.missing[s as usize] -= 1;
        st.remaining -= 1;
        if !st.holders.is_empty() {
            st.holders[c * n.div_ceil(64) + (s as usize >> 6)] |= 1 << (s & 63);
        }
    }
    // The initial lists hold only chunks their destination lacks.
    for (p, v) in st.purged.iter_mut().zip(&net.vlinks) {
        p.clean = st.missing[v.dst as usize];
    }
    // Initial candidate lists: every out-link of a source offers its chunks.
    for (c, &s) in sources.iter().enumerate().filter(|_| !direct) {
        for &(l, _) in &net.out_v[s as usize] {
            st.lists[l as usize].push(c as u32);
        }
    }
    for d in 0..n {
        st.mark(d as u32);
    }
    let mut time = 0.0f64;
    let mut events = 0usize;
    let mut t = 0.0f64;
    let mut dirty = Vec::new();
    loop {
        // Matching at t.
        std::mem::swap(&mut dirty, &mut st.dirty);
        if net.shared {
            st.rng.shuffle(&mut dirty);
        }
        for &d in &dirty {
            st.is_dirty[d as usize] = false;
        }
        st.match_all(&mut dirty, t);
        dirty.clear();
        // Next event.
        let Some((bits, mut arriving)) = st.events.pop_first() else { break };
        t = f64::from_bits(bits);
        events += 1;
        if events.is_multiple_of(256) {
            crate::budget::check_cancelled()?;
        }
        if st.arrive_all(&mut arriving, t) {
            time = t;
        }
        if st.remaining == 0 {
            break;
        }
    }
    if st.remaining > 0 {
        return Err(CollsynthError::bad(format!(
            "tacos: {} (chunk, rank) postconditions cannot be satisfied (a rank cannot be reached \
             through ranks that need the chunk)",
            st.remaining
        )));
    }
    // Anything still in flight can only bring a chunk its destination already has.
    if materialize {
        for ids in std::mem::take(&mut st.events).into_values() {
            for id in ids {
                st.matches[id as usize].wasted = true;
                st.discarded += 1;
            }
        }
    }
    let (replacements, discarded, parallel_events) = (st.replacements, st.discarded, st.parallel_events);
    Ok(Outcome {
        time_us: time,
        matches: if materialize { st.matches } else { Vec::new() },
        deliver: st.stamps.into_matches(),
        events,
        replacements,
        discarded,
        parallel_events,
    })
}
