//! Träff's per-process schedule computation (Algorithms 1–5 of his round-optimal n-block
//! broadcast paper, with the fixes listed under "Errata" in `docs/circulant.md`).
//!
//! Everything here is computed by one process for itself, without communication:
//! [`Skips::new`] is O(log p), [`Skips::baseblock`] O(log p), [`Skips::rangeblocks`]
//! O(log p log log p), [`Skips::recv_schedule`] O(log² p log log p) and
//! [`Skips::send_schedule`] O(log³ p log log p), in O(log p) space.
//!
//! Block sets are `u64` bit masks (block b = bit b): a phase has q = ceil(log2 p) <= 63
//! blocks.
//!
//! ```
//! use collsynth_core::synth::traff::Skips;
//! let s = Skips::new(20);
//! assert_eq!(s.skips(), [1, 2, 3, 5, 10, 20]);
//! assert_eq!(s.recv_schedule(1), [0, -3, -4, -2, -1]); // Table 1, column r = 1
//! assert_eq!(s.send_schedule(1), [-5, -5, 0, 0, 0]);
//! ```

/// The largest p handled: q = ceil(log2 p) must fit a `u64` block mask, and sizes an `i64`.
pub const MAX_P: usize = 1 << 40;

/// The skips of Algorithm 1 for p processes, with the tables every other algorithm reads.
#[derive(Debug, Clone)]
pub struct Skips {
    p: usize,
    q: usize,
    /// `skips[k]`, k = 0..=q: skips[0] = 1, skips[q] = p, skips[k] = ceil(p / 2^(q-k)).
    skips: Vec<usize>,
    /// `sum[k]` = skips[0] + ... + skips[k] (the fallback range of Algorithm 4, line 12).
    sum: Vec<usize>,
}

/// Knobs that switch the errata fixes off, so that the tests can show why each is needed
/// (the errata of `docs/circulant.md`). Production code uses [`Variant::FIXED`] only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Variant {
    /// Erratum 3: B starts as {BASEBLOCK(r)} (the paper's line 2 starts it empty).
    pub seed_baseblock: bool,
    /// Line 14 takes `max(U \ B)` (true, as printed) or the minimum (T-16: invalid).
    pub pick_max: bool,
}

impl Variant {
    pub const FIXED: Variant = Variant { seed_baseblock: true, pick_max: true };
}

impl Skips {
    /// Algorithm 1: halve p (rounding up) until 1. `p = 1` gives q = 0 and skips = \[1\].
    ///
    /// Panics if p = 0 or p > [`MAX_P`] (callers check user input first).
    pub fn new(p: usize) -> Skips {
        assert!((1..=MAX_P).contains(&p), "p = {p} out of range 1..={MAX_P}");
        let skips = crate::zoo::traff_skips(p);
        let q = skips.len() - 1;
        let sum = skips
            .iter()
            .scan(0usize, |acc, &s| {
                *acc += s;
                Some(*acc)
            })
            .collect();
        Skips { p, q, skips, sum }
    }

    pub fn p(&self) -> usize {
        self.p
    }

    /// Rounds per phase, ceil(log2 p).
    pub fn q(&self) -> usize {
        self.q
    }

    /// skips[0..=q].
    pub fn skips(&self) -> &[usize] {
        &self.skips
    }

    /// Algorithm 2: the baseblock of process `r` (0 < r < p), the first block it receives.
    /// bb(skips\[k\]) = k and bb(r) = bb(r - skips\[k\]) for skips\[k\] < r < skips\[k+1\].
    pub fn baseblock(&self, r: usize) -> usize {
        assert!(r > 0 && r < self.p, "baseblock({r}) needs 0 < r < p = {}", self.p);
        // The paper walks k down from q; jumping to the homerange of r (O(1)) is the same
        // walk without the steps where skips[k] > r.
        let mut r = r;
        loop {
            let k = self.homerange(r);
            if r == self.skips[k] {
                return k;
            }
            r -= self.skips[k];
        }
    }

    /// The largest k with skips[k] <= m (m >= 1): the homerange of m, in O(1).
    ///
    /// skips[k] = ceil(p / 2^(q-k)) <= m  <=>  p <= m 2^(q-k), so the homerange is q - d for
    /// the smallest d >= 0 with m 2^d >= p. d is the difference of the bit lengths of p and
    /// m, or one more (m, p < 2^41, so the shift cannot overflow).
    pub(crate) fn homerange(&self, m: usize) -> usize {
        debug_assert!(m >= 1);
        if m >= self.p {
            return self.q;
        }
        let mut d = (m.leading_zeros() - self.p.leading_zeros()) as usize;
        if m << d < self.p {
            d += 1;
        }
        self.q - d
    }

    /// Blocks present in the processes [1, m] (m >= 1): exactly {0, ..., homerange(m)}, as
    /// the range holds skips[0..=j] themselves and bb(r) <= homerange(r).
    fn prefix(&self, m: usize) -> u64 {
        low_bits(self.homerange(m) + 1)
    }

    /// Baseblocks of the processes a..=b, 1 <= a, b <= p - 1 (empty if a > b).
    ///
    /// This is Algorithm 3 with its defects fixed (errata 1 and 2 of `docs/circulant.md`):
    /// with k the homerange of b,
    /// * if a > skips[k], the whole range lies strictly inside homerange k, whose baseblocks
    ///   repeat those of [1, skips[k] - 1]: shift both ends down by skips[k] (the paper's
    ///   line 12 shifts by the *next* skip, which goes negative: erratum 1);
    /// * otherwise the range covers skips[k] (block k), the part right of it is the prefix
    ///   [1, b - skips[k]] (its blocks are {0..j}: exact, see [`Skips::prefix`]), and the
    ///   part left of it, [a, skips[k] - 1], is searched the same way. Position 0 never
    ///   occurs: the paper's line 19 recursed on [0, ...], looping below index 0 (erratum 2).
    ///
    /// The k = 1, 2, 3 exceptions of the paper's line 21: its shortcut "a complete homerange
    /// [skips[j], skips[j+1] - 1] inside the range holds all blocks 0..j" is false for the
    /// small homeranges (j = 1, 2, whose size skips[j+1] - skips[j] can be below j + 1; e.g.
    /// p = 33, [3, 4] holds only {2, 0}), so the paper says they "need to be handled
    /// explicitly". We handle them by never using that shortcut: the only "all blocks
    /// 0..j" step is for a *prefix* [1, m], which contains skips[0], ..., skips[j] themselves
    /// and is therefore exact for every j, small ones included. A tail range inside a small
    /// homerange is found by the shift rule above like any other. Each loop iteration
    /// lowers k, so the loop runs at most q + 1 times.
    ///
    /// `known`: blocks the caller already has; the search stops once every block the rest
    /// of the range could hold ({0..homerange(b)}) is known or found, so only
    /// `result & !known` is exact (`known = 0`: the whole set).
    fn blocks(&self, mut a: usize, mut b: usize, known: u64) -> u64 {
        let mut mask = 0u64;
        while a <= b {
            let k = self.homerange(b);
            let below = low_bits(k + 1);
            if (mask | known) & below == below {
                break;
            }
            let s = self.skips[k];
            if a > s {
                a -= s;
                b -= s;
                continue;
            }
            mask |= 1 << k;
            if b > s {
                mask |= self.prefix(b - s);
            }
            if a == s {
                break;
            }
            b = s - 1;
        }
        mask
    }

    /// RANGEBLOCKS(a, b): the baseblocks of the processes j mod p for a <= j <= b (a and b
    /// may be negative; b - a + 1 <= p), the root (j mod p = 0) contributing nothing
    /// (RANGEBLOCKS' definition in the paper's §2). Empty if b < a.
    pub fn rangeblocks(&self, a: i64, b: i64) -> u64 {
        self.rangeblocks_new(a, b, 0)
    }

    /// [`Skips::rangeblocks`] `& !known`: the blocks of the range not in `known`.
    fn rangeblocks_new(&self, a: i64, b: i64, known: u64) -> u64 {
        let len = b - a + 1;
        if len <= 0 {
            return 0;
        }
        let p = self.p as i64;
        debug_assert!(len <= p, "range [{a}, {b}] longer than p = {p}");
        // a mod p, without a division in the common case -p <= a < p.
        let a = match a {
            _ if (0..p).contains(&a) => a,
            _ if (-p..0).contains(&a) => a + p,
            _ => a.rem_euclid(p),
        };
        let b = a + len - 1;
        let part =
            |lo: i64, hi: i64| if lo.max(1) <= hi { self.blocks(lo.max(1) as usize, hi as usize, known) } else { 0 };
        let m = if b < p { part(a, b) } else { part(a, p - 1) | part(1, b - p) };
        m & !known
    }

    /// Algorithm 4: the receive schedule of (virtual) process r, one entry per round of a
    /// phase. Entry v >= 0 is block v of the current phase (only the baseblock, at the
    /// homerange index); v < 0 is block v + q of the previous phase.
    pub fn recv_schedule(&self, r: usize) -> Vec<i64> {
        let mut out = vec![0; self.q];
        self.recv_into(r, &mut out, Variant::FIXED);
        out
    }

    /// The first `out.len()` (<= q) entries of Algorithm 4 for process r (erratum 4: the
    /// paper's loop `for i = 0..k` computes k + 1 entries; "the first k blocks" is meant,
    /// and Algorithm 5 needs entries 0..=i, so `out.len() = i + 1`).
    ///
    /// Fixes applied (errata of `docs/circulant.md`): B starts as {bb(r)} for r > 0 (erratum 3);
    /// ranges are cyclic mod p; the last round takes the unique element of {0..q-1} \ B
    /// (erratum 5); ties take the largest new block.
    pub(crate) fn recv_into(&self, r: usize, out: &mut [i64], v: Variant) {
        let (p, q) = (self.p, self.q);
        debug_assert!(r < p && out.len() <= q);
        let sk = &self.skips;
        let bb = (r > 0).then(|| self.baseblock(r));
        let mut have: u64 = match bb {
            Some(b) if v.seed_baseblock => 1 << b,
            _ => 0,
        };
        let ri = r as i64;
        for (i, slot) in out.iter_mut().enumerate() {
            if sk[i] <= r && r < sk[i + 1] {
                *slot = bb.expect("r >= skips[0] = 1") as i64;
                continue;
            }
            let b = if i == 0 {
                self.baseblock((r + p - 1) % p)
            } else if i < q - 1 {
                // A new block from r - skips[i] lies in the baseblocks it may have forwarded:
                // the processes [r - skips[i+1] + 1, r - skips[i]]; else search the range
                // it could have received from in earlier rounds (Lemma 1).
                let mut u = self.rangeblocks_new(ri - sk[i + 1] as i64 + 1, ri - sk[i] as i64, have);
                if u == 0 {
                    u = self.rangeblocks_new(ri - self.sum[i] as i64, ri - sk[i + 1] as i64, have);
                }
                debug_assert!(u != 0 || v != Variant::FIXED, "p = {p}, r = {r}, round {i}: no new block");
                if u == 0 {
                    u = low_bits(q) & !have; // only with an erratum re-enabled
                }
                pick(u, v.pick_max)
            } else {
                let left = low_bits(q) & !have;
                debug_assert!(!v.seed_baseblock || left.count_ones() == 1, "p = {p}, r = {r}: {left:b}");
                pick(left, v.pick_max)
            };
            have |= 1 << b;
            *slot = b as i64 - q as i64;
        }
    }

    /// Algorithm 5: the send schedule of (virtual) process r. In round i of a phase, r sends
    /// what its to-process (r + skips\[i\]) mod p receives then (erratum 6: the paper omits
    /// the mod); only entries 0..=i of that process's receive schedule are computed.
    pub fn send_schedule(&self, r: usize) -> Vec<i64> {
        let mut out = vec![0; self.q];
        let mut buf = vec![0; self.q];
        for (i, slot) in out.iter_mut().enumerate() {
            let t = (r + self.skips[i]) % self.p;
            self.recv_into(t, &mut buf[..=i], Variant::FIXED);
            *slot = buf[i];
        }
        out
    }

    /// Receive schedules of all p processes, flattened (`[r * q + i]`): O(p log² p).
    pub fn all_recv(&self) -> Vec<i64> {
        let q = self.q;
        let mut all = vec![0; self.p * q];
        if q > 0 {
            for (r, row) in all.chunks_mut(q).enumerate() {
                self.recv_into(r, row, Variant::FIXED);
            }
        }
        all
    }

    /// Send schedules of all processes from their receive schedules (Algorithm 9, lines
    /// 4–9): `send[r][k] = recv[(r + skips[k]) mod p][k]`.
    pub fn all_send(&self, recv: &[i64]) -> Vec<i64> {
        let (p, q) = (self.p, self.q);
        (0..p * q).map(|j| recv[((j / q + self.skips[j % q]) % p) * q + j % q]).collect()
    }
}

fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

fn pick(mask: u64, max: bool) -> usize {
    if mask == 0 {
        0 // only with an erratum re-enabled (the fixed algorithm always finds a block)
    } else if max {
        63 - mask.leading_zeros() as usize
    } else {
        mask.trailing_zeros() as usize
    }
}

/// Rounds of an n-block broadcast on p processes: n - 1 + q (0 for p = 1).
pub fn rounds(p: usize, n: usize) -> usize {
    if p <= 1 {
        0
    } else {
        n.max(1) - 1 + Skips::new(p).q()
    }
}

/// Algorithm 6's x: the number of empty virtual rounds before the first real one, chosen
/// so that x + n - 1 + q is a multiple of q (0 <= x < q).
pub fn empty_rounds(q: usize, n: usize) -> usize {
    (q - (n - 1) % q) % q
}

/// The raw (uncapped) block of schedule `sched` (a receive or send schedule) in real round
/// `j` (0-based, 0..n-1+q) of an n-block broadcast: Algorithm 6 lines 4–24 in closed form,
/// `sched[(j + x) mod q] + q * floor((j + x) / q) - x`. Below 0: nothing; above n - 1:
/// means block n - 1 (see [`block_in_round`]).
pub fn raw_block(sched: &[i64], n: usize, j: usize) -> i64 {
    let q = sched.len();
    let x = empty_rounds(q, n);
    let i = j + x;
    sched[i % q] + (q * (i / q)) as i64 - x as i64
}

/// The block sent / received in real round j: `None` below 0, capped at n - 1.
pub fn block_in_round(sched: &[i64], n: usize, j: usize) -> Option<usize> {
    let v = raw_block(sched, n, j);
    (v >= 0).then(|| (v as usize).min(n - 1))
}

/// Theorem 2's block count for m bytes with per-round latency alpha (us) and time per
/// byte beta (us/B): the integer n minimising (n - 1 + q)(alpha + beta m / n), near
/// sqrt((q - 1) beta m / alpha); at least 1 and at most max(1, m).
pub fn optimal_blocks(p: usize, m: f64, alpha: f64, beta: f64) -> usize {
    let q = Skips::new(p.clamp(1, MAX_P)).q() as f64;
    let cap = m.floor().max(1.0);
    if p <= 2 || m <= 0.0 || beta <= 0.0 {
        return 1;
    }
    if alpha <= 0.0 {
        return cap.min(1e15) as usize;
    }
    let star = ((q - 1.0) * beta * m / alpha).sqrt().clamp(1.0, cap);
    let cost = |n: f64| (n - 1.0 + q) * (alpha + beta * m / n);
    let (lo, hi) = (star.floor().max(1.0), star.ceil().min(cap));
    (if cost(hi) < cost(lo) { hi } else { lo }).min(1e15) as usize
}
