use super::*;
use crate::import::fabric::water_fill;

fn r(n: i128, d: i128) -> Rat {
    Rat::new(n, d)
}

#[test]
fn mirror_bits_as_nccl() {
    // topo.h mirrorBits: the low log2(pow2) bits reversed
    assert_eq!(mirror_bits(1, 8), 4);
    assert_eq!(mirror_bits(3, 4), 3);
    assert_eq!(mirror_bits(1, 4), 2);
    assert_eq!(mirror_bits(2, 2), 0);
    assert_eq!(mirror_bits(5, 1), 0);
}

#[test]
fn local_nics_rotate_by_gpu_dev() {
    // MI250: GCDs 0-3 reach mlx5_0 (nic0) and mlx5_1 (nic1) equally (PXB, 12 through their
    // x8 bridges): 2 local NICs for 4 local GPUs, one NIC each, starting at
    // mirrorBits(dev mod 4, 2): dev 0 -> nic0, 1 -> nic1, 2 -> nic0, 3 -> nic1
    let m = super::super::tests::physical("rccl-mi250-16gcd.xml");
    let routed = route(m);
    let fed = |nic: &str| {
        let p = routed.ports.iter().find(|p| p.name == nic).unwrap();
        p.feeds.iter().map(|f| (f.0, f.1)).collect::<Vec<_>>()
    };
    // each GCD's share: its x8 bridge (12) alone, the NIC's Gen4 x16 24 split by 2 = 12
    assert_eq!(fed("nic0"), vec![(0, r(12, 1)), (2, r(12, 1))]);
    assert_eq!(fed("nic1"), vec![(1, r(12, 1)), (3, r(12, 1))]);
}

#[test]
fn water_filling_shares_a_port() {
    // 10 among 2, 5 and 20: 2 is below the level 10/3, so the others get (10 - 2) / 2 = 4
    assert_eq!(water_fill(&[r(5, 1), r(2, 1), r(20, 1)], r(10, 1)), vec![r(4, 1), r(2, 1), r(4, 1)]);
    // enough for everyone: the feeds as they are
    assert_eq!(water_fill(&[r(5, 1), r(2, 1)], r(10, 1)), vec![r(5, 1), r(2, 1)]);
    assert_eq!(water_fill(&[r(3, 1), r(3, 1), r(3, 1)], r(1, 1)), vec![r(1, 3); 3]);
}
