//! The bottom-up search (our reading of §5.4): the candidates of (M, d) are the bases of that size
//! and degree plus every expansion of smaller candidates that lands there — `L(G)` from
//! (M/d, d), `G * m` from (M/m, d/m), `G^(□m)` from (M^(1/m), d/m) and products from pairs
//! of sizes multiplying to M and degrees adding to d — predicted by [`super::predict`] and
//! pruned to a Pareto frontier per (M, d). Bidirectional pools also hold appendix A.6's
//! conversion `bi(G)` of the unidirectional candidates of (M, d/2), measured rather than
//! predicted (see `unions`). Pools are cached process-wide: every size of a sweep reuses
//! the pools of its divisors.

use super::candidates::{bases, measure, ready_base, specs};
use super::predict;
use super::{Candidate, FactorKey};
use crate::error::Result;
use crate::synth::bfb::bi::prefer_split;
use crate::zoo::transpose_iso::transpose_isomorphism;
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
    // A product (simple, exact, bandwidth-optimal, T_L = diameter) is strictly dominated by a
    // candidate with those capabilities, a known girth and a smaller T_L and diameter.
    let dominator = |c: &Candidate| c.simple && c.exact && c.girth.is_some() && c.tau <= predict::optimal_tau(n);
    let bound = all.iter().filter(|c| dominator(c)).map(|c| c.steps.max(c.diameter)).min();
    all.extend(products(n, d, bidirectional, bound, dominator)?);
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

/// Appendix A.6: `bi(G)` = G ∪ G^T for every unidirectional (not symmetric) G of
/// (n, d/2), so that line graphs and the other directed constructions reach bidirectional
/// frontiers. Each is valued as `synth --algorithm bfb` schedules it (`--bi-method auto`, see
/// [`with_split`]): BFB on the union, built and measured here, which can trade T_L for tau
/// (`bi(dcirculant:6:1,2,3,4)` gets T_L 1 but tau 4/3 where the base has 2 and 5/6; see the
/// zoo's expand tests), or A.6's split schedule with G's own values. d/2 = 1 is skipped: the
/// only unidirectional degree-1 candidate is `ring:n`, whose union is the base `biring:n`
/// already in the pool.
fn unions(n: usize, d: usize) -> Result<Vec<Candidate>> {
    if d < 4 || !d.is_multiple_of(2) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for c in pool(n, d / 2, false)?.iter().filter(|c| !c.symmetric) {
        let expr = Expr::Bi(Box::new(c.expr.clone()));
        let topo = zoo::from_spec(&expr.to_string())?;
        out.push(with_split(measure(expr, &topo, d)?, c)?);
    }
    Ok(out)
}

/// `union` (BFB measured on bi(G)) with the values `synth`'s `--bi-method auto` gets: A.6's
/// split schedule (half of every shard on G, half on its image under an isomorphism
/// G -> G^T) has exactly G's T_L and tau (tested in `synth::bfb::bi`), and auto keeps it
/// when [`prefer_split`] says so. Only for a G whose values are exact (a degree expansion's
/// prediction is not) and that has such an isomorphism (the zoo's search, which the cheap
/// comparison spares for most candidates).
fn with_split(union: Candidate, g: &Candidate) -> Result<Candidate> {
    if !g.exact || !prefer_split((g.steps, g.tau), (union.steps, union.tau)) {
        return Ok(union);
    }
    let topo = zoo::from_spec(&g.expr.to_string())?;
    if transpose_isomorphism(&topo, Some(&g.expr)).is_err() {
        return Ok(union);
    }
    Ok(Candidate { steps: g.steps, tau: g.tau, ..union })
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
/// product bandwidth-optimal with T_L = sum of diameters, so only the diameter matters).
///
/// Pruned without changing the result: a split whose Moore floor (the least diameter any
/// graph of the factors' sizes and degrees can have, summed) exceeds `bound`, or the diameter
/// of a product found earlier that satisfies `tightens`, is not looked at, since the caller
/// keeps nothing of larger diameter than those. Splits are visited by ascending floor, so
/// most of the factor searches of a sweep (every divisor, every degree below d) never run;
/// the products come back in the order of the full enumeration.
fn products(
    n: usize,
    d: usize,
    bidirectional: bool,
    bound: Option<usize>,
    tightens: impl Fn(&Candidate) -> bool,
) -> Result<Vec<Candidate>> {
    let mut splits = Vec::new();
    for n1 in (2..).take_while(|x| x * x <= n).filter(|x| n.is_multiple_of(*x)) {
        for d1 in 1..d {
            let (n2, d2) = (n / n1, d - d1);
            let floor = diameter_floor(n1, d1, bidirectional).saturating_add(diameter_floor(n2, d2, bidirectional));
            splits.push((floor, splits.len(), n1, d1));
        }
    }
    splits.sort_unstable();
    let mut bound = bound.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for (floor, order, n1, d1) in splits {
        if floor > bound {
            break;
        }
        let (Some(a), Some(b)) = (best_factor(n1, d1, bidirectional)?, best_factor(n / n1, d - d1, bidirectional)?)
        else {
            continue;
        };
        if let Some(p) = predict::product(&[&a, &b]) {
            if tightens(&p) {
                bound = bound.min(p.diameter);
            }
            out.push((order, p));
        }
    }
    out.sort_unstable_by_key(|(order, _)| *order);
    Ok(out.into_iter().map(|(_, p)| p).collect())
}

/// The Moore bound on the diameter of an `n`-node graph of degree `d`: directed out-degree d,
/// or (`bidirectional`) undirected degree d, 1 + d + d(d - 1) + .. nodes within each radius.
/// `usize::MAX` where no such graph exists (an undirected degree-1 graph has 2 nodes).
fn diameter_floor(n: usize, d: usize, bidirectional: bool) -> usize {
    if !bidirectional || n <= 2 {
        return crate::bound::latency::moore_steps(n, d);
    }
    if d <= 1 {
        return usize::MAX;
    }
    let (mut reached, mut layer, mut k) = (1usize, d, 0usize);
    while reached < n {
        reached = reached.saturating_add(layer);
        layer = layer.saturating_mul(d - 1);
        k += 1;
    }
    k
}

fn factors() -> &'static Mutex<HashMap<Key, Option<Candidate>>> {
    static FACTORS: OnceLock<Mutex<HashMap<Key, Option<Candidate>>>> = OnceLock::new();
    FACTORS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The product-ready member ([`Candidate::product_ready`]) of `pool(n, d, bidirectional)` of
/// least [`Candidate::factor_key`] (lowest diameter first), the first of the pool's order on
/// ties (cached, like pools).
///
/// Computed without that pool, from the only candidates that can be product-ready: a
/// candidate that dominates a product-ready one is itself product-ready (as simple, as exact,
/// tau at most (N-1)/N, which no BFB tau goes below), so pruning never loses the best. Line
/// graphs (tau(G) + 1/N >= 1) and degree expansions (not exact) never are; a power is (Thm
/// 13) only of a product-ready base, of which the least diameter gives the least; products
/// always are. So: the product-ready bases, unions, powers of the best factor of each root,
/// products. Products ask this for every divisor and every degree below d, mostly sizes no
/// target needs a pool of, so the work is cut where the answer cannot change: circulants,
/// whose key the generator search already knows, are measured in key order only until one
/// is product-ready or the best so far ranks before the next; then that best bounds the
/// products' search (see `products`).
pub fn best_factor(n: usize, d: usize, bidirectional: bool) -> Result<Option<Candidate>> {
    let key = (n, d, bidirectional);
    if let Some(f) = factors().lock().expect("find factors").get(&key) {
        return Ok(f.clone());
    }
    // Positions in the pool's order (bases, unions, powers, products) break key ties.
    let mut best = Best::default();
    let specs = specs(n, d, bidirectional);
    for (at, spec) in specs.iter().enumerate().filter(|(_, s)| s.key.is_none()) {
        best.offer(at, ready_base(spec, n, d, bidirectional)?);
    }
    let mut at = specs.len();
    if bidirectional {
        for c in unions(n, d)? {
            best.offer(at, Some(c));
            at += 1;
        }
    }
    for m in (2..=d).filter(|m| d.is_multiple_of(*m)) {
        if let Some(r) = exact_root(n, m) {
            best.offer(at, best_factor(r, d / m, bidirectional)?.and_then(|c| predict::power(&c, m)));
            at += 1;
        }
    }
    let mut keyed: Vec<(FactorKey, usize)> =
        specs.iter().enumerate().filter_map(|(at, s)| s.key.map(|k| (k, at))).collect();
    keyed.sort_unstable();
    for (k, i) in keyed {
        if !best.beaten_by(k, i) {
            break;
        }
        let c = ready_base(&specs[i], n, d, bidirectional)?;
        debug_assert!(c.as_ref().is_none_or(|c| c.factor_key() == k), "{}: key {k:?}", specs[i].text);
        if c.is_some() {
            best.offer(i, c);
            break;
        }
    }
    let bound = best.found.as_ref().map(|(_, _, c)| c.diameter);
    for c in products(n, d, bidirectional, bound, |_| true)? {
        best.offer(at, Some(c));
        at += 1;
    }
    let best = best.found.map(|(_, _, c)| c);
    factors().lock().expect("find factors").insert(key, best.clone());
    Ok(best)
}

/// The least product-ready candidate offered, by (key, position).
#[derive(Default)]
struct Best {
    found: Option<(FactorKey, usize, Candidate)>,
}

impl Best {
    fn beaten_by(&self, key: FactorKey, at: usize) -> bool {
        self.found.as_ref().is_none_or(|(k, a, _)| (key, at) < (*k, *a))
    }

    fn offer(&mut self, at: usize, c: Option<Candidate>) {
        if let Some(c) = c.filter(Candidate::product_ready) {
            let key = c.factor_key();
            if self.beaten_by(key, at) {
                self.found = Some((key, at, c));
            }
        }
    }
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

#[cfg(test)]
mod tests;
