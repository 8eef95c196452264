//! Distances from 0 in circulants on Z_n, level by level as n-bit sets, for the generator-set
//! search (`candidates::best_circulants`, hundreds of sets for every size it is asked about).
//! A level is the previous one rotated by every shift (one pass over the n/64 words per
//! shift), or, for the structured sets `{a, .., a+r-1}` and `{1, a, .., a+r-2}`, painted from
//! the few intervals of Z_n that grew since the last level, whichever costs less: their balls
//! are unions of intervals known in closed form (sums of at most t offsets, each offset used
//! any number of times):
//! - directed run `{a, .., a+r-1}`: s offsets sum to `[s a, s (a+r-1)]`, so
//!   B(t) = ∪_{s <= t} [s a, s (a+r-1)];
//! - directed `{1} ∪ {a, .., a+r-1}`: y run offsets and up to t - y ones,
//!   B(t) = ∪_{y <= t} [y a, y (a+r-2) + t];
//! - undirected `±{a, .., a+r-1}`: s+ forward and s- backward offsets, j = s+ - s-, give
//!   `[j a - s- (r-1), j a + s+ (r-1)]`, nested in s+ + s- for a fixed j, so the largest
//!   s+ + s- <= t of j's parity gives j's interval;
//! - undirected `±1 ∪ ±{a, .., a+r-1}`: y = s+ + s- run offsets and up to t - y ones add
//!   `[-(t-y), t-y]`; every interval of a fixed j contains j a, so their union is one
//!   interval, whose ends are linear in y and so extreme at the least or the largest y.

use std::ops::RangeInclusive;

/// Painting one interval costs about this many word operations of a rotation (index
/// arithmetic and a reduction mod n against a vectorised pass over words).
const PAINT_COST: usize = 24;

/// A single point costs about this fraction of an interval when walked by additions (no
/// reduction mod n, no word loop).
const POINT_SHARE: usize = 6;

/// Breadth-first search from 0 in circulants on Z_n (see the module docs): D levels of
/// k n / 64 word operations each, or of a few operations per grown interval for the
/// structured sets, rather than a queue's k n per search. Buffers are reused across sets.
pub(super) struct CirculantBfs {
    n: usize,
    /// Words of an n-bit set.
    words: usize,
    /// The current level twice over (bits 0..2n), so that its rotation by s is the n bits
    /// starting at bit n - s.
    twice: Vec<u64>,
    level: Vec<u64>,
    /// The next level's buffer (swapped with `level`, so no allocation per level).
    next: Vec<u64>,
    seen: Vec<u64>,
    shifts: Vec<usize>,
    /// What painting an interval costs in word operations ([`PAINT_COST`]; tests force
    /// either way).
    paint_cost: usize,
}

impl CirculantBfs {
    pub(super) fn new(n: usize) -> CirculantBfs {
        let words = n.div_ceil(64);
        let z = vec![0u64; words];
        CirculantBfs {
            n,
            words,
            twice: vec![0; 2 * words + 2],
            level: z.clone(),
            next: z.clone(),
            seen: z,
            shifts: Vec::new(),
            paint_cost: PAINT_COST,
        }
    }

    /// The size of Z_n searched.
    pub(super) fn n(&self) -> usize {
        self.n
    }

    /// (diameter, sum of distances) from 0 in the circulant with the sorted `offsets` (i ->
    /// i+o, and i -> i-o unless `directed`); None if some node is unreachable or farther than
    /// `limit` (the search stops there).
    pub(super) fn distances(&mut self, offsets: &[usize], directed: bool, limit: usize) -> Option<(usize, usize)> {
        let n = self.n;
        self.shifts.clear();
        self.shifts.extend(offsets.iter().map(|&o| o % n));
        if !directed {
            self.shifts.extend(offsets.iter().map(|&o| (n - o % n) % n));
        }
        if self.least_diameter(directed) > limit {
            return None;
        }
        let run = Run::of(offsets);
        let rotation_cost = (self.shifts.len() + 3) * self.words;
        self.level.fill(0);
        self.level[0] = 1;
        self.seen.copy_from_slice(&self.level);
        let (mut depth, mut total, mut count) = (0, 0, 1);
        while count < n {
            depth += 1;
            if depth > limit {
                return None;
            }
            let mut next = std::mem::take(&mut self.next);
            next.clear();
            next.resize(self.words, 0);
            let t = depth as i64;
            let found = match run.filter(|r| r.cost(t, directed, self.paint_cost) < rotation_cost) {
                Some(run) => run.paint_level(t, directed, n, &mut self.seen, &mut next),
                None => self.rotate_level(&mut next),
            };
            if found == 0 {
                return None;
            }
            count += found;
            total += found * depth;
            self.next = std::mem::replace(&mut self.level, next);
        }
        Some((depth, total))
    }

    /// A lower bound on the diameter from the longest step alone (most sets of a search are
    /// cut here, without a level: their long way round is longer than the best kept).
    /// Directed, every step adds some shift s in 1..n, so reaching n - 1 takes a sum of at
    /// least n - 1; undirected, a step moves at most min(s, n - s) either way, and n/2 is that
    /// far from 0 whichever way round. `usize::MAX` without a nonzero shift.
    fn least_diameter(&self, directed: bool) -> usize {
        let n = self.n;
        let (far, step) = if directed {
            (n - 1, self.shifts.iter().copied().max().unwrap_or(0))
        } else {
            (n / 2, self.shifts.iter().map(|&s| s.min(n - s)).max().unwrap_or(0))
        };
        match step {
            0 if n > 1 => usize::MAX,
            0 => 0,
            _ => far.div_ceil(step),
        }
    }

    /// `next` = the nodes one shift from the current level not seen yet (added to `seen`);
    /// how many.
    fn rotate_level(&mut self, next: &mut [u64]) -> usize {
        self.fill_twice();
        for &s in &self.shifts {
            self.or_rotated(next, s);
        }
        let mut found = 0;
        for (j, (w, seen)) in next.iter_mut().zip(self.seen.iter_mut()).enumerate() {
            *w &= !*seen & low_bits(self.n - 64 * j);
            *seen |= *w;
            found += w.count_ones() as usize;
        }
        found
    }

    /// `twice` = the current level at bits 0..n and again at n..2n.
    fn fill_twice(&mut self) {
        self.twice.fill(0);
        self.twice[..self.words].copy_from_slice(&self.level);
        let (w0, b) = (self.n / 64, self.n % 64);
        for (j, &x) in self.level.iter().enumerate() {
            self.twice[w0 + j] |= x << b;
            if b > 0 {
                self.twice[w0 + j + 1] |= x >> (64 - b);
            }
        }
    }

    /// `next` |= the current level rotated by `s` (v -> v + s mod n): the n bits of `twice`
    /// from bit n - s.
    fn or_rotated(&self, next: &mut [u64], s: usize) {
        let start = (self.n - s) % self.n;
        let (w, b) = (start / 64, start % 64);
        let src = &self.twice[w..w + self.words + 1];
        if b == 0 {
            next.iter_mut().zip(src).for_each(|(x, &y)| *x |= y);
        } else {
            next.iter_mut().zip(src.windows(2)).for_each(|(x, y)| *x |= y[0] >> b | y[1] << (64 - b));
        }
    }
}

/// A word with its lowest min(bits, 64) bits set.
fn low_bits(bits: usize) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// A structured generator set: the run `{a, .., a+r-1}`, with the offset 1 besides when `one`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    a: i64,
    r: i64,
    one: bool,
}

impl Run {
    /// The run a sorted generator set is, if it is one: consecutive offsets, or 1 followed by
    /// consecutive offsets.
    fn of(set: &[usize]) -> Option<Run> {
        let consecutive = |s: &[usize]| s.windows(2).all(|w| w[1] == w[0] + 1);
        match set {
            [] => None,
            [a, ..] if consecutive(set) => Some(Run { a: *a as i64, r: set.len() as i64, one: false }),
            [1, rest @ ..] if !rest.is_empty() && consecutive(rest) => {
                Some(Run { a: rest[0] as i64, r: rest.len() as i64, one: true })
            }
            _ => None,
        }
    }

    /// The indices whose interval grows at level t by points no other interval has by then
    /// (see [`Run::interval`]): `from..=to` by `step`, then `t` if beyond.
    fn changed(&self, t: i64, directed: bool) -> (i64, i64, usize) {
        let Run { a, r, one } = *self;
        match (directed, one) {
            // Only the interval of t offsets is new.
            (true, false) => (t, t, 1),
            // Each interval y < t grows by its right end y (a+r-2) + t, which interval y + 1
            // (from (y+1) a) already has when a <= y (r-2) + t; then interval t is new.
            (true, true) => {
                let open = match r {
                    1 => (t - a + 1).max(0)..t,
                    2 => 0..if t < a { t } else { 0 },
                    _ => 0..((a - t).max(0) + r - 3) / (r - 2),
                };
                (open.start, open.end.min(t) - 1, 1)
            }
            // Indices of t's parity reach t offsets; the others stay. Once a <= (r-1)(t-2) + 1,
            // what an inner index j grows by at either end, (r-1) points, index j +- 1 already
            // had at t - 1 (its interval reaches from (j+1) a - (t-j-2)/2 (r-1), at most one
            // past j's old right end, to (j+1) a + (t+j)/2 (r-1), beyond j's new one; likewise
            // leftwards), so only the new outermost -t and t are left.
            (false, false) if t >= 2 && a <= (r - 1) * (t - 2) + 1 => (-t, t, 2 * t as usize),
            (false, false) => (-t, t, 2),
            (false, true) => (-t, t, 1),
        }
    }

    /// What [`Run::paint_level`] costs at level t, `per_interval` a painted interval's cost:
    /// the intervals [`Run::changed`] gives, of which a directed `{1, a..}`'s growing ones
    /// are single points, walked at [`POINT_SHARE`] of that.
    fn cost(&self, t: i64, directed: bool, per_interval: usize) -> usize {
        let (from, to, step) = self.changed(t, directed);
        let listed = if to >= from { ((to - from) as usize) / step + 1 } else { 0 };
        let whole = usize::from(to < t);
        if directed && self.one {
            listed.saturating_mul(per_interval / POINT_SHARE).saturating_add(whole.saturating_mul(per_interval))
        } else {
            (listed + whole).saturating_mul(per_interval)
        }
    }

    /// The interval of index `i` in the ball of radius t (in Z, before reduction mod n),
    /// None where the index does not occur yet: `s` or `y` offsets of the run (directed), or
    /// the net count j of run offsets (undirected).
    fn interval(&self, i: i64, t: i64, directed: bool) -> Option<(i64, i64)> {
        let Run { a, r, one } = *self;
        if i.abs() > t || (directed && i < 0) {
            return None;
        }
        match (directed, one) {
            (true, false) => Some((i * a, i * (a + r - 1))),
            (true, true) => Some((i * a, i * (a + r - 2) + t)),
            (false, false) => {
                // The largest s+ + s- <= t with j's parity.
                let s = t - (t - i).rem_euclid(2);
                let (plus, minus) = ((s + i) / 2, (s - i) / 2);
                Some((i * a - minus * (r - 1), i * a + plus * (r - 1)))
            }
            (false, true) => {
                // y = s+ + s- from |j| to the largest y <= t of j's parity; ends linear in y.
                let (low, high) = (i.abs(), t - (t - i).rem_euclid(2));
                let left = |y: i64| (y - i) / 2 * (r - 1) + t - y;
                let right = |y: i64| (y + i) / 2 * (r - 1) + t - y;
                Some((i * a - left(low).max(left(high)), i * a + right(low).max(right(high))))
            }
        }
    }

    /// `level` = B(t) minus `seen` (which B(t - 1) is), painted from what each interval grew
    /// by since t - 1, and added to `seen`; how many.
    fn paint_level(&self, t: i64, directed: bool, n: usize, seen: &mut [u64], level: &mut [u64]) -> usize {
        let (from, to, step) = self.changed(t, directed);
        if directed && self.one {
            return self.paint_points(from..=to, t, n, seen, level);
        }
        let mut found = 0;
        let last = (to < t).then_some(t);
        for i in (from..=to).step_by(step).chain(last) {
            let Some((lo, hi)) = self.interval(i, t, directed) else { continue };
            match self.interval(i, t - 1, directed) {
                None => found += paint(seen, level, n, lo, hi),
                Some((old_lo, old_hi)) => {
                    found += paint(seen, level, n, lo, old_lo - 1) + paint(seen, level, n, old_hi + 1, hi);
                }
            }
        }
        found
    }
}

impl Run {
    /// [`Run::paint_level`] of a directed `{1, a..}` (`open` from [`Run::changed`], which
    /// ends below t): each open interval y grows by the one point y (a+r-2) + t, an arithmetic
    /// progression walked mod n by additions (no division per point); then interval t, new.
    fn paint_points(&self, open: RangeInclusive<i64>, t: i64, n: usize, seen: &mut [u64], level: &mut [u64]) -> usize {
        let modulus = n as i64;
        let gap = (self.a + self.r - 2).rem_euclid(modulus);
        let mut x = (open.start() * (self.a + self.r - 2) + t).rem_euclid(modulus);
        let mut found = 0;
        for _ in open {
            found += mark(seen, level, x as usize, x as usize);
            x += gap;
            if x >= modulus {
                x -= modulus;
            }
        }
        let (lo, hi) = self.interval(t, t, true).expect("t offsets at level t");
        found + paint(seen, level, n, lo, hi)
    }
}

/// Mark the residues mod n of the integers lo..=hi that `seen` lacks, in `seen` and `level`;
/// how many.
fn paint(seen: &mut [u64], level: &mut [u64], n: usize, lo: i64, hi: i64) -> usize {
    if hi < lo {
        return 0;
    }
    let len = (hi - lo + 1) as u64;
    if len >= n as u64 {
        return mark(seen, level, 0, n - 1);
    }
    let start = if (0..n as i64).contains(&lo) { lo as usize } else { lo.rem_euclid(n as i64) as usize };
    let end = start + len as usize - 1;
    if end < n {
        mark(seen, level, start, end)
    } else {
        mark(seen, level, start, n - 1) + mark(seen, level, 0, end - n)
    }
}

/// Mark bits from..=to (to below the sets' size) that `seen` lacks; how many.
fn mark(seen: &mut [u64], level: &mut [u64], from: usize, to: usize) -> usize {
    let mut new = 0;
    for w in from / 64..=to / 64 {
        let lo = if w == from / 64 { from % 64 } else { 0 };
        let hi = if w == to / 64 { to % 64 } else { 63 };
        let bits = (u64::MAX >> (63 - hi)) & (u64::MAX << lo) & !seen[w];
        new += bits.count_ones() as usize;
        seen[w] |= bits;
        level[w] |= bits;
    }
    new
}

#[cfg(test)]
mod tests;
