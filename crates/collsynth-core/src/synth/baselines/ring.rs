//! `ring`: the classic ring. Allgather in N-1 steps (at step t, the i-th rank of the ring
//! order sends the shard of the (i-t)-th to the (i+1)-th), bidirectional (each shard in two
//! halves, one each way) when every hop of the ring has a reverse route of the same length;
//! broadcast as a chain from the root along the ring. Reductions by the shared reversal,
//! allreduce = reduce-scatter then allgather.
//!
//! The ring order is a Hamiltonian cycle of *adjacent* ranks (a shortest route with no
//! compute node in between) when one is found: the natural order if it is one, else a
//! bounded backtracking search. Otherwise, as NCCL does, ranks go group by group
//! (`node.group`) in rank order, joined by shortest routes.

use super::common::{from_copy_forms, part, Paths, ALL_FIVE};
use crate::error::Result;
use crate::ir::{Collective, Schedule};
use crate::synth::{Algorithm, Request};
use crate::topology::Topology;

pub const RING: Algorithm = Algorithm {
    name: "ring",
    help: "ring over a Hamiltonian cycle of adjacent ranks (else group by group), bidirectional when routes allow",
    collectives: ALL_FIVE,
    options: &[],
    synthesize,
};

/// Largest number of (rank, adjacent rank) pairs the cycle search will collect.
const MAX_ADJACENCY: usize = 1 << 22;
/// Work budget of the cycle search (neighbour-list entries scanned).
const SEARCH_BUDGET: usize = 1 << 24;

/// The ring of a topology: order of the ranks (starting at rank 0) and direction(s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingPlan {
    pub order: Vec<usize>,
    /// Every consecutive pair of `order` is adjacent (a Hamiltonian cycle was found).
    pub hamiltonian: bool,
    /// Pieces go both ways (N >= 3 and every hop's reverse route is as long as the hop).
    pub bidirectional: bool,
}

impl RingPlan {
    /// The plan for the transpose of the topology: the same cycle, walked backwards.
    fn transposed(&self) -> RingPlan {
        let mut order = self.order.clone();
        order[1..].reverse();
        RingPlan { order, ..self.clone() }
    }
}

fn synthesize(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    let plan = plan(topo)?;
    let for_topo = |transposed: bool| if transposed { plan.transposed() } else { plan.clone() };
    from_copy_forms(
        topo,
        collective,
        req,
        RING.name,
        &|t, transposed| allgather(t, &for_topo(transposed)),
        &|t, transposed, root| broadcast(t, &for_topo(transposed), root),
    )
}

/// The ring order of `topo` and whether it can run both ways.
pub fn plan(topo: &Topology) -> Result<RingPlan> {
    let mut paths = Paths::new(topo);
    let (order, hamiltonian) = match hamiltonian_order(&mut paths)? {
        Some(order) => (order, true),
        None => (group_order(topo), false),
    };
    let n = order.len();
    let mut bidirectional = n >= 3;
    for i in 0..n {
        if !bidirectional {
            break;
        }
        let (a, b) = (order[i], order[(i + 1) % n]);
        bidirectional = paths.distance(a, b)? == paths.distance(b, a)?;
    }
    Ok(RingPlan { order, hamiltonian, bidirectional })
}

/// A cycle of adjacent ranks from rank 0: the natural order if it is one, else the first
/// one a bounded backtracking search finds (`None` if none was found within the budget).
fn hamiltonian_order(paths: &mut Paths) -> Result<Option<Vec<usize>>> {
    let n = paths.topology().n_ranks();
    if n <= 2 {
        return Ok(Some((0..n).collect()));
    }
    let mut natural = true;
    for i in 0..n {
        if !paths.adjacent(i, (i + 1) % n)? {
            natural = false;
            break;
        }
    }
    if natural {
        return Ok(Some((0..n).collect()));
    }
    let mut adj = Vec::with_capacity(n);
    let mut total = 0;
    for a in 0..n {
        let nb = paths.neighbors(a)?;
        total += nb.len();
        if total > MAX_ADJACENCY || nb.is_empty() {
            return Ok(None);
        }
        adj.push(nb);
    }
    if unbalanced_bipartite(&adj) {
        return Ok(None);
    }
    Ok(search_cycle(paths.topology(), &adj))
}

/// Whether the (undirected) graph of `adj` is bipartite with sides of different sizes:
/// then no cycle through every rank exists (it would alternate sides), e.g. odd meshes.
fn unbalanced_bipartite(adj: &[Vec<(usize, usize)>]) -> bool {
    let n = adj.len();
    let mut undirected = vec![Vec::new(); n];
    for (a, nb) in adj.iter().enumerate() {
        for &(b, _) in nb {
            undirected[a].push(b);
            undirected[b].push(a);
        }
    }
    let mut side = vec![None; n];
    let mut count = [0usize; 2];
    for start in 0..n {
        if side[start].is_some() {
            continue;
        }
        side[start] = Some(0);
        count[0] += 1;
        let mut stack = vec![start];
        while let Some(u) = stack.pop() {
            let su = side[u].expect("coloured");
            for &v in &undirected[u] {
                match side[v] {
                    None => {
                        side[v] = Some(1 - su);
                        count[1 - su] += 1;
                        stack.push(v);
                    }
                    Some(sv) if sv == su => return false,
                    Some(_) => {}
                }
            }
        }
    }
    count[0] != count[1]
}

/// Backtracking search for a Hamiltonian cycle from rank 0 in the directed graph `adj`
/// (sorted by rank, with route lengths). Candidates are tried staying in the same group
/// first, then by shorter route, then by fewest onward choices (Warnsdorff), then by rank.
fn search_cycle(topo: &Topology, adj: &[Vec<(usize, usize)>]) -> Option<Vec<usize>> {
    let n = adj.len();
    let group = |r: usize| topo.nodes[topo.rank_node(r)].group.as_deref();
    let closes = |a: usize| adj[a].binary_search_by_key(&0, |&(b, _)| b).is_ok();
    let mut visited = vec![false; n];
    let mut work = 0usize;
    // Candidates after `u`, best last (popped first).
    let candidates = |u: usize, visited: &[bool], work: &mut usize| -> Vec<usize> {
        let mut c: Vec<(bool, usize, usize, usize)> = adj[u]
            .iter()
            .filter(|&&(v, _)| !visited[v])
            .map(|&(v, d)| {
                *work += adj[v].len();
                let onward = adj[v].iter().filter(|&&(w, _)| !visited[w]).count();
                (group(v) != group(u), d, onward, v)
            })
            .collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c.into_iter().map(|(_, _, _, v)| v).collect()
    };
    let mut path = vec![0usize];
    visited[0] = true;
    let mut stack = vec![candidates(0, &visited, &mut work)];
    while let Some(cands) = stack.last_mut() {
        if work > SEARCH_BUDGET {
            return None;
        }
        if path.len() == n {
            if closes(*path.last().expect("non-empty")) {
                return Some(path);
            }
            cands.clear();
        }
        match cands.pop() {
            Some(v) => {
                visited[v] = true;
                path.push(v);
                let next = candidates(v, &visited, &mut work);
                stack.push(next);
            }
            None => {
                stack.pop();
                if let Some(v) = path.pop() {
                    visited[v] = false;
                }
            }
        }
    }
    None
}

/// NCCL-style order: ranks group by group (groups in order of first appearance, ungrouped
/// ranks as one group), by rank inside a group.
fn group_order(topo: &Topology) -> Vec<usize> {
    let mut groups: Vec<(Option<&str>, Vec<usize>)> = Vec::new();
    for r in 0..topo.n_ranks() {
        let g = topo.nodes[topo.rank_node(r)].group.as_deref();
        match groups.iter_mut().find(|(h, _)| *h == g) {
            Some((_, members)) => members.push(r),
            None => groups.push((g, vec![r])),
        }
    }
    groups.into_iter().flat_map(|(_, m)| m).collect()
}

/// Ring allgather on `topo` along `plan` (pieces: shard s whole, or its halves 2s, 2s+1
/// with half 0 going forward and half 1 backward).
pub fn allgather(topo: &Topology, plan: &RingPlan) -> Result<Schedule> {
    let order = &plan.order;
    let n = order.len();
    let mut s = Schedule::new(Collective::Allgather, n, 0, RING.name);
    let parts = if plan.bidirectional { 2 } else { 1 };
    for shard in 0..n {
        for k in 0..parts {
            s.add_piece(part(shard, k, parts));
        }
    }
    let mut paths = Paths::new(topo);
    // delivered[k][i]: the transfer that brought position i the piece it forwards next.
    let mut delivered = vec![vec![None; n]; parts];
    for t in 0..n.saturating_sub(1) {
        for (k, delivered) in delivered.iter_mut().enumerate() {
            // direction +1 for half 0, -1 (i.e. + n - 1) for half 1
            let dir = if k == 0 { 1 } else { n - 1 };
            let mut next = vec![None; n];
            for i in 0..n {
                let (src, dst) = (order[i], order[(i + dir) % n]);
                let shard = order[(i + n * n - t * dir) % n];
                let id = paths.send(&mut s, shard * parts + k, src, dst, delivered[i], t as u32)?;
                next[(i + dir) % n] = Some(id);
            }
            *delivered = next;
        }
    }
    Ok(s)
}

/// Chain broadcast from `root` along the ring order (one piece).
pub fn broadcast(topo: &Topology, plan: &RingPlan, root: usize) -> Result<Schedule> {
    super::common::check_root(topo, root)?;
    let order = &plan.order;
    let n = order.len();
    let mut s = Schedule::new(Collective::Broadcast, n, root, RING.name);
    let piece = s.add_piece(part(0, 0, 1));
    let p0 = order.iter().position(|&r| r == root).expect("the order holds every rank");
    let mut paths = Paths::new(topo);
    let mut last = None;
    for k in 0..n.saturating_sub(1) {
        let (src, dst) = (order[(p0 + k) % n], order[(p0 + k + 1) % n]);
        last = Some(paths.send(&mut s, piece, src, dst, last, k as u32)?);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
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
}
