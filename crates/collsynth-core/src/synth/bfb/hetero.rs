//! Heterogeneous BFB (direct-connect paper App. E.3, LP (14)):
//! option `hetero` = `1` / `true`. Every in-link (w, u) has a latency alpha_w (µs) and a
//! bandwidth B_w, and the (u, t) problem minimises a *time*:
//!
//! ```text
//! minimise U  s.t.  alpha_w + ((M/N) / B_w) sum_v x[v][w] <= U   (every in-link w of u)
//!                   sum_w x[v][w] = 1,  x >= 0
//! ```
//!
//! so the schedule depends on the size M (the request's `size`, 1 GiB by default). Step t
//! takes `max_u U_{u,t}`, the allgather `time_us = sum_t max_u U_{u,t}`.
//!
//! A link whose latency alone reaches U would set U even while carrying nothing; the paper
//! removes such links and re-solves. We compute the fixed point of that rule directly. With
//! `s = M / (N 1000)` (µs GB/s per shard: bytes over GB/s are ns) an in-link can carry
//! `cap_w(U) = max(0, U - alpha_w) B_w / s` shards in time U, and let U0 be the least U at which
//! these capacities carry every source (max-flow = m). Then U0 is what remove-and-re-solve
//! ends at: every link it removes has alpha_w >= U(A) >= U0 for the current link set A (fewer
//! links only raise the least feasible U), so the links with alpha_w < U0 are never removed,
//! and they alone carry the flow at U0; so the final U is U0, and the dropped links are exactly
//! the in-links with alpha_w >= U0 (they carry nothing: their capacity at U0 is 0).
//!
//! U0 is found exactly, as `solve.rs` finds LP (1)'s optimum, by Newton on the min cut. For a
//! set J of sources with senders F = f(J), `h_J(U) = sum_{w in F} cap_w(U)` is continuous,
//! convex, piecewise affine and increasing (strictly once U > min alpha), and the flow saturates
//! every source iff `h_J(U) >= |J|` for every J (max-flow min-cut), so
//! `U0 = max_J h_J^{-1}(|J|)`. Start at J = all sources; at each U run max-flow with integer
//! capacities (everything scaled by the common denominator); if it is short, its minimum cut's
//! J has `h_J(U) < |J|`, so `h_J^{-1}(|J|) > U`: move there. U only grows, always equals some
//! `h_J^{-1}(|J|) <= U0`, and there are finitely many J, so the loop ends, at U0. The inverse
//! is exact: sort F by latency; on the segment where the i lowest-latency links are active,
//! `h_J(U) = (i-th prefix) sum (U - alpha_w) B_w / s`, whose root
//! `U = (|J| s + sum alpha_w B_w) / sum B_w` (over the prefix) is the answer for the first i
//! where it does not pass the next latency (the paper's Newton formula with the active set).
//!
//! Latencies are `f64` in the topology model; each is taken as the exact rational value of its
//! shortest decimal text (`format!("{}")`, the number as written in a topology file, e.g.
//! 0.1 -> 1/10, not the binary double's 3602879701896397/36028797018963968), so results are
//! exact for decimal inputs. Rational arithmetic is i128 with overflow checks (a panic, never a
//! wrong answer); decimal latencies and sizes stay far inside it.
//!
//! Scope: plain BFB topologies (allgather, reduce-scatter on the transpose, allreduce). Not with
//! `chunks` (the rounding bound of App. E.2 is for LP (1)), and not for the *mapped* allgather
//! of a `line^k(..)` / `degree*n(..)` expansion (Def 1/2 map the base's schedule, which is not
//! latency-aware): both are `BadInput`.

use super::plan::{plan_full, BfbPlan};
use super::solve::{Network, Solution, Subproblem};
use super::{allgather_with, allreduce_with, reduce_scatter_with};
use crate::error::{CollsynthError, Result};
use crate::flow::Cap;
use crate::ir::Schedule;
use crate::rational::{parse_exact, Rat};
use crate::synth::Request;
use crate::topology::Topology;
use num_integer::Integer;
use num_traits::Zero;

/// The `hetero` option: `Some(M)` (bytes; the request's size, default 1 GiB) when on.
/// Values as for a flag: `1` / `true` / `yes` on, `0` / `false` / `no` off.
pub fn hetero_option(req: &Request) -> Result<Option<Rat>> {
    let on = match req.options.get("hetero").map(|v| v.trim().to_ascii_lowercase()) {
        None => false,
        Some(v) if ["1", "true", "yes"].contains(&v.as_str()) => true,
        Some(v) if ["0", "false", "no"].contains(&v.as_str()) => false,
        Some(v) => return Err(CollsynthError::bad(format!("--hetero: '{v}' is not one of 1, true, 0, false"))),
    };
    if !on {
        return Ok(None);
    }
    let m = req.size.unwrap_or_else(|| Rat::from_integer(1 << 30));
    if m <= Rat::zero() {
        return Err(CollsynthError::bad("--hetero needs a positive --size"));
    }
    Ok(Some(m))
}

/// A link latency (µs, `f64`) as the exact value of its shortest decimal text.
pub fn latency_rat(lat: f64) -> Result<Rat> {
    parse_exact(&format!("{lat}"))
        .map_err(|e| CollsynthError::bad(format!("bfb --hetero: latency {lat} us has no usable exact value: {e}")))
}

/// The heterogeneous plan of `topo` for size `m` bytes.
pub fn plan(topo: &Topology, m: Rat) -> Result<BfbPlan> {
    plan_full(topo, None, Some(m))
}

/// The latency-aware allgather for size `m` bytes (plain BFB topologies: no mapping).
pub fn allgather(topo: &Topology, m: Rat) -> Result<Schedule> {
    allgather_with(topo, None, Some(m))
}

/// The latency-aware reduce-scatter (the transpose's allgather, reversed).
pub fn reduce_scatter(topo: &Topology, m: Rat) -> Result<Schedule> {
    reduce_scatter_with(topo, None, Some(m))
}

/// The latency-aware allreduce: both halves, `time_us` their sum.
pub fn allreduce(topo: &Topology, m: Rat) -> Result<Schedule> {
    allreduce_with(topo, None, Some(m))
}

/// Solve one (u, t) problem: `p.caps` are the in-links' integer capacities c_w = B_w sigma,
/// `alpha` their latencies (µs) and `k = sigma s` (so `cap_w(U) = (U - alpha_w) c_w / k`).
/// Returns U0 (µs) as `optimum` and an optimal flow in units of 1 / `unit` shard.
pub fn solve(p: &Subproblem, alpha: &[Rat], k: Rat) -> Solution {
    let m: Cap = p.counts.iter().sum();
    if m == 0 {
        return Solution { optimum: Rat::zero(), unit: 1, flows: Vec::new(), rounds: 0 };
    }
    let classes = p.n_classes();
    let per_class: Vec<Vec<u32>> = (0..classes).map(|c| p.senders(c)).collect();
    let Network { flow: mut net, senders, arcs, starts } = Network::new(p);
    let inverse = |j: Cap, f: &[u32]| -> Rat {
        let mut f = f.to_vec();
        f.sort_by(|&a, &b| alpha[a as usize].cmp(&alpha[b as usize]).then(a.cmp(&b)));
        let (mut num, mut den) = (Rat::from_integer(j) * k, Rat::zero());
        for (i, &w) in f.iter().enumerate() {
            let c = Rat::from_integer(p.caps[w as usize]);
            num += alpha[w as usize] * c;
            den += c;
            let u = num / den;
            if f.get(i + 1).is_none_or(|&next| u <= alpha[next as usize]) {
                return u;
            }
        }
        unreachable!("the last segment is unbounded")
    };
    let mut u = inverse(m, &senders);
    let mut rounds = 0;
    loop {
        rounds += 1;
        // Capacities at U in shards, all scaled by their common denominator `unit`.
        let caps: Vec<Rat> = senders
            .iter()
            .map(|&w| ((u - alpha[w as usize]).max(Rat::zero())) * Rat::from_integer(p.caps[w as usize]) / k)
            .collect();
        let unit: Cap = caps.iter().fold(1, |l, c| l.lcm(c.denom()));
        let need = m * unit;
        for c in 0..classes {
            net.set_capacity(c, p.counts[c] * unit);
        }
        for (j, cap) in caps.iter().enumerate() {
            net.set_capacity(classes + j, (cap * Rat::from_integer(unit)).to_integer());
        }
        for &(e, _) in &arcs {
            net.set_capacity(e, need + 1);
        }
        if net.max_flow_limited(0, 1, need) == need {
            let flows = starts
                .windows(2)
                .map(|r| {
                    let mine = &arcs[r[0]..r[1]];
                    mine.iter().map(|&(e, j)| (senders[j], net.flow_on(e))).filter(|&(_, f)| f > 0).collect()
                })
                .collect();
            return Solution { optimum: u, unit, flows, rounds };
        }
        let side = net.min_cut_source_side(0);
        let in_j: Vec<usize> = (0..classes).filter(|&c| side[2 + c]).collect();
        let j: Cap = in_j.iter().map(|&c| p.counts[c]).sum();
        let mut f: Vec<u32> = in_j.iter().flat_map(|&c| per_class[c].iter().copied()).collect();
        f.sort_unstable();
        f.dedup();
        let next = inverse(j, &f);
        assert!(next > u, "a Newton step must increase U");
        u = next;
    }
}

/// `k = sigma M / (N 1000)`: see [`solve`] (`sigma` scales bandwidths to integer capacities).
pub(super) fn scale(sigma: Rat, m: Rat, n: usize) -> Rat {
    sigma * m / Rat::from_integer(n as i128 * 1000)
}
