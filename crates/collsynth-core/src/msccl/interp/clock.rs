//! Happens-before tracking: vector clocks over all thread blocks of all GPUs (causality
//! runs through other GPUs' messages too) and per-cell access histories for races.

use std::rc::{Rc, Weak};

/// Components per segment of a [`Vc`]: a block the compiler compares without branches.
const SEG: usize = 64;

/// One segment of a vector clock, shared between clocks while neither changes it.
type Seg = Rc<[u32; SEG]>;

/// A thread block's vector clock: component `t` counts the steps of thread block `t` known
/// to have completed. Only thread blocks sharing their GPU with another one get a component
/// (nothing can race with a GPU's only thread block). The owner's own component is kept
/// separately (its step counter), so a step that only sends or computes copies nothing.
///
/// Stored as segments of [`SEG`] components behind shared pointers (a persistent vector):
/// a snapshot shares the whole clock, and a merge copies only the segment pointers plus the
/// segments where both clocks know something the other does not. Where the incoming clock
/// dominates a segment, the segment itself is shared. On `mi250:2`'s programs (about 4,500
/// components) merging and copying whole clocks took a third to a half of `collsynth export`.
#[derive(Debug, Clone)]
pub(super) struct Vc(Rc<Vec<Seg>>);

impl Vc {
    /// `n` components, all zero (one zero segment shared by every slot).
    pub fn zeros(n: usize) -> Vc {
        let zero: Seg = Rc::new([0; SEG]);
        Vc(Rc::new(vec![zero; n.div_ceil(SEG)]))
    }

    /// Component `c`, or None past the last segment (`NONE` is always past it).
    pub fn get(&self, c: u32) -> Option<u32> {
        let c = c as usize;
        self.0.get(c / SEG).map(|s| s[c % SEG])
    }

    fn set(&mut self, c: u32, v: u32) {
        let c = c as usize;
        Rc::make_mut(&mut Rc::make_mut(&mut self.0)[c / SEG])[c % SEG] = v;
    }

    #[cfg(test)]
    pub fn segment(&self, i: usize) -> &Seg {
        &self.0[i]
    }
}

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
        Clock { base: vc.clone(), who, own }
    }
}

/// `vc := max(vc, c)` componentwise, segment by segment: a segment both share is skipped by
/// its pointer, one where `c` is nowhere ahead is kept, one where `vc` is nowhere ahead is
/// taken from `c` by pointer, and only the rest are copied. `seen` holds bases already
/// merged into `vc`: clocks only grow, so merging one again adds nothing but the
/// publisher's own count, and consecutive calls of one step (which share the publisher's
/// base) cost O(1).
pub(super) fn merge(vc: &mut Vc, seen: &mut Seen, c: &Clock) {
    #[cfg(test)]
    if PLAIN.get() {
        return merge_plain(vc, c);
    }
    if !Rc::ptr_eq(&vc.0, &c.base.0) && !seen.has(&c.base) {
        for i in 0..vc.0.len().min(c.base.0.len()) {
            let (a, b) = (&vc.0[i], &c.base.0[i]);
            if Rc::ptr_eq(a, b) || !exceeds(b, a) {
                continue;
            }
            let seg = match exceeds(a, b) {
                true => Rc::new(std::array::from_fn(|j| a[j].max(b[j]))),
                false => Rc::clone(b),
            };
            // Unshared, `make_mut` moves the pointers away from weak references, no copy.
            Rc::make_mut(&mut vc.0)[i] = seg;
        }
        seen.add(&c.base);
    }
    if vc.get(c.who).is_some_and(|x| x < c.own) {
        vc.set(c.who, c.own);
    }
}

/// Some component of `a` is above `b`'s: compared without an early exit, which the
/// compiler vectorizes.
pub(super) fn exceeds(a: &[u32; SEG], b: &[u32; SEG]) -> bool {
    a.iter().zip(b).fold(false, |hit, (p, q)| hit | (p > q))
}

#[cfg(test)]
thread_local! {
    /// Tests: merge with [`merge_plain`], the algorithm before [`Seen`], as an oracle.
    pub(super) static PLAIN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The plain merge: every component compared and set one by one.
#[cfg(test)]
fn merge_plain(vc: &mut Vc, c: &Clock) {
    for i in 0..(vc.0.len().min(c.base.0.len()) * SEG) as u32 {
        let (a, b) = (vc.get(i).unwrap_or(0), c.base.get(i).unwrap_or(0));
        if b > a {
            vc.set(i, b);
        }
    }
    if vc.get(c.who).is_some_and(|x| x < c.own) {
        vc.set(c.who, c.own);
    }
}

/// The last few bases merged into a thread block's clock (see [`merge`]). Weak references:
/// they keep the allocation's address from being reused without keeping its value shared
/// (a publisher's own clock stays unshared, so it grows in place).
#[derive(Debug, Default)]
pub(super) struct Seen {
    bases: [Weak<Vec<Seg>>; SEEN],
    next: usize,
}

/// Bases remembered per thread block: one per source it merges from at a time (its receive
/// connection, its dependency) and a spare.
const SEEN: usize = 3;

impl Seen {
    fn has(&self, base: &Vc) -> bool {
        self.bases.iter().any(|w| std::ptr::eq(w.as_ptr(), Rc::as_ptr(&base.0)))
    }
    fn add(&mut self, base: &Vc) {
        self.bases[self.next] = Rc::downgrade(&base.0);
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
    pub vc: &'a Vc,
    pub comp: &'a [u32],
}

impl Now<'_> {
    /// `a` happens before the current step.
    fn after(&self, a: At) -> bool {
        let c = self.comp.get(a.0 as usize).copied().unwrap_or(NONE);
        a.0 == self.me.0 || self.vc.get(c).is_some_and(|k| k > a.1)
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
