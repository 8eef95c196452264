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
use super::rng::Rng;
use crate::error::{CollsynthError, Result};
use std::collections::BTreeMap;

const NONE: u32 = u32::MAX;
const TIE_EPS: f64 = 1e-9;

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
}

struct State<'a> {
    net: &'a Net,
    n: usize,
    words: usize,
    has: Vec<u64>,
    missing: Vec<u32>,
    busy: Vec<f64>,
    lists: Vec<Vec<u32>>,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    rng: Rng,
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

    #[inline]
    fn free(&self, v: u32, t: f64) -> bool {
        self.net.vlinks[v as usize].hops.iter().all(|h| self.busy[h.res as usize] <= t + h.offset)
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

    /// A chunk uniformly distributed over the union of what the free in-links `f` of `d`
    /// can supply, excluding `taken`; `None` when that union is empty.
    fn pick(&mut self, d: usize, f: &[u32], taken: &[u32]) -> Option<u32> {
        let mut misses = 0;
        let mut total: usize = f.iter().map(|&l| self.lists[l as usize].len()).sum();
        while misses < 64 {
            if total == 0 {
                return None;
            }
            let mut r = self.rng.below(total);
            let mut li = 0;
            while r >= self.lists[f[li] as usize].len() {
                r -= self.lists[f[li] as usize].len();
                li += 1;
            }
            let l = f[li] as usize;
            let c = self.lists[l][r];
            if self.has(d, c) {
                self.lists[l].swap_remove(r);
                total -= 1;
                continue;
            }
            if taken.contains(&c) {
                misses += 1;
                continue;
            }
            let mult = f.iter().filter(|&&l2| self.has(self.net.vlinks[l2 as usize].src as usize, c)).count();
            if mult > 1 && self.rng.below(mult) != 0 {
                misses += 1;
                continue;
            }
            return Some(c);
        }
        // Exact fallback: purge stale entries and draw from the deduplicated union.
        let mut union = Vec::new();
        for &l in f {
            let mut list = std::mem::take(&mut self.lists[l as usize]);
            list.retain(|&c| !self.has(d, c));
            union.extend(list.iter().copied().filter(|c| !taken.contains(c)));
            self.lists[l as usize] = list;
        }
        union.sort_unstable();
        union.dedup();
        if union.is_empty() {
            None
        } else {
            Some(union[self.rng.below(union.len())])
        }
    }

    fn assign(&mut self, l: u32, c: u32, t: f64) {
        let v = &self.net.vlinks[l as usize];
        for h in &v.hops {
            self.busy[h.res as usize] = t + h.offset + h.cost;
        }
        let end = t + v.cost;
        let m = Match { vlink: l, chunk: c, start: t, end, wasted: false };
        let id = if !self.materialize {
            if let Some(s) = self.free_slots.pop() {
                self.matches[s as usize] = m;
                s
            } else {
                self.matches.push(m);
                (self.matches.len() - 1) as u32
            }
        } else {
            self.matches.push(m);
            (self.matches.len() - 1) as u32
        };
        self.events.entry(end.to_bits()).or_default().push(id);
    }

    fn match_dest(&mut self, d: usize, t: f64, cand: &mut Vec<u32>, f: &mut Vec<u32>, taken: &mut Vec<u32>) {
        if self.missing[d] == 0 {
            return;
        }
        f.clear();
        taken.clear();
        let ins = &self.net.in_v[d];
        if self.net.shared {
            // Skip every group whose last hop (the rank's switch port) is busy; keep the
            // links in `in_v` order.
            for g in &self.net.in_groups[d] {
                if self.busy[g.res as usize] > t + g.offset {
                    continue;
                }
                for &p in &g.pos {
                    let l = ins[p as usize];
                    if !self.lists[l as usize].is_empty() && self.free(l, t) {
                        f.push(p);
                    }
                }
            }
            f.sort_unstable();
            for x in f.iter_mut() {
                *x = ins[*x as usize];
            }
        } else {
            for &l in ins {
                if !self.lists[l as usize].is_empty() && self.free(l, t) {
                    f.push(l);
                }
            }
        }
        while !f.is_empty() {
            let Some(c) = self.pick(d, f, taken) else { break };
            cand.clear();
            let mut best = f64::INFINITY;
            for &l in f.iter() {
                let v = &self.net.vlinks[l as usize];
                if !self.has(v.src as usize, c) {
                    continue;
                }
                let a = t + v.cost;
                if (a - best).abs() < TIE_EPS {
                    cand.push(l);
                } else if a < best {
                    best = a;
                    cand.clear();
                    cand.push(l);
                }
            }
            let l = cand[self.rng.below(cand.len())];
            self.assign(l, c, t);
            taken.push(c);
            if self.net.shared {
                f.retain(|&x| x != l && self.free(x, t));
            } else {
                f.retain(|&x| x != l);
            }
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
                let c = options[self.rng.below(options.len())];
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
        dirty: Vec::new(),
        is_dirty: vec![false; n],
        rng: Rng::new(seed),
        materialize,
        matches: Vec::new(),
        free_slots: Vec::new(),
        deliver: if materialize { vec![NONE; c_count * n] } else { Vec::new() },
        arrival: if need_arrival { vec![0.0; c_count * n] } else { Vec::new() },
        events: BTreeMap::new(),
        remaining: (n as u64) * (c_count as u64),
        replacements: 0,
        discarded: 0,
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
    let (mut cand, mut f, mut taken) = (Vec::new(), Vec::new(), Vec::new());
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
        for &d in &dirty {
            st.match_dest(d as usize, t, &mut cand, &mut f, &mut taken);
        }
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
    let (replacements, discarded) = (st.replacements, st.discarded);
    Ok(Outcome {
        time_us: time,
        matches: if materialize { st.matches } else { Vec::new() },
        deliver: st.deliver,
        events,
        replacements,
        discarded,
    })
}
