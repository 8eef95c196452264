use super::*;
use crate::ir::{Collective, Op, Schedule, Transfer};

/// Transfers with the given dependencies (nothing else matters to the DAG).
fn dag(deps: &[&[usize]]) -> (Schedule, Dag) {
    let topo = crate::zoo::from_spec("ring:2").unwrap();
    let mut s = Schedule::new(Collective::Allreduce, 2, 0, "test");
    for (i, d) in deps.iter().enumerate() {
        // Alternate pieces so that no dependency carries the dependent's data: the
        // primary forest then follows the latest dependency only.
        let t = Transfer::new(i % 2, 0, 1, vec![0], Op::Copy, d.to_vec(), None);
        s.add(t);
    }
    let d = Dag::build(&Cx { s: &s, topo: &topo }).unwrap();
    (s, d)
}

#[test]
fn ancestors_through_the_forest_and_the_search() {
    // 0 -> {1, 2} -> 3 -> 4; 5 alone; 6 after 5 and 1. Out of index order: 7 before 8.
    let (s, mut d) = dag(&[&[], &[0], &[0], &[1, 2], &[3], &[], &[5, 1], &[8], &[]]);
    assert_eq!(d.depth, 4);
    let anc = |d: &mut Dag, x, e| d.is_ancestor(&s, x, e);
    for (x, e) in [(0, 4), (1, 3), (1, 4), (2, 4), (0, 6), (1, 6), (5, 6), (8, 7)] {
        assert!(anc(&mut d, x, e), "{x} should be an ancestor of {e}");
    }
    for (x, e) in [(4, 0), (1, 2), (2, 1), (2, 6), (3, 6), (5, 4), (6, 4), (7, 8), (3, 3)] {
        assert!(!anc(&mut d, x, e), "{x} should not be an ancestor of {e}");
    }
}

#[test]
fn kahn_order_respects_dependencies() {
    let (s, d) = dag(&[&[2], &[], &[1], &[0, 2]]);
    assert_eq!(d.order, vec![1, 2, 0, 3]);
    for (k, &t) in d.order.iter().enumerate() {
        for &a in &s.transfers[t as usize].after {
            assert!(d.order[..k].contains(&(a as u32)));
        }
    }
}
