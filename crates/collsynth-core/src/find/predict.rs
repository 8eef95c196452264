//! Closed-form predictors of the expansions (Thms 7-13 of the direct-connect paper): the (T_L, tau) of an expanded
//! candidate from its parts, without building anything. Each predictor says whether its value
//! is exactly what BFB gets on the built topology (`exact`) or the paper's expansion schedule /
//! an unproven refinement, which [`super::frontier`] re-measures with `bfb::plan`.

use super::Candidate;
use crate::rational::Rat;
use crate::zoo::Expr;

/// `line(E)`, merged with an inner `line^k(E)` so the text stays `line^{k+1}(E)`.
fn line_expr(e: &Expr) -> Expr {
    match e {
        Expr::Line(k, inner) => Expr::Line(k + 1, inner.clone()),
        e => Expr::Line(1, Box::new(e.clone())),
    }
}

/// (N - 1) / N: the bandwidth-optimal tau of N nodes.
pub fn optimal_tau(n: usize) -> Rat {
    Rat::new(n as i128 - 1, n as i128)
}

/// The line digraph L(G) (Thm 7, Thm 10): N' = dN, T_L + 1, tau + 1/N, diameter + 1. Needs a
/// simple G (one link per arc, so L(G) really has dN nodes) of degree >= 2 (a directed cycle
/// is its own line graph). Exact (Cor 10.1) when G's values are BFB's; otherwise Thm 7's bound.
pub fn line(c: &Candidate) -> Option<Candidate> {
    if !c.simple || c.degree < 2 {
        return None;
    }
    Some(Candidate {
        expr: line_expr(&c.expr),
        n: c.n.checked_mul(c.degree)?,
        degree: c.degree,
        steps: c.steps + 1,
        tau: c.tau + Rat::new(1, c.n as i128),
        diameter: c.diameter + 1,
        simple: true,
        exact: c.exact,
        symmetric: false,
        girth: None,
    })
}

/// The degree expansion G * m of a simple bandwidth-optimal G with known girth. Predicted with
/// the "BFB augmented" refinement of Table 5: D(G*m) = max(D(G), girth), still
/// bandwidth-optimal — observed, not proven, hence never `exact`.
pub fn degree(c: &Candidate, m: usize) -> Option<Candidate> {
    let girth = c.girth?;
    if !c.simple || !c.exact || !c.bw_optimal() || m < 2 {
        return None;
    }
    let n = c.n.checked_mul(m)?;
    let diameter = c.diameter.max(girth);
    Some(Candidate {
        expr: Expr::Degree(m, Box::new(c.expr.clone())),
        n,
        degree: c.degree * m,
        steps: diameter,
        tau: optimal_tau(n),
        diameter,
        simple: true,
        exact: false,
        symmetric: c.symmetric,
        girth: Some(girth),
    })
}

/// The Cartesian power G^(□m) (Thm 12 / Thm 13): N^m nodes, degree m d, diameter m D. A simple
/// bandwidth-optimal BFB base gives BFB's exact values (Thm 13: T_L = m D, tau optimal);
/// otherwise Thm 12's expansion schedule (T_L = m T_L(G), tau scaled), not exact.
pub fn power(c: &Candidate, m: usize) -> Option<Candidate> {
    let n = c.n.checked_pow(m as u32)?;
    let thm13 = c.simple && c.exact && c.bw_optimal();
    let (steps, tau) = if thm13 {
        (m * c.diameter, optimal_tau(n))
    } else {
        let (nb, nn) = (c.n as i128, n as i128);
        (m * c.steps, c.tau * Rat::new(nb, nb - 1) * Rat::new(nn - 1, nn))
    };
    Some(Candidate {
        expr: Expr::Power(m, Box::new(c.expr.clone())),
        n,
        degree: c.degree * m,
        steps,
        tau,
        diameter: m * c.diameter,
        simple: c.simple,
        exact: thm13,
        symmetric: c.symmetric,
        girth: c.girth,
    })
}

/// The Cartesian product of distinct factors (Thm 13): only for simple bandwidth-optimal BFB
/// factors, where BFB on the product is exactly bandwidth-optimal with T_L = sum of diameters.
/// Nested products are flattened so the expression reads `product(A; B; C)`.
pub fn product(factors: &[&Candidate]) -> Option<Candidate> {
    if factors.len() < 2 || factors.iter().any(|c| !(c.simple && c.exact && c.bw_optimal())) {
        return None;
    }
    let mut n: usize = 1;
    for c in factors {
        n = n.checked_mul(c.n)?;
    }
    let mut parts = Vec::new();
    for c in factors {
        match &c.expr {
            Expr::Product(inner) => parts.extend(inner.iter().cloned()),
            e => parts.push(e.clone()),
        }
    }
    let diameter: usize = factors.iter().map(|c| c.diameter).sum();
    // The shortest cycle through (u1, u2) is the shorter of the factors' cycles.
    let girth = factors.iter().map(|c| c.girth).try_fold(usize::MAX, |g, x| x.map(|x| g.min(x)));
    Some(Candidate {
        expr: Expr::Product(parts),
        n,
        degree: factors.iter().map(|c| c.degree).sum(),
        steps: diameter,
        tau: optimal_tau(n),
        diameter,
        simple: true,
        exact: true,
        symmetric: factors.iter().all(|c| c.symmetric),
        girth,
    })
}
