//! Real machines, as the ForestColl paper (§5.2-5.3) and the vendors' published figures
//! define them: `dgx-a100`, `mi250`, `dgx1`, `hgx-h100`.
//!
//! Defaults are the machines' real per-direction bandwidths; `bw=`/`lat=` override them per
//! level. GPUs are `box{b}.gpu{i}` in group `box{b}`, ranks box by box; box-local switches
//! are `box{b}.nvsw` / `box{b}.nic{i}`, shared ones `ib{j}` / `rail{i}` (no group).

use super::clusters::star;
use super::{Family, LinkParams, Spec};
use crate::error::Result;
use crate::rational::Rat;
use crate::topology::{Topology, TopologyBuilder};

pub(super) const FAMILIES: &[&Family] = &[
    &Family {
        name: "dgx-a100",
        args: "N",
        help: "N DGX A100 boxes: 8 GPUs on an NVSwitch (300), a 25 GB/s NIC per GPU on ib{i mod 2}; bw= nvswitch/ib",
        options: &[],
        build: dgx_a100,
    },
    &Family {
        name: "mi250",
        args: "N",
        help: "N MI250 clusters: 16 GCDs on xGMI (50 GB/s x multiplicity), 16 GB/s per GCD to ib0; bw= xgmi/ib; gcds=G keeps GCDs 0..G-1 of each (8: ForestColl's 8+8)",
        options: &["gcds"],
        build: mi250,
    },
    &Family {
        name: "dgx1",
        args: "",
        help: "DGX-1: 8 V100 in the hybrid cube-mesh, 25 GB/s per NVLink (6 per GPU)",
        options: &[],
        build: dgx1,
    },
    &Family {
        name: "hgx-h100",
        args: "N",
        help: "N HGX H100 boxes: 8 GPUs on an NVSwitch (450), GPU i's 50 GB/s NIC on rail{i}; bw= nvswitch/ib",
        options: &[],
        build: hgx_h100,
    },
];

/// xGMI link multiplicity of one MI250 node (16 GCDs), from ForestColl's `MI250_ADJ_MAT`.
const MI250_XGMI: [[u8; 16]; 16] = [
    [0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
    [4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
    [0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0],
    [0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0],
    [2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0],
    [0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0],
    [0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0],
    [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2],
    [0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0],
];

/// NVLink count of the DGX-1 (V100) hybrid cube-mesh, as in msccl-tools.
const DGX1_NVLINK: [[u8; 8]; 8] = [
    [0, 2, 1, 1, 2, 0, 0, 0],
    [2, 0, 1, 2, 0, 1, 0, 0],
    [1, 1, 0, 2, 0, 0, 2, 0],
    [1, 2, 2, 0, 0, 0, 0, 1],
    [2, 0, 0, 0, 0, 2, 1, 1],
    [0, 1, 0, 0, 2, 0, 1, 2],
    [0, 0, 2, 0, 1, 1, 0, 2],
    [0, 0, 0, 1, 1, 2, 2, 0],
];

/// GPUs per DGX A100 / HGX H100 box.
const BOX_GPUS: usize = 8;

/// The box count of `family:N` (1 ..= 4096).
fn boxes(s: &Spec, usage: &str) -> Result<usize> {
    s.expect_args(1, 1, usage)?;
    s.int(0, "N (boxes)", 1, 4096)
}

/// Add `count` GPUs `box{bx}.gpu{i}` in group `box{bx}` (the next ranks); returns their ids.
fn gpus(tb: &mut TopologyBuilder, bx: usize, count: usize) -> Vec<usize> {
    let g = format!("box{bx}");
    (0..count).map(|i| tb.compute(format!("{g}.gpu{i}"), Some(&g))).collect()
}

/// Add box `bx`: 8 GPUs, each linked both ways to the box's NVSwitch `box{bx}.nvsw` with `p`.
fn nvswitch_box(tb: &mut TopologyBuilder, bx: usize, p: LinkParams) -> Vec<usize> {
    let ids = gpus(tb, bx, BOX_GPUS);
    let g = format!("box{bx}");
    let hub = tb.switch(format!("{g}.nvsw"), Some(&g));
    star(tb, hub, &ids, p);
    ids
}

/// Add box `bx`: K GPUs directly linked as the symmetric multiplicity matrix `m` says, the
/// pair (i, j) with `m[i][j]` x `p.bw` each way (parallel links merged).
fn matrix_box<const K: usize>(tb: &mut TopologyBuilder, bx: usize, m: &[[u8; K]; K], p: LinkParams) -> Vec<usize> {
    sub_matrix_box(tb, bx, m, K, p)
}

/// [`matrix_box`] with only GPUs `0..count` and the links among them (the induced subgraph).
fn sub_matrix_box<const K: usize>(
    tb: &mut TopologyBuilder,
    bx: usize,
    m: &[[u8; K]; K],
    count: usize,
    p: LinkParams,
) -> Vec<usize> {
    let ids = gpus(tb, bx, count);
    for i in 0..count {
        for j in i + 1..count {
            if m[i][j] > 0 {
                tb.bilink(ids[i], ids[j], p.bw * Rat::from_integer(m[i][j].into()), p.lat);
            }
        }
    }
    ids
}

/// `dgx-a100:N` (ForestColl's `a100_topology(n)`): per box 8 GPUs on an NVSwitch at 300 GB/s;
/// with N >= 2, GPU i has its own NIC `box{b}.nic{i}` (a switch) at 25 GB/s, linked at 25 GB/s
/// to the shared IB switch `ib{i mod 2}`. N = 1 has no NICs and no IB (GPU ingress 300, the
/// reference algbw 2400/7 needs that). Levels nvswitch/ib, 1 us each.
fn dgx_a100(s: &Spec) -> Result<Topology> {
    let n = boxes(s, "dgx-a100:N")?;
    let [nv, ib]: [LinkParams; 2] =
        s.link_params(&[LinkParams::new(300, 1.0), LinkParams::new(25, 1.0)])?.try_into().expect("2 levels");
    let mut tb = TopologyBuilder::new(&s.text);
    let mut nics = Vec::new();
    for bx in 0..n {
        let ids = nvswitch_box(&mut tb, bx, nv);
        if n >= 2 {
            for (i, &gpu) in ids.iter().enumerate() {
                let nic = tb.switch(format!("box{bx}.nic{i}"), Some(&format!("box{bx}")));
                tb.bilink(gpu, nic, ib.bw, ib.lat);
                nics.push((i, nic));
            }
        }
    }
    if n >= 2 {
        let rails = [tb.switch("ib0", None), tb.switch("ib1", None)];
        for (i, nic) in nics {
            tb.bilink(nic, rails[i % 2], ib.bw, ib.lat);
        }
    }
    tb.build()
}

/// `mi250:N` (ForestColl's `mi250_topology(n)`, simplified model): per cluster 16 GCDs joined
/// by xGMI links of 50 GB/s times [`MI250_XGMI`]'s multiplicity (7 links per GCD); with
/// N >= 2, every GCD links at 16 GB/s each way to the one shared switch `ib0`. Levels
/// xgmi/ib, 1 us each. `gcds=G` keeps GCDs 0..G-1 of each cluster and the xGMI links among
/// them (G = 8 is the paper's "MI250 8+8" of section 5.2: 1/x* = 1/13, 208 GB/s, k = 13); the
/// topology check rejects a G whose induced xGMI graph is disconnected (with N = 1).
fn mi250(s: &Spec) -> Result<Topology> {
    let n = boxes(s, "mi250:N")?;
    let gcds = s.check_range(s.int_option("gcds", 16)?, "gcds", 2, 16)?;
    let [xgmi, ib]: [LinkParams; 2] =
        s.link_params(&[LinkParams::new(50, 1.0), LinkParams::new(16, 1.0)])?.try_into().expect("2 levels");
    let mut tb = TopologyBuilder::new(&s.text);
    let all: Vec<usize> = (0..n).flat_map(|bx| sub_matrix_box(&mut tb, bx, &MI250_XGMI, gcds, xgmi)).collect();
    if n >= 2 {
        let hub = tb.switch("ib0", None);
        star(&mut tb, hub, &all, ib);
    }
    tb.build()
}

/// `dgx1`: one box of 8 V100 linked by [`DGX1_NVLINK`] NVLinks of 25 GB/s each way (6 per
/// GPU, 150 GB/s). One level, 1 us.
fn dgx1(s: &Spec) -> Result<Topology> {
    s.expect_args(0, 0, "dgx1 (no arguments)")?;
    let p = s.link_params(&[LinkParams::new(25, 1.0)])?[0];
    let mut tb = TopologyBuilder::new(&s.text);
    matrix_box(&mut tb, 0, &DGX1_NVLINK, p);
    tb.build()
}

/// `hgx-h100:N`: per box 8 GPUs on an NVSwitch at 450 GB/s each way (docs/contracts.md;
/// ASTRA-sim's configuration uses 400), latency 936.25 ns. With N >= 2 the network is rail-optimized:
/// GPU i's 50 GB/s NIC is modelled as a direct link (1 us) from the GPU to the shared rail
/// switch `rail{i}`. N = 1 has no rails. Levels nvswitch/ib.
fn hgx_h100(s: &Spec) -> Result<Topology> {
    let n = boxes(s, "hgx-h100:N")?;
    let nv_default = LinkParams { bw: Rat::from_integer(450), lat: 0.936_25 };
    let [nv, ib]: [LinkParams; 2] =
        s.link_params(&[nv_default, LinkParams::new(50, 1.0)])?.try_into().expect("2 levels");
    let mut tb = TopologyBuilder::new(&s.text);
    let boxes: Vec<Vec<usize>> = (0..n).map(|bx| nvswitch_box(&mut tb, bx, nv)).collect();
    if n >= 2 {
        for i in 0..BOX_GPUS {
            let rail = tb.switch(format!("rail{i}"), None);
            star(&mut tb, rail, &boxes.iter().map(|ids| ids[i]).collect::<Vec<_>>(), ib);
        }
    }
    tb.build()
}

#[cfg(test)]
mod tests {
    use super::super::from_spec;
    use super::super::testutil::shape;
    use super::{DGX1_NVLINK, MI250_XGMI};
    use crate::rational::Rat;
    use crate::topology::Topology;

    fn gbs(n: i128) -> Rat {
        Rat::from_integer(n)
    }

    /// Every rank's ingress equals `bw`.
    fn all_ingress(t: &Topology, bw: i128) {
        for &v in t.ranks() {
            assert_eq!(t.ingress(v), gbs(bw), "{}", t.nodes[v].name);
        }
    }

    fn link_bw(t: &Topology, a: &str, b: &str) -> Rat {
        let (u, v) = (t.node_index(a).unwrap(), t.node_index(b).unwrap());
        t.links[t.link_between(u, v).unwrap()].bandwidth
    }

    /// `m` is symmetric with a zero diagonal and `per_gpu` links in every row.
    fn check_matrix<const K: usize>(m: &[[u8; K]; K], per_gpu: u32) {
        for (i, row) in m.iter().enumerate() {
            assert_eq!(row[i], 0);
            assert_eq!(row.iter().map(|&x| u32::from(x)).sum::<u32>(), per_gpu, "row {i}");
            for (j, &x) in row.iter().enumerate() {
                assert_eq!(x, m[j][i], "({i},{j})");
            }
        }
    }

    #[test]
    fn matrices_are_symmetric_with_constant_row_sums() {
        check_matrix(&MI250_XGMI, 7);
        check_matrix(&DGX1_NVLINK, 6);
    }

    #[test]
    fn dgx_a100() {
        // Cross-box, other parity: gpu -> nvsw -> gpu -> nic -> ib -> nic -> gpu = 6 hops.
        assert_eq!(shape("dgx-a100:2"), (16, 2, 2, 6));
        let t = from_spec("dgx-a100:2").unwrap();
        assert_eq!((t.n_switches(), t.links.len()), (2 + 16 + 2, 2 * 48));
        all_ingress(&t, 325);
        assert_eq!(t.nodes[t.rank_node(9)].name, "box1.gpu1");
        assert_eq!(t.nodes[t.rank_node(9)].group.as_deref(), Some("box1"));
        assert_eq!(link_bw(&t, "box1.nic3", "ib1"), gbs(25));
        assert!(t.link_between(t.node_index("box1.nic3").unwrap(), t.node_index("ib0").unwrap()).is_none());
        assert_eq!(shape("dgx-a100:1"), (8, 1, 1, 2));
        let t = from_spec("dgx-a100:1").unwrap();
        assert_eq!(t.n_switches(), 1);
        assert!(t.node_index("ib0").is_none() && t.node_index("box0.nic0").is_none());
        all_ingress(&t, 300);
        let t = from_spec("dgx-a100:2,bw=200/50").unwrap();
        all_ingress(&t, 250);
        assert_eq!(link_bw(&t, "box0.gpu0", "box0.nvsw"), gbs(200));
        assert_eq!(link_bw(&t, "box0.nic0", "ib0"), gbs(50));
        assert_eq!(shape("dgx-a100:3"), (24, 2, 2, 6));
    }

    #[test]
    fn mi250() {
        // Any two GCDs are at most 2 hops apart through ib0.
        assert_eq!(shape("mi250:2"), (32, 4, 5, 2));
        let t = from_spec("mi250:2").unwrap();
        assert_eq!((t.n_switches(), t.links.len()), (1, 2 * (2 * 28 + 32)));
        all_ingress(&t, 7 * 50 + 16);
        let box0: Vec<usize> = t.ranks()[..16].to_vec();
        let intra: Vec<_> = t.links.iter().filter(|l| box0.contains(&l.src) && box0.contains(&l.dst)).collect();
        assert_eq!(intra.len(), 2 * 28);
        let physical: Rat = intra.iter().map(|l| l.bandwidth).sum::<Rat>() / gbs(2 * 50);
        assert_eq!(physical, gbs(56));
        let degrees: Vec<usize> =
            box0.iter().map(|&v| t.out_links(v).filter(|&i| t.is_compute(t.links[i].dst)).count()).collect();
        assert_eq!(degrees, [3, 4, 4, 3, 3, 4, 4, 3, 3, 4, 4, 3, 3, 4, 4, 3]);
        assert_eq!(link_bw(&t, "box1.gpu0", "box1.gpu1"), gbs(200));
        // Without IB: GCD 4 needs 5 hops to GCD 15 (4-6-2-10-11-15; GCD 15's neighbours 11, 13,
        // 14 are all 4 hops from 4), GCD 0 at most 4.
        assert_eq!(shape("mi250:1"), (16, 3, 4, 5));
        let t = from_spec("mi250:1").unwrap();
        assert_eq!(t.n_switches(), 0);
        all_ingress(&t, 350);
        all_ingress(&from_spec("mi250:3,bw=50/32").unwrap(), 350 + 32);
    }

    /// `gcds=8`: ForestColl's MI250 8+8 (§5.2): GCDs 0..7 per cluster with the xGMI
    /// links among them; the smallest ingress is 266 GB/s (GCDs 1 and 2: 5 links + 16; GCDs 0
    /// and 3 lose the link to GCDs 8 and 11, GCDs 4-7 keep all 7).
    #[test]
    fn mi250_first_eight_gcds() {
        let t = from_spec("mi250:2,gcds=8").unwrap();
        assert_eq!((t.n_ranks(), t.n_switches()), (16, 1));
        let ingress: Vec<Rat> =
            t.ranks()[..8].iter().map(|&v| t.in_links(v).iter().map(|&i| t.links[i].bandwidth).sum()).collect();
        let want: Vec<Rat> = [316, 266, 266, 316, 366, 366, 366, 366].iter().map(|&g| gbs(g)).collect();
        assert_eq!(ingress, want);
        assert_eq!(link_bw(&t, "box1.gpu6", "box1.gpu7"), gbs(200));
        assert_eq!(from_spec("mi250:2,gcds=16").unwrap().links.len(), from_spec("mi250:2").unwrap().links.len());
        for bad in ["mi250:2,gcds=1", "mi250:2,gcds=17", "mi250:2,gcds=x", "mi250:1,gcds=3"] {
            assert!(from_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dgx1() {
        // Hybrid cube-mesh: 4 distinct neighbours each, every other GPU within 2 hops.
        assert_eq!(shape("dgx1"), (8, 4, 4, 2));
        let t = from_spec("dgx1").unwrap();
        assert_eq!(t.links.len(), 2 * 16);
        all_ingress(&t, 150);
        assert_eq!(link_bw(&t, "box0.gpu0", "box0.gpu1"), gbs(50));
        all_ingress(&from_spec("dgx1:bw=20").unwrap(), 120);
    }

    #[test]
    fn hgx_h100() {
        // gpu0 -> nvsw -> gpu1 -> rail1 -> other box's gpu1 = 4 hops.
        assert_eq!(shape("hgx-h100:2"), (16, 2, 2, 4));
        let t = from_spec("hgx-h100:2").unwrap();
        assert_eq!((t.n_switches(), t.links.len()), (2 + 8, 2 * 32));
        all_ingress(&t, 500);
        let (gpu, nvsw, rail) = ("box1.gpu5", "box1.nvsw", "rail5");
        assert_eq!(link_bw(&t, gpu, rail), gbs(50));
        let lat = |a: &str, b: &str| {
            t.links[t.link_between(t.node_index(a).unwrap(), t.node_index(b).unwrap()).unwrap()].latency
        };
        assert_eq!((lat(gpu, nvsw), lat(gpu, rail)), (0.93625, 1.0));
        let t = from_spec("hgx-h100:1").unwrap();
        assert!(t.node_index("rail0").is_none());
        all_ingress(&t, 450);
    }

    #[test]
    fn bad_specs_are_errors() {
        for bad in [
            "dgx-a100:0",
            "dgx-a100",
            "dgx-a100:2:3",
            "dgx-a100:2,3",
            "dgx-a100:x",
            "dgx-a100:2,bw=1/2/3",
            "dgx-a100:2,lat=-1",
            "mi250:0",
            "mi250:2,bw=0",
            "dgx1:2",
            "hgx-h100:0",
            "hgx-h100:5000",
        ] {
            assert!(from_spec(bad).is_err(), "{bad}");
        }
    }
}
