//! One test per real dump: ranks, GPU degree, per-GPU bandwidth and the exact allgather /
//! allreduce optima, each worked out from the rules (docs/topology-file.md) in a comment.
//! The allgather bound is max over node sets S of |S ∩ ranks| / B+(S); for allreduce the
//! reduce-scatter bound (the same on these symmetric boxes) is added: RS + AG.

use super::*;

fn r(n: i128, d: i128) -> Rat {
    Rat::new(n, d)
}

/// (ranks, min and max GPU out-degree) of a box.
fn shape(t: &Topology) -> (usize, usize, usize) {
    let m = t.metrics();
    (t.n_ranks(), m.min_degree, m.max_degree)
}

/// |S ∩ ranks| / B+(S) of the certificate the bound returns, recomputed from the links.
fn ratio_of_cut(t: &Topology) -> Rat {
    let cut = crate::bound::allgather(t).unwrap().cut;
    let inside = |v: usize| cut.contains(&v);
    let ranks = cut.iter().filter(|&&v| t.is_compute(v)).count() as i128;
    let out: Rat = t.links.iter().filter(|l| inside(l.src) && !inside(l.dst)).map(|l| l.bandwidth).sum();
    Rat::from_integer(ranks) / out
}

#[test]
fn hgx_a100() {
    let t = one_box("hgx-a100-8gpu-simai.xml");
    // 8 GPUs, each on the NVSwitch and on its PCIe switch: degree 2
    assert_eq!(shape(&t), (8, 2, 2));
    // sm 80: 6 rows x count 2 = 12 NVLinks x 20 = 240 to the one NVSwitch node
    assert_eq!(bw(&t, "gpu0", "nvswitch"), r(240, 1));
    // GPU uplink 16 GT/s x16 = 16 x 120 / 80 = 24; Ice Lake (modelid 106 >= 0x55): SKL 10
    assert_eq!(bw(&t, "gpu0", "pci-0000:11:00.0"), r(24, 1));
    assert_eq!(bw(&t, "cpu0", "cpu1"), r(10, 1));
    // 5 NICs of 200000 Mb/s = 25 GB/s (the bonded mlx5_bond_0..4)
    assert_eq!(t.nodes.iter().filter(|n| n.name.starts_with("nic")).count(), 5);
    // Bottleneck: one GPU alone receives 240 (NVSwitch) + 24 (PCIe) = 264 while the 7 others
    // send: AG = 7/264; RS is the same by symmetry: AR = 14/264 = 7/132.
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(7, 264));
    assert_eq!(ar, r(7, 132));
    assert_eq!(ratio_of_cut(&t), ag);
    // algbw = N / AG = 8 x 264 / 7
    assert_eq!(crate::bound::algbw(crate::ir::Collective::Allgather, 8, ag), Some(r(2112, 7)));
}

#[test]
fn ibm_h100_vm() {
    let t = one_box("ibm-h100-vsi-8gpu.xml");
    assert_eq!(shape(&t), (8, 2, 2));
    // sm 90: rows of 4 + 5 + 5 + 4 = 18 NVLinks x 20.6 = 370.8
    assert_eq!(bw(&t, "gpu0", "nvswitch"), r(3708, 10));
    // GPU link_width 0 is read as 16: Gen5 x16 = 16 x 240 / 80 = 48; its virtual bridge
    // 2.5 GT/s x1 = 15/80 = 0.1875; Sapphire Rapids (modelid 143 >= 0x8F): SRP 22
    let gpu0 = t.rank_node(0);
    let up = t.links[t.out_links(gpu0).next().unwrap()].dst;
    assert_eq!(bw(&t, "gpu0", &t.nodes[up].name.clone()), r(48, 1));
    assert_eq!(t.egress(up), r(48, 1) + r(3, 16) + r(48, 1));
    assert_eq!(bw(&t, "cpu0", "cpu1"), r(22, 1));
    // Bottleneck: GPU 0 with its bridge (and the bridge's NIC): 370.8 over NVLink plus the
    // bridge's 0.1875 uplink = 370.9875 = 29679/80 for 7 shards: AG = 7 x 80 / 29679.
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(560, 29679));
    assert_eq!(ar, r(1120, 29679));
    assert_eq!(ratio_of_cut(&t), ag);
}

#[test]
fn hgx_b200() {
    let t = one_box("hgx-b200-8gpu.xml");
    assert_eq!(shape(&t), (8, 2, 2));
    // sm 100: one row count 18 to the invisible switch: 18 x 40.1 = 721.8
    assert_eq!(bw(&t, "gpu0", "nvswitch"), r(7218, 10));
    // Emerald Rapids (modelid 207 >= 0xCF): ERP 40; socket NIC eth0 on its CPU at LOC_BW 5000
    assert_eq!(bw(&t, "cpu0", "cpu1"), r(40, 1));
    assert_eq!(bw(&t, "nic0", "cpu0"), r(5000, 1));
    // Bottleneck: one GPU: 721.8 + Gen5 x16 48 = 769.8 = 3849/5: AG = 7 x 5 / 3849.
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(35, 3849));
    assert_eq!(ar, r(70, 3849));
    assert_eq!(ratio_of_cut(&t), ag);
}

#[test]
fn perlmutter_nvlink_mesh() {
    let t = one_box("perlmutter-a100-4gpu-mesh.xml");
    // 4 GPUs, no NVSwitch: 3 peers + the NUMA node's root port: degree 4
    assert_eq!(shape(&t), (4, 4, 4));
    assert!(t.node_index("nvswitch").is_none());
    // sm 80, count 4 per peer: 4 x 20 = 80 each way (each GPU lists its own rows)
    assert_eq!(bw(&t, "gpu0", "gpu1"), r(80, 1));
    assert_eq!(bw(&t, "gpu3", "gpu2"), r(80, 1));
    // AMD (familyid 175): AMD_BW 16 between the 4 NUMA nodes
    assert_eq!(bw(&t, "cpu0", "cpu3"), r(16, 1));
    // Bottleneck: one GPU: 3 x 80 + Gen4 x16 24 = 264 for 3 shards: AG = 3/264 = 1/88.
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(1, 88));
    assert_eq!(ar, r(1, 44));
    assert_eq!(ratio_of_cut(&t), ag);
}

#[test]
fn pcie_only_two_sockets() {
    let t = one_box("pcie-rtx3090-8gpu-2socket.xml");
    // no NVLink: each GPU has only its PCIe switch
    assert_eq!(shape(&t), (8, 1, 1));
    assert_eq!(bw(&t, "gpu0", "pci-0000:0c:00.0"), r(24, 1));
    // Ice Lake: SKL 10; the IB NIC speed 56000 Mb/s = 7 GB/s
    assert_eq!(bw(&t, "cpu1", "cpu0"), r(10, 1));
    // Bottleneck: the socket link. S = socket 1 (4 GPUs) sends over the 10 GB/s SYS link
    // only: AG = 4/10 = 2/5 (algbw 8 / (2/5) = 20 GB/s); a single GPU is 7/24 < 2/5.
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(2, 5));
    assert_eq!(ar, r(4, 5));
    assert_eq!(ratio_of_cut(&t), ag);
}

#[test]
fn rccl_mi300x() {
    let t = one_box("rccl-mi300x-8gpu.xml");
    // 7 xGMI peers + the PCIe bridge: degree 8
    assert_eq!(shape(&t), (8, 8, 8));
    // gfx942: 48 per link, count 1 per peer, each direction from its own row
    assert_eq!(bw(&t, "gpu0", "gpu7"), r(48, 1));
    assert_eq!(bw(&t, "gpu7", "gpu0"), r(48, 1));
    // Bottleneck: one GPU: 7 x 48 + Gen5 x16 48 = 384 for 7 shards: AG = 7/384.
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(7, 384));
    assert_eq!(ar, r(7, 192));
    assert_eq!(ratio_of_cut(&t), ag);
}

#[test]
fn rccl_mi250() {
    let t = one_box("rccl-mi250-16gcd.xml");
    // 16 GCDs; 3 or 4 distinct xGMI peers + the PCIe bridge
    assert_eq!(shape(&t), (16, 4, 5));
    // legacy gcn 910 = gfx90a: 36 per link; the sibling die count 4 = 144
    assert_eq!(bw(&t, "gpu0", "gpu1"), r(144, 1));
    // every GCD has 7 xGMI links: 7 x 36 = 252, plus its Gen4... x16 uplink 48 = 300
    for v in 0..16 {
        assert_eq!(t.egress(t.rank_node(v)), r(300, 1), "gcd {v}");
    }
    // Bottleneck: the sibling pair 0, 1 with their two x8 bridges: into it come the 3 other
    // xGMI links of each die (2 x 3 x 36 = 216) and the bridges' uplinks, 16 GT/s x8 =
    // 8 x 120 / 80 = 12 each: 216 + 24 = 240 for 14 shards: AG = 14/240 = 7/120.
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(7, 120));
    assert_eq!(ar, r(7, 60));
    assert_eq!(ratio_of_cut(&t), ag);
    let cut = crate::bound::allgather(&t).unwrap().cut;
    assert!(!cut.contains(&t.rank_node(0)) && !cut.contains(&t.rank_node(1)));
}

#[test]
fn partial_skeleton_says_what_is_missing() {
    let e = nccl_topology("ndv4", &data("azure-ndv4-a100-partial.xml"), &ClusterSpec::single()).err().unwrap();
    let msg = e.to_string();
    assert!(matches!(e, crate::error::CollsynthError::BadInput(_)));
    assert!(msg.starts_with("no <gpu> element: this is a partial topology"), "{msg}");
    assert!(msg.contains("8 GPU PCI functions"), "{msg}");
    assert!(!msg.contains('\n'));
}

#[test]
fn same_input_same_bytes() {
    let a = crate::topology::json::write(&one_box("rccl-mi250-16gcd.xml"));
    let b = crate::topology::json::write(&one_box("rccl-mi250-16gcd.xml"));
    assert_eq!(a, b);
    // and the JSON reads back to the same topology
    let back = crate::topology::json::read(&a).unwrap().topology;
    assert_eq!(crate::topology::json::write(&back), a);
}
