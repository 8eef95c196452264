//! The shared transformations, written once: reversal (allgather -> reduce-scatter,
//! broadcast -> reduce), composition (reduce-scatter + allgather -> allreduce, reduce +
//! broadcast -> allreduce), splitting into pipeline chunks, and graph transposition.

use super::{Collective, Op, Piece, Schedule, Transfer};
use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use crate::topology::{Topology, TopologyBuilder};

/// Transfers in an order where every transfer follows its dependencies (Kahn's algorithm,
/// smallest index first among ready ones). Errors on a dependency cycle or a bad index.
pub fn topological_order(s: &Schedule) -> Result<Vec<usize>> {
    let n = s.transfers.len();
    let mut indegree = vec![0usize; n];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, t) in s.transfers.iter().enumerate() {
        for &a in &t.after {
            if a >= n {
                return Err(CollsynthError::bad(format!("transfer {i} depends on unknown transfer {a}")));
            }
            indegree[i] += 1;
            children[a].push(i);
        }
    }
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> =
        (0..n).filter(|&i| indegree[i] == 0).map(std::cmp::Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        order.push(i);
        for &c in &children[i] {
            indegree[c] -= 1;
            if indegree[c] == 0 {
                ready.push(std::cmp::Reverse(c));
            }
        }
    }
    if order.len() != n {
        let stuck = (0..n).find(|&i| indegree[i] > 0).unwrap_or(0);
        return Err(CollsynthError::bad(format!("dependency cycle (deadlock) through transfer {stuck}")));
    }
    Ok(order)
}

/// The transpose of `topo`: every link reversed, nodes and ranks unchanged. A schedule made
/// on the transpose and then [`reverse`]d runs on `topo` (direct-connect paper, appendix B).
pub fn transpose(topo: &Topology) -> Topology {
    let mut b = TopologyBuilder::new(format!("transpose({})", topo.name));
    for n in &topo.nodes {
        b.node(n.name.clone(), n.kind, n.group.as_deref());
    }
    for l in &topo.links {
        b.link(l.dst, l.src, l.bandwidth, l.latency);
    }
    b.build().expect("the transpose of a valid topology is valid")
}

/// Reverse a copy schedule (allgather, allgatherv, broadcast) made on `made_on` into the
/// matching reduction (reduce-scatter, reduce) on `target`: every transfer runs backwards
/// as a Reduce along the reversed route, and every dependency flips. `made_on` is either
/// `target` itself (every route reversible) or its transpose.
pub fn reverse(s: &Schedule, made_on: &Topology, target: &Topology) -> Result<Schedule> {
    let collective = match s.collective {
        Collective::Allgather | Collective::Allgatherv => Collective::ReduceScatter,
        Collective::Broadcast => Collective::Reduce,
        c => return Err(CollsynthError::internal(format!("cannot reverse a {} schedule", c.name()))),
    };
    if s.uses_scratch() {
        return Err(CollsynthError::internal("cannot reverse a schedule that uses scratch slots"));
    }
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); s.transfers.len()];
    for (i, t) in s.transfers.iter().enumerate() {
        for &a in &t.after {
            dependents[a].push(i);
        }
    }
    let last_step = s.n_steps().unwrap_or(0);
    let mut out = Schedule { collective, transfers: Vec::with_capacity(s.transfers.len()), ..s.clone() };
    for (i, t) in s.transfers.iter().enumerate() {
        let route = t
            .route
            .iter()
            .rev()
            .map(|&l| {
                let link = &made_on.links[l];
                target.link_between(link.dst, link.src).ok_or_else(|| {
                    CollsynthError::internal(format!(
                        "cannot reverse link {} -> {}",
                        made_on.nodes[link.src].name, made_on.nodes[link.dst].name
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        out.transfers.push(Transfer::new(
            t.piece,
            t.dst,
            t.src,
            route,
            Op::Reduce,
            std::mem::take(&mut dependents[i]),
            t.step.map(|st| last_step - 1 - st),
        ));
    }
    Ok(out)
}

/// Run `second` after `first` on the same pieces (allreduce = reduce-scatter then
/// allgather, or reduce then broadcast). A transfer of `second` that sends piece p from rank
/// u waits for every transfer of `first` that delivers p to u. Steps of `second` follow
/// those of `first`.
pub fn compose(first: &Schedule, second: &Schedule, collective: Collective) -> Result<Schedule> {
    if first.uses_scratch() || second.uses_scratch() {
        return Err(CollsynthError::internal("cannot compose schedules that use scratch slots"));
    }
    if first.shards != second.shards || first.pieces != second.pieces {
        return Err(CollsynthError::internal("composed schedules must share shards and pieces"));
    }
    let offset = first.transfers.len();
    let step_offset = first.n_steps().unwrap_or(0);
    let mut into: std::collections::HashMap<(usize, usize), Vec<usize>> = Default::default();
    for (i, t) in first.transfers.iter().enumerate() {
        into.entry((t.dst, t.piece)).or_default().push(i);
    }
    let mut out = first.clone();
    out.collective = collective;
    out.provenance = second.provenance.clone();
    for t in &second.transfers {
        let mut after: Vec<usize> = t.after.iter().map(|a| a + offset).collect();
        after.extend(into.get(&(t.src, t.piece)).into_iter().flatten().copied());
        out.transfers.push(Transfer { after, step: t.step.map(|s| s + step_offset), ..t.clone() });
    }
    Ok(out)
}

/// Split every piece into `k` equal sub-pieces (pipelining): transfer i becomes k
/// transfers, the j-th carrying sub-piece j and depending on the j-th copies of its
/// dependencies. Steps are kept. `split(s, 1)` is `s`.
pub fn split(s: &Schedule, k: usize) -> Schedule {
    if k <= 1 {
        return s.clone();
    }
    let kk = k as i128;
    let mut out = Schedule { pieces: Vec::with_capacity(s.pieces.len() * k), transfers: Vec::new(), ..s.clone() };
    for p in &s.pieces {
        let width = p.len() / Rat::from_integer(kk);
        for j in 0..kk {
            let start = p.start + width * Rat::from_integer(j);
            let end = if j == kk - 1 { p.end } else { start + width };
            out.pieces.push(Piece { shard: p.shard, start, end });
        }
    }
    out.transfers.reserve(s.transfers.len() * k);
    for t in &s.transfers {
        for j in 0..k {
            out.transfers.push(Transfer {
                piece: t.piece * k + j,
                after: t.after.iter().map(|&a| a * k + j).collect(),
                ..t.clone()
            });
        }
    }
    out
}
