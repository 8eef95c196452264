//! The exhaustive checker: for a p, compute every process's schedules and simulate the
//! n-block broadcast round by round for n in {1, 2, q, q + 1, 2q + 3} (root 0: other roots
//! are the same schedule renumbered, the circulant being shift-invariant).
//!
//! Per p it asserts: every receive schedule has the shape of T-7 (the baseblock once at its
//! homerange index, the other q - 1 blocks of the previous phase once each); the block a
//! process sends in a round is the block its to-process expects (by construction: the send
//! schedule is the to-process's receive schedule, Algorithm 9 lines 4–9; Algorithm 5 itself is
//! compared with that for a sample of processes); a process only sends a block it already
//! holds; every non-root receives every block below n - 1 exactly once and block n - 1 for
//! the first time from an uncapped or capped entry (capped entries, blocks "beyond n - 1"
//! in the last phase, re-send block n - 1 as the paper says: they are the only duplicates);
//! and the last process completes in round n - 1 + q, not earlier.
//!
//! Speed (docs/circulant.md, "How it is fast"): the receive schedules are computed once per p
//! and reused for every n, stored column-major as `i8`; `simulate_fast` keeps one `u64`
//! block set per process, double-buffered, and runs a round as one branch-free pass over
//! contiguous slices; `simulate` is the plain reference (and words the failures).

#[cfg(test)]
use super::schedule::Variant;
use super::schedule::{empty_rounds, Skips};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What a sweep checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckSummary {
    /// Values of p checked.
    pub ps: usize,
    /// Largest p checked.
    pub max_p: usize,
    /// Process schedules computed (sum of p).
    pub processes: u64,
    /// Broadcasts simulated ((p, n) pairs).
    pub broadcasts: u64,
    /// Rounds simulated, summed over broadcasts.
    pub rounds: u64,
    /// Redundant capped receives of block n - 1 seen (harmless duplicates).
    pub capped_duplicates: u64,
    /// The first failures (at most 10), one line each.
    pub failures: Vec<String>,
}

/// How a round's block is derived from a schedule entry (the default is Algorithm 6 with
/// its x-adjustment; `adjust = false` is Algorithm 9 as printed, erratum 9).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rule {
    pub adjust: bool,
}

impl Rule {
    pub const FIXED: Rule = Rule { adjust: true };

    /// Raw block of `entry` (the schedule value of slot k) in virtual round i = j + x.
    fn raw(self, entry: i64, q: usize, x: usize, i: usize) -> i64 {
        if self.adjust {
            entry + (q * (i / q)) as i64 - x as i64
        } else {
            // Algorithm 9 as printed: the slot's value plus q per earlier use of the slot.
            let uses = if i % q >= x { i / q } else { i / q - 1 };
            entry + (q * uses) as i64
        }
    }
}

/// The block counts checked for p: {1, 2, q, q + 1, 2q + 3}, deduplicated.
pub fn block_counts(q: usize) -> Vec<usize> {
    let mut ns = vec![1, 2, q.max(1), q + 1, 2 * q + 3];
    ns.sort_unstable();
    ns.dedup();
    ns
}

/// Check every process of p (see the module docs). Returns (broadcasts, rounds, capped
/// duplicates) or the first failure.
///
/// Every process's receive schedule (Algorithm 4) is computed once per p and reused for all
/// n; the send schedules are the receive schedules of the to-processes (Algorithm 5's
/// identity, which `send_sample` checks against Algorithm 5 itself for a sample of
/// processes). The broadcasts run on `simulate_fast`; if it reports a problem, the
/// reference simulator `simulate` reruns that n to describe it.
pub fn check_p(p: usize) -> Result<(u64, u64, u64), String> {
    if p < 2 {
        return Ok((0, 0, 0));
    }
    let sk = Skips::new(p);
    let q = sk.q();
    let recv = sk.all_recv();
    shape(&sk, &recv)?;
    send_sample(&sk, &recv)?;
    let cols = columns(&sk, &recv);
    let mut sim = Sim::new(p);
    let (mut b, mut rounds, mut dups) = (0, 0, 0);
    for n in block_counts(q) {
        let (r, d) = match simulate_fast(&sk, &cols, n, &mut sim) {
            Some(ok) => ok,
            None => {
                let send = sk.all_send(&recv);
                simulate(&sk, &recv, &send, n, Rule::FIXED)?;
                return Err(format!("p = {p}, n = {n}: the fast simulator disagrees with the reference one"));
            }
        };
        b += 1;
        rounds += r as u64;
        dups += d;
    }
    Ok((b, rounds, dups))
}

/// Algorithm 5 ([`Skips::send_schedule`], computed independently) agrees with the receive
/// schedules of the to-processes for processes 0, 1, p - 1 and a few spread out.
fn send_sample(sk: &Skips, recv: &[i64]) -> Result<(), String> {
    let (p, q) = (sk.p(), sk.q());
    let mut ranks = vec![0, 1, p - 1, p / 2, p / 3, (p / 7) * 5];
    ranks.sort_unstable();
    ranks.dedup();
    for r in ranks {
        let send = sk.send_schedule(r);
        for (k, &v) in send.iter().enumerate() {
            let t = (r + sk.skips()[k]) % p;
            if recv[t * q + k] != v {
                return Err(format!(
                    "p = {p}: process {r} sends {v} in round {k} but process {t} expects {}",
                    recv[t * q + k]
                ));
            }
        }
    }
    Ok(())
}

/// The receive schedules column by column (`[k * p + r]`) as `i8` (entries lie in
/// -q..q, q <= 40): one round reads one contiguous column.
pub(crate) fn columns(sk: &Skips, recv: &[i64]) -> Vec<i8> {
    let (p, q) = (sk.p(), sk.q());
    let mut cols = vec![0i8; p * q];
    for (r, row) in recv.chunks_exact(q).enumerate() {
        for (k, &v) in row.iter().enumerate() {
            cols[k * p + r] = v as i8;
        }
    }
    cols
}

/// The block sets of the fast simulator: this round's and the next's (double-buffered, as
/// every process receives exactly one message per round).
pub(crate) struct Sim {
    have: Vec<u64>,
    next: Vec<u64>,
}

impl Sim {
    pub(crate) fn new(p: usize) -> Sim {
        Sim { have: vec![0; p], next: vec![0; p] }
    }
}

/// The same broadcast as [`simulate`] with [`Rule::FIXED`], branch-free over flat arrays:
/// in round j every process r sends to t = r + skips[k], the block t's receive schedule
/// names (`cols`, see [`columns`]); errors are OR-ed into one flag per round. Returns
/// `None` on any problem (the caller reruns [`simulate`] for the message), else (rounds,
/// capped duplicates). The checks are those of [`simulate`]: the sender holds the block,
/// nobody receives a block twice except capped re-sends of block n - 1, every process ends
/// with every block, and not everyone is complete before the last round.
pub(crate) fn simulate_fast(sk: &Skips, cols: &[i8], n: usize, sim: &mut Sim) -> Option<(usize, u64)> {
    let (p, q) = (sk.p(), sk.q());
    if !(1..=64).contains(&n) {
        return None;
    }
    let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let x = empty_rounds(q, n);
    let total = n - 1 + q;
    let Sim { have, next } = sim;
    have.fill(0);
    have[0] = all;
    let mut dups = 0u64;
    let last = (n - 1) as i64;
    for j in 0..total {
        let i = j + x;
        let k = i % q;
        let skip = sk.skips()[k];
        let shift = (q * (i / q)) as i64 - x as i64;
        let col = &cols[k * p..(k + 1) * p];
        next[0] = have[0];
        // One pass over receivers t (contiguous slices, no bounds checks); the sender is
        // r = t - skip (mod p). The root (t = 0) never receives (erratum 10).
        let (e1, d1) = pass(&col[1..skip], &have[1..skip], &have[p - skip + 1..], &mut next[1..skip], shift, last);
        let (e2, d2) = pass(&col[skip..], &have[skip..], &have[..p - skip], &mut next[skip..], shift, last);
        let err = e1 | e2;
        dups += d1 + d2;
        if err {
            return None;
        }
        std::mem::swap(have, next);
        if j + 2 == total && have.iter().all(|&h| h == all) {
            return None; // complete before round total
        }
    }
    if have.iter().any(|&h| h != all) {
        return None;
    }
    Some((total, dups))
}

/// T-7: receive schedules of non-roots hold bb(r) at its homerange index and the q - 1
/// other blocks of the previous phase; the root's is a permutation of -q..-1 (T-10).
fn shape(sk: &Skips, recv: &[i64]) -> Result<(), String> {
    let (p, q) = (sk.p(), sk.q());
    for r in 0..p {
        let row = &recv[r * q..(r + 1) * q];
        let mut seen = 0u64;
        for (i, &v) in row.iter().enumerate() {
            let b = if v >= 0 {
                if r == 0 || v as usize != sk.baseblock(r) || !(sk.skips()[i] <= r && r < sk.skips()[i + 1]) {
                    return Err(format!("p = {p}: process {r} receives block {v} of the current phase in round {i}"));
                }
                v as usize
            } else {
                (v + q as i64) as usize
            };
            if v < -(q as i64) || seen >> b & 1 == 1 {
                return Err(format!("p = {p}: process {r} has a bad receive schedule {row:?}"));
            }
            seen |= 1 << b;
        }
    }
    Ok(())
}

/// Simulate the n-block broadcast from root 0 with the given tables; returns (rounds,
/// capped duplicates). Blocks are bits of a u64 per process, so n <= 64.
pub(crate) fn simulate(sk: &Skips, recv: &[i64], send: &[i64], n: usize, rule: Rule) -> Result<(usize, u64), String> {
    let (p, q) = (sk.p(), sk.q());
    assert!((1..=64).contains(&n), "the simulator handles 1..=64 blocks");
    let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let x = empty_rounds(q, n);
    let total = n - 1 + q;
    let mut have = vec![0u64; p];
    have[0] = all;
    let mut incoming = vec![0u64; p];
    let mut complete = 1usize;
    let mut dups = 0u64;
    let fail = |j: usize, msg: String| Err(format!("p = {p}, n = {n}, round {j}: {msg}"));
    for j in 0..total {
        let i = j + x;
        let k = i % q;
        let skip = sk.skips()[k];
        for r in 0..p {
            let t = (r + skip) % p;
            let sent = rule.raw(send[r * q + k], q, x, i);
            let got = rule.raw(recv[t * q + k], q, x, i);
            if sent != got {
                return fail(j, format!("process {r} sends block {sent} but process {t} expects {got}"));
            }
            if got < 0 || t == 0 {
                continue; // nothing this round; the root never receives (erratum 10)
            }
            let b = (got as usize).min(n - 1);
            if have[r] >> b & 1 == 0 {
                return fail(j, format!("process {r} sends block {b} before it has it"));
            }
            if have[t] >> b & 1 == 1 {
                if got as usize > n - 1 {
                    dups += 1;
                    continue;
                }
                return fail(j, format!("process {t} receives block {b} twice"));
            }
            incoming[t] |= 1 << b;
        }
        for (h, inc) in have.iter_mut().zip(incoming.iter_mut()) {
            if *inc != 0 {
                *h |= std::mem::take(inc);
                if *h == all {
                    complete += 1;
                }
            }
        }
        if complete == p && j + 1 < total {
            return fail(j, format!("every process is complete before round {total}"));
        }
    }
    if let Some(r) = have.iter().position(|&h| h != all) {
        return Err(format!("p = {p}, n = {n}: process {r} ends without blocks {:b}", all & !have[r]));
    }
    Ok((total, dups))
}

/// One round of [`simulate_fast`] for receivers whose blocks are `ht`, whose senders' blocks
/// are `hr` and whose schedule entries are `col`: writes their blocks after the round to
/// `next`; returns (any error, capped duplicates).
#[inline]
fn pass(col: &[i8], ht: &[u64], hr: &[u64], next: &mut [u64], shift: i64, last: i64) -> (bool, u64) {
    let mut err = false;
    let mut dups = 0u64;
    for (((&c, &ht), &hr), nx) in col.iter().zip(ht).zip(hr).zip(next.iter_mut()) {
        let g = c as i64 + shift;
        let valid = g >= 0;
        let bit = 1u64 << g.clamp(0, last);
        let dup = ht & bit != 0;
        err |= valid & ((hr & bit == 0) | (dup & (g <= last)));
        dups += (valid & dup) as u64;
        *nx = ht | if valid { bit } else { 0 };
    }
    (err, dups)
}

/// Check every p of `ps` on `threads` threads (0: as many as [`crate::parallel::requested`]
/// gives, every core), calling `progress(done)` after each p. Stops collecting failures
/// after 10.
pub fn check_all(ps: &[usize], threads: usize, progress: &(dyn Fn(usize) + Sync)) -> CheckSummary {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let out = Mutex::new(CheckSummary::default());
    // Largest p first, so that the threads finish together.
    let mut order: Vec<usize> = ps.to_vec();
    order.sort_unstable_by(|a, b| b.cmp(a));
    std::thread::scope(|scope| {
        // One OS thread each (the user may ask for up to 1024): never more than there are p.
        for _ in 0..crate::parallel::requested(threads).min(order.len().max(1)) {
            scope.spawn(|| loop {
                let idx = next.fetch_add(1, Ordering::Relaxed);
                let Some(&p) = order.get(idx) else { break };
                // Ctrl-C: the caller raises it; the summary of a stopped check is dropped.
                if crate::budget::is_cancelled() {
                    break;
                }
                let res = check_p(p);
                {
                    let mut s = out.lock().expect("no panics while holding the lock");
                    s.ps += 1;
                    s.max_p = s.max_p.max(p);
                    s.processes += p as u64;
                    match res {
                        Ok((b, r, d)) => {
                            s.broadcasts += b;
                            s.rounds += r;
                            s.capped_duplicates += d;
                        }
                        Err(e) if s.failures.len() < 10 => s.failures.push(e),
                        Err(_) => {}
                    }
                }
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            });
        }
    });
    let mut s = out.into_inner().expect("threads joined");
    s.failures.sort();
    s
}

/// Algorithm 8 (census / allreduce) simulated with contribution counts, `fixed` choosing
/// line 3's condition on k (erratum 8) instead of on i = 0 (as printed, i is unbound; we
/// read it as the outer round 0). Returns Ok if every process ends with every x_r exactly
/// once.
pub fn census(p: usize, fixed: bool) -> Result<(), String> {
    let sk = Skips::new(p);
    let s = sk.skips();
    // s_acc[r][j]: how many times x_j is in S of process r.
    let mut acc = vec![vec![0u32; p]; p];
    for k in 0..sk.q() {
        let c = if fixed { k } else { 0 };
        let odd = s[c] + s[c] > s[c + 1];
        let mut received = vec![vec![0u32; p]; p];
        for (r, got) in received.iter_mut().enumerate() {
            let f = if odd { (r + s[k] - 1) % p } else { (r + s[k]) % p };
            got.clone_from(&acc[f]);
            if !odd {
                got[f] += 1; // O = x_f ⊕ S_f
            }
        }
        for (a, g) in acc.iter_mut().zip(received) {
            for (x, y) in a.iter_mut().zip(g) {
                *x += y;
            }
        }
    }
    for (r, a) in acc.iter_mut().enumerate() {
        a[r] += 1; // S ← x_r ⊕ S
        if let Some(j) = a.iter().position(|&c| c != 1) {
            return Err(format!("p = {p}: process {r} has x_{j} {} times", a[j]));
        }
    }
    Ok(())
}

/// The receive schedules of all processes with a non-default variant (errata tests).
#[cfg(test)]
pub(crate) fn all_recv_variant(sk: &Skips, v: Variant) -> Vec<i64> {
    let q = sk.q();
    let mut all = vec![0; sk.p() * q];
    for (r, row) in all.chunks_mut(q).enumerate() {
        sk.recv_into(r, row, v);
    }
    all
}
