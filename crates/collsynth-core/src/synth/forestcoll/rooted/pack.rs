//! Packing weighted spanning out-arborescences with given roots on a switch-free
//! capacitated multigraph (Edmonds' theorem with root sets, constructive, in batches).
//!
//! Input: nodes `0..n`, arcs with integer capacities, and `roots`: `(r, m_r)` asks for `m_r`
//! spanning arborescences rooted at `r` (one root may appear once). Let `K = Σ m_r`. By
//! Edmonds / Frank (arborescences with root sets), arc-disjoint arborescences exist iff
//! every non-empty `X ⊆ V` satisfies
//! `ρ(X) + Σ {m_j : batch j's vertex set R_j meets X} >= K`,
//! i.e. every `maxflow(s -> v) >= K` in the auxiliary network where a super-source `s`
//! feeds batch node `b_j` with `m_j` and `b_j` feeds every vertex of `R_j` (infinite).
//!
//! Lovász's constructive proof grows one arborescence at a time; we grow *batches* of
//! `m` identical arborescences (ForestColl Alg. 5): extending batch `i` by arc `(x, y)`
//! (`x ∈ R_i`, `y ∉ R_i`) `μ` times splits it into `μ` copies with `y` and `m_i - μ`
//! without, and lowers the arc's residual capacity by `μ`. The largest admissible `μ` is
//! `min(m_i, c'(x, y), min_{z ∈ R_i - x} F({s, x} -> {y, z}) - K)`: only sets `X` with
//! `y ∈ X`, `x ∉ X` and `X ∩ R_i ≠ ∅` lose slack, each by exactly `μ` (our derivation of
//! ForestColl's eq. 5 from the cut condition; the flows are exact integer max-flows).

use crate::error::{CollsynthError, Result};
use crate::flow::{Cap, FlowNetwork};

/// One arc of the multigraph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arc {
    pub src: usize,
    pub dst: usize,
    pub cap: Cap,
}

/// `m` identical arborescences rooted at `root`: `edges` lists arc indices in the order
/// they were added (a parent's arc always comes before its children's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub root: usize,
    pub m: Cap,
    pub edges: Vec<usize>,
    /// `member[v]`: v is in the arborescence.
    pub member: Vec<bool>,
    /// Vertices in the order they joined (root first).
    pub order: Vec<usize>,
}

/// Pack the arborescences; errors (internal) when the cut condition fails.
pub fn pack(n: usize, arcs: &[Arc], roots: &[(usize, Cap)]) -> Result<Vec<Batch>> {
    let total: Cap = roots.iter().map(|r| r.1).sum();
    let mut batches: Vec<Batch> = roots
        .iter()
        .filter(|r| r.1 > 0)
        .map(|&(r, m)| {
            let mut member = vec![false; n];
            member[r] = true;
            Batch { root: r, m, edges: Vec::new(), member, order: vec![r] }
        })
        .collect();
    if n <= 1 || total == 0 {
        return Ok(batches);
    }
    let mut residual: Vec<Cap> = arcs.iter().map(|a| a.cap).collect();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, a) in arcs.iter().enumerate() {
        if a.src != a.dst {
            out[a.src].push(i);
        }
    }
    let check = Aux::new(n, arcs, &residual, &batches, total);
    if let Some(v) = check.violated() {
        return Err(CollsynthError::internal(format!(
            "arborescence packing: node {v} has connectivity below {total} from the roots"
        )));
    }
    let mut i = 0;
    while i < batches.len() {
        if batches[i].order.len() == n {
            i += 1;
            continue;
        }
        let mut aux = Aux::new(n, arcs, &residual, &batches, total);
        let mut done = false;
        'grow: for k in 0..batches[i].order.len() {
            let x = batches[i].order[k];
            for &e in &out[x] {
                let y = arcs[e].dst;
                if batches[i].member[y] || residual[e] == 0 {
                    continue;
                }
                let mut mu = batches[i].m.min(residual[e]);
                for &z in batches[i].order.iter().filter(|&&z| z != x) {
                    let f = aux.flow(&[x], &[y, z], total + mu);
                    mu = mu.min(f - total);
                    if mu <= 0 {
                        break;
                    }
                }
                if mu <= 0 {
                    continue;
                }
                if mu < batches[i].m {
                    let mut rest = batches[i].clone();
                    rest.m -= mu;
                    batches.push(rest);
                    batches[i].m = mu;
                }
                let b = &mut batches[i];
                b.edges.push(e);
                b.member[y] = true;
                b.order.push(y);
                residual[e] -= mu;
                done = true;
                break 'grow;
            }
        }
        if !done {
            return Err(CollsynthError::internal("arborescence packing: no admissible arc (cut condition broken)"));
        }
    }
    Ok(batches)
}

/// The auxiliary network of the cut condition for the current batches and residuals.
struct Aux {
    net: FlowNetwork,
    n: usize,
    /// Super-source, and the sink-side hub.
    s: usize,
    hub_t: usize,
    /// Edge ids of hub_s -> v and v -> hub_t.
    e_s: usize,
    e_t: usize,
    total: Cap,
}

impl Aux {
    fn new(n: usize, arcs: &[Arc], residual: &[Cap], batches: &[Batch], total: Cap) -> Aux {
        let s = n;
        let hub_s = n + 1;
        let hub_t = n + 2;
        let first_batch = n + 3;
        let inf: Cap = residual.iter().sum::<Cap>() + total + 1;
        let mut merged: std::collections::BTreeMap<(usize, usize), Cap> = Default::default();
        for (a, &c) in arcs.iter().zip(residual) {
            if a.src != a.dst && c > 0 {
                *merged.entry((a.src, a.dst)).or_default() += c;
            }
        }
        let mut edges: Vec<(usize, usize, Cap)> = merged.into_iter().map(|((u, v), c)| (u, v, c)).collect();
        for (j, b) in batches.iter().enumerate() {
            edges.push((s, first_batch + j, b.m));
            for &u in &b.order {
                edges.push((first_batch + j, u, inf));
            }
        }
        edges.push((s, hub_s, inf));
        let e_s = edges.len();
        edges.extend((0..n).map(|v| (hub_s, v, 0)));
        let e_t = edges.len();
        edges.extend((0..n).map(|v| (v, hub_t, 0)));
        let net = FlowNetwork::new(first_batch + batches.len(), &edges);
        Aux { net, n, s, hub_t, e_s, e_t, total }
    }

    /// Min cut between `{s} ∪ src` and `sink` (at most `limit`).
    fn flow(&mut self, src: &[usize], sink: &[usize], limit: Cap) -> Cap {
        let inf = Cap::MAX / 4;
        for &u in src {
            self.net.set_capacity(self.e_s + u, inf);
        }
        for &v in sink {
            self.net.set_capacity(self.e_t + v, inf);
        }
        let f = self.net.max_flow_limited(self.s, self.hub_t, limit);
        for &u in src {
            self.net.set_capacity(self.e_s + u, 0);
        }
        for &v in sink {
            self.net.set_capacity(self.e_t + v, 0);
        }
        f
    }

    /// A node whose connectivity from the roots is below the total, if any.
    fn violated(mut self) -> Option<usize> {
        let total = self.total;
        (0..self.n).find(|&v| self.flow(&[], &[v], total) < total)
    }
}

#[cfg(test)]
mod tests;
