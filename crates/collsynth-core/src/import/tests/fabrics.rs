//! Boxes joined by fabrics: node counts, port bandwidths and the exact optima that follow.

use super::*;

fn cluster(boxes: usize, fabric: &str) -> ClusterSpec {
    ClusterSpec { boxes, fabric: Some(Fabric::parse(fabric).unwrap()), ..ClusterSpec::single() }
}

fn build(file: &str, spec: &ClusterSpec) -> Topology {
    nccl_topology("c", &data(file), spec).unwrap_or_else(|e| panic!("{e}")).topology
}

#[test]
fn rails_join_nic_i_of_every_box() {
    let f = "hgx-a100-8gpu-simai.xml";
    let t = build(f, &cluster(2, "rails"));
    assert_eq!(t.n_ranks(), 16);
    assert_eq!(t.node_index("box1.gpu0"), Some(t.rank_node(8)));
    assert_eq!(t.nodes[t.rank_node(8)].group.as_deref(), Some("box1"));
    // 5 NICs per box, but mlx5_bond_0 hangs on the CPU (a PHB path for every GPU) while
    // each pair of GPUs has one of the 4 others behind its PCIe switches (PXB): NCCL's local
    // NIC (ncclTopoGetLocalNet) is never bond_0, so 4 rails. A rail joins NIC i of both
    // boxes; the NIC's port is 200000 Mb/s = 25 but its Gen4 x16 uplink 24, which its two
    // GPUs share at 12 each (their feeds)
    assert!(t.node_index("rail4").is_none());
    for i in 0..4 {
        let rail = t.node_index(&format!("rail{i}")).unwrap();
        assert_eq!(t.out_links(rail).len(), 2);
        assert_eq!(t.egress(rail), Rat::from_integer(48));
    }
    assert_eq!(bw(&t, "box0.gpu0", "box0.nic1.tx"), Rat::from_integer(12));
    assert_eq!(bw(&t, "box0.nic1.rx", "box0.gpu1"), Rat::from_integer(12));
    // Bottleneck: box 1 sends 8 shards into box 0 over 4 NIC links of 24: AG = 8/96 = 1/12
    // (one GPU: 15 / (240 + 12) is smaller). It was 1/15 with bond_0 and PCIe P2P counted.
    let (ag, ar) = optima(&t);
    assert_eq!(ag, Rat::new(1, 12));
    assert_eq!(ar, Rat::new(1, 6));
}

#[test]
fn fabric_bandwidth_overrides_the_nic_ports() {
    let f = "hgx-a100-8gpu-simai.xml";
    let mut spec = cluster(2, "rails");
    spec.fabric_bandwidth = Some(Rat::from_integer(10));
    spec.fabric_latency = 2.5;
    spec.box_latency = 0.25;
    let t = build(f, &spec);
    let rail = t.node_index("rail0").unwrap();
    let l = &t.links[t.out_links(rail).next().unwrap()];
    assert_eq!((l.bandwidth, l.latency), (Rat::from_integer(10), 2.5));
    let g = &t.links[t.out_links(t.rank_node(0)).next().unwrap()];
    assert_eq!(g.latency, 0.25);
    // the two feeds of a NIC share the 10 (5 each), so each side of the NIC passes on what
    // it takes in
    assert_eq!(bw(&t, "box0.gpu0", "box0.nic1.tx"), Rat::from_integer(5));
    // box 0 now receives over 4 rail links of 10: AG = 8/40 = 1/5
    assert_eq!(optima(&t).0, Rat::new(1, 5));
}

#[test]
fn one_switch_for_socket_nics() {
    let f = "hgx-b200-8gpu.xml";
    let t = build(f, &cluster(2, "switch"));
    let hub = t.node_index("fabric").unwrap();
    // eth0 (10000 Mb/s = 1.25 GB/s) is listed under each CPU but is one device: one NIC
    // per box, the local NIC of all 8 GPUs (the only one), each feeding 1.25 / 8 = 5/32
    assert_eq!(t.out_links(hub).len(), 2);
    assert_eq!(t.egress(hub), Rat::new(5, 2));
    assert_eq!(bw(&t, "box1.gpu7", "box1.nic0.tx"), Rat::new(5, 32));
    // Bottleneck: box 0 receives 8 shards over 1.25: AG = 8 / (5/4) = 32/5 (16/5 when eth0
    // counted twice)
    assert_eq!(optima(&t).0, Rat::new(32, 5));
}

#[test]
fn fat_tree_hosts_are_the_nics() {
    let f = "perlmutter-a100-4gpu-mesh.xml";
    let t = build(f, &cluster(4, "fat-tree:4"));
    // 4 boxes x 4 ranks; k = 4: 8 edge + 8 agg + 4 core switches, 16 host ports all used
    assert_eq!(t.n_ranks(), 16);
    assert_eq!(t.nodes.iter().filter(|n| n.name.starts_with("ft.")).count(), 20);
    let edge = t.node_index("ft.pod0.edge0").unwrap();
    // edge 0 holds NIC ports 0 and 1 (box 0's nic0, nic1: each GPU's own NIC, fed at its
    // Gen4 x16 24) and the pod's 2 aggregations
    assert_eq!(t.out_links(edge).len(), 4);
    assert!(t.link_between(edge, t.node_index("box0.nic1.rx").unwrap()).is_some());
    assert!(t.link_between(t.node_index("box0.nic1.tx").unwrap(), edge).is_some());
    // Bottleneck: box 3 receives 12 shards over its 4 NIC uplinks of Gen4 x16 = 24:
    // AG = 12/96 = 1/8 (the fat tree itself is non-blocking at 25 per link).
    assert_eq!(optima(&t).0, Rat::new(1, 8));
}

#[test]
fn fabric_errors() {
    let f = "perlmutter-a100-4gpu-mesh.xml";
    let err = |spec: &ClusterSpec| nccl_topology("c", &data(f), spec).err().unwrap().to_string();
    assert_eq!(err(&cluster(5, "fat-tree:4")), "fat-tree:4 has 16 host ports, the cluster needs 20 (5 boxes x 4 NICs)");
    assert!(err(&ClusterSpec { boxes: 2, ..ClusterSpec::single() }).contains("needs a fabric"));
    assert!(err(&ClusterSpec { boxes: 0, ..ClusterSpec::single() }).contains("boxes must be between 1"));
    let mut s = cluster(2, "switch");
    s.fabric_bandwidth = Some(Rat::from_integer(0));
    assert!(err(&s).contains("fabric bandwidth must be positive"));
    s = cluster(2, "switch");
    s.fabric_latency = f64::NAN;
    assert!(err(&s).contains("fabric latency must be a finite number"));
    for bad in ["ring", "fat-tree:3", "fat-tree:0", "fat-tree:66", "fat-tree:x", "fat-tree"] {
        assert!(Fabric::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(Fabric::parse(" fat-tree:8 ").unwrap(), Fabric::FatTree(8));
    // a box without NICs cannot join a fabric
    let pcie_no_nic = data("pcie-rtx3090-8gpu-2socket.xml").replace("<nic>", "<x>").replace("</nic>", "</x>");
    let e = nccl_topology("c", &pcie_no_nic, &cluster(2, "rails")).err().unwrap().to_string();
    assert!(e.contains("no NIC"), "{e}");
}

#[test]
fn zoo_spec_builds_the_same_cluster() {
    let path = format!("{}/../../tests/data/nccl-topo/hgx-a100-8gpu-simai.xml", env!("CARGO_MANIFEST_DIR"));
    let spec = format!("nccl:{path}*2,fabric=rails,bw=10,lat=0.25/2.5");
    let z = crate::zoo::from_spec(&spec).unwrap();
    let mut c = cluster(2, "rails");
    c.fabric_bandwidth = Some(Rat::from_integer(10));
    c.box_latency = 0.25;
    c.fabric_latency = 2.5;
    let direct = nccl_topology(&spec, &data("hgx-a100-8gpu-simai.xml"), &c).unwrap().topology;
    assert_eq!(crate::topology::json::write(&z), crate::topology::json::write(&direct));
    let ft = crate::zoo::from_spec(&format!("nccl:{path}*2,fabric=fat-tree,k=4")).unwrap();
    assert_eq!(ft.n_ranks(), 16);
    let one = crate::zoo::from_spec(&format!("nccl:{path}")).unwrap();
    assert_eq!(one.n_ranks(), 8);
    for (bad, why) in [
        (format!("nccl:{path}*2,fabric=fat-tree"), "needs k=K"),
        (format!("nccl:{path}*2,fabric=rails,k=4"), "k= applies to fabric=fat-tree only"),
        (format!("nccl:{path}*0"), "boxes N must be between 1"),
        (format!("nccl:{path}*x"), "boxes N must be between 1"),
        (format!("nccl:{path},bw=1/2"), "bw= is the fabric bandwidth"),
        ("nccl:/nonexistent/file.xml".to_string(), "cannot read"),
        (format!("nccl:{path}*2,fabric=mesh"), "unknown fabric 'mesh'"),
    ] {
        let e = crate::zoo::from_spec(&bad).err().unwrap().to_string();
        assert!(e.contains(why), "{bad}: {e}");
    }
}
