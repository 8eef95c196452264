//! The event-driven greedy link-chunk matching (paper section IV-E/F; our notes, section
//! 5.2) on a lazily built time-expanded network: time jumps from one arrival time to the
//! next, and only what changes at an event is touched.
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

use super::network::Net;
use super::rng::{self, Rng};
use crate::error::{CollsynthError, Result};
use std::collections::BTreeMap;

const NONE: u32 = u32::MAX;
const TIE_EPS: f64 = 1e-9;
/// Purge a candidate list when up to 1/PURGE_AT of it may be stale (see `offers`).
const PURGE_AT: usize = 4;
/// ... and only lists this long: short ones stay in cache, where a stale draw is cheap.
const PURGE_MIN: usize = 64;
/// Match on several threads only when this many destinations are waiting (a thread costs
/// tens of microseconds to start).
const PARALLEL_MIN: usize = 512;
const MAX_THREADS: usize = 8;

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
    purged: Vec<u32>,
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
    deliver: Vec<u32>,
    /// Arrival time of chunk c at rank v (only when link costs differ and not materializing).
    arrival: Vec<f64>,
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
}

impl View<'_> {
    #[inline]
    fn has(&self, v: usize, c: u32) -> bool {
        self.has[v * self.words + (c as usize >> 6)] >> (c & 63) & 1 == 1
    }
}

/// Matching for a range of destinations: their in-links' lists (virtual links are numbered
/// by destination, so a range of destinations owns a range of lists) and random streams.
struct Matcher<'v, 'a> {
    view: &'v View<'a>,
    lists: &'v mut [Vec<u32>],
    purged: &'v mut [u32],
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
    taken: Vec<u32>,
}

impl Matcher<'_, '_> {
    fn list(&mut self, l: u32) -> &mut Vec<u32> {
        &mut self.lists[l as usize - self.l0]
    }

    fn free(&self, l: u32, t: f64) -> bool {
        let hops = &self.view.net.vlinks[l as usize].hops;
        if self.scratch.overlay.is_empty() {
            return hops.iter().all(|h| self.view.busy[h.res as usize] <= t + h.offset);
        }
        hops.iter().all(|h| {
            let extra = self.scratch.overlay.iter().filter(|o| o.0 == h.res).map(|o| o.1).fold(0.0, f64::max);
            self.view.busy[h.res as usize].max(extra) <= t + h.offset
        })
    }

    /// Does link `l` (into `d`) offer anything? Purges its list first when it may be mostly
    /// stale: at most `purged[l] - missing[d]` entries went stale since the last purge (d got
    /// each chunk once), and a sequential pass costs far less than drawing stale entries at
    /// random (each a cache miss; short lists are left alone). Purging keeps the valid entries and their multiplicities,
    /// so the sampled distribution is unchanged.
    fn offers(&mut self, l: u32, d: usize) -> bool {
        let (i, view) = (l as usize - self.l0, self.view);
        let len = self.lists[i].len();
        if len == 0 {
            return false;
        }
        if len >= PURGE_MIN && (self.purged[i] - view.missing[d]) as usize * PURGE_AT >= len {
            self.lists[i].retain(|&c| !view.has(d, c));
            self.purged[i] = view.missing[d];
        }
        !self.lists[i].is_empty()
    }

    /// A chunk uniformly distributed over the union of what the free in-links `f` of `d`
    /// can supply, excluding `taken`; `None` when that union is empty.
    fn pick(&mut self, d: usize) -> Option<u32> {
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
            let mult =
                self.scratch.f.iter().filter(|&&l2| view.has(view.net.vlinks[l2 as usize].src as usize, c)).count();
            if mult > 1 && self.rngs[rng].below(mult) != 0 {
                misses += 1;
                continue;
            }
            return Some(c);
        }
        // Exact fallback: purge stale entries and draw from the deduplicated union.
        let mut union = Vec::new();
        for k in 0..self.scratch.f.len() {
            let i = self.scratch.f[k] as usize - self.l0;
            self.lists[i].retain(|&c| !view.has(d, c));
            union.extend(self.lists[i].iter().copied().filter(|c| !self.scratch.taken.contains(c)));
        }
        union.sort_unstable();
        union.dedup();
        if union.is_empty() {
            None
        } else {
            Some(union[self.rngs[rng].below(union.len())])
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
                for &p in &g.pos {
                    let l = ins[p as usize];
                    if self.free(l, t) && self.offers(l, d) {
                        self.scratch.f.push(p);
                    }
                }
            }
            self.scratch.f.sort_unstable();
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
                for h in &net.vlinks[l as usize].hops {
                    self.scratch.overlay.push((h.res, t + h.offset + h.cost));
                }
                let mut f = std::mem::take(&mut self.scratch.f);
                f.retain(|&x| x != l && self.free(x, t));
                self.scratch.f = f;
            } else {
                self.scratch.f.retain(|&x| x != l);
            }
        }
    }
}

impl State<'_> {
    #[inline]
    fn has(&self, v: usize, c: u32) -> bool {
        self.has[v * self.words + (c as usize >> 6)] >> (c & 63) & 1 == 1
    }

    #[inline]
    fn mark(&mut self, d: u32) {
        if !self.is_dirty[d as usize] {
            self.is_dirty[d as usize] = true;
            self.dirty.push(d);
        }
    }

    /// Time chunk c arrived at rank v (0 for its initial holder).
    fn arrived(&self, c: u32, v: usize) -> f64 {
        if self.materialize {
            match self.deliver[c as usize * self.n + v] {
                NONE => 0.0,
                m => self.matches[m as usize].end,
            }
        } else if self.arrival.is_empty() {
            0.0
        } else {
            self.arrival[c as usize * self.n + v]
        }
    }

    fn deliver(&mut self, c: u32, v: usize, m: u32, t: f64) {
        self.has[v * self.words + (c as usize >> 6)] |= 1 << (c & 63);
        self.missing[v] -= 1;
        self.remaining -= 1;
        if self.materialize {
            self.deliver[c as usize * self.n + v] = m;
        } else if !self.arrival.is_empty() {
            self.arrival[c as usize * self.n + v] = t;
        }
        if self.missing[v] == 0 {
            for &l in &self.net.in_v[v] {
                self.lists[l as usize] = Vec::new();
            }
        }
        for &l in &self.net.out_v[v] {
            let d = self.net.vlinks[l as usize].dst;
            if self.missing[d as usize] > 0 && !self.has(d as usize, c) {
                self.lists[l as usize].push(c);
                self.mark(d);
            }
        }
    }

    fn assign(&mut self, l: u32, c: u32, t: f64) {
        let v = &self.net.vlinks[l as usize];
        for h in &v.hops {
            self.busy[h.res as usize] = t + h.offset + h.cost;
        }
        let end = t + v.cost;
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
    fn split(&mut self) -> (View<'_>, &mut [Vec<u32>], &mut [u32], &mut [Rng]) {
        let view = View { net: self.net, words: self.words, has: &self.has, missing: &self.missing, busy: &self.busy };
        (view, &mut self.lists, &mut self.purged, &mut self.rngs)
    }

    /// Match every destination in `dirty` at time t. On networks without shared resources
    /// each destination only touches its own in-links, so ranges of destinations are matched
    /// on separate threads and their picks applied afterwards in destination order; on shared
    /// networks one destination's picks are applied before the next is matched.
    fn match_all(&mut self, dirty: &mut [u32], t: f64) {
        let threads = if self.net.shared || dirty.len() < PARALLEL_MIN { 1 } else { self.threads };
        if !self.net.shared {
            dirty.sort_unstable();
        }
        let mut picks: Vec<(u32, u32)> = Vec::new();
        if threads <= 1 {
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
        self.parallel_events += 1;
        let net = self.net;
        let per = dirty.len().div_ceil(threads);
        let (view, mut lists, mut purged, mut rngs) = self.split();
        let results: Vec<Vec<(u32, u32)>> = std::thread::scope(|sc| {
            let (mut l0, mut d0) = (0usize, 0usize);
            let mut handles = Vec::new();
            for group in dirty.chunks(per) {
                // This thread owns destinations d0..d_end and their in-links l0..l_end.
                let d_end = group[group.len() - 1] as usize + 1;
                let l_end = net.in_start[d_end] as usize;
                let (l_here, l_rest) = std::mem::take(&mut lists).split_at_mut(l_end - l0);
                let (p_here, p_rest) = std::mem::take(&mut purged).split_at_mut(l_end - l0);
                let (r_here, r_rest) = std::mem::take(&mut rngs).split_at_mut(d_end - d0);
                (lists, purged, rngs) = (l_rest, p_rest, r_rest);
                let view = &view;
                let (ml0, md0) = (l0, d0);
                handles.push(sc.spawn(move || {
                    let (lists, purged, rngs, scratch) = (l_here, p_here, r_here, Scratch::default());
                    let mut m = Matcher { view, lists, purged, rngs, l0: ml0, d0: md0, scratch };
                    let mut out = Vec::new();
                    for &d in group {
                        m.match_dest(d as usize, t, &mut out);
                    }
                    out
                }));
                (l0, d0) = (l_end, d_end);
            }
            handles.into_iter().map(|h| h.join().expect("a matching thread panicked")).collect()
        });
        for (l, c) in results.into_iter().flatten() {
            self.assign(l, c, t);
        }
    }

    fn arrive(&mut self, id: u32, t: f64) -> bool {
        let m = self.matches[id as usize];
        let v = &self.net.vlinks[m.vlink as usize];
        let (u, d) = (v.src as usize, v.dst as usize);
        if self.net.shared {
            for h in &v.hops {
                for &x in &self.net.res_dsts[h.res as usize] {
                    self.mark(x);
                }
            }
        } else {
            self.mark(d as u32);
        }
        let mut useful = false;
        if !self.has(d, m.chunk) {
            self.deliver(m.chunk, d, id, t);
            useful = true;
        } else {
            // Chunk replacement: what d still needs and u held at the start.
            let list = std::mem::take(&mut self.lists[m.vlink as usize]);
            let options: Vec<u32> =
                list.iter().copied().filter(|&c| !self.has(d, c) && self.arrived(c, u) <= m.start).collect();
            self.lists[m.vlink as usize] = list;
            if options.is_empty() {
                self.matches[id as usize].wasted = true;
                self.discarded += 1;
            } else {
                let c = options[self.rngs[d].below(options.len())];
                self.matches[id as usize].chunk = c;
                self.replacements += 1;
                self.deliver(c, d, id, t);
                useful = true;
            }
        }
        if !self.materialize {
            self.free_slots.push(id);
        }
        useful
    }
}

/// Run the greedy matching on `net` for chunks whose sources are `sources` (chunk c starts
/// at rank `sources[c]`; every rank needs every chunk).
pub fn run(net: &Net, sources: &[u32], seed: u64, materialize: bool) -> Result<Outcome> {
    run_on(net, sources, seed, materialize, threads())
}

/// Worker threads for TACOS's parallel parts: the cores, at most [`MAX_THREADS`].
pub fn threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(MAX_THREADS)
}

/// [`run`] matching on `threads` threads; the outcome is the same for any count.
pub fn run_on(net: &Net, sources: &[u32], seed: u64, materialize: bool, threads: usize) -> Result<Outcome> {
    let n = net.n;
    let c_count = sources.len();
    let words = c_count.div_ceil(64);
    let need_arrival = !materialize && !net.uniform;
    let mut st = State {
        net,
        n,
        words,
        has: vec![0; n * words],
        missing: vec![c_count as u32; n],
        busy: vec![0.0; net.n_res],
        lists: vec![Vec::new(); net.vlinks.len()],
        purged: vec![c_count as u32; net.vlinks.len()],
        dirty: Vec::new(),
        is_dirty: vec![false; n],
        rngs: (0..n).map(|d| Rng::new(rng::restart_seed(seed, d + 1))).collect(),
        rng: Rng::new(seed),
        threads: threads.max(1),
        scratch: Scratch::default(),
        materialize,
        matches: Vec::new(),
        free_slots: Vec::new(),
        deliver: if materialize { vec![NONE; c_count * n] } else { Vec::new() },
        arrival: if need_arrival { vec![0.0; c_count * n] } else { Vec::new() },
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
    }
    // Initial candidate lists: every out-link of a source offers its chunks.
    for (c, &s) in sources.iter().enumerate() {
        for &l in &net.out_v[s as usize] {
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
        let Some((bits, ids)) = st.events.pop_first() else { break };
        t = f64::from_bits(bits);
        events += 1;
        let mut any = false;
        for &id in &ids {
            any |= st.arrive(id, t);
        }
        if any {
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
        deliver: st.deliver,
        events,
        replacements,
        discarded,
        parallel_events,
    })
}
