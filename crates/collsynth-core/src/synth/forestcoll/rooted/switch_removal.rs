//! Switch removal for a single root by edge splitting, preserving rooted connectivity.
//!
//! Switches forward but cannot multicast, so a broadcast tree must be an arborescence on
//! compute nodes whose edges are *logical*: physical paths through switches. Splitting
//! off the pair `(u, w), (w, t)` at switch `w` by `γ` units replaces `γ` units of both
//! arcs with a logical arc `u -> t` whose route is the concatenation. A cut `X` (root
//! outside, some compute node inside) loses `γ` exactly when `w ∈ X, u, t ∉ X` or
//! `w ∉ X, u, t ∈ X` (and nothing otherwise), so the largest admissible `γ` is
//! `min(c(u,w), c(w,t), min over compute v of F({r,u,t} -> {v,w}) - k,
//!  F({r,w} -> {v,u,t}) - k)`: exact integer max-flows, no enumeration.
//!
//! Every out-arc of `w` is split greedily against the in-arcs. By the splitting theorems
//! for rooted connectivity (Bang-Jensen, Frank and Jackson; Mader's directed splitting
//! when `w` is Eulerian) a complete splitting exists when `w` has at least as much
//! ingress as egress, which holds on every network with equal bandwidth per direction;
//! left-over capacity of `w` is then useless and dropped. Arcs into the root are never
//! needed by a broadcast and are removed first. When left-over egress of a switch was
//! needed (a switch with more egress than ingress, which would have to multicast), the
//! caller is told (`None`) and lowers `k`.

use crate::flow::{Cap, FlowNetwork};
use crate::topology::Topology;

/// A logical arc: `cap` units along the physical `route` (link indices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LArc {
    pub src: usize,
    pub dst: usize,
    pub cap: Cap,
    pub route: Vec<usize>,
}

/// Split every switch off `topo` (link capacities `caps`, scaled integers) keeping
/// `λ(root, v) >= k` for every compute node `v`. Returns logical arcs between compute
/// nodes (node indices), or `None` if the switches cannot all be removed at rate `k`.
pub fn split_switches(topo: &Topology, caps: &[Cap], root: usize, k: Cap) -> Option<Vec<LArc>> {
    let mut arcs: Vec<LArc> = topo
        .links
        .iter()
        .enumerate()
        .filter(|(l, link)| link.dst != root && caps[*l] > 0)
        .map(|(l, link)| LArc { src: link.src, dst: link.dst, cap: caps[l], route: vec![l] })
        .collect();
    let nn = topo.n_nodes();
    let targets: Vec<usize> = topo.ranks().iter().copied().filter(|&v| v != root).collect();
    for w in (0..nn).filter(|&w| !topo.is_compute(w)) {
        let outs: Vec<usize> = (0..arcs.len()).filter(|&i| arcs[i].src == w).collect();
        let ins: Vec<usize> = (0..arcs.len()).filter(|&i| arcs[i].dst == w).collect();
        for &b in &outs {
            for &a in &ins {
                if arcs[b].cap == 0 {
                    break;
                }
                if arcs[a].cap == 0 {
                    continue;
                }
                let (u, t) = (arcs[a].src, arcs[b].dst);
                let mut gamma = arcs[a].cap.min(arcs[b].cap);
                let mut net = Cuts::new(nn, &arcs, root);
                for &v in &targets {
                    // Case w ∈ X, u, t ∉ X.
                    if v != u && v != t {
                        gamma = gamma.min(net.flow(&[u, t], &[v, w], k + gamma) - k);
                    }
                    // Case w ∉ X, u, t ∈ X (impossible when the root is u or t).
                    if u != root && t != root && gamma > 0 {
                        gamma = gamma.min(net.flow(&[w], &[v, u, t], k + gamma) - k);
                    }
                    if gamma <= 0 {
                        break;
                    }
                }
                if gamma <= 0 {
                    continue;
                }
                arcs[a].cap -= gamma;
                arcs[b].cap -= gamma;
                if u != t {
                    let route: Vec<usize> = arcs[a].route.iter().chain(&arcs[b].route).copied().collect();
                    match arcs.iter_mut().find(|x| x.src == u && x.dst == t && x.route == route) {
                        Some(x) => x.cap += gamma,
                        None => arcs.push(LArc { src: u, dst: t, cap: gamma, route }),
                    }
                }
            }
        }
        let left_egress = outs.iter().any(|&b| arcs[b].cap > 0);
        arcs.retain(|x| x.src != w && x.dst != w && x.cap > 0);
        if left_egress {
            let mut net = Cuts::new(nn, &arcs, root);
            if targets.iter().any(|&v| net.flow(&[], &[v], k) < k) {
                return None;
            }
        }
    }
    Some(arcs)
}

/// Rooted connectivity queries: min cut between `{root} ∪ S` and `T` on the current arcs.
pub(super) struct Cuts {
    net: FlowNetwork,
    src: usize,
    sink: usize,
    e_s: usize,
    e_t: usize,
    root: usize,
}

impl Cuts {
    pub(super) fn new(nn: usize, arcs: &[LArc], root: usize) -> Cuts {
        let mut merged: std::collections::BTreeMap<(usize, usize), Cap> = Default::default();
        for a in arcs.iter().filter(|a| a.cap > 0 && a.src != a.dst) {
            *merged.entry((a.src, a.dst)).or_default() += a.cap;
        }
        let (src, sink) = (nn, nn + 1);
        let mut edges: Vec<(usize, usize, Cap)> = merged.into_iter().map(|((u, v), c)| (u, v, c)).collect();
        let e_s = edges.len();
        edges.extend((0..nn).map(|v| (src, v, if v == root { Cap::MAX / 4 } else { 0 })));
        let e_t = edges.len();
        edges.extend((0..nn).map(|v| (v, sink, 0)));
        Cuts { net: FlowNetwork::new(nn + 2, &edges), src, sink, e_s, e_t, root }
    }

    pub(super) fn flow(&mut self, from: &[usize], to: &[usize], limit: Cap) -> Cap {
        let inf = Cap::MAX / 4;
        for &u in from {
            self.net.set_capacity(self.e_s + u, inf);
        }
        for &v in to {
            self.net.set_capacity(self.e_t + v, inf);
        }
        let f = self.net.max_flow_limited(self.src, self.sink, limit);
        for &u in from.iter().filter(|&&u| u != self.root) {
            self.net.set_capacity(self.e_s + u, 0);
        }
        for &v in to {
            self.net.set_capacity(self.e_t + v, 0);
        }
        f
    }
}
