//! `direct`: one step. Allgather: every rank sends its shard straight to every other rank;
//! broadcast: the root sends to every rank. Routes are shortest paths. Reductions by the
//! shared reversal, allreduce = reduce-scatter then allgather.

use super::common::{from_copy_forms, part, Paths, ALL_FIVE};
use crate::error::Result;
use crate::ir::{Collective, Schedule};
use crate::synth::{Algorithm, Extras, Request};
use crate::topology::Topology;

pub const DIRECT: Algorithm = Algorithm {
    name: "direct",
    help: "one step: every rank sends its data straight to every other rank over shortest routes",
    collectives: ALL_FIVE,
    options: &[],
    synthesize,
    extras: Extras::NONE,
};

fn synthesize(topo: &Topology, collective: Collective, req: &Request) -> Result<Schedule> {
    from_copy_forms(topo, collective, req, DIRECT.name, &|t, _| allgather(t), &|t, _, root| broadcast(t, root))
}

/// Every rank sends its whole shard to every other rank at step 0.
pub fn allgather(topo: &Topology) -> Result<Schedule> {
    let n = topo.n_ranks();
    let mut s = Schedule::new(Collective::Allgather, n, 0, DIRECT.name);
    for shard in 0..n {
        s.add_piece(part(shard, 0, 1));
    }
    let mut paths = Paths::new(topo);
    for src in 0..n {
        for dst in (0..n).filter(|&d| d != src) {
            paths.send(&mut s, src, src, dst, None, 0)?;
        }
    }
    Ok(s)
}

/// The root sends the whole message to every other rank at step 0.
pub fn broadcast(topo: &Topology, root: usize) -> Result<Schedule> {
    crate::synth::check_root(topo, root)?;
    let n = topo.n_ranks();
    let mut s = Schedule::new(Collective::Broadcast, n, root, DIRECT.name);
    let piece = s.add_piece(part(0, 0, 1));
    let mut paths = Paths::new(topo);
    for dst in (0..n).filter(|&d| d != root) {
        paths.send(&mut s, piece, root, dst, None, 0)?;
    }
    Ok(s)
}

#[cfg(test)]
mod tests;
