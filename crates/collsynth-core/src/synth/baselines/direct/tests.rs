use super::*;
use crate::ir::Op;
use crate::rational::Rat;
use crate::zoo::from_spec;

fn run(spec: &str, c: Collective, root: usize) -> Schedule {
    let topo = from_spec(spec).unwrap();
    synthesize(&topo, c, &Request { root, ..Default::default() }).unwrap()
}

#[test]
fn allgather_on_a_switch() {
    for n in [2usize, 5, 8] {
        let s = run(&format!("switch:{n}"), Collective::Allgather, 0);
        assert_eq!(s.transfers.len(), n * (n - 1));
        assert_eq!(s.n_steps(), Some(1));
        for t in &s.transfers {
            assert_eq!(t.route.len(), 2);
            assert!(t.after.is_empty());
            assert_eq!(s.pieces[t.piece].shard, t.src);
            assert_eq!(s.piece_fraction(t.piece), Rat::new(1, n as i128));
        }
    }
}

#[test]
fn routes_are_shortest_on_a_ring() {
    // ring:5 is unidirectional: from 0 to 4 is 4 hops
    let s = run("ring:5", Collective::Allgather, 0);
    for t in &s.transfers {
        assert_eq!(t.route.len(), (t.dst + 5 - t.src) % 5);
    }
    let rs = run("ring:5", Collective::ReduceScatter, 0);
    assert!(rs.transfers.iter().all(|t| t.op == Op::Reduce && t.route.len() == (t.dst + 5 - t.src) % 5));
    assert_eq!(rs.n_steps(), Some(1));
}

#[test]
fn broadcast_reduce_allreduce() {
    let b = run("mesh:3x3", Collective::Broadcast, 4);
    assert_eq!(b.transfers.len(), 8);
    assert!(b.transfers.iter().all(|t| t.src == 4));
    let r = run("mesh:3x3", Collective::Reduce, 4);
    assert!(r.transfers.iter().all(|t| t.dst == 4 && t.op == Op::Reduce));
    assert_eq!(r.n_steps(), Some(1));
    let ar = run("switch:4", Collective::Allreduce, 0);
    assert_eq!(ar.transfers.len(), 2 * 4 * 3);
    assert_eq!(ar.n_steps(), Some(2));
    // every allgather transfer waits for the 3 reductions into its source
    assert!(ar.transfers[12..].iter().all(|t| t.after.len() == 3));
}
