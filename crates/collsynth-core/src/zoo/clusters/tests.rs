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
