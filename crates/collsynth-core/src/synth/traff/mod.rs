//! `circulant`: Träff's round-optimal schedules on the circulant graph with skips
//! 1, 2, ..., ceil(p/2) (Träff, *(Poly)Logarithmic Time Construction of Round-optimal n-Block
//! Broadcast Schedules for Broadcast and irregular Allgather in MPI*; user docs and the errata
//! to its pseudo-code: `docs/circulant.md`).
//!
//! * [`schedule`]: Algorithms 1–5, computed per process in O(log³ p) without communication.
//! * [`check`]: the exhaustive round-by-round checker (`collsynth circulant check`).
//! * [`emit`]: the IR: broadcast (n blocks, any root, Algorithm 6), reduce (its reversal),
//!   allgather (Algorithm 7, q rounds), allgatherv (Algorithm 9, n blocks per buffer),
//!   reduce-scatter (reversal of Algorithm 7) and allreduce: reduce-scatter then allgather,
//!   or the census (Algorithm 8, with scratch slots for its partial sum and receive buffer).
//!
//! Options: `blocks` = n (broadcast, reduce, allgatherv; for allgather, reduce-scatter and
//! allreduce it switches from Algorithm 7 to Algorithm 9 with equal shards), `counts` =
//! bytes per rank for allgatherv, `variant` = `census` or `rs-ag` for allreduce (default:
//! whichever the alpha-beta model finds faster for the request's size). Without `blocks`, n is Theorem 2's optimum for
//! [`DEFAULT_SIZE`] bytes with the alpha and beta of the topology's links (see
//! [`default_blocks`]), capped so the schedule stays small.

pub mod check;
pub mod emit;
pub mod schedule;
#[cfg(test)]
mod tests;

pub use check::{block_counts, census, check_all, check_p, CheckSummary};
pub use schedule::{block_in_round, empty_rounds, optimal_blocks, raw_block, rounds, Skips, MAX_P};

use super::{Algorithm, Extras, Request};
use crate::error::{CollsynthError, Result};
use crate::ir::transform::{compose, reverse, transpose};
use crate::ir::{Collective, Router, Schedule};
use crate::rational::{to_f64, Rat};
use crate::topology::Topology;

pub const CIRCULANT: Algorithm = Algorithm {
    name: "circulant",
    help: "Träff's round-optimal circulant schedules: n-block broadcast in n-1+ceil(log2 p) rounds, \
           allgather(v), reduce by reversal, allreduce by census or reduce-scatter + allgather \
           (one-ported; traff:p or fully connected)",
    collectives: &[
        Collective::Broadcast,
        Collective::Reduce,
        Collective::Allgather,
        Collective::Allgatherv,
        Collective::ReduceScatter,
        Collective::Allreduce,
    ],
    options: &["blocks", "counts", "variant"],
    synthesize,
    extras: Extras { sized: true, ..Extras::NONE },
};

pub(crate) const ALGORITHMS: &[&Algorithm] = &[&CIRCULANT];

/// The size n is chosen for when neither `blocks` nor the request's size is given (1 GiB).
pub const DEFAULT_SIZE: f64 = (1u64 << 30) as f64;

/// The default n is capped at this many blocks ...
pub const DEFAULT_MAX_BLOCKS: usize = 256;
/// ... and so that the schedule has at most about this many transfers.
pub const DEFAULT_MAX_TRANSFERS: usize = 1 << 21;
/// An explicit `blocks` may not make a schedule larger than this many transfers.
pub const MAX_TRANSFERS: usize = 1 << 24;

/// One process's schedule, what the MPI runtime needs (`circulant_schedule` in Python).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessSchedule {
    pub q: usize,
    pub skips: Vec<usize>,
    /// Algorithm 4 for the virtual rank (rank - root) mod p.
    pub recv_blocks: Vec<i64>,
    /// Algorithm 5 for the virtual rank.
    pub send_blocks: Vec<i64>,
    /// Real ranks: (rank - skips\[k\]) mod p and (rank + skips\[k\]) mod p.
    pub recv_from: Vec<usize>,
    pub send_to: Vec<usize>,
}

/// The schedule of real `rank` for a broadcast from `root` among p processes (virtual
/// renumbering v = (rank - root) mod p; partners are shift-invariant). p = 1: q = 0.
pub fn process_schedule(p: usize, rank: usize, root: usize) -> Result<ProcessSchedule> {
    if p == 0 || p > MAX_P {
        return Err(CollsynthError::bad(format!("p must be in 1..={MAX_P}, got {p}")));
    }
    if rank >= p || root >= p {
        return Err(CollsynthError::bad(format!("rank {rank} and root {root} must be below p = {p}")));
    }
    let sk = Skips::new(p);
    let v = (rank + p - root) % p;
    let sks = &sk.skips()[..sk.q()];
    Ok(ProcessSchedule {
        q: sk.q(),
        skips: sk.skips().to_vec(),
        recv_blocks: sk.recv_schedule(v),
        send_blocks: sk.send_schedule(v),
        recv_from: sks.iter().map(|&s| (rank + p - s) % p).collect(),
        send_to: sks.iter().map(|&s| (rank + s) % p).collect(),
    })
}

/// Per-round latency alpha (us) and time per byte beta (us/B) of the topology as the
/// schedules use it: the worst route from rank 0 to its q partners rank skips\[k\] (sum of
/// link latencies; slowest link, GB/s = 10^3 B/us).
pub fn topology_alpha_beta(topo: &Topology) -> Result<(f64, f64)> {
    let p = topo.n_ranks();
    let mut router = Router::new(topo);
    let (mut alpha, mut beta) = (0.0f64, 0.0f64);
    let sk = Skips::new(p.max(1));
    for &s in &sk.skips()[..sk.q()] {
        let route = router.route(0, s % p)?;
        alpha = alpha.max(route.iter().map(|&l| topo.links[l].latency).sum());
        for &l in &route {
            beta = beta.max(1.0 / (to_f64(&topo.links[l].bandwidth) * 1e3));
        }
    }
    Ok((alpha, beta))
}

/// n when `blocks` is not given: Theorem 2's optimum ([`optimal_blocks`]) for
/// [`DEFAULT_SIZE`] with [`topology_alpha_beta`], capped at [`DEFAULT_MAX_BLOCKS`] and at
/// [`DEFAULT_MAX_TRANSFERS`] / (transfers per block).
pub fn default_blocks(topo: &Topology, roots: usize, size: Option<Rat>) -> Result<usize> {
    let p = topo.n_ranks();
    if p < 2 {
        return Ok(1);
    }
    let (alpha, beta) = topology_alpha_beta(topo)?;
    let m = size.map(|r| crate::rational::to_f64(&r)).unwrap_or(DEFAULT_SIZE);
    let n = optimal_blocks(p, m, alpha, beta);
    let per_block = roots * (p - 1);
    Ok(n.min(DEFAULT_MAX_BLOCKS).min((DEFAULT_MAX_TRANSFERS / per_block).max(1)).max(1))
}

fn blocks_option(req: &Request, topo: &Topology, roots: usize) -> Result<Option<usize>> {
    let Some(text) = req.options.get("blocks") else { return Ok(None) };
    let n: usize =
        text.trim().parse().map_err(|_| CollsynthError::bad(format!("--blocks: '{text}' is not a whole number")))?;
    if n == 0 {
        return Err(CollsynthError::bad("--blocks must be at least 1"));
    }
    let transfers = (n as u128) * (roots as u128) * (topo.n_ranks().saturating_sub(1) as u128);
    if transfers > MAX_TRANSFERS as u128 {
        return Err(CollsynthError::bad(format!(
            "--blocks {n}: the schedule would have about {transfers} transfers (at most {MAX_TRANSFERS})"
        )));
    }
    Ok(Some(n))
}

/// Shards of allgatherv from `counts` (bytes per rank, zeros allowed); equal if absent.
fn shards_option(req: &Request, p: usize) -> Result<Vec<Rat>> {
    let Some(text) = req.options.get("counts") else { return Ok(vec![Rat::new(1, p as i128); p]) };
    let counts = text
        .split(',')
        .map(|c| {
            c.trim()
                .parse::<u64>()
                .map_err(|_| CollsynthError::bad(format!("--counts: '{}' is not a whole number of bytes", c.trim())))
        })
        .collect::<Result<Vec<u64>>>()?;
    if counts.len() != p {
        return Err(CollsynthError::bad(format!("--counts: {} counts for {p} ranks", counts.len())));
    }
    let total: i128 = counts.iter().map(|&c| c as i128).sum();
    if total == 0 {
        return Err(CollsynthError::bad("--counts: all counts are 0"));
    }
    Ok(counts.iter().map(|&c| Rat::new(c as i128, total)).collect())
}

/// The two allreduces: Algorithm 8's census (q rounds of the whole buffer: latency-optimal)
/// and reduce-scatter + allgather (2q rounds of (p - 1)/p of it: bandwidth-optimal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Census,
    RsAg,
}

/// `--variant census|rs-ag`; `None` (not given) lets the alpha-beta model choose.
fn allreduce_variant(req: &Request, blocks: bool) -> Result<Option<Variant>> {
    let variant = match req.options.get("variant").map(|v| v.trim()) {
        None => None,
        Some("census") => Some(Variant::Census),
        Some("rs-ag") => Some(Variant::RsAg),
        Some(other) => {
            return Err(CollsynthError::bad(format!("--variant: '{other}' is not one of census, rs-ag")));
        }
    };
    match variant {
        Some(Variant::Census) if blocks => Err(CollsynthError::bad(
            "--blocks does not apply to the census allreduce (it sends the whole buffer every round)",
        )),
        // Blocks pipeline the reduce-scatter + allgather (Algorithm 9 with equal shards).
        None if blocks => Ok(Some(Variant::RsAg)),
        v => Ok(v),
    }
}

/// The schedule the alpha-beta model finds faster for `size` bytes (1 GiB if not given);
/// ties go to `a`. The choice and both estimates are recorded in the details.
fn faster(a: Schedule, b: Schedule, topo: &Topology, size: Option<Rat>) -> Result<Schedule> {
    let m = size.unwrap_or_else(|| Rat::from_integer(DEFAULT_SIZE as i128));
    let ta = crate::cost::alpha_beta(&a, topo, m, 1)?.total_us;
    let tb = crate::cost::alpha_beta(&b, topo, m, 1)?.total_us;
    let mut s = if tb < ta { b } else { a };
    s.provenance.details.set("variant_us", serde_json::json!({"rs-ag": ta, "census": tb}));
    Ok(s)
}

fn synthesize(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    let p = topo.n_ranks();
    if p > MAX_P {
        return Err(CollsynthError::bad(format!("circulant: at most {MAX_P} ranks")));
    }
    if req.options.contains_key("counts") && collective != Collective::Allgatherv {
        return Err(CollsynthError::bad("option --counts applies to allgatherv only"));
    }
    if req.options.contains_key("variant") && collective != Collective::Allreduce {
        return Err(CollsynthError::bad("option --variant applies to allreduce only (census or rs-ag)"));
    }
    let per_root = matches!(collective, Collective::Broadcast | Collective::Reduce);
    let roots = if per_root { 1 } else { p };
    let explicit = blocks_option(req, topo, roots)?;
    let n = match explicit {
        Some(n) => n,
        None if per_root || collective == Collective::Allgatherv => default_blocks(topo, roots, req.size)?,
        None => 0, // Algorithm 7: no blocks
    };
    let equal = || vec![Rat::new(1, p as i128); p];
    // Allgather on `t` (forward on the topology asked for, mirrored on its transpose).
    let allgather = |t: &Topology, forward: bool| match explicit {
        Some(n) => emit::allgatherv(t, Collective::Allgather, equal(), n, forward),
        None => emit::allgather(t, forward),
    };
    let mut s = match collective {
        Collective::Broadcast => emit::broadcast(topo, req.root, n, true)?,
        Collective::Reduce => {
            let t = transpose(topo);
            reverse(&emit::broadcast(&t, req.root, n, false)?, &t, topo)?
        }
        Collective::Allgather => allgather(topo, true)?,
        Collective::Allgatherv => emit::allgatherv(topo, collective, shards_option(req, p)?, n, true)?,
        Collective::ReduceScatter => {
            let t = transpose(topo);
            reverse(&allgather(&t, false)?, &t, topo)?
        }
        Collective::Allreduce => {
            let rs_ag = || -> Result<Schedule> {
                let t = transpose(topo);
                let rs = reverse(&allgather(&t, false)?, &t, topo)?;
                let mut ar = compose(&rs, &allgather(topo, true)?, Collective::Allreduce)?;
                ar.root = 0;
                Ok(ar)
            };
            match allreduce_variant(req, explicit.is_some())? {
                Some(Variant::Census) => emit::census(topo)?,
                Some(Variant::RsAg) => rs_ag()?,
                None => faster(rs_ag()?, emit::census(topo)?, topo, req.size)?,
            }
        }
    };
    if collective == Collective::Allreduce {
        let variant = if s.uses_scratch() { "census" } else { "rs-ag" };
        s.provenance.details.set("variant", variant);
    }
    let q = Skips::new(p.max(1)).q();
    if n > 0 {
        s.provenance.details.set("blocks", n);
    }
    let phase_rounds = if n > 0 { rounds(p, n) } else { q };
    s.provenance.details.set("rounds_per_phase", q);
    s.provenance.details.set("circulant_rounds", phase_rounds);
    Ok(s)
}
