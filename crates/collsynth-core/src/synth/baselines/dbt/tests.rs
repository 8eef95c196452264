use super::*;
use crate::ir::Op;

fn run(spec: &str, c: Collective, root: usize) -> Result<Schedule> {
    super::super::common::run_on(spec, synthesize, c, root)
}

fn edges(t: &Tree) -> Vec<(usize, usize)> {
    let mut e: Vec<_> = (0..t.parent.len()).flat_map(|u| t.children[u].iter().map(move |&c| (u, c))).collect();
    e.sort_unstable();
    e
}

#[test]
fn nccl_trees_for_8_and_7() {
    let [a, b] = double_tree(8);
    assert_eq!(a.top, 0);
    assert_eq!(edges(&a), vec![(0, 4), (2, 1), (2, 3), (4, 2), (4, 6), (6, 5), (6, 7)]);
    // mirrored: r -> 7 - r
    assert_eq!(b.top, 7);
    assert_eq!(edges(&b), vec![(1, 0), (1, 2), (3, 1), (3, 5), (5, 4), (5, 6), (7, 3)]);
    assert_eq!((a.depth(), b.depth()), (3, 3));
    let [a, b] = double_tree(7);
    assert_eq!(edges(&a), vec![(0, 4), (2, 1), (2, 3), (4, 2), (4, 6), (6, 5)]);
    // shifted: r -> r + 1 mod 7
    assert_eq!(b.top, 1);
    assert_eq!(edges(&b), vec![(0, 6), (1, 5), (3, 2), (3, 4), (5, 0), (5, 3)]);
    assert_eq!((a.depth(), b.depth()), (3, 3));
}

#[test]
fn trees_span_and_are_complementary() {
    for n in 1..=40usize {
        let trees = double_tree(n);
        for t in &trees {
            // a spanning tree: every rank but the top has a parent, reached from the top
            assert_eq!(t.parent.iter().filter(|p| p.is_none()).count(), 1, "n={n}");
            assert_eq!(t.parent[t.top], None);
            let mut seen = vec![false; n];
            let mut stack = vec![t.top];
            while let Some(u) = stack.pop() {
                assert!(!seen[u]);
                seen[u] = true;
                assert!(t.children[u].len() <= 2);
                for &c in &t.children[u] {
                    assert_eq!(t.parent[c], Some(u));
                    stack.push(c);
                }
            }
            assert!(seen.iter().all(|&x| x), "n={n}");
            // depth ceil(log2 n): the top has a single child, 2^floor(log2(n-1))
            assert_eq!(t.depth(), n.next_power_of_two().trailing_zeros() as usize, "n={n}");
        }
        assert!((0..n).all(|r| !(trees[0].is_inner(r) && trees[1].is_inner(r))), "n={n}");
    }
}

#[test]
fn broadcast_from_rank_0_and_elsewhere() {
    let s = run("switch:8", Collective::Broadcast, 0).unwrap();
    // tree 1 from 0 (7 edges), tree 2: 0 -> 7 then 6 edges (0 is a leaf of tree 2)
    assert_eq!(s.transfers.len(), 14);
    assert_eq!(s.n_steps(), Some(4));
    // from 2 (inner in tree 1): 2 -> 0, then tree 1 without 4 -> 2; 2 -> 7, tree 2
    let s = run("switch:8", Collective::Broadcast, 2).unwrap();
    assert_eq!(s.transfers.len(), 14);
    assert_eq!(s.n_steps(), Some(4));
    for h in 0..2 {
        let mut received = vec![0; 8];
        for t in s.transfers.iter().filter(|t| t.piece == h) {
            received[t.dst] += 1;
        }
        assert_eq!(received, (0..8).map(|r| usize::from(r != 2)).collect::<Vec<_>>());
    }
}

#[test]
fn reduce_and_allreduce() {
    let r = run("biring:7", Collective::Reduce, 3).unwrap();
    assert!(r.transfers.iter().all(|t| t.op == Op::Reduce));
    assert_eq!(r.collective, Collective::Reduce);
    let ar = run("biring:8", Collective::Allreduce, 0).unwrap();
    assert_eq!(ar.collective, Collective::Allreduce);
    // each half: 7 reductions up its tree, 7 copies down
    assert_eq!(ar.transfers.len(), 28);
    assert_eq!(ar.transfers.iter().filter(|t| t.op == Op::Reduce).count(), 14);
    assert_eq!(ar.n_steps(), Some(6));
}

#[test]
fn no_allgather() {
    assert!(run("switch:4", Collective::Allgather, 0).is_err());
    assert!(run("switch:4", Collective::ReduceScatter, 0).is_err());
}
