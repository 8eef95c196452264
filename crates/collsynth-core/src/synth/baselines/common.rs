//! Shared by the baselines: routes between ranks (through switches only when that is a
//! shortest way, else [`Router`]'s shortest route), the emission of one copy transfer, and
//! the derivation of every collective from the copy forms through the shared
//! transformations of [`crate::ir::transform`] (never re-implemented here).

use crate::error::{CollsynthError, Result};
use crate::ir::transform::{compose, reverse, transpose};
use crate::ir::{Collective, Op, Piece, Router, Schedule, Transfer};
use crate::rational::Rat;
use crate::synth::Request;
use crate::topology::Topology;
use std::collections::VecDeque;

/// Marks a node that a switch-only BFS did not reach.
const UNREACHED: u32 = u32::MAX;

/// Routes between the ranks of one topology.
///
/// Ranks `a` and `b` are *adjacent* when a shortest route from `a` to `b` has no compute
/// node in between (a direct link, or switches only). The route between adjacent ranks is
/// such a switch-only route; between other ranks it is [`Router`]'s shortest route.
/// The five collectives that every copy-form baseline (allgather + broadcast builders) covers.
pub(crate) const ALL_FIVE: &[Collective] = Collective::FIVE;

pub(crate) struct Paths<'a> {
    topo: &'a Topology,
    router: Router<'a>,
    /// `local[a]`, computed on first use: for every node, the link reaching it on a BFS from
    /// rank `a` that crosses switches only ([`UNREACHED`] if none).
    local: Vec<Option<Vec<u32>>>,
}

impl<'a> Paths<'a> {
    pub(crate) fn new(topo: &'a Topology) -> Self {
        Paths { topo, router: Router::new(topo), local: vec![None; topo.n_ranks()] }
    }

    pub(crate) fn topology(&self) -> &'a Topology {
        self.topo
    }

    fn switch_bfs(&self, a: usize) -> Vec<u32> {
        let topo = self.topo;
        let s = topo.rank_node(a);
        let mut via = vec![UNREACHED; topo.n_nodes()];
        let mut seen = vec![false; topo.n_nodes()];
        seen[s] = true;
        let mut queue = VecDeque::from([s]);
        while let Some(u) = queue.pop_front() {
            if u != s && topo.is_compute(u) {
                continue; // compute nodes end a switch-only route
            }
            for l in topo.out_links(u) {
                let w = topo.links[l].dst;
                if !seen[w] {
                    seen[w] = true;
                    via[w] = l as u32;
                    queue.push_back(w);
                }
            }
        }
        via
    }

    /// The switch-only route from rank `a` to rank `b`, if any (shortest among them).
    fn local_route(&mut self, a: usize, b: usize) -> Option<Vec<usize>> {
        if self.local[a].is_none() {
            self.local[a] = Some(self.switch_bfs(a));
        }
        let via = self.local[a].as_ref().expect("just computed");
        let (s, mut v) = (self.topo.rank_node(a), self.topo.rank_node(b));
        let mut route = Vec::new();
        while v != s {
            let l = via[v];
            if l == UNREACHED {
                return None;
            }
            route.push(l as usize);
            v = self.topo.links[l as usize].src;
        }
        route.reverse();
        Some(route)
    }

    /// The route from rank `a` to rank `b` (empty when equal): switch-only when that is
    /// shortest, else the router's shortest route.
    pub(crate) fn route(&mut self, a: usize, b: usize) -> Result<Vec<usize>> {
        if a == b {
            return Ok(Vec::new());
        }
        let shortest = self.router.route(a, b)?;
        match self.local_route(a, b) {
            Some(local) if local.len() == shortest.len() => Ok(local),
            _ => Ok(shortest),
        }
    }

    /// Hops of the shortest route from `a` to `b`.
    pub(crate) fn distance(&mut self, a: usize, b: usize) -> Result<usize> {
        Ok(self.router.route(a, b)?.len())
    }

    /// Whether `a != b` and a shortest route from `a` to `b` has no compute node in between.
    pub(crate) fn adjacent(&mut self, a: usize, b: usize) -> Result<bool> {
        if a == b {
            return Ok(false);
        }
        let d = self.distance(a, b)?;
        Ok(self.local_route(a, b).is_some_and(|r| r.len() == d))
    }

    /// The ranks adjacent to `a` (see [`Paths::adjacent`]) with their distances, by rank.
    pub(crate) fn neighbors(&mut self, a: usize) -> Result<Vec<(usize, usize)>> {
        if self.local[a].is_none() {
            self.local[a] = Some(self.switch_bfs(a));
        }
        let reached: Vec<usize> = {
            let via = self.local[a].as_ref().expect("just computed");
            (0..self.topo.n_ranks()).filter(|&b| b != a && via[self.topo.rank_node(b)] != UNREACHED).collect()
        };
        let mut out = Vec::with_capacity(reached.len());
        for b in reached {
            let local = self.local_route(a, b).map_or(usize::MAX, |r| r.len());
            let d = self.distance(a, b)?;
            if local == d {
                out.push((b, d));
            }
        }
        Ok(out)
    }

    /// Append a copy of `piece` from `src` to `dst` at `step`, after `after` (the transfer
    /// that delivered the piece to `src`, `None` when `src` holds it from the start).
    pub(crate) fn send(
        &mut self,
        s: &mut Schedule,
        piece: usize,
        src: usize,
        dst: usize,
        after: Option<usize>,
        step: u32,
    ) -> Result<usize> {
        let route = self.route(src, dst)?;
        Ok(s.add(Transfer::new(piece, src, dst, route, Op::Copy, after.into_iter().collect(), Some(step))))
    }
}

/// The piece `[k/parts, (k+1)/parts)` of `shard`.
pub(crate) fn part(shard: usize, k: usize, parts: usize) -> Piece {
    if parts == 1 {
        return Piece::whole(shard);
    }
    let p = parts as i128;
    Piece { shard, start: Rat::new(k as i128, p), end: Rat::new(k as i128 + 1, p) }
}

/// A reduction on `topo`: the copy schedule that `build` makes on the transpose of `topo`,
/// reversed (reduce-scatter from allgather, reduce from broadcast). Works for
/// unidirectional topologies too.
pub(crate) fn reduction(topo: &Topology, build: impl FnOnce(&Topology) -> Result<Schedule>) -> Result<Schedule> {
    let t = transpose(topo);
    let copy = build(&t)?;
    reverse(&copy, &t, topo)
}

/// `first` then `second` as an allreduce (root 0).
pub(crate) fn allreduce(first: &Schedule, second: &Schedule) -> Result<Schedule> {
    let mut s = compose(first, second, Collective::Allreduce)?;
    s.root = 0;
    Ok(s)
}

/// Builds copy forms on a topology; `transposed` says whether it is the transpose of the
/// topology asked for (the algorithm may then orient itself as on the original).
pub(crate) type AllgatherFn<'f> = &'f dyn Fn(&Topology, bool) -> Result<Schedule>;
pub(crate) type BroadcastFn<'f> = &'f dyn Fn(&Topology, bool, usize) -> Result<Schedule>;

/// Every collective from an allgather and a broadcast builder: reduce-scatter =
/// reverse(allgather on the transpose), reduce = reverse(broadcast on the transpose),
/// allreduce = compose(reduce-scatter, allgather).
pub(crate) fn from_copy_forms(
    topo: &Topology,
    collective: Collective,
    req: &Request,
    name: &str,
    allgather: AllgatherFn,
    broadcast: BroadcastFn,
) -> Result<Schedule> {
    match collective {
        Collective::Allgather => allgather(topo, false),
        Collective::ReduceScatter => reduction(topo, |t| allgather(t, true)),
        Collective::Allreduce => {
            let rs = reduction(topo, |t| allgather(t, true))?;
            let ag = allgather(topo, false)?;
            allreduce(&rs, &ag)
        }
        Collective::Broadcast => broadcast(topo, false, req.root),
        Collective::Reduce => reduction(topo, |t| broadcast(t, true, req.root)),
        Collective::Allgatherv => Err(unsupported(name, collective)),
    }
}

pub(crate) fn unsupported(name: &str, collective: Collective) -> CollsynthError {
    CollsynthError::bad(format!("algorithm '{name}' does not support {}", collective.name()))
}

/// Test helper shared by the baselines' tests: synthesize `spec` with `synthesize`.
#[cfg(test)]
pub(crate) fn run_on(
    spec: &str,
    synthesize: fn(&Topology, Collective, &crate::synth::Request) -> Result<Schedule>,
    c: Collective,
    root: usize,
) -> Result<Schedule> {
    let topo = crate::zoo::from_spec(spec).unwrap();
    synthesize(&topo, c, &crate::synth::Request { root, ..Default::default() })
}
