//! Step 4 of ForestColl: spanning out-tree packing in batches (Alg. 5, Thms 9-12).
//!
//! Every rank starts one batch of `k` identical trees. A batch grows one edge `(x, y)` at a
//! time (x in its vertex set R, y outside); `μ` of eq. 5 says how many of its trees can take
//! the edge without breaking Edmonds' condition (3) for the whole family. If `μ < m`, the
//! batch is cloned: `m - μ` trees stay behind with the old edge set. Eq. 5 costs one max-flow
//! from x to y on `D̄`: the residual graph plus, per other unfinished batch i, a node `s_i`
//! with `x -> s_i` of capacity `m_i` and `s_i -> v` infinite for v in `R_i`. Finished
//! batches are left out (they add `m_i` to both the flow and the subtracted sum). The network
//! depends on x but not on y, so it is built once per x and reused for every candidate y;
//! each flow stops as soon as it reaches `sum_i m_i + min(g, m)`.
//!
//! Growth order: x in the order it joined the tree (breadth first from the root, which keeps
//! trees shallow), then y by rank. An edge with μ = 0 is retried later (it can become usable
//! after R grows).

use crate::error::{CollsynthError, Result};
use crate::flow::{Cap, FlowNetwork};

/// `m` identical trees rooted at `root`: edges (x, y) between ranks, parents first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub root: usize,
    pub m: Cap,
    pub edges: Vec<(usize, usize)>,
}

/// Counters of one packing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub mu_flows: usize,
}

struct Work {
    root: usize,
    m: Cap,
    edges: Vec<(usize, usize)>,
    /// Vertices in join order.
    order: Vec<usize>,
    inside: Vec<bool>,
}

/// Pack `k` spanning out-trees per rank into the capacities `g` (an `n x n` matrix, row =
/// source rank), which must satisfy Thm 10's condition. Returns the batches (their `m` sum to
/// `k` per root) in the order they were finished.
pub fn pack(n: usize, g: &mut [Vec<Cap>], k: Cap) -> Result<(Vec<Batch>, Stats)> {
    let mut stats = Stats::default();
    let mut work: Vec<Work> = (0..n)
        .map(|u| {
            let mut inside = vec![false; n];
            inside[u] = true;
            Work { root: u, m: k, edges: Vec::new(), order: vec![u], inside }
        })
        .collect();
    let mut done: Vec<Batch> = Vec::new();
    if n == 1 {
        return Ok((vec![Batch { root: 0, m: k, edges: Vec::new() }], stats));
    }
    // Unfinished batches; the one being grown is always at index 0 of `work`'s tail order.
    let mut queue: std::collections::VecDeque<usize> = (0..n).collect();
    let mut alive: Vec<bool> = vec![true; n];
    while let Some(b) = queue.pop_front() {
        let mut net: Option<DBar> = None;
        while work[b].order.len() < n {
            if net.is_none() {
                net = Some(DBar::new(n, g, &work, &alive, b));
            }
            let d = net.as_mut().expect("built");
            let (x, y, mu) = next_edge(n, g, &work[b], d, &mut stats)?;
            if mu < work[b].m {
                let clone = Work {
                    root: work[b].root,
                    m: work[b].m - mu,
                    edges: work[b].edges.clone(),
                    order: work[b].order.clone(),
                    inside: work[b].inside.clone(),
                };
                work.push(clone);
                alive.push(true);
                queue.push_back(work.len() - 1);
                work[b].m = mu;
                net = None; // a new unfinished batch: D̄ changes
            }
            let wb = &mut work[b];
            wb.edges.push((x, y));
            wb.order.push(y);
            wb.inside[y] = true;
            g[x][y] -= mu;
            if let Some(d) = net.as_mut() {
                d.net.set_capacity(d.edge[x * n + y], g[x][y]);
            }
        }
        alive[b] = false;
        let wb = &mut work[b];
        done.push(Batch { root: wb.root, m: wb.m, edges: std::mem::take(&mut wb.edges) });
    }
    Ok((done, stats))
}

/// The first edge leaving the batch `wb` with μ > 0, and its μ.
fn next_edge(n: usize, g: &[Vec<Cap>], wb: &Work, d: &mut DBar, stats: &mut Stats) -> Result<(usize, usize, Cap)> {
    for &x in &wb.order {
        if !(0..n).any(|y| !wb.inside[y] && g[x][y] > 0) {
            continue;
        }
        d.net.set_capacity(d.hub_in + x, d.inf);
        for y in (0..n).filter(|&y| !wb.inside[y] && g[x][y] > 0) {
            let cap = g[x][y].min(wb.m);
            stats.mu_flows += 1;
            let f = d.net.max_flow_limited(x, y, d.sum_m + cap);
            let mu = cap.min(f - d.sum_m);
            if mu > 0 {
                d.net.set_capacity(d.hub_in + x, 0);
                return Ok((x, y, mu));
            }
        }
        d.net.set_capacity(d.hub_in + x, 0);
    }
    Err(CollsynthError::internal("tree packing found no edge with μ > 0 (Edmonds' condition violated)"))
}

/// Thm 12's network while one batch grows. Instead of an edge `x -> s_i` per source x, a hub
/// `h` has `h -> s_i` of capacity `m_i` and every rank an edge `x -> h` that is infinite only
/// for the current source (a cut then pays `m_i` exactly when s_i is cut off, as in Thm 12).
/// The other batches do not change while one grows, so the network is built once per batch
/// (and again after a clone) and only the residual capacities `g` are updated.
struct DBar {
    net: FlowNetwork,
    /// Edge id of `(a, c)` (index a * n + c), usize::MAX when absent.
    edge: Vec<usize>,
    /// Edge id of `0 -> h`; rank x's is `hub_in + x`.
    hub_in: usize,
    sum_m: Cap,
    inf: Cap,
}

impl DBar {
    fn new(n: usize, g: &[Vec<Cap>], work: &[Work], alive: &[bool], b: usize) -> DBar {
        let others: Vec<usize> = (0..work.len()).filter(|&i| i != b && alive[i]).collect();
        let sum_m: Cap = others.iter().map(|&i| work[i].m).sum();
        let mut edges: Vec<(usize, usize, Cap)> = Vec::new();
        let mut edge = vec![usize::MAX; n * n];
        let mut total: Cap = sum_m;
        for (a, row) in g.iter().enumerate() {
            for (c, &cap) in row.iter().enumerate() {
                if cap > 0 {
                    edge[a * n + c] = edges.len();
                    edges.push((a, c, cap));
                    total += cap;
                }
            }
        }
        let inf = total + 1;
        let h = n;
        let hub_in = edges.len();
        edges.extend((0..n).map(|x| (x, h, 0)));
        for (j, &i) in others.iter().enumerate() {
            let si = n + 1 + j;
            edges.push((h, si, work[i].m));
            edges.extend(work[i].order.iter().map(|&v| (si, v, inf)));
        }
        DBar { net: FlowNetwork::new(n + 1 + others.len(), &edges), edge, hub_in, sum_m, inf }
    }
}
