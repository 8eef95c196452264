use super::super::testutil::ring_allgather;
use super::*;
use crate::ir::{Collective, Op, Transfer};
use crate::topology::TopologyBuilder;
use crate::zoo::from_spec;

fn r(n: i128, d: i128) -> Rat {
    Rat::new(n, d)
}

#[test]
fn pieces_tile_whole_bytes() {
    // Allgatherv with shards 1/6, 1/3, 1/2 of M = 10 bytes: 1.67, 3.33, 5 exact bytes.
    let mut s = Schedule::new(Collective::Allgatherv, 3, 0, "t");
    s.shards = vec![r(1, 6), r(1, 3), r(1, 2)];
    let layout = ByteLayout::new(&s, Rat::from_integer(10));
    let ranges: Vec<_> = (0..3).map(|sh| layout.range(&Piece::whole(sh))).collect();
    assert_eq!(ranges, vec![0..1, 1..5, 5..10]);
    // Pieces of shard 1 ([1, 5) exactly [5/3, 5)): thirds at 5/3 + 10/9 j -> 1, 2, 3, 5.
    let p = Piece { shard: 1, start: r(0, 1), end: r(1, 1) };
    assert_eq!(layout.boundaries(&p, 3), vec![1, 2, 3, 5]);
    assert_eq!(layout.boundaries(&p, 1), vec![1, 5]);
    // A piece [1/3, 1) of shard 2 in 3 sub-chunks: 5 + 5/3 + 10/9 j -> 6, 7, 8, 10.
    let p = Piece { shard: 2, start: r(1, 3), end: r(1, 1) };
    assert_eq!(layout.boundaries(&p, 3), vec![6, 7, 8, 10]);
    // M = 10 in three equal shards: 3, 3, 4 bytes (remainder to the last chunk).
    let s = Schedule::new(Collective::Allgather, 3, 0, "t");
    let layout = ByteLayout::new(&s, Rat::from_integer(10));
    let lens: Vec<u64> = (0..3).map(|sh| layout.range(&Piece::whole(sh))).map(|x| x.end - x.start).collect();
    assert_eq!(lens, vec![3, 3, 4]);
    // Fractional M: floor at the end only.
    let layout = ByteLayout::new(&s, r(21, 2));
    assert_eq!(layout.boundaries(&Piece::whole(2), 2), vec![7, 8, 10]);
    // Every k tiles the buffer: the boundaries of consecutive sub-chunks meet.
    let layout = ByteLayout::new(&s, Rat::from_integer(1_000_003));
    for k in [1usize, 2, 7, 64] {
        let mut next = 0;
        for sh in 0..3 {
            let b = layout.boundaries(&Piece::whole(sh), k);
            assert_eq!(b.len(), k + 1);
            assert_eq!(b[0], next);
            assert!(b.windows(2).all(|w| w[0] <= w[1]));
            next = b[k];
        }
        assert_eq!(next, 1_000_003);
    }
}

#[test]
fn loads_are_exact() {
    // Two ranks a, b on a switch; a -> sw is 3 GB/s, sw -> b 2 GB/s, and a direct a -> b
    // link of 1/2 GB/s (the builder keeps them distinct: different endpoints).
    let mut b = TopologyBuilder::new("t");
    let (a, bb) = (b.compute("a", None), b.compute("b", None));
    let sw = b.switch("sw", None);
    b.link(a, sw, Rat::from_integer(3), 1.0);
    b.link(sw, bb, Rat::from_integer(2), 1.0);
    b.link(bb, sw, Rat::from_integer(2), 1.0);
    b.link(sw, a, Rat::from_integer(3), 1.0);
    b.link(a, bb, r(1, 2), 1.0);
    let topo = b.build().unwrap();
    let (a_sw, sw_b, a_b) =
        (topo.link_between(a, sw).unwrap(), topo.link_between(sw, bb).unwrap(), topo.link_between(a, bb).unwrap());
    // Broadcast from a: piece [0, 2/3) through the switch, piece [2/3, 1) direct.
    let mut s = Schedule::new(Collective::Broadcast, 2, 0, "t");
    let p0 = s.add_piece(Piece { shard: 0, start: r(0, 1), end: r(2, 3) });
    let p1 = s.add_piece(Piece { shard: 0, start: r(2, 3), end: r(1, 1) });
    let t = |piece, route| Transfer::new(piece, 0, 1, route, Op::Copy, vec![], None);
    s.add(t(p0, vec![a_sw, sw_b]));
    s.add(t(p1, vec![a_b]));
    let m = Rat::from_integer(7);
    let loads = link_loads(&s, &topo, m);
    let mut want = vec![Rat::zero(); topo.links.len()];
    want[a_sw] = r(14, 3);
    want[sw_b] = r(14, 3);
    want[a_b] = r(7, 3);
    assert_eq!(loads, want);
    // Load / bandwidth per link: (14/3)/3 = 14/9, (14/3)/2 = 7/3, (7/3)/(1/2) = 14/3, so the
    // direct link is the bottleneck: 14/3 bytes at 1/2 GB/s = 14/3000 us.
    assert_eq!(bandwidth_term_us(&s, &topo, m), r(14, 3000));

    // A ring allgather on ring:3 moves two thirds of M over every link.
    let topo = from_spec("ring:3,bw=12.5").unwrap();
    let s = ring_allgather(&topo, &[0, 1, 2]);
    let m = Rat::from_integer(10);
    assert_eq!(link_loads(&s, &topo, m), vec![r(20, 3); 3]);
    assert_eq!(bandwidth_term_us(&s, &topo, m), r(20, 3) / r(12_500, 1));
    // Nothing loaded: zero.
    let empty = Schedule::new(Collective::Allgather, 3, 0, "t");
    assert_eq!(bandwidth_term_us(&empty, &topo, m), Rat::zero());
}

/// The integer sums agree with rational sums, and give way to them when the common
/// denominator overflows: pieces [0, 1/p) for primes whose product leaves i128, each
/// piece on its own link (so that the rational sums themselves fit).
#[test]
fn integer_sums_equal_rational_sums_or_give_way() {
    let topo = from_spec("ring:6").unwrap();
    let link = |i: usize| topo.link_between(topo.rank_node(i), topo.rank_node(i + 1)).unwrap();
    let rational = |s: &Schedule| {
        let mut want = vec![Rat::zero(); topo.links.len()];
        for t in &s.transfers {
            want[t.route[0]] += s.piece_fraction(t.piece);
        }
        want
    };
    for primes in [&[3i128, 7, 11][..], &[1_000_000_007, 998_244_353, 1_000_000_009, 999_999_937, 1_000_000_021]] {
        let mut s = Schedule::new(Collective::Allgather, 6, 0, "t");
        for (i, &p) in primes.iter().enumerate() {
            let x = s.add_piece(Piece { shard: i, start: Rat::zero(), end: r(1, p) });
            for _ in 0..3 {
                s.add(Transfer::new(x, i, i + 1, vec![link(i)], Op::Copy, vec![], None));
            }
        }
        let fraction: Vec<Rat> = (0..s.pieces.len()).map(|p| s.piece_fraction(p)).collect();
        let fits = integer_loads(&s, &topo, &fraction);
        assert_eq!(fits.is_some(), primes.len() == 3, "{primes:?}");
        if let Some(loads) = fits {
            assert_eq!(loads, rational(&s));
        }
        assert_eq!(link_loads(&s, &topo, Rat::from_integer(1)), rational(&s));
    }
}
