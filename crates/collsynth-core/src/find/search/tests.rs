use super::*;
use crate::find::candidates::specs;

/// Moore floors by hand: Petersen (10, 3) and the Kautz sizes meet them.
#[test]
fn diameter_floors() {
    assert_eq!(diameter_floor(10, 3, true), 2);
    assert_eq!(diameter_floor(11, 3, true), 3);
    assert_eq!(diameter_floor(13, 3, false), 2);
    assert_eq!(diameter_floor(14, 3, false), 3);
    assert_eq!(diameter_floor(5, 2, true), 2);
    assert_eq!(diameter_floor(6, 2, true), 3);
    assert_eq!(diameter_floor(2, 1, true), 1);
    assert_eq!(diameter_floor(3, 1, true), usize::MAX);
    assert_eq!(diameter_floor(7, 1, false), 6);
    // Every measured base is at or above its floor.
    for (n, d) in [(12, 4), (16, 4), (30, 6), (64, 6), (100, 8)] {
        for bidi in [false, true] {
            for c in bases(n, d, bidi).unwrap() {
                assert!(c.diameter >= diameter_floor(n, d, bidi), "{}", c.expr);
            }
        }
    }
}

/// The pruned products change no pool: adding every product of every split back and
/// pruning again gives the same pool.
#[test]
fn pruned_products_lose_nothing() {
    for (n, d) in [(12, 4), (36, 4), (64, 6), (60, 8), (96, 6), (128, 8), (144, 16)] {
        for bidi in [false, true] {
            let kept = pool(n, d, bidi).unwrap();
            let mut all = kept.to_vec();
            all.extend(products(n, d, bidi, None, |_| false).unwrap());
            assert_eq!(pareto(all, true), *kept, "({n}, {d}, {bidi})");
        }
    }
}

/// The lazy best factor equals the first least key over everything measured eagerly, in
/// the pool's order (bases, unions, powers, unpruned products).
#[test]
fn best_factor_equals_the_eager_minimum() {
    for n in [6, 8, 9, 12, 16, 20, 25, 27, 30, 36, 49, 64, 81, 100] {
        for d in 1..=6 {
            for bidi in [false, true] {
                let mut ready: Vec<Candidate> = Vec::new();
                for s in specs(n, d, bidi) {
                    if let Some(c) = crate::find::candidates::evaluate(&s.text, d).unwrap() {
                        if c.n == n && (c.symmetric || !bidi) {
                            ready.push(c);
                        }
                    }
                }
                if bidi {
                    ready.extend(unions(n, d).unwrap());
                }
                for m in (2..=d).filter(|m| d.is_multiple_of(*m)) {
                    if let Some(r) = exact_root(n, m) {
                        ready.extend(best_factor(r, d / m, bidi).unwrap().and_then(|c| predict::power(&c, m)));
                    }
                }
                ready.extend(products(n, d, bidi, None, |_| false).unwrap());
                let eager = ready.into_iter().filter(Candidate::product_ready).min_by_key(Candidate::factor_key);
                assert_eq!(best_factor(n, d, bidi).unwrap(), eager, "({n}, {d}, {bidi})");
            }
        }
    }
}
