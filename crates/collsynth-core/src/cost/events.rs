//! The pending events of an event-driven simulation, smallest first: a few FIFO lanes, each
//! kept sorted, beside a binary heap for the events that fit no lane. The next event is the
//! smallest of the lanes' fronts and the heap's top, so the order events come out in is
//! theirs alone (the lanes only save work): a simulation whose events are distinct gives the
//! same results whichever lane or the heap holds them.
//!
//! Simulations emit events mostly in time order per stream (a link's services end one after
//! the other; slices become ready as the ones before them arrive): such an event joins the
//! back of a lane at O(1) and sits in memory next to its neighbours, where a heap of
//! hundreds of thousands of events costs a cache miss per level on every push and pop.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Events of type `E` in `L` lanes and a heap.
pub(crate) struct Events<E, const L: usize> {
    lanes: [VecDeque<E>; L],
    heap: BinaryHeap<Reverse<E>>,
}

impl<E: Ord + Copy, const L: usize> Events<E, L> {
    /// The events of `sorted` (in increasing order) in lane 0.
    pub(crate) fn from_sorted(sorted: Vec<E>) -> Self {
        let mut lanes: [VecDeque<E>; L] = std::array::from_fn(|_| VecDeque::new());
        lanes[0] = VecDeque::from(sorted);
        Events { lanes, heap: BinaryHeap::new() }
    }

    /// `e` at the back of lane `x` if that keeps the lane sorted, else in the heap: for a
    /// caller that knows which stream an event belongs to.
    #[inline]
    pub(crate) fn push_to(&mut self, x: usize, e: E) {
        let lane = &mut self.lanes[x];
        if lane.back().is_none_or(|&b| b <= e) {
            lane.push_back(e);
        } else {
            self.heap.push(Reverse(e));
        }
    }

    /// `e` at the back of the lane whose last event is the latest not after it (an empty
    /// lane if none is), else in the heap.
    #[inline]
    pub(crate) fn push(&mut self, e: E) {
        let mut best: Option<(usize, Option<E>)> = None;
        for (x, lane) in self.lanes.iter().enumerate() {
            match (lane.back().copied(), best) {
                (Some(b), None | Some((_, None))) if b <= e => best = Some((x, Some(b))),
                (Some(b), Some((_, Some(c)))) if b <= e && b > c => best = Some((x, Some(b))),
                (None, None) => best = Some((x, None)),
                _ => {}
            }
        }
        match best {
            Some((x, _)) => self.lanes[x].push_back(e),
            None => self.heap.push(Reverse(e)),
        }
    }

    /// The smallest pending event, taken out.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<E> {
        let mut from = L;
        let mut min = self.heap.peek().map(|r| r.0);
        for (x, lane) in self.lanes.iter().enumerate() {
            if let Some(&f) = lane.front() {
                if min.is_none_or(|m| f < m) {
                    min = Some(f);
                    from = x;
                }
            }
        }
        if from == L {
            self.heap.pop();
        } else {
            self.lanes[from].pop_front();
        }
        min
    }
}

#[cfg(test)]
mod tests;
