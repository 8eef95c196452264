//! Whether a BFB subproblem's optimum U* is at most a given U, decided exactly on its classes
//! (at most 64 senders, one word per sender set) without building a flow network: the finder's
//! level sets ask it of every rank but the first of a step, against the largest optimum so
//! far, and almost always the answer is yes.
//!
//! U* <= U = a/b iff the transportation problem "class c sends count_c b units, sender k takes
//! at most a cap_k" is feasible (LP (1) at U, in units of 1/b shard). A greedy split fills most
//! of it; each class it leaves short is completed by shortest augmenting paths over senders
//! (class c -> sender k, then k -> k' by moving another class's units from k to its sender
//! k'), Edmonds-Karp on the source/class/sender/sink network. When none exists from a short
//! class c, the senders S it reaches are full and every class with units on S has all its
//! senders in S, so J = {c} and those classes demand more than S holds:
//! |J| b > a c(S) >= a c(f(J)), a Hall violation whose ratio |J| / c(f(J)) is above U and at
//! most U* (a start for the solver's Newton iteration).

use super::solve::bits;
use crate::flow::Cap;
use crate::rational::Rat;

/// No parent: a sender reached straight from the short class.
const ROOT: u8 = u8::MAX;

/// Buffers reused across subproblems.
#[derive(Default)]
pub(super) struct Transport {
    /// Classes in the order the greedy fills them (fewer senders first).
    order: Vec<usize>,
    /// Units class c gives each of its senders, at `start[c]..start[c + 1]` in bit order.
    units: Vec<Cap>,
    start: Vec<usize>,
}

/// Where an augmenting path reached each sender: the sender it came from and the class whose
/// units move between the two.
struct Tree {
    parent: [u8; 64],
    via: [usize; 64],
}

impl Transport {
    /// Ok when the sources of `classes` (sender mask, count) split among their senders with
    /// no sender k above `floor * caps[k]` (so U* <= floor); else Err(ratio) of a set of classes
    /// J, floor < |J| / c(f(J)) <= U*. Guarantees: exact (no heuristic answer either way).
    pub(super) fn fits(&mut self, classes: &[(u64, Cap)], caps: &[Cap], floor: Rat) -> Result<(), Rat> {
        let (a, b) = (*floor.numer(), *floor.denom());
        let mut room = [0 as Cap; 64];
        for (k, &c) in caps.iter().enumerate() {
            room[k] = a * c;
        }
        self.start.clear();
        self.start.push(0);
        for &(mask, _) in classes {
            self.start.push(self.start.last().expect("a start") + mask.count_ones() as usize);
        }
        self.units.clear();
        self.units.resize(*self.start.last().expect("a start"), 0);
        self.order.clear();
        self.order.extend(0..classes.len());
        self.order.sort_unstable_by_key(|&c| classes[c].0.count_ones());
        for i in 0..self.order.len() {
            let c = self.order[i];
            let need = self.greedy(classes, c, &mut room, b);
            if need > 0 {
                self.augment(classes, c, need, &mut room).map_err(|j| ratio(classes, caps, &j))?;
            }
        }
        Ok(())
    }

    /// Class c's units to its senders with the most room first; the units left unplaced.
    fn greedy(&mut self, classes: &[(u64, Cap)], c: usize, room: &mut [Cap; 64], b: Cap) -> Cap {
        let (mask, count) = classes[c];
        let mut need = count * b;
        while need > 0 {
            let Some(k) = bits(mask).filter(|&k| room[k] > 0).max_by_key(|&k| room[k]) else { break };
            let take = need.min(room[k]);
            room[k] -= take;
            *self.slot(classes, c, k) += take;
            need -= take;
        }
        need
    }

    /// Place class c's remaining `need` units by augmenting paths; Err(the classes J of the
    /// Hall violation, as a mask over classes' indices) when a path is missing.
    fn augment(
        &mut self,
        classes: &[(u64, Cap)],
        c: usize,
        mut need: Cap,
        room: &mut [Cap; 64],
    ) -> Result<(), Vec<bool>> {
        let mut tree = Tree { parent: [ROOT; 64], via: [0; 64] };
        while need > 0 {
            let end = self.search(classes, classes[c].0, room, &mut tree).map_err(|s| self.violation(classes, c, s))?;
            // The bottleneck: what is needed, the end's room, the units each step moves.
            let mut delta = need.min(room[end]);
            let mut k = end;
            while tree.parent[k] != ROOT {
                let from = tree.parent[k] as usize;
                delta = delta.min(*self.slot(classes, tree.via[k], from));
                k = from;
            }
            room[end] -= delta;
            let mut k = end;
            while tree.parent[k] != ROOT {
                let from = tree.parent[k] as usize;
                *self.slot(classes, tree.via[k], k) += delta;
                *self.slot(classes, tree.via[k], from) -= delta;
                k = from;
            }
            *self.slot(classes, c, k) += delta;
            need -= delta;
        }
        Ok(())
    }

    /// Breadth-first over senders from `first` (the short class's): a sender with room, with
    /// `tree` saying how it was reached; Err(the senders reached, all full) when none has room.
    fn search(&self, classes: &[(u64, Cap)], first: u64, room: &[Cap; 64], tree: &mut Tree) -> Result<usize, u64> {
        let mut queue = [0u8; 64];
        let (mut head, mut tail) = (0, 0);
        let mut seen = first;
        tree.parent = [ROOT; 64];
        for k in bits(first) {
            if room[k] > 0 {
                return Ok(k);
            }
            queue[tail] = k as u8;
            tail += 1;
        }
        while head < tail {
            let k = queue[head] as usize;
            head += 1;
            for (c2, &(mask, _)) in classes.iter().enumerate() {
                if mask >> k & 1 == 0 || mask & !seen == 0 || self.units[self.index(classes, c2, k)] == 0 {
                    continue;
                }
                for k2 in bits(mask & !seen) {
                    tree.parent[k2] = k as u8;
                    tree.via[k2] = c2;
                    if room[k2] > 0 {
                        return Ok(k2);
                    }
                    queue[tail] = k2 as u8;
                    tail += 1;
                }
                seen |= mask;
            }
        }
        Err(seen)
    }

    /// J = the short class c and every class with units on a sender of `reached` (those a
    /// failed search reached).
    fn violation(&self, classes: &[(u64, Cap)], c: usize, reached: u64) -> Vec<bool> {
        (0..classes.len())
            .map(|c2| c2 == c || bits(classes[c2].0 & reached).any(|k| self.units[self.index(classes, c2, k)] > 0))
            .collect()
    }

    /// Where class c's units on its sender k are kept.
    fn index(&self, classes: &[(u64, Cap)], c: usize, k: usize) -> usize {
        self.start[c] + (classes[c].0 & ((1u64 << k) - 1)).count_ones() as usize
    }

    fn slot(&mut self, classes: &[(u64, Cap)], c: usize, k: usize) -> &mut Cap {
        let i = self.index(classes, c, k);
        &mut self.units[i]
    }
}

/// |J| / c(f(J)) for the classes `j` marks.
fn ratio(classes: &[(u64, Cap)], caps: &[Cap], j: &[bool]) -> Rat {
    let (count, senders) = classes
        .iter()
        .zip(j)
        .filter(|(_, &inside)| inside)
        .fold((0, 0u64), |(count, senders), (&(mask, n), _)| (count + n, senders | mask));
    Rat::new(count, bits(senders).map(|k| caps[k]).sum())
}

#[cfg(test)]
mod tests;
