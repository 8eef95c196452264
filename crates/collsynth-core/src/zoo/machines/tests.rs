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
    let lat =
        |a: &str, b: &str| t.links[t.link_between(t.node_index(a).unwrap(), t.node_index(b).unwrap()).unwrap()].latency;
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
