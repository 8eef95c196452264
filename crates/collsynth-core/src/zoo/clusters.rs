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
mod tests {
    use super::super::from_spec;
    use super::super::testutil::shape;
    use crate::rational::Rat;

    fn counts(spec: &str) -> (usize, usize, usize) {
        let t = from_spec(spec).unwrap();
        (t.n_ranks(), t.n_switches(), t.links.len())
    }

    #[test]
    fn switches() {
        assert_eq!(shape("switch:8"), (8, 1, 1, 2));
        assert_eq!(counts("switch:8"), (8, 1, 16));
        assert_eq!(shape("switch:2"), (2, 1, 1, 2));
        let t = from_spec("switch:4,bw=25,lat=500ns").unwrap();
        assert_eq!(t.ingress(t.rank_node(3)), Rat::from_integer(25));
        assert_eq!(t.links[0].latency, 0.5);
        assert!(from_spec("switch:1").is_err());
        assert!(from_spec("switch:8:2").is_err());
    }

    /// TACOS's 2D Switch 8 x 4: 32 ranks, 4 node switches + 8 cross switches, every rank on
    /// two of them (64 link pairs); ingress per rank = node + cross bandwidth.
    #[test]
    fn switch2d() {
        assert_eq!(counts("switch2d:8,4"), (32, 12, 128));
        assert_eq!(shape("switch2d:8,4"), (32, 2, 2, 4));
        let t = from_spec("switch2d:8,4,bw=300/25").unwrap();
        assert_eq!(t.ingress(t.rank_node(9)), Rat::from_integer(325));
        assert_eq!(counts("switch2d:8,1"), (8, 1, 16));
        assert_eq!(counts("switch2d:1,4"), (4, 1, 8));
        for bad in ["switch2d:1,1", "switch2d:8", "switch2d:0,4", "switch2d:8,4,2"] {
            assert!(from_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fat_trees() {
        // 16 hosts, 4 pods x (2 edge + 2 agg) + 4 cores = 20 switches,
        // 16 host-edge + 16 edge-agg + 16 agg-core link pairs.
        assert_eq!(counts("fat-tree:4"), (16, 20, 96));
        assert_eq!(shape("fat-tree:4"), (16, 1, 1, 6));
        assert_eq!(counts("fat-tree:6"), (54, 45, 3 * 2 * 54));
        assert_eq!(shape("fat-tree:2"), (2, 1, 1, 6));
        let t = from_spec("fat-tree:4").unwrap();
        assert_eq!(t.nodes[t.rank_node(5)].name, "pod1.host1");
        assert_eq!(t.nodes[t.rank_node(5)].group.as_deref(), Some("pod1"));
        // agg 1 of pod 2 connects to cores 2 and 3.
        let agg = t.node_index("pod2.agg1").unwrap();
        for (core, linked) in [("core0", false), ("core1", false), ("core2", true), ("core3", true)] {
            assert_eq!(t.link_between(agg, t.node_index(core).unwrap()).is_some(), linked, "{core}");
        }
        let t = from_spec("fat-tree:4,bw=10/20/40").unwrap();
        let bw = |a: &str, b: &str| {
            t.links[t.link_between(t.node_index(a).unwrap(), t.node_index(b).unwrap()).unwrap()].bandwidth
        };
        assert_eq!(bw("pod0.host0", "pod0.edge0"), Rat::from_integer(10));
        assert_eq!(bw("pod0.edge0", "pod0.agg0"), Rat::from_integer(20));
        assert_eq!(bw("pod0.agg0", "core0"), Rat::from_integer(40));
        let msg = |spec: &str| from_spec(spec).unwrap_err().to_string();
        assert_eq!(msg("fat-tree:3"), "fat-tree:3: K must be even, got 3");
        for bad in ["fat-tree:3", "fat-tree:0", "fat-tree:66", "fat-tree:4,bw=1/2"] {
            assert!(from_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dragonflies() {
        // 3 intra + 1 global link per rank; local-global-local = 3 hops.
        assert_eq!(shape("dragonfly:4,5"), (20, 4, 4, 3));
        assert_eq!(counts("dragonfly:4,5"), (20, 0, 5 * 12 + 2 * 10));
        assert_eq!(shape("dragonfly:7,8"), (56, 7, 7, 3));
        let t = from_spec("dragonfly:4,5").unwrap();
        // Exactly one global link per pair of groups, each from a distinct rank.
        let mut pairs = std::collections::BTreeSet::new();
        for l in &t.links {
            let (gs, gd) = (l.src / 4, l.dst / 4);
            if gs != gd {
                assert!(pairs.insert((gs, gd)), "second link between groups {gs} and {gd}");
            }
        }
        assert_eq!(pairs.len(), 20);
        // Rank 1 of group 0 links to group 2, rank (5-2-1) = 2.
        assert!(t.link_between(1, 2 * 4 + 2).is_some());
        // Two global links per group pair when A = 2(G-1).
        assert_eq!(counts("dragonfly:4,3"), (12, 0, 3 * 12 + 2 * 6));
        let t = from_spec("dragonfly:4,5,bw=400/200").unwrap();
        assert_eq!(t.ingress(0), Rat::from_integer(3 * 400 + 200));
        assert!(from_spec("dragonfly:4,6").unwrap_err().to_string().contains("A must be a multiple of G-1"));
        for bad in ["dragonfly:4,6", "dragonfly:4,4", "dragonfly:4", "dragonfly:4,1", "dragonfly:0,5"] {
            assert!(from_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ring_fc_switch() {
        // Per rank: 1 ring + 3 fc + 1 switch link; ring/fc 1 hop each, switch 2 hops.
        assert_eq!(shape("rfs:2,4,8"), (64, 5, 5, 4));
        assert_eq!(counts("rfs:2,4,8"), (64, 8, 64 + 192 + 128));
        assert_eq!(shape("rfs:4,2,3"), (24, 4, 4, 2 + 1 + 2));
        assert_eq!(counts("rfs:2,4,1"), (8, 0, 8 + 24));
        let t = from_spec("rfs:2,4,8,bw=200/100/50").unwrap();
        assert_eq!(t.ingress(t.rank_node(9)), Rat::from_integer(200 + 300 + 50));
        assert_eq!(t.nodes[t.rank_node(9)].name, "node1.npu1");
        assert_eq!(t.nodes[t.rank_node(9)].group.as_deref(), Some("node1"));
        for bad in ["rfs:1,1,1", "rfs:2,4", "rfs:2,0,8", "rfs:2,4,8,bw=1/2"] {
            assert!(from_spec(bad).is_err(), "{bad}");
        }
    }
}
