//! The bottom-up search (notes 5.1-5.2): the candidates of (M, d) are the bases of that size
//! and degree plus every expansion of smaller candidates that lands there — `L(G)` from
//! (M/d, d), `G * m` from (M/m, d/m), `G^(□m)` from (M^(1/m), d/m) and products from pairs
//! of sizes multiplying to M and degrees adding to d — predicted by [`super::predict`] and
//! pruned to a Pareto frontier per (M, d). Bidirectional pools also hold appendix A.6's
//! conversion `bi(G)` of the unidirectional candidates of (M, d/2), measured rather than
//! predicted (see [`unions`]). Pools are cached process-wide: every size of a sweep reuses
//! the pools of its divisors.

use super::candidates::{bases, measure, product_ready_bases};
use super::predict;
use super::Candidate;
use crate::error::Result;
use crate::zoo::{self, Expr};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

type Key = (usize, usize, bool);

fn pools() -> &'static Mutex<HashMap<Key, Arc<Vec<Candidate>>>> {
    static POOLS: OnceLock<Mutex<HashMap<Key, Arc<Vec<Candidate>>>>> = OnceLock::new();
    POOLS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The pruned candidates with `n` nodes and degree `d` (symmetric ones only when
/// `bidirectional`, which excludes line graphs, never symmetric, but admits their
/// conversions `bi(..)`). Guarantees: no member is dominated, in (T_L, tau) and
/// capabilities, by another.
pub fn pool(n: usize, d: usize, bidirectional: bool) -> Result<Arc<Vec<Candidate>>> {
    let key = (n, d, bidirectional);
    if let Some(p) = pools().lock().expect("find pools").get(&key) {
        return Ok(p.clone());
    }
    let mut all = bases(n, d, bidirectional)?;
    if bidirectional {
        all.extend(unions(n, d)?);
    } else {
        all.extend(lines(n, d)?);
    }
    all.extend(degree_expansions(n, d, bidirectional)?);
    all.extend(powers(n, d, bidirectional)?);
    all.extend(products(n, d, bidirectional)?);
    let pruned = Arc::new(pareto(all, true));
    pools().lock().expect("find pools").insert(key, pruned.clone());
    Ok(pruned)
}

/// L(G) for every simple G of (n/d, d).
fn lines(n: usize, d: usize) -> Result<Vec<Candidate>> {
    if d < 2 || !n.is_multiple_of(d) || n / d < 2 {
        return Ok(Vec::new());
    }
    Ok(pool(n / d, d, false)?.iter().filter_map(predict::line).collect())
}

/// Appendix A.6 (notes 1.9): `bi(G)` = G ∪ G^T for every unidirectional (not symmetric) G of
/// (n, d/2), so that line graphs and the other directed constructions reach bidirectional
/// frontiers. Each is built and measured by BFB here, not predicted: A.6 only promises G's
/// (T_L, tau) for its split schedule (half of every shard on G, half on G^T), and BFB on the
/// union is a different schedule that can trade one for the other (`bi(dcirculant:6:1,2,3,4)`
/// gets T_L 1 but tau 4/3 where the base has 2 and 5/6; see the zoo's expand tests), so G's
/// values as a prediction could prune better candidates before the frontier re-measures.
/// d/2 = 1 is skipped: the only unidirectional degree-1 candidate is `ring:n`, whose union
/// is the base `biring:n` already in the pool.
fn unions(n: usize, d: usize) -> Result<Vec<Candidate>> {
    if d < 4 || !d.is_multiple_of(2) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for c in pool(n, d / 2, false)?.iter().filter(|c| !c.symmetric) {
        let expr = Expr::Bi(Box::new(c.expr.clone()));
        let topo = zoo::from_spec(&expr.to_string())?;
        out.push(measure(expr, &topo, d)?);
    }
    Ok(out)
}

/// G * m for every m >= 2 dividing both n and d.
fn degree_expansions(n: usize, d: usize, bidirectional: bool) -> Result<Vec<Candidate>> {
    let mut out = Vec::new();
    for m in (2..=d).filter(|m| d.is_multiple_of(*m) && n.is_multiple_of(*m) && n / m >= 2) {
        out.extend(pool(n / m, d / m, bidirectional)?.iter().filter_map(|c| predict::degree(c, m)));
    }
    Ok(out)
}

/// G^(□m) for every m >= 2 dividing d with n an m-th power.
fn powers(n: usize, d: usize, bidirectional: bool) -> Result<Vec<Candidate>> {
    let mut out = Vec::new();
    for m in (2..=d).filter(|m| d.is_multiple_of(*m)) {
        if let Some(r) = exact_root(n, m) {
            out.extend(pool(r, d / m, bidirectional)?.iter().filter_map(|c| predict::power(c, m)));
        }
    }
    Ok(out)
}

/// r with r^m = n, r >= 2.
fn exact_root(n: usize, m: usize) -> Option<usize> {
    let guess = (n as f64).powf(1.0 / m as f64).round() as usize;
    (guess.saturating_sub(1)..=guess + 1).find(|&r| r >= 2 && r.checked_pow(m as u32) == Some(n))
}

/// A x B over sizes n1 <= n2 with n1 n2 = n and degrees adding to d, each factor the
/// lowest-diameter bandwidth-optimal simple BFB member of its pool (Thm 13 makes every such
/// product bandwidth-optimal with T_L = D1 + D2, so only the diameter matters).
fn products(n: usize, d: usize, bidirectional: bool) -> Result<Vec<Candidate>> {
    let mut out = Vec::new();
    for n1 in (2..).take_while(|x| x * x <= n).filter(|x| n.is_multiple_of(*x)) {
        let n2 = n / n1;
        for d1 in 1..d {
            let (Some(a), Some(b)) = (best_factor(n1, d1, bidirectional)?, best_factor(n2, d - d1, bidirectional)?)
            else {
                continue;
            };
            out.extend(predict::product(&[&a, &b]));
        }
    }
    Ok(out)
}

fn factors() -> &'static Mutex<HashMap<Key, Option<Candidate>>> {
    static FACTORS: OnceLock<Mutex<HashMap<Key, Option<Candidate>>>> = OnceLock::new();
    FACTORS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The product-ready member ([`Candidate::product_ready`]) of `pool(n, d, bidirectional)` of
/// lowest diameter, ties to the shortest expression (cached, like pools).
///
/// Computed without that pool, from the only candidates that can be product-ready: a
/// candidate that dominates a product-ready one is itself product-ready (as simple, as exact,
/// tau at most (N-1)/N, which no BFB tau goes below), so pruning never loses the best, and
/// the pool's order makes it the first by (diameter, girth unknown, expression length) in
/// the order the pool is assembled. Line graphs (tau(G) + 1/N >= 1) and degree expansions
/// (not exact) never are; a power is (Thm 13) only of a product-ready base, of which the
/// least diameter gives the least; products always are. So: the product-ready bases (only
/// simple ones are measured), unions, powers of the best factor of each root, products.
/// Products ask this for every divisor and every degree below d, mostly sizes no target
/// needs a pool of.
pub fn best_factor(n: usize, d: usize, bidirectional: bool) -> Result<Option<Candidate>> {
    let key = (n, d, bidirectional);
    if let Some(f) = factors().lock().expect("find factors").get(&key) {
        return Ok(f.clone());
    }
    let mut ready = product_ready_bases(n, d, bidirectional)?;
    if bidirectional {
        ready.extend(unions(n, d)?.into_iter().filter(Candidate::product_ready));
    }
    for m in (2..=d).filter(|m| d.is_multiple_of(*m)) {
        if let Some(r) = exact_root(n, m) {
            ready.extend(best_factor(r, d / m, bidirectional)?.and_then(|c| predict::power(&c, m)));
        }
    }
    ready.extend(products(n, d, bidirectional)?);
    let best = ready
        .into_iter()
        .filter(Candidate::product_ready)
        .min_by_key(|c| (c.diameter, c.girth.is_none(), c.expr.to_string().len()));
    factors().lock().expect("find factors").insert(key, best.clone());
    Ok(best)
}

/// The candidates no other one dominates, sorted by T_L then tau. With `capabilities`, a
/// candidate only dominates one it can replace in every later expansion (at least as simple,
/// exact and with known girth); otherwise on (T_L, tau) alone. Ties keep the exact, then the
/// lower-diameter, then the shorter expression, then the first given.
pub fn pareto(mut all: Vec<Candidate>, capabilities: bool) -> Vec<Candidate> {
    // Stable: among equals the earlier (bases first, in their preference order) stays.
    all.sort_by_cached_key(|c| {
        (c.steps, c.tau, !c.exact, !c.simple, c.girth.is_none(), c.diameter, c.expr.to_string().len())
    });
    let mut kept: Vec<Candidate> = Vec::new();
    for c in all {
        if !kept.iter().any(|k| dominates(k, &c, capabilities)) {
            kept.push(c);
        }
    }
    kept
}

fn dominates(a: &Candidate, b: &Candidate, capabilities: bool) -> bool {
    let better = a.steps <= b.steps && a.tau <= b.tau;
    if !capabilities {
        return better;
    }
    better
        && (a.simple || !b.simple)
        && (a.exact || !b.exact)
        && (a.girth.is_some() || b.girth.is_none())
        && a.diameter <= b.diameter
}
