use super::*;
use crate::ir::Op;
use crate::rational::Rat;
use crate::zoo::from_spec;

fn run(spec: &str, c: Collective) -> Schedule {
    let topo = from_spec(spec).unwrap();
    synthesize(&topo, c, &Request::default()).unwrap_or_else(|e| panic!("{spec} {c:?}: {e}"))
}

fn is_cycle_of_adjacent(topo: &Topology, order: &[usize]) -> bool {
    let mut paths = Paths::new(topo);
    let n = order.len();
    let mut seen = order.to_vec();
    seen.sort_unstable();
    seen == (0..n).collect::<Vec<_>>() && (0..n).all(|i| paths.adjacent(order[i], order[(i + 1) % n]).unwrap())
}

#[test]
fn natural_orders() {
    for spec in ["ring:5", "biring:6", "switch:4", "dgx-a100:1"] {
        let p = plan(&from_spec(spec).unwrap()).unwrap();
        assert_eq!(p.order, (0..p.order.len()).collect::<Vec<_>>(), "{spec}");
        assert!(p.hamiltonian, "{spec}");
    }
    assert!(!plan(&from_spec("ring:5").unwrap()).unwrap().bidirectional);
    assert!(plan(&from_spec("biring:6").unwrap()).unwrap().bidirectional);
    assert!(plan(&from_spec("switch:4").unwrap()).unwrap().bidirectional);
    assert!(!plan(&from_spec("biring:2").unwrap()).unwrap().bidirectional);
}

#[test]
fn unidirectional_ring_allgather_closed_form() {
    for n in [2usize, 3, 5, 8] {
        let s = run(&format!("ring:{n}"), Collective::Allgather);
        assert_eq!(s.n_steps(), Some(n as u32 - 1));
        assert_eq!(s.transfers.len(), n * (n - 1));
        for t in &s.transfers {
            assert_eq!(s.piece_fraction(t.piece), Rat::new(1, n as i128));
            assert_eq!(t.route.len(), 1);
            assert_eq!(t.dst, (t.src + 1) % n);
            assert_eq!(t.op, Op::Copy);
        }
        // at step t rank i sends the shard of rank i - t
        for t in &s.transfers {
            let step = t.step.unwrap() as usize;
            assert_eq!(s.pieces[t.piece].shard, (t.src + n - step) % n);
        }
    }
}

#[test]
fn bidirectional_ring_on_biring() {
    for n in [3usize, 4, 7] {
        let s = run(&format!("biring:{n}"), Collective::Allgather);
        assert_eq!(s.transfers.len(), 2 * n * (n - 1));
        assert_eq!(s.n_steps(), Some(n as u32 - 1));
        assert!(s.transfers.iter().all(|t| s.piece_fraction(t.piece) == Rat::new(1, 2 * n as i128)));
        assert!(s.transfers.iter().all(|t| t.route.len() == 1));
        let forward = s.transfers.iter().filter(|t| t.dst == (t.src + 1) % n).count();
        assert_eq!(forward, n * (n - 1));
    }
}

#[test]
fn torus_gets_a_hamiltonian_cycle() {
    for spec in ["torus:4x4", "torus:3x5", "torus:4x4x2", "mesh:4x4", "hypercube:4"] {
        let topo = from_spec(spec).unwrap();
        let p = plan(&topo).unwrap();
        assert!(p.hamiltonian, "{spec}");
        assert!(is_cycle_of_adjacent(&topo, &p.order), "{spec}");
        assert!(p.bidirectional, "{spec}");
        for c in [Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce] {
            let s = run(spec, c);
            assert!(s.transfers.iter().all(|t| t.route.len() == 1), "{spec} {c:?}");
        }
    }
    // natural order of torus:4x4 is not a cycle of neighbours (3 -> 4 wraps a row)
    assert_ne!(plan(&from_spec("torus:4x4").unwrap()).unwrap().order, (0..16).collect::<Vec<_>>());
}

#[test]
fn odd_mesh_falls_back_to_group_order() {
    // a 3x3 mesh is bipartite with 9 nodes: no Hamiltonian cycle
    let p = plan(&from_spec("mesh:3x3").unwrap()).unwrap();
    assert!(!p.hamiltonian);
    assert_eq!(p.order, (0..9).collect::<Vec<_>>());
    let s = run("mesh:3x3", Collective::Allgather);
    assert_eq!(s.transfers.len(), 2 * 9 * 8);
    assert!(s.transfers.iter().any(|t| t.route.len() > 1));
}

#[test]
fn multi_box_ring_stays_in_boxes() {
    let topo = from_spec("dgx-a100:2").unwrap();
    let p = plan(&topo).unwrap();
    assert!(p.hamiltonian);
    assert!(is_cycle_of_adjacent(&topo, &p.order));
    // one crossing each way between the two boxes
    let crossings = (0..16).filter(|&i| (p.order[i] < 8) != (p.order[(i + 1) % 16] < 8)).count();
    assert_eq!(crossings, 2);
}

#[test]
fn reductions_and_allreduce() {
    let n = 6;
    let rs = run("ring:6", Collective::ReduceScatter);
    assert_eq!(rs.collective, Collective::ReduceScatter);
    assert!(rs.transfers.iter().all(|t| t.op == Op::Reduce && t.route.len() == 1 && t.dst == (t.src + 1) % n));
    assert_eq!(rs.n_steps(), Some(n as u32 - 1));
    let ar = run("ring:6", Collective::Allreduce);
    assert_eq!(ar.n_steps(), Some(2 * (n as u32 - 1)));
    assert_eq!(ar.transfers.len(), 2 * n * (n - 1));
    assert_eq!(ar.transfers.iter().filter(|t| t.op == Op::Reduce).count(), n * (n - 1));
    let ar = run("biring:5", Collective::Allreduce);
    assert_eq!(ar.n_steps(), Some(8));
    assert_eq!(ar.transfers.len(), 4 * 5 * 4);
}

#[test]
fn broadcast_is_a_chain_from_the_root() {
    let topo = from_spec("ring:5").unwrap();
    let req = Request { root: 3, ..Default::default() };
    let s = synthesize(&topo, Collective::Broadcast, &req).unwrap();
    assert_eq!(s.root, 3);
    let hops: Vec<(usize, usize)> = s.transfers.iter().map(|t| (t.src, t.dst)).collect();
    assert_eq!(hops, vec![(3, 4), (4, 0), (0, 1), (1, 2)]);
    assert_eq!(s.n_steps(), Some(4));
    for (i, t) in s.transfers.iter().enumerate().skip(1) {
        assert_eq!(t.after, vec![i - 1]);
    }
    let r = synthesize(&topo, Collective::Reduce, &req).unwrap();
    let hops: Vec<(usize, usize)> = r.transfers.iter().map(|t| (t.src, t.dst)).collect();
    assert_eq!(hops, vec![(4, 0), (0, 1), (1, 2), (2, 3)].into_iter().rev().collect::<Vec<_>>());
    assert!(r.transfers.iter().all(|t| t.op == Op::Reduce && t.route.len() == 1));
}
