//! Step 3 of ForestColl: switch removal by edge splitting (Alg. 2 / Alg. 4, Thms 6-8).
//!
//! At switch `w`, splitting `γ` units off `e = (u, w)` and `f = (w, t)` moves them to a
//! logical edge `(u, t)`. The largest safe `γ` (eq. 2) keeps Thm 5's condition
//! `min_v F(s, v; D_k) >= N k`, so the optimum is never lost. Every logical unit is one unit
//! of physical capacity: we keep, per logical edge, its units as *routes* (a physical path
//! of link indices with a count), and a split concatenates `γ` units of `e`'s routes with
//! `γ` units of `f`'s. Self-loop splits (`u = t`) drop their units (no cut sees them); we
//! try every `u != t` first so as to keep as much logical capacity as possible.
//!
//! Eq. 2's networks are built once per `(e, f)` pair with every extra infinite edge present
//! at capacity 0; only the capacities of the current `v`'s edges change between flows, and
//! each flow stops at `N k + γ` (it cannot lower γ further), which also short-circuits at
//! γ = 0.

use crate::error::{CollsynthError, Result};
use crate::flow::{Cap, FlowNetwork};
use crate::topology::Topology;
use std::collections::BTreeMap;

/// Units of a logical edge: `(physical route as link indices, count)`.
pub type Routes = Vec<(Vec<usize>, Cap)>;

/// A logical edge: capacity (in trees) and where its units run physically.
#[derive(Debug, Clone, Default)]
pub struct LEdge {
    pub cap: Cap,
    pub routes: Routes,
}

/// A logical graph on the topology's node indices.
#[derive(Debug, Clone, Default)]
pub struct Logical {
    pub edges: BTreeMap<(usize, usize), LEdge>,
}

impl Logical {
    /// The topology's links with integer tree capacities `caps` (zero-capacity links left out).
    pub fn from_links(topo: &Topology, caps: &[Cap]) -> Logical {
        let mut edges = BTreeMap::new();
        for (i, l) in topo.links.iter().enumerate() {
            if caps[i] > 0 {
                edges.insert((l.src, l.dst), LEdge { cap: caps[i], routes: vec![(vec![i], caps[i])] });
            }
        }
        Logical { edges }
    }

    fn cap(&self, u: usize, v: usize) -> Cap {
        self.edges.get(&(u, v)).map_or(0, |e| e.cap)
    }

    /// Remove `amount` units from edge `(u, v)` and return their routes.
    pub fn take(&mut self, u: usize, v: usize, amount: Cap) -> Result<Routes> {
        let e = self.edges.get_mut(&(u, v)).ok_or_else(|| CollsynthError::internal("take from a missing edge"))?;
        if e.cap < amount {
            return Err(CollsynthError::internal("take more than a logical edge holds"));
        }
        e.cap -= amount;
        let mut out = Routes::new();
        let mut left = amount;
        while left > 0 {
            let (route, c) = e.routes.last_mut().ok_or_else(|| CollsynthError::internal("routes out of sync"))?;
            let t = left.min(*c);
            out.push((route.clone(), t));
            *c -= t;
            left -= t;
            if *c == 0 {
                e.routes.pop();
            }
        }
        if e.cap == 0 {
            self.edges.remove(&(u, v));
        }
        Ok(out)
    }

    fn add(&mut self, u: usize, v: usize, amount: Cap, routes: Routes) {
        let e = self.edges.entry((u, v)).or_default();
        e.cap += amount;
        for (r, c) in routes {
            match e.routes.iter_mut().find(|(x, _)| *x == r) {
                Some((_, cc)) => *cc += c,
                None => e.routes.push((r, c)),
            }
        }
    }
}

/// Pair the units of `a` and `b` (same total) into concatenated routes.
fn concat(a: Routes, b: Routes) -> Routes {
    let mut out = Routes::new();
    let (mut i, mut j) = (0, 0);
    let (mut ca, mut cb) = (a.first().map_or(0, |x| x.1), b.first().map_or(0, |x| x.1));
    while i < a.len() && j < b.len() {
        let t = ca.min(cb);
        let mut r = a[i].0.clone();
        r.extend_from_slice(&b[j].0);
        out.push((r, t));
        ca -= t;
        cb -= t;
        if ca == 0 {
            i += 1;
            ca = a.get(i).map_or(0, |x| x.1);
        }
        if cb == 0 {
            j += 1;
            cb = b.get(j).map_or(0, |x| x.1);
        }
    }
    out
}

/// Counters of one switch removal.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub splits: usize,
    pub flows: usize,
}

/// Remove every switch of `topo` from `g` (tree capacities for `k` trees per rank satisfying
/// Thm 5). Errors clearly when a node is not Eulerian (ingress != egress), which edge
/// splitting requires. Afterwards `g` has edges between compute nodes only.
pub fn remove_switches(topo: &Topology, g: &mut Logical, k: Cap) -> Result<Stats> {
    let mut stats = Stats::default();
    if topo.n_switches() == 0 {
        return Ok(stats);
    }
    let nn = topo.n_nodes();
    let mut inn = vec![0 as Cap; nn];
    let mut out = vec![0 as Cap; nn];
    for (&(u, v), e) in &g.edges {
        out[u] += e.cap;
        inn[v] += e.cap;
    }
    if let Some(v) = (0..nn).find(|&v| inn[v] != out[v]) {
        return Err(CollsynthError::bad(format!(
            "forestcoll: switch removal by edge splitting needs an Eulerian network (every node's \
             ingress equal to its egress), but node '{}' has ingress {} and egress {} tree units; \
             use bidirectional links with equal bandwidth both ways",
            topo.nodes[v].name, inn[v], out[v]
        )));
    }
    let n = topo.n_ranks() as Cap;
    let nk = n * k;
    for w in (0..nn).filter(|&w| !topo.is_compute(w)) {
        let egress: Vec<usize> = g.edges.range((w, 0)..(w + 1, 0)).map(|(&(_, t), _)| t).collect();
        let ingress: Vec<usize> = g.edges.keys().filter(|&&(_, x)| x == w).map(|&(u, _)| u).collect();
        for &t in &egress {
            // Non-self-loop splits first.
            let order = ingress.iter().filter(|&&u| u != t).chain(ingress.iter().filter(|&&u| u == t));
            for &u in order {
                let (cf, ce) = (g.cap(w, t), g.cap(u, w));
                if cf == 0 {
                    break;
                }
                if ce == 0 {
                    continue;
                }
                // When u and t are w's only neighbours, every losing cut A has a partner
                // (A + w or A - w) that is untouched and at least as tight: γ is the cap.
                let gamma =
                    if local(g, w, u, t) { ce.min(cf) } else { gamma(topo, g, u, w, t, k, nk, ce.min(cf), &mut stats) };
                if gamma > 0 {
                    stats.splits += 1;
                    let a = g.take(u, w, gamma)?;
                    let b = g.take(w, t, gamma)?;
                    if u != t {
                        g.add(u, t, gamma, concat(a, b));
                    }
                }
            }
            if g.cap(w, t) != 0 {
                return Err(CollsynthError::internal(format!(
                    "switch removal stuck at {} -> {} (Thm 7 violated)",
                    topo.nodes[w].name, topo.nodes[t].name
                )));
            }
        }
        if g.edges.keys().any(|&(a, b)| a == w || b == w) {
            return Err(CollsynthError::internal(format!("switch {} not isolated", topo.nodes[w].name)));
        }
        super::PROGRESS.add(1);
    }
    Ok(stats)
}

/// Whether every neighbour of `w` (in or out) is `u` or `t`.
fn local(g: &Logical, w: usize, u: usize, t: usize) -> bool {
    g.edges.range((w, 0)..(w + 1, 0)).all(|(&(_, x), _)| x == u || x == t)
        && g.edges.keys().filter(|&&(_, x)| x == w).all(|&(x, _)| x == u || x == t)
}

/// Eq. 2: the largest γ <= `upper` that keeps `min_v F(s, v; D_k) >= N k`.
#[allow(clippy::too_many_arguments)]
fn gamma(
    topo: &Topology,
    g: &Logical,
    u: usize,
    w: usize,
    t: usize,
    k: Cap,
    nk: Cap,
    upper: Cap,
    st: &mut Stats,
) -> Cap {
    let nn = topo.n_nodes();
    let s = nn;
    let total: Cap = g.edges.values().map(|e| e.cap).sum();
    let inf = total + nk + 1;
    let mut edges: Vec<(usize, usize, Cap)> = g.edges.iter().map(|(&(a, b), e)| (a, b, e.cap)).collect();
    edges.extend(topo.ranks().iter().map(|&c| (s, c, k)));
    let base = edges.len();
    // base: (u,s) family 1; base+1: (w,s) family 2; base+2: (u,t) both (if u != t).
    edges.push((u, s, 0));
    edges.push((w, s, 0));
    if u != t {
        edges.push((u, t, inf));
    }
    let vw = edges.len();
    edges.extend(topo.ranks().iter().map(|&v| (v, w, 0)));
    let vt = edges.len();
    // (v, t) per rank v; a zero placeholder (t, w) for v = t keeps the indices aligned.
    edges.extend(topo.ranks().iter().map(|&v| (v, if v == t { w } else { t }, 0)));
    let mut net = FlowNetwork::new(nn + 1, &edges);
    let mut gamma = upper;
    // Family 1: cuts with s, u, t on the source side and v, w on the sink side. Merging v
    // into the sink only adds capacity, so when the flow without any v already reaches the
    // limit, every flow of the family does and none is needed (same γ, fewer flows).
    net.set_capacity(base, inf);
    st.flows += 1;
    let skip1 = net.max_flow_limited(u, w, nk + gamma) >= nk + gamma;
    for (i, &v) in topo.ranks().iter().enumerate() {
        if skip1 {
            break;
        }
        if v == u || v == t {
            continue;
        }
        net.set_capacity(vw + i, inf);
        st.flows += 1;
        let f = net.max_flow_limited(u, w, nk + gamma);
        net.set_capacity(vw + i, 0);
        if f < nk + gamma {
            gamma = (f - nk).max(0);
            if gamma == 0 {
                return 0;
            }
        }
    }
    net.set_capacity(base, 0);
    // Family 2: cuts with s, w on the source side and v, u, t on the sink side.
    net.set_capacity(base + 1, inf);
    // v = t needs no extra edge (t is the sink), but its flow still counts. The flow without
    // any v is the smallest of the family (the others merge one more node into the sink), so
    // it goes first: when it reaches the limit it settles the whole family, and when t is a
    // rank it is the v = t member itself.
    st.flows += 1;
    let f = net.max_flow_limited(w, t, nk + gamma);
    if f >= nk + gamma {
        return gamma;
    }
    if topo.is_compute(t) {
        gamma = (f - nk).max(0);
        if gamma == 0 {
            return 0;
        }
    }
    for (i, &v) in topo.ranks().iter().enumerate() {
        if v == t {
            continue;
        }
        net.set_capacity(vt + i, inf);
        st.flows += 1;
        let f = net.max_flow_limited(w, t, nk + gamma);
        net.set_capacity(vt + i, 0);
        if f < nk + gamma {
            gamma = (f - nk).max(0);
            if gamma == 0 {
                return 0;
            }
        }
    }
    gamma
}

/// Eq. 2 on `g` as it is, for tests (γ capped by the two edge capacities only).
#[cfg(test)]
pub(crate) fn gamma_for_test(topo: &Topology, g: &Logical, u: usize, w: usize, t: usize, k: Cap) -> Cap {
    let nk = topo.n_ranks() as Cap * k;
    let upper = g.cap(u, w).min(g.cap(w, t));
    gamma(topo, g, u, w, t, k, nk, upper, &mut Stats::default())
}
