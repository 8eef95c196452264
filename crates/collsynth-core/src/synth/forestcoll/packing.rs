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
    // Pairs (x, y) known to have μ = 0 for the batch being grown (index x * n + y).
    let mut dead = vec![false; n * n];
    while let Some(b) = queue.pop_front() {
        let mut net: Option<DBar> = None;
        dead.fill(false);
        while work[b].order.len() < n {
            if net.is_none() {
                net = Some(DBar::new(n, g, &work, &alive, b));
            }
            let d = net.as_mut().expect("built");
            let (x, y, mu) = next_edge(n, g, &work[b], d, &mut dead, &mut stats)?;
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
            super::PROGRESS.add(u64::try_from(mu).unwrap_or(0));
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
///
/// While one batch grows, μ(x, y) never increases: eq. 5's `F - Σ m` is the minimum over
/// cuts `x ∈ S, y ∉ S` of `c(S) - p(S)` with p over the *other* batches, and growing the batch
/// only lowers `c` (g shrinks) or raises `p` (a clone joins). So a pair found at μ = 0 is
/// marked in `dead` and skipped until the batch is finished: the same edges are chosen, with
/// far fewer flows (the retries of pitfall 4 only matter for pairs whose x just joined).
fn next_edge(
    n: usize,
    g: &[Vec<Cap>],
    wb: &Work,
    d: &mut DBar,
    dead: &mut [bool],
    stats: &mut Stats,
) -> Result<(usize, usize, Cap)> {
    for &x in &wb.order {
        let ys: Vec<usize> = (0..n).filter(|&y| !wb.inside[y] && g[x][y] > 0 && !dead[x * n + y]).collect();
        if ys.is_empty() {
            continue;
        }
        d.net.set_capacity(d.hub_in + x, d.inf);
        for y in ys {
            let cap = g[x][y].min(wb.m);
            stats.mu_flows += 1;
            // Every finite cut pays `m_i` for a batch containing y (h is on x's side, s_i on
            // y's): take those out of the network and of the subtracted sum.
            let mut sum_m = d.sum_m;
            for (j, ob) in d.others.iter().enumerate() {
                if ob.inside[y] {
                    d.net.set_capacity(d.hub_out + j, 0);
                    sum_m -= ob.m;
                }
            }
            let f = d.net.max_flow_limited(x, y, sum_m + cap);
            for (j, ob) in d.others.iter().enumerate() {
                if ob.inside[y] {
                    d.net.set_capacity(d.hub_out + j, ob.m);
                }
            }
            let mu = cap.min(f - sum_m);
            if mu > 0 {
                d.net.set_capacity(d.hub_in + x, 0);
                return Ok((x, y, mu));
            }
            dead[x * n + y] = true;
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
    /// Edge id of `h -> s_j` for the j-th other batch: `hub_out + j`.
    hub_out: usize,
    /// The other unfinished batches: membership and m.
    others: Vec<Other>,
    sum_m: Cap,
    inf: Cap,
}

struct Other {
    inside: Vec<bool>,
    m: Cap,
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
        let hub_out = edges.len();
        edges.extend(others.iter().enumerate().map(|(j, &i)| (h, n + 1 + j, work[i].m)));
        for (j, &i) in others.iter().enumerate() {
            edges.extend(work[i].order.iter().map(|&v| (n + 1 + j, v, inf)));
        }
        let info = others.iter().map(|&i| Other { inside: work[i].inside.clone(), m: work[i].m }).collect();
        DBar { net: FlowNetwork::new(n + 1 + others.len(), &edges), edge, hub_in, hub_out, others: info, sum_m, inf }
    }
}
