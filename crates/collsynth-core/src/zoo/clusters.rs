//! Switched and hierarchical clusters: `switch`, `switch2d`, `fat-tree`, `dragonfly`, `rfs`.
//!
//! Switches are `switch` nodes (forward only); every link is a bidirectional pair with the
//! full bandwidth each way. Nodes carry the pod / group / node label as their `group`, and
//! ranks go pod by pod (group by group, node by node).

use super::{node_name, Family, LinkParams, Spec};
use crate::error::{CollsynthError, Result};
use crate::topology::{Topology, TopologyBuilder};

pub(super) const FAMILIES: &[&Family] = &[
    &Family { name: "switch", args: "N", help: "N ranks on one switch (one level)", options: &[], build: switch },
    &Family {
        name: "switch2d",
        args: "A,B",
        help: "TACOS 2D Switch: B nodes of A ranks, a switch per node and one per local index across nodes; bw= node/cross (paper: 300/25)",
        options: &[],
        build: switch2d,
    },
    &Family {
        name: "fat-tree",
        args: "K",
        help: "k-ary fat tree, K even: K^3/4 hosts, K pods of K/2 edge + K/2 agg, (K/2)^2 cores; bw= host/agg/core",
        options: &[],
        build: fat_tree,
    },
    &Family {
        name: "dragonfly",
        args: "A,G",
        help:
            "TACOS DragonFly: G groups of A ranks, fully connected, 1 global link per rank (G-1 | A); bw= intra/global",
        options: &[],
        build: dragonfly,
    },
    &Family {
        name: "rfs",
        args: "A,B,C",
        help: "TACOS 3D Ring(A) x FullyConnected(B) x Switch(C), x fastest; bw= ring/fc/switch (paper: 200/100/50)",
        options: &[],
        build: rfs,
    },
];

/// Largest number of directed links a family may generate (keeps memory bounded).
const MAX_LINKS: usize = 1 << 24;

/// Refuse a topology whose directed link count `links` (an upper estimate) exceeds [`MAX_LINKS`].
pub(super) fn check_size(s: &Spec, links: usize) -> Result<()> {
    if links > MAX_LINKS {
        return Err(CollsynthError::bad(format!("{}: too large ({links} links, at most {MAX_LINKS})", s.text)));
    }
    Ok(())
}

/// Positional argument `i` as exactly `count` integers (`A,B,..`); `usage` is shown on error.
fn fixed_ints(s: &Spec, i: usize, count: usize, usage: &str) -> Result<Vec<usize>> {
    let v = s.ints(i, usage)?;
    if v.len() != count {
        return Err(CollsynthError::bad(format!("{}: expected {usage}", s.text)));
    }
    Ok(v)
}

/// Link every node of `ids` to the switch `hub`, both ways.
pub(super) fn star(b: &mut TopologyBuilder, hub: usize, ids: &[usize], p: LinkParams) {
    for &v in ids {
        b.bilink(v, hub, p.bw, p.lat);
    }
}

/// Link every pair of `ids`, both ways.
fn clique(b: &mut TopologyBuilder, ids: &[usize], p: LinkParams) {
    for (i, &u) in ids.iter().enumerate() {
        for &v in &ids[i + 1..] {
            b.bilink(u, v, p.bw, p.lat);
        }
    }
}

/// Bidirectional ring over `ids`: two nodes get one link pair, one node none.
fn ring(b: &mut TopologyBuilder, ids: &[usize], p: LinkParams) {
    for w in ids.windows(2) {
        b.bilink(w[0], w[1], p.bw, p.lat);
    }
    if ids.len() > 2 {
        b.bilink(ids[ids.len() - 1], ids[0], p.bw, p.lat);
    }
}

/// `switch:N`: ranks `n0..` on the switch `sw`. N >= 2 (like `ring`).
fn switch(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "switch:N")?;
    let n = s.int(0, "N", 2, 1 << 20)?;
    let p = s.uniform_params(1)?[0];
    let mut b = TopologyBuilder::new(&s.text);
    let ids: Vec<usize> = (0..n).map(|i| b.compute(node_name("n", i), None)).collect();
    let hub = b.switch("sw", None);
    star(&mut b, hub, &ids, p);
    b.build()
}

/// `switch2d:A,B` (TACOS's "2D Switch", Fig. 16: 8 x 4 at 300/25 GB/s, "similar to DGX"):
/// rank i of node j is `node{j}.npu{i}` (group `node{j}`), rank index i + A j. Dimension 1:
/// the switch `node{j}.sw` joins node j's A ranks; dimension 2: the switch `sw{i}` joins rank
/// i of every node. Both levels are one-level switches, so `--switch-mode unwind:d` unwinds
/// each dimension as the paper does. A size-1 dimension adds no switch.
fn switch2d(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "switch2d:A,B")?;
    let v = fixed_ints(s, 0, 2, "switch2d:A,B (ranks per node, nodes)")?;
    let (a, nodes) =
        (s.check_range(v[0], "A (ranks per node)", 1, 1 << 20)?, s.check_range(v[1], "B (nodes)", 1, 1 << 20)?);
    if a * nodes < 2 {
        return Err(CollsynthError::bad(format!("{}: needs at least 2 ranks", s.text)));
    }
    check_size(s, a.saturating_mul(nodes).saturating_mul(4))?;
    let [node_p, cross_p]: [LinkParams; 2] = s.uniform_params(2)?.try_into().expect("2 levels");
    let mut b = TopologyBuilder::new(&s.text);
    let ranks: Vec<Vec<usize>> = (0..nodes)
        .map(|j| (0..a).map(|i| b.compute(format!("node{j}.npu{i}"), Some(&format!("node{j}")))).collect())
        .collect();
    if a > 1 {
        for (j, ids) in ranks.iter().enumerate() {
            let hub = b.switch(format!("node{j}.sw"), Some(&format!("node{j}")));
            star(&mut b, hub, ids, node_p);
        }
    }
    if nodes > 1 {
        for i in 0..a {
            let hub = b.switch(node_name("sw", i), None);
            star(&mut b, hub, &ranks.iter().map(|ids| ids[i]).collect::<Vec<_>>(), cross_p);
        }
    }
    b.build()
}

/// `fat-tree:K`: pod p has hosts `pod{p}.host{i}` (i = e*K/2 + h under edge e), edges
/// `pod{p}.edge{e}`, aggregations `pod{p}.agg{j}`, all in group `pod{p}`; cores `core{c}`.
/// Levels: host-edge, edge-agg (full bipartite per pod), agg-core (agg j of every pod on
/// cores j*K/2 .. (j+1)*K/2 - 1). Diameter 6 hops for K >= 4 (host-edge-agg-core-agg-edge-host).
fn fat_tree(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "fat-tree:K")?;
    let k = s.int(0, "K", 2, 64)?;
    if k % 2 != 0 {
        return Err(CollsynthError::bad(format!("{}: K must be even, got {k}", s.text)));
    }
    let [host, agg, core]: [LinkParams; 3] = s.uniform_params(3)?.try_into().expect("3 levels");
    let half = k / 2;
    let mut b = TopologyBuilder::new(&s.text);
    let mut aggs = Vec::with_capacity(k);
    for pod in 0..k {
        let g = format!("pod{pod}");
        let hosts: Vec<usize> = (0..half * half).map(|i| b.compute(format!("{g}.host{i}"), Some(&g))).collect();
        let edges: Vec<usize> = (0..half).map(|e| b.switch(format!("{g}.edge{e}"), Some(&g))).collect();
        let pod_aggs: Vec<usize> = (0..half).map(|j| b.switch(format!("{g}.agg{j}"), Some(&g))).collect();
        for (e, &edge) in edges.iter().enumerate() {
            star(&mut b, edge, &hosts[e * half..(e + 1) * half], host);
            star(&mut b, edge, &pod_aggs, agg);
        }
        aggs.push(pod_aggs);
    }
    let cores: Vec<usize> = (0..half * half).map(|c| b.switch(node_name("core", c), None)).collect();
    for pod_aggs in &aggs {
        for (j, &a) in pod_aggs.iter().enumerate() {
            star(&mut b, a, &cores[j * half..(j + 1) * half], core);
        }
    }
    b.build()
}

/// `dragonfly:A,G`: G groups of A ranks `group{h}.npu{k}` (group `group{h}`), fully connected
/// inside a group (level 1), one global link per rank (level 2). Rank k of group h links to
/// group (h + k mod (G-1) + 1) mod G, to the rank with index c(G-1) + (G-2 - k mod (G-1)),
/// c = k div (G-1). With G = A+1 (the paper's balanced DragonFly: 4,5 and 7,8) this is the
/// wiring peer (G-2-k) mod G and gives exactly one global link per pair of groups;
/// with A = m(G-1) every pair of groups gets m. Other (A, G) are refused: some rank would
/// have no partner or group pairs would be unequally linked.
fn dragonfly(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "dragonfly:A,G")?;
    let v = fixed_ints(s, 0, 2, "dragonfly:A,G (ranks per group, groups)")?;
    let a = s.check_range(v[0], "A (ranks per group)", 1, 1024)?;
    let g = s.check_range(v[1], "G (groups)", 2, 1025)?;
    if a % (g - 1) != 0 {
        return Err(CollsynthError::bad(format!(
            "{}: A must be a multiple of G-1 (one global link per rank, as many between every \
             pair of groups; the paper uses G = A+1), got A={a}, G={g}",
            s.text
        )));
    }
    check_size(s, g * a * a)?;
    let [local, global]: [LinkParams; 2] = s.uniform_params(2)?.try_into().expect("2 levels");
    let mut b = TopologyBuilder::new(&s.text);
    for h in 0..g {
        let grp = format!("group{h}");
        let ids: Vec<usize> = (0..a).map(|k| b.compute(format!("{grp}.npu{k}"), Some(&grp))).collect();
        clique(&mut b, &ids, local);
    }
    for h in 0..g {
        for k in 0..a {
            let (r, c) = (k % (g - 1), k / (g - 1));
            let (h2, k2) = ((h + r + 1) % g, c * (g - 1) + (g - 2 - r));
            if (h, k) < (h2, k2) {
                b.bilink(h * a + k, h2 * a + k2, global.bw, global.lat);
            }
        }
    }
    b.build()
}

/// `rfs:A,B,C`: rank (r, f, s) = `node{s}.npu{r + A f}` (group `node{s}`), rank index
/// r + A(f + B s). Ring along r (A = 2: one link pair), fully connected along f, and for each
/// (r, f) a switch `sw{r + A f}` joining the C ranks (r, f, *). A size-1 dimension adds
/// nothing (no switch when C = 1). Needs at least 2 ranks.
fn rfs(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "rfs:A,B,C")?;
    let v = fixed_ints(s, 0, 3, "rfs:A,B,C (ring, fully connected, switch sizes)")?;
    for (&d, what) in v.iter().zip(["A (ring size)", "B (fully connected size)", "C (switch size)"]) {
        s.check_range(d, what, 1, 1 << 20)?;
    }
    let (a, bb, c) = (v[0], v[1], v[2]);
    let n = a.saturating_mul(bb).saturating_mul(c);
    if n < 2 {
        return Err(CollsynthError::bad(format!("{}: needs at least 2 ranks", s.text)));
    }
    check_size(s, n.saturating_mul(bb + 3))?;
    let [ring_p, fc_p, sw_p]: [LinkParams; 3] = s.uniform_params(3)?.try_into().expect("3 levels");
    let mut b = TopologyBuilder::new(&s.text);
    for node in 0..c {
        let grp = format!("node{node}");
        for j in 0..a * bb {
            b.compute(format!("{grp}.npu{j}"), Some(&grp));
        }
    }
    let id = |r: usize, f: usize, node: usize| r + a * (f + bb * node);
    for node in 0..c {
        for f in 0..bb {
            ring(&mut b, &(0..a).map(|r| id(r, f, node)).collect::<Vec<_>>(), ring_p);
        }
        for r in 0..a {
            clique(&mut b, &(0..bb).map(|f| id(r, f, node)).collect::<Vec<_>>(), fc_p);
        }
    }
    if c > 1 {
        for j in 0..a * bb {
            let hub = b.switch(node_name("sw", j), None);
            star(&mut b, hub, &(0..c).map(|node| j + a * bb * node).collect::<Vec<_>>(), sw_p);
        }
    }
    b.build()
}

#[cfg(test)]
mod tests;
