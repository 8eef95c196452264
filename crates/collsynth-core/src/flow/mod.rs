//! Maximum flow on integer capacities (Dinic's algorithm), built for many flows on one graph.
//!
//! Why our own implementation rather than a crate: every exact result of collsynth (the cut
//! bounds, ForestColl's optimality search, switch removal, tree packing) reduces to thousands
//! of small max-flows on the *same* graph where only the capacities or the sink change. That
//! needs (a) exact `i128` capacities (bandwidths scaled by rational factors can exceed 64 bits
//! of headroom), (b) capacities that can be reset or changed without reallocating, (c) an
//! early stop once the flow reaches a threshold (an oracle asks "is the flow >= k?", not "how
//! much?"), and (d) the source side of a minimum cut. No dependency-free crate offers all four,
//! and Dinic on CSR arrays is ~200 lines that we test against brute force below.
//!
//! Representation: a static CSR adjacency. Each input edge `u -> v` becomes an arc whose twin
//! `v -> u` carries the residual; an input edge `v -> u` that is antiparallel to an unpaired
//! `u -> v` shares that arc pair (its capacity sits on the twin), which halves the arcs on
//! bidirectional networks. Between flows only the `res` array is rewritten.

/// Capacity and flow values.
pub type Cap = i128;

const UNSET: u32 = u32::MAX;

/// A flow network with fixed structure and changeable capacities; see the module docs.
#[derive(Debug, Clone)]
pub struct FlowNetwork {
    n: usize,
    /// CSR offsets into the arc arrays, by tail node (`n + 1` entries).
    start: Vec<usize>,
    /// Head node of each arc.
    head: Vec<u32>,
    /// The twin arc (same node pair, opposite direction).
    twin: Vec<u32>,
    /// Capacity of each arc (0 for a pure residual twin).
    cap: Vec<Cap>,
    /// Residual capacity of each arc during / after the last flow.
    res: Vec<Cap>,
    /// Arc of each input edge, in input order.
    edge_arc: Vec<u32>,
    // Scratch space, reused by every flow.
    level: Vec<u32>,
    cur: Vec<usize>,
    queue: Vec<u32>,
    path: Vec<usize>,
}

/// Arc pairs (forward edge, its capacity, the backward one's) and each edge's (pair, is
/// backward): every edge its own pair, for networks without antiparallel edges.
type Pairing = (Vec<(usize, usize, Cap, Cap)>, Vec<(usize, bool)>);

fn unpaired(edges: &[(usize, usize, Cap)]) -> Pairing {
    (edges.iter().map(|&(u, v, c)| (u, v, c, 0)).collect(), (0..edges.len()).map(|e| (e, false)).collect())
}

/// Whether some edge (u, v) has an edge (v, u): one sort of the unordered pairs, no hashing
/// (most networks, BFB's subproblems among them, have none, and pairing them by a hash map
/// cost more than their flows).
fn has_antiparallel(edges: &[(usize, usize, Cap)]) -> bool {
    let mut keys: Vec<(usize, usize, bool)> = edges.iter().map(|&(u, v, _)| (u.min(v), u.max(v), u > v)).collect();
    keys.sort_unstable();
    keys.windows(2).any(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1) && w[0].2 != w[1].2)
}

/// Each edge (u, v) shares an arc pair with the latest still unpaired (v, u) before it.
fn pair_antiparallel(edges: &[(usize, usize, Cap)]) -> Pairing {
    let mut pairs: Vec<(usize, usize, Cap, Cap)> = Vec::with_capacity(edges.len());
    let mut edge_side: Vec<(usize, bool)> = vec![(0, false); edges.len()];
    let mut open: std::collections::HashMap<(usize, usize), Vec<usize>> = std::collections::HashMap::new();
    for (e, &(u, v, c)) in edges.iter().enumerate() {
        if let Some(k) = open.get_mut(&(v, u)).and_then(|list| list.pop()) {
            pairs[k].3 = c;
            edge_side[e] = (k, true);
        } else {
            edge_side[e] = (pairs.len(), false);
            open.entry((u, v)).or_default().push(pairs.len());
            pairs.push((u, v, c, 0));
        }
    }
    (pairs, edge_side)
}

impl FlowNetwork {
    /// A network on nodes `0..n` with the directed `edges` `(src, dst, capacity)`; edge ids are
    /// positions in `edges`. Panics on an endpoint out of range, a self-loop or a negative
    /// capacity (programming errors).
    pub fn new(n: usize, edges: &[(usize, usize, Cap)]) -> Self {
        let paired = has_antiparallel(edges);
        FlowNetwork::build(n, edges, paired)
    }

    /// [`FlowNetwork::new`] for edges of which no two are antiparallel (a layered network),
    /// without the sort that checks it (checked in debug builds only).
    pub fn without_antiparallel(n: usize, edges: &[(usize, usize, Cap)]) -> Self {
        debug_assert!(!has_antiparallel(edges), "antiparallel edges");
        FlowNetwork::build(n, edges, false)
    }

    fn build(n: usize, edges: &[(usize, usize, Cap)], paired: bool) -> Self {
        assert!(n < UNSET as usize && 2 * edges.len() < UNSET as usize, "flow network too large");
        // Pair antiparallel edges: arc pair k = (forward edge, optional backward edge).
        for (e, &(u, v, c)) in edges.iter().enumerate() {
            assert!(u < n && v < n, "edge {e} endpoint out of range");
            assert!(u != v, "edge {e} is a self-loop");
            assert!(c >= 0, "edge {e} has a negative capacity");
        }
        let (pairs, edge_side) = if paired { pair_antiparallel(edges) } else { unpaired(edges) };
        let mut degree = vec![0usize; n + 1];
        for &(u, v, _, _) in &pairs {
            degree[u] += 1;
            degree[v] += 1;
        }
        let mut start = vec![0usize; n + 1];
        for i in 0..n {
            start[i + 1] = start[i] + degree[i];
        }
        let m = start[n];
        let (mut head, mut twin, mut cap) = (vec![0u32; m], vec![0u32; m], vec![0; m]);
        let mut fill = start.clone();
        let mut pair_arc = Vec::with_capacity(pairs.len());
        for &(u, v, c_uv, c_vu) in &pairs {
            let (a, b) = (fill[u], fill[v]);
            fill[u] += 1;
            fill[v] += 1;
            head[a] = v as u32;
            head[b] = u as u32;
            twin[a] = b as u32;
            twin[b] = a as u32;
            cap[a] = c_uv;
            cap[b] = c_vu;
            pair_arc.push((a, b));
        }
        let edge_arc = edge_side
            .iter()
            .map(|&(k, backward)| if backward { pair_arc[k].1 as u32 } else { pair_arc[k].0 as u32 })
            .collect();
        FlowNetwork {
            n,
            start,
            head,
            twin,
            res: cap.clone(),
            cap,
            edge_arc,
            level: vec![UNSET; n],
            cur: vec![0; n],
            queue: Vec::with_capacity(n),
            path: Vec::new(),
        }
    }

    pub fn n_nodes(&self) -> usize {
        self.n
    }

    pub fn n_edges(&self) -> usize {
        self.edge_arc.len()
    }

    /// Change the capacity of input edge `e` (takes effect at the next flow).
    pub fn set_capacity(&mut self, e: usize, c: Cap) {
        assert!(c >= 0, "negative capacity");
        self.cap[self.edge_arc[e] as usize] = c;
    }

    pub fn capacity(&self, e: usize) -> Cap {
        self.cap[self.edge_arc[e] as usize]
    }

    /// Flow carried by input edge `e` in the last flow computed (net of its antiparallel twin:
    /// flow never goes both ways between two nodes).
    pub fn flow_on(&self, e: usize) -> Cap {
        let a = self.edge_arc[e] as usize;
        (self.cap[a] - self.res[a]).max(0)
    }

    /// Maximum flow value from `s` to `t`.
    pub fn max_flow(&mut self, s: usize, t: usize) -> Cap {
        self.max_flow_limited(s, t, Cap::MAX)
    }

    /// Maximum flow from `s` to `t`, stopping as soon as the value reaches `limit`: returns
    /// `min(maxflow, limit)`. The residual graph afterwards gives a minimum cut (see
    /// [`FlowNetwork::min_cut_source_side`]) only when the returned value is below `limit`.
    pub fn max_flow_limited(&mut self, s: usize, t: usize, limit: Cap) -> Cap {
        match self.max_flow_polled(s, t, limit, || Ok(())) {
            Ok(flow) => flow,
            Err(_) => unreachable!("a poll that never fails"),
        }
    }

    /// [`FlowNetwork::max_flow_limited`], calling `poll` before every phase and stopping with
    /// its error: a flow across a long ring runs one phase per path length, minutes at 10^5
    /// nodes, and must answer Ctrl-C.
    pub fn max_flow_polled(
        &mut self,
        s: usize,
        t: usize,
        limit: Cap,
        mut poll: impl FnMut() -> crate::error::Result<()>,
    ) -> crate::error::Result<Cap> {
        assert!(s < self.n && t < self.n && s != t, "bad source / sink");
        self.res.copy_from_slice(&self.cap);
        let mut flow: Cap = 0;
        while flow < limit {
            poll()?;
            if !self.bfs(s, t) {
                break;
            }
            flow += self.blocking_flow(s, t, limit - flow);
        }
        Ok(flow)
    }

    /// Nodes reachable from `s` in the residual graph of the last flow: after a complete
    /// (unlimited) flow this is the source side of the minimum cut with the fewest nodes.
    pub fn min_cut_source_side(&self, s: usize) -> Vec<bool> {
        let mut seen = vec![false; self.n];
        let mut stack = vec![s];
        seen[s] = true;
        while let Some(u) = stack.pop() {
            for a in self.start[u]..self.start[u + 1] {
                let w = self.head[a] as usize;
                if self.res[a] > 0 && !seen[w] {
                    seen[w] = true;
                    stack.push(w);
                }
            }
        }
        seen
    }

    /// Total capacity of the arcs leaving the node set `side` (its cut capacity).
    pub fn cut_capacity(&self, side: &[bool]) -> Cap {
        let mut total = 0;
        for u in (0..self.n).filter(|&u| side[u]) {
            for a in self.start[u]..self.start[u + 1] {
                if !side[self.head[a] as usize] {
                    total += self.cap[a];
                }
            }
        }
        total
    }

    /// Distance labels to `t` in the residual graph, by a backward BFS from `t` that stops
    /// once `s`'s layer is reached (nodes at `s`'s distance or beyond cannot be on a shortest
    /// augmenting path). Labelling from the sink means the DFS never enters a node that
    /// cannot reach `t`. True if `t` is reachable from `s`.
    fn bfs(&mut self, s: usize, t: usize) -> bool {
        self.level.fill(UNSET);
        self.queue.clear();
        self.level[t] = 0;
        self.queue.push(t as u32);
        let mut i = 0;
        while i < self.queue.len() {
            let x = self.queue[i] as usize;
            i += 1;
            let lx = self.level[x];
            if self.level[s] != UNSET && lx >= self.level[s] {
                break;
            }
            for b in self.start[x]..self.start[x + 1] {
                let w = self.head[b] as usize;
                // The arc w -> x is b's twin.
                if self.level[w] == UNSET && self.res[self.twin[b] as usize] > 0 {
                    self.level[w] = lx + 1;
                    self.queue.push(w as u32);
                }
            }
        }
        self.level[s] != UNSET
    }

    /// A blocking flow of value at most `limit` along arcs that get one step closer to `t`
    /// (iterative DFS with current-arc pointers; after an augmentation it retreats to the
    /// first saturated arc).
    fn blocking_flow(&mut self, s: usize, t: usize, limit: Cap) -> Cap {
        for &u in &self.queue {
            self.cur[u as usize] = self.start[u as usize];
        }
        self.path.clear();
        let mut total: Cap = 0;
        let mut u = s;
        loop {
            if u == t {
                let mut f = limit - total;
                for &a in &self.path {
                    f = f.min(self.res[a]);
                }
                for &a in &self.path {
                    self.res[a] -= f;
                    self.res[self.twin[a] as usize] += f;
                }
                total += f;
                if total == limit {
                    return total;
                }
                let k = self.path.iter().position(|&a| self.res[a] == 0).expect("a saturated arc");
                self.path.truncate(k);
                u = if k == 0 { s } else { self.head[self.path[k - 1]] as usize };
                continue;
            }
            let lu = self.level[u];
            let end = self.start[u + 1];
            let mut next = None;
            while self.cur[u] < end {
                let a = self.cur[u];
                let w = self.head[a] as usize;
                if self.res[a] > 0 && self.level[w] != UNSET && self.level[w] + 1 == lu {
                    next = Some((a, w));
                    break;
                }
                self.cur[u] += 1;
            }
            match next {
                Some((a, w)) => {
                    self.path.push(a);
                    u = w;
                }
                None => {
                    // Dead end: no augmenting path continues through u in this phase.
                    self.level[u] = UNSET;
                    match self.path.pop() {
                        None => return total,
                        Some(a) => {
                            u = self.head[self.twin[a] as usize] as usize;
                            self.cur[u] += 1;
                        }
                    }
                }
            }
        }
    }
}

/// The link bandwidths of `topo` as coprime integer capacities `c_e = bandwidth_e * sigma`,
/// with `sigma` (exact). Every exact flow computation (cut bounds, ForestColl) scales this way.
pub fn integer_capacities(topo: &crate::topology::Topology) -> crate::error::Result<(Vec<Cap>, crate::rational::Rat)> {
    use num_integer::Integer;
    // Many distinct fractions (1/2, 1/3, 1/5, ...) multiply into a common denominator past
    // what exact flows can hold: bad input, with the reason and the way out.
    let overflow = || {
        crate::error::CollsynthError::bad(format!(
            "scaling the bandwidths of {} links to integers for exact flows needs numbers above 2^80 (a \
             common denominator of many distinct fractions); give bandwidths with fewer distinct denominators",
            topo.links.len()
        ))
    };
    const LIMIT: i128 = crate::topology::validate::MAX_BANDWIDTH_TERM;
    let mut l: i128 = 1;
    // The `!=` tests skip i128 divisions for the common equal values (most topologies have
    // one or two bandwidths).
    for link in &topo.links {
        let d = *link.bandwidth.denom();
        if d != 1 && l % d != 0 {
            l = (l / l.gcd(&d)).checked_mul(d).filter(|&l| l <= LIMIT).ok_or_else(overflow)?;
        }
    }
    let mut ints = Vec::with_capacity(topo.links.len());
    let mut g: i128 = 0;
    for link in &topo.links {
        let v = (l / link.bandwidth.denom())
            .checked_mul(*link.bandwidth.numer())
            .filter(|&v| v <= LIMIT)
            .ok_or_else(overflow)?;
        if v != g {
            g = g.gcd(&v);
        }
        ints.push(v);
    }
    let g = g.max(1);
    Ok((ints.into_iter().map(|v| v / g).collect(), crate::rational::Rat::new(l, g)))
}

#[cfg(test)]
mod tests;
