//! Bytes: where each piece lies in the M-byte buffer, and how many bytes each link carries.
//!
//! The IR works in exact fractions of M. Two views of bytes follow from it:
//! * exact: a transfer loads every link of its route with `M * fraction` bytes, a rational
//!   ([`link_loads`], [`bandwidth_term_us`]); `optimality` compares these bandwidth terms;
//! * whole bytes, for execution (simulator, XML, MPI): piece `[a, b)` of shard s covers the
//!   global bytes `[floor(M (off_s + f_s a)), floor(M (off_s + f_s b)))`, where `f_s` is the
//!   shard's fraction and `off_s` the sum of the earlier shards' fractions ([`ByteLayout`]).
//!   Floors of one exact position are shared by neighbours, so pieces tile the buffer
//!   exactly: each chunk is rounded down and the remainder lands in the last one.

use crate::ir::{Piece, Schedule};
use crate::rational::Rat;
use crate::topology::Topology;
use num_integer::Integer;
use num_traits::Zero;

/// Whole-byte positions of a schedule's pieces for a buffer of `size` bytes.
#[derive(Debug, Clone)]
pub struct ByteLayout {
    size: Rat,
    /// `offsets[s]`: fraction of M before shard s.
    offsets: Vec<Rat>,
    shards: Vec<Rat>,
}

impl ByteLayout {
    /// The layout of `s`'s shards in `size` bytes (`size >= 0`).
    pub fn new(s: &Schedule, size: Rat) -> ByteLayout {
        let mut offsets = Vec::with_capacity(s.shards.len());
        let mut acc = Rat::zero();
        for f in &s.shards {
            offsets.push(acc);
            acc += f;
        }
        ByteLayout { size, offsets, shards: s.shards.clone() }
    }

    /// Exact position `M (off_s + f_s x)` of fraction `x` of shard `shard`, in bytes.
    fn position(&self, shard: usize, x: Rat) -> Rat {
        self.size * (self.offsets[shard] + self.shards[shard] * x)
    }

    /// Global byte offset of fraction `x` of shard `shard`: `floor(M (off_s + f_s x))`.
    pub fn offset(&self, shard: usize, x: Rat) -> u64 {
        to_u64(self.position(shard, x).floor().to_integer())
    }

    /// The global byte range of a piece.
    pub fn range(&self, piece: &Piece) -> std::ops::Range<u64> {
        self.offset(piece.shard, piece.start)..self.offset(piece.shard, piece.end)
    }

    /// The `k + 1` byte offsets that bound the `k` pipeline sub-chunks of `piece`, exactly as
    /// [`crate::ir::transform::pipelined`] cuts it: sub-chunk j is `[b[j], b[j + 1])`, `b[0]` and
    /// `b[k]` are the ends of [`Self::range`]. `k = 1` gives the piece's range.
    pub fn boundaries(&self, piece: &Piece, k: usize) -> Vec<u64> {
        let k = k.max(1);
        // Sub-chunk j starts at start + width j (width = len / k), an affine function of j:
        // position(j) = A + D j. On a common denominator Q that is floor((a + d j) / Q) in
        // integers; fall back to rationals if that would overflow.
        let a = self.position(piece.shard, piece.start);
        let width = piece.len() / Rat::from_integer(k as i128);
        let d = self.size * self.shards[piece.shard] * width;
        if let Some(b) = affine_floors(a, d, k) {
            return b;
        }
        (0..=k)
            .map(|j| {
                let x = if j == k { piece.end } else { piece.start + width * Rat::from_integer(j as i128) };
                self.offset(piece.shard, x)
            })
            .collect()
    }
}

fn to_u64(v: i128) -> u64 {
    u64::try_from(v.max(0)).unwrap_or(u64::MAX)
}

/// `floor(a + d j)` for j = 0..=k in i128 arithmetic, `None` on overflow.
fn affine_floors(a: Rat, d: Rat, k: usize) -> Option<Vec<u64>> {
    let q = a.denom().lcm(d.denom());
    let an = a.numer().checked_mul(q / a.denom())?;
    let dn = d.numer().checked_mul(q / d.denom())?;
    dn.checked_mul(k as i128)?.checked_add(an)?;
    Some((0..=k as i128).map(|j| to_u64(Integer::div_floor(&(an + dn * j), &q))).collect())
}

/// Exact bytes each link carries over the whole schedule (indexed like `topo.links`): every
/// transfer loads every link of its route with `M * fraction` of its piece (of each piece of
/// a range transfer's run, natively). No rounding.
/// Pipelining does not change it. Panics on a piece or link index out of range (a schedule
/// from a file: [`super::alpha_beta()`] and [`super::simulate()`] check them and say so).
pub fn link_loads(s: &Schedule, topo: &Topology, size: Rat) -> Vec<Rat> {
    assert!(s.symmetry.is_none(), "link loads of a schedule stated per orbit: take its quotient (api::cost_view)");
    // Sum fractions of M per link (one piece fraction reused many times), scale once.
    let fraction: Vec<Rat> = (0..s.pieces.len()).map(|p| s.piece_fraction(p)).collect();
    let mut load = integer_loads(s, topo, &fraction).unwrap_or_else(|| {
        let mut load = vec![Rat::zero(); topo.links.len()];
        for t in &s.transfers {
            let f: Rat = run(t).map(|p| fraction[p]).sum();
            for &l in &t.route {
                load[l] += f;
            }
        }
        load
    });
    for x in &mut load {
        *x *= size;
    }
    load
}

/// The pieces a transfer moves: one, or a range transfer's run (`ir::ranges`), whose bytes on
/// each link of its route are the sum of its pieces'.
fn run(t: &crate::ir::Transfer) -> std::ops::Range<usize> {
    t.piece..t.piece + t.count as usize
}

/// The sums of [`link_loads`] in integers: every fraction as a numerator over the common
/// denominator of all pieces, so that a link's load is integer additions instead of a
/// rational addition (a gcd) per transfer and hop; the same reduced rationals. `None` when
/// the common denominator or a sum would overflow (the caller adds rationals then).
fn integer_loads(s: &Schedule, topo: &Topology, fraction: &[Rat]) -> Option<Vec<Rat>> {
    let mut d: i128 = 1;
    for f in fraction {
        d = (d / d.gcd(f.denom())).checked_mul(*f.denom())?;
    }
    let numer: Vec<i128> = fraction.iter().map(|f| f.numer().checked_mul(d / f.denom())).collect::<Option<_>>()?;
    let mut sum = vec![0i128; topo.links.len()];
    for t in &s.transfers {
        let x = run(t).try_fold(0i128, |a, p| a.checked_add(numer[p]))?;
        for &l in &t.route {
            sum[l] = sum[l].checked_add(x)?;
        }
    }
    Some(sum.into_iter().map(|x| Rat::new(x, d)).collect())
}

/// The schedule's bandwidth term in microseconds, exact: the maximum over links of
/// load / bandwidth (bandwidth in GB/s is 10^3 bytes per microsecond). 0 with no loaded link.
pub fn bandwidth_term_us(s: &Schedule, topo: &Topology, size: Rat) -> Rat {
    max_time_us(topo, link_loads(s, topo, size).iter().enumerate())
}

/// Max over `(link, bytes)` of bytes / (bandwidth 10^3), exact.
pub(crate) fn max_time_us<'a>(topo: &Topology, loads: impl Iterator<Item = (usize, &'a Rat)>) -> Rat {
    let mut best = Rat::zero();
    for (l, bytes) in loads {
        if bytes.is_zero() {
            continue;
        }
        let t = bytes / topo.links[l].bandwidth;
        if t > best {
            best = t;
        }
    }
    best / Rat::from_integer(1000)
}

#[cfg(test)]
mod tests;
