//! Happens-before tracking: vector clocks over all thread blocks of all GPUs (causality
//! runs through other GPUs' messages too) and per-cell access histories for races.

use std::rc::{Rc, Weak};

/// A thread block's vector clock: component `comp[t]` counts the steps of thread block `t`
/// known to have completed. Only thread blocks sharing their GPU with another one get a
/// component (nothing can race with a GPU's only thread block). The owner's own component is
/// kept separately (its step counter), so a step that only sends or computes copies nothing.
pub(super) type Vc = Rc<Vec<u32>>;

/// No component (the thread block is alone on its GPU).
pub(super) const NONE: u32 = u32::MAX;

/// A snapshot published by a completed step (with a message or for a dependency).
#[derive(Debug, Clone)]
pub(super) struct Clock {
    base: Vc,
    /// Component of the publishing thread block, or NONE.
    who: u32,
    own: u32,
}

impl Clock {
    /// The clock of the thread block with component `who` right after its `own`-th step.
    pub fn snapshot(vc: &Vc, who: u32, own: u32) -> Clock {
        Clock { base: Rc::clone(vc), who, own }
    }
}

/// `vc := max(vc, c)` componentwise. One pass up to the first component `c` adds, then
/// either in place (`vc` held by no snapshot) or into a fresh vector (`vc` shared with a snapshot).
/// `seen` holds bases already merged into `vc`: clocks only grow, so merging one again adds
/// nothing but the publisher's own count, and consecutive calls of one step (which share the
/// publisher's base) cost O(1) instead of a pass over every component.
pub(super) fn merge(vc: &mut Vc, seen: &mut Seen, c: &Clock) {
    #[cfg(test)]
    if PLAIN.get() {
        return merge_plain(vc, c);
    }
    if !Rc::ptr_eq(vc, &c.base) && !seen.has(&c.base) {
        if let Some(i) = first_greater(&c.base, vc) {
            match Rc::strong_count(vc) {
                // Unshared: `make_mut` moves the vector away from weak references, no copy.
                1 => Rc::make_mut(vc)[i..].iter_mut().zip(&c.base[i..]).for_each(|(a, b)| *a = (*a).max(*b)),
                _ => {
                    let mut v = Vec::with_capacity(vc.len());
                    v.extend_from_slice(&vc[..i]);
                    v.extend(vc[i..].iter().zip(&c.base[i..]).map(|(a, b)| *a.max(b)));
                    *vc = Rc::new(v);
                }
            }
        }
        seen.add(&c.base);
    }
    if vc.get(c.who as usize).is_some_and(|&x| x < c.own) {
        Rc::make_mut(vc)[c.who as usize] = c.own;
    }
}

/// The first `i` with `a[i] > b[i]`: blocks of 64 compared without an early exit (which the
/// compiler vectorizes), then the block that has one searched.
pub(super) fn first_greater(a: &[u32], b: &[u32]) -> Option<usize> {
    const BLOCK: usize = 64;
    let (a, b) = (&a[..a.len().min(b.len())], &b[..a.len().min(b.len())]);
    let mut at = 0;
    for (x, y) in a.chunks(BLOCK).zip(b.chunks(BLOCK)) {
        if x.iter().zip(y).fold(false, |hit, (p, q)| hit | (p > q)) {
            return x.iter().zip(y).position(|(p, q)| p > q).map(|i| at + i);
        }
        at += x.len();
    }
    None
}

#[cfg(test)]
thread_local! {
    /// Tests: merge with [`merge_plain`], the algorithm before [`Seen`], as an oracle.
    pub(super) static PLAIN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The plain merge: compare every component, copy a shared clock, take the maxima.
#[cfg(test)]
fn merge_plain(vc: &mut Vc, c: &Clock) {
    if !Rc::ptr_eq(vc, &c.base) && c.base.iter().zip(vc.iter()).any(|(a, b)| a > b) {
        let v = Rc::make_mut(vc);
        v.iter_mut().zip(c.base.iter()).for_each(|(a, b)| *a = (*a).max(*b));
    }
    if vc.get(c.who as usize).is_some_and(|&x| x < c.own) {
        Rc::make_mut(vc)[c.who as usize] = c.own;
    }
}

/// The last few bases merged into a thread block's clock (see [`merge`]). Weak references:
/// they keep the allocation's address from being reused without keeping its value shared
/// (a publisher's own clock stays unshared, so it grows in place).
#[derive(Debug, Default)]
pub(super) struct Seen {
    bases: [Weak<Vec<u32>>; SEEN],
    next: usize,
}

/// Bases remembered per thread block: one per source it merges from at a time (its receive
/// connection, its dependency) and a spare.
const SEEN: usize = 3;

impl Seen {
    fn has(&self, base: &Vc) -> bool {
        self.bases.iter().any(|w| std::ptr::eq(w.as_ptr(), Rc::as_ptr(base)))
    }
    fn add(&mut self, base: &Vc) {
        self.bases[self.next] = Rc::downgrade(base);
        self.next = (self.next + 1) % SEEN;
    }
}

/// One access: (global thread block, step index).
pub(super) type At = (u32, u32);

/// Accesses to one cell since its last write (FastTrack-style: later accesses by the same
/// thread block subsume earlier ones, so one read per thread block is kept).
#[derive(Debug, Clone, Default)]
pub(super) struct History {
    write: Option<At>,
    reads: Vec<At>,
    raced: bool,
}

/// The current step `me` of a thread block with clock `vc`; `comp` maps thread blocks to
/// components.
pub(super) struct Now<'a> {
    pub me: At,
    pub vc: &'a [u32],
    pub comp: &'a [u32],
}

impl Now<'_> {
    /// `a` happens before the current step.
    fn after(&self, a: At) -> bool {
        let c = self.comp.get(a.0 as usize).copied().unwrap_or(NONE);
        a.0 == self.me.0 || self.vc.get(c as usize).is_some_and(|&k| k > a.1)
    }
}

impl History {
    /// Record a read; returns the unordered earlier write, once per cell.
    pub fn read(&mut self, now: &Now) -> Option<At> {
        let me = now.me;
        let hit = self.write.filter(|&w| !self.raced && !now.after(w));
        match self.reads.iter_mut().find(|r| r.0 == me.0) {
            Some(r) => *r = me,
            None => self.reads.push(me),
        }
        self.flag(hit)
    }

    /// Record a write; returns the unordered earlier access and whether it wrote.
    pub fn write(&mut self, now: &Now) -> Option<(At, bool)> {
        let mut hit = None;
        if !self.raced {
            hit = self.write.filter(|&w| !now.after(w)).map(|w| (w, true));
            hit = hit.or_else(|| self.reads.iter().find(|&&r| !now.after(r)).map(|&r| (r, false)));
        }
        self.write = Some(now.me);
        self.reads.clear();
        self.flag(hit)
    }

    fn flag<T>(&mut self, hit: Option<T>) -> Option<T> {
        self.raced |= hit.is_some();
        hit
    }
}
