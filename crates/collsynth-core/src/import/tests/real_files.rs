//! One test per real dump: what NCCL reads (per-link bandwidths, on the physical box), what
//! is left of it once only the runtime's routes remain, and the exact allgather / allreduce
//! optima of the result, each worked out by hand in a comment. The allgather bound is max
//! over node sets S of |S ∩ ranks| / B+(S); for allreduce the reduce-scatter bound (the same
//! on these symmetric boxes) is added: RS + AG.

use super::*;

fn r(n: i128, d: i128) -> Rat {
    Rat::new(n, d)
}

/// (ranks, min and max GPU out-degree) of a box.
fn shape(t: &Topology) -> (usize, usize, usize) {
    let m = t.metrics().unwrap();
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

/// No node but GPUs and the NVSwitch: NCCL's GPU-to-GPU paths on an NVLink box.
fn nvlink_only(t: &Topology) -> bool {
    t.nodes.iter().all(|n| n.name.starts_with("gpu") || n.name == "nvswitch")
}

#[test]
fn hgx_a100() {
    let m = physical("hgx-a100-8gpu-simai.xml");
    // sm 80: 6 rows x count 2 = 12 NVLinks x 20 = 240 to the one NVSwitch node; GPU uplink
    // 16 GT/s x16 = 16 x 120 / 80 = 24; Ice Lake (modelid 106 >= 0x55): SKL 10
    assert_eq!(phys_bw(&m, "gpu0", "nvswitch"), r(240, 1));
    assert_eq!(phys_bw(&m, "gpu0", "pci-0000:11:00.0"), r(24, 1));
    assert_eq!(phys_bw(&m, "cpu0", "cpu1"), r(10, 1));
    // 5 NICs of 200000 Mb/s = 25 GB/s (the bonded mlx5_bond_0..4)
    assert_eq!(m.nics.len(), 5);
    assert!(m.nics.iter().all(|n| n.port == r(25, 1)));
    let t = one_box("hgx-a100-8gpu-simai.xml");
    // NCCL's path between any two GPUs is NVL through the NVSwitch: nothing else is left
    assert_eq!(shape(&t), (8, 1, 1));
    assert!(nvlink_only(&t));
    // Bottleneck: one GPU receives the 7 other shards over its 240: AG = 7/240; RS is the
    // same by symmetry: AR = 7/120 (it was 7/264 with PCIe through the CPUs counted).
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(7, 240));
    assert_eq!(ar, r(7, 120));
    assert_eq!(ratio_of_cut(&t), ag);
    // algbw = N / AG = 8 x 240 / 7
    assert_eq!(crate::bound::algbw(crate::ir::Collective::Allgather, 8, ag), Some(r(1920, 7)));
}

#[test]
fn ibm_h100_vm() {
    let m = physical("ibm-h100-vsi-8gpu.xml");
    // sm 90: rows of 4 + 5 + 5 + 4 = 18 NVLinks x 20.6 = 370.8
    assert_eq!(phys_bw(&m, "gpu0", "nvswitch"), r(3708, 10));
    // GPU link_width 0 is read as 16: Gen5 x16 = 16 x 240 / 80 = 48; its virtual bridge
    // 2.5 GT/s x1 = 15/80 = 0.1875; Sapphire Rapids (modelid 143 >= 0x8F): SRP 22
    assert_eq!(phys_bw(&m, "gpu0", "pci-0000:a1:00.0"), r(48, 1));
    assert_eq!(phys_bw(&m, "pci-0000:a1:00.0", "cpu0"), r(3, 16));
    assert_eq!(phys_bw(&m, "cpu0", "cpu1"), r(22, 1));
    let t = one_box("ibm-h100-vsi-8gpu.xml");
    assert_eq!(shape(&t), (8, 1, 1));
    assert!(nvlink_only(&t));
    // Bottleneck: one GPU, 7 shards over NVLink alone: 7 / 370.8 = 70/3708 = 35/1854
    // (algbw 8 x 370.8 / 7 = 423.77; the bridge's 0.1875 no longer counts: 560/29679 before).
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(35, 1854));
    assert_eq!(ar, r(35, 927));
    assert_eq!(ratio_of_cut(&t), ag);
}

#[test]
fn hgx_b200() {
    let m = physical("hgx-b200-8gpu.xml");
    // sm 100: one row count 18 to the invisible switch: 18 x 40.1 = 721.8
    assert_eq!(phys_bw(&m, "gpu0", "nvswitch"), r(7218, 10));
    // Emerald Rapids (modelid 207 >= 0xCF): ERP 40; socket NIC eth0 on its CPU at LOC_BW
    // 5000, once (the file lists it under both CPUs)
    assert_eq!(phys_bw(&m, "cpu0", "cpu1"), r(40, 1));
    assert_eq!(phys_bw(&m, "nic0", "cpu0"), r(5000, 1));
    assert_eq!(m.nics.len(), 1);
    let t = one_box("hgx-b200-8gpu.xml");
    assert_eq!(shape(&t), (8, 1, 1));
    assert!(nvlink_only(&t));
    // Bottleneck: one GPU: 7 / 721.8 = 70/7218 = 35/3609 (35/3849 with PCIe 48 counted).
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(35, 3609));
    assert_eq!(ar, r(70, 3609));
    assert_eq!(ratio_of_cut(&t), ag);
}

#[test]
fn perlmutter_nvlink_mesh() {
    let m = physical("perlmutter-a100-4gpu-mesh.xml");
    // sm 80, count 4 per peer: 4 x 20 = 80 each way (each GPU lists its own rows);
    // AMD (familyid 175): AMD_BW 16 between the 4 NUMA nodes
    assert_eq!(phys_bw(&m, "gpu0", "gpu1"), r(80, 1));
    assert_eq!(phys_bw(&m, "gpu3", "gpu2"), r(80, 1));
    assert_eq!(phys_bw(&m, "cpu0", "cpu3"), r(16, 1));
    let t = one_box("perlmutter-a100-4gpu-mesh.xml");
    // 4 GPUs, every pair on its own NVLinks: 3 peers, no switch at all
    assert_eq!(shape(&t), (4, 3, 3));
    assert_eq!(t.n_switches(), 0);
    // Bottleneck: one GPU: 3 shards over 3 x 80 = 240: AG = 1/80 (1/88 with PCIe 24).
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(1, 80));
    assert_eq!(ar, r(1, 40));
    assert_eq!(ratio_of_cut(&t), ag);
}

#[test]
fn pcie_only_two_sockets() {
    let t = one_box("pcie-rtx3090-8gpu-2socket.xml");
    // no NVLink: the PCIe tree stays (its one path between two GPUs is NCCL's: through
    // the lowest common switch, else the CPUs); a single box has no NIC
    assert_eq!(shape(&t), (8, 1, 1));
    assert_eq!(bw(&t, "gpu0", "pci-0000:0c:00.0"), r(24, 1));
    assert!(t.node_index("nic0").is_none());
    // Ice Lake: SKL 10
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
    // 7 xGMI peers: degree 7; gfx942: 48 per link, count 1 per peer, each direction from
    // its own row
    assert_eq!(shape(&t), (8, 7, 7));
    assert_eq!(bw(&t, "gpu0", "gpu7"), r(48, 1));
    assert_eq!(bw(&t, "gpu7", "gpu0"), r(48, 1));
    assert!(nvlink_only(&t));
    // Bottleneck: one GPU: 7 shards over 7 x 48 = 336: AG = 1/48 (7/384 with PCIe 48).
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(1, 48));
    assert_eq!(ar, r(1, 24));
    assert_eq!(ratio_of_cut(&t), ag);
}

#[test]
fn rccl_mi250() {
    let m = physical("rccl-mi250-16gcd.xml");
    // legacy gcn 910 = gfx90a: 36 per link; the sibling die count 4 = 144; bridges
    // 16 GT/s x8 = 8 x 120 / 80 = 12
    assert_eq!(phys_bw(&m, "gpu0", "gpu1"), r(144, 1));
    assert_eq!(phys_bw(&m, "pci-0000:4c:00.0", "pci-0000:49:00.0"), r(12, 1));
    let imported = nccl_topology("mi250", &data("rccl-mi250-16gcd.xml"), &ClusterSpec::single()).unwrap();
    // xGMI joins all 16 GCDs, so PCIe carries none of their traffic; 96 ordered pairs are
    // more than two xGMI links apart (NCCL would use PCIe there): said in a warning
    assert!(imported.warnings.iter().any(|w| w.starts_with("96 ordered GPU pairs")), "{:?}", imported.warnings);
    let t = imported.topology;
    assert_eq!(shape(&t), (16, 3, 4));
    // every GCD has 7 xGMI links: 7 x 36 = 252
    for v in 0..16 {
        assert_eq!(t.egress(t.rank_node(v)), r(252, 1), "gcd {v}");
    }
    // Bottleneck: the sibling pair 0, 1 (4 links between them): into it come the 3 other
    // xGMI links of each die, 2 x 3 x 36 = 216, for 14 shards: AG = 14/216 = 7/108
    // (7/120 with the two x8 bridges' 24 counted).
    let (ag, ar) = optima(&t);
    assert_eq!(ag, r(7, 108));
    assert_eq!(ar, r(7, 54));
    assert_eq!(ratio_of_cut(&t), ag);
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
