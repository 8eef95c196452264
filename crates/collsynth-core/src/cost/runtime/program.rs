//! The runtime model's time of an MSCCL program as written: the one number `synth`, `export`
//! and `verify --topology` print for an XML.
//!
//! The program becomes what the simulator runs ([`crate::cost::runtime::sim`]): every message
//! (a send step and the receive step it meets on the peer, the n-th send on a connection
//! (rank, peer, channel) meeting the n-th receive) is a transfer of `cnt / nchunksperloop` of
//! the buffer along the route the runtime takes between the two ranks ([`Router`]: NCCL's
//! path on an imported machine); a `cpy` or `re` is a local transfer. A sent value waits
//! for what the step received (a fused step) and for the step's `depid`/`deps`, a `nop`'s
//! dependency passes to the next step of its block, and each thread block runs its steps in
//! order ([`BlockPlan`]). A receive's own dependency (an earlier write to the same place)
//! only orders accesses the block order already serializes, and is not timed.

use super::{sim, slices_for, RuntimeEstimate};
use crate::error::{CollsynthError, Result};
use crate::hash::FastMap as HashMap;
use crate::ir::{Executor, Op, Piece, Router, Schedule, Transfer};
use crate::msccl::lower::{BlockPlan, Operation};
use crate::msccl::model::{Program, StepType};
use crate::rational::Rat;
use crate::topology::Topology;

#[cfg(test)]
mod tests;

/// The simulator's view of `p` on `topo`: its messages and local steps as transfers, and its
/// thread blocks. Errors when the ranks differ or a connection's sends and receives do not
/// pair up (the validator refuses such a program first).
pub fn as_schedule(p: &Program, topo: &Topology) -> Result<(Schedule, BlockPlan)> {
    if topo.n_ranks() != p.ngpus {
        return Err(CollsynthError::bad(format!(
            "the program has {} ranks but the topology has {}",
            p.ngpus,
            topo.n_ranks()
        )));
    }
    if p.nchunksperloop == 0 {
        return Err(CollsynthError::bad("nchunksperloop is 0"));
    }
    let mut s = Schedule::new(p.collective, p.ngpus, p.root(), "msccl-xml");
    // One shard, the whole buffer: a message is its chunks' share of it.
    s.shards = vec![Rat::from_integer(1)];
    s.provenance.executor = Executor::Msccl;
    let mut pieces: HashMap<usize, usize> = HashMap::default();
    let mut piece = |s: &mut Schedule, cnt: usize| {
        *pieces.entry(cnt).or_insert_with(|| {
            s.add_piece(Piece {
                shard: 0,
                start: Rat::from_integer(0),
                end: Rat::new(cnt as i128, p.nchunksperloop as i128),
            })
        })
    };
    let peer = |v: i64, g: usize| usize::try_from(v).ok().filter(|&x| x < p.ngpus && x != g);
    // Receives in order per connection (src, dst, chan): the step each meets.
    let mut receives: HashMap<(usize, usize, usize), Vec<(usize, usize)>> = HashMap::default();
    for g in &p.gpus {
        for (b, tb) in g.tbs.iter().enumerate() {
            for j in (0..tb.steps.len()).filter(|&j| tb.steps[j].kind.receives()) {
                let from = peer(tb.recv, g.id).ok_or_else(|| bad_peer(g.id, tb.id, tb.recv))?;
                receives.entry((from, g.id, tb.chan)).or_default().push((b, j));
            }
        }
    }
    // Per (gpu, block, step): the transfer it receives (or runs locally) and the one it sends.
    let mut got: Vec<Vec<Vec<Option<usize>>>> =
        p.gpus.iter().map(|g| g.tbs.iter().map(|tb| vec![None; tb.steps.len()]).collect()).collect();
    let mut sent = got.clone();
    let mut router = Router::new(topo);
    let mut met: HashMap<(usize, usize, usize), usize> = HashMap::default();
    let at = |gid: usize| p.gpus.iter().position(|g| g.id == gid);
    for (gi, g) in p.gpus.iter().enumerate() {
        for (b, tb) in g.tbs.iter().enumerate() {
            for (j, st) in tb.steps.iter().enumerate() {
                let local = matches!(st.kind, StepType::Copy | StepType::LocalReduce);
                if local {
                    let op = if st.kind.reduces() { Op::Reduce } else { Op::Copy };
                    let pc = piece(&mut s, st.cnt);
                    got[gi][b][j] = Some(s.add(Transfer::new(pc, g.id, g.id, vec![], op, vec![], None)));
                }
                if !st.kind.sends() {
                    continue;
                }
                let to = peer(tb.send, g.id).ok_or_else(|| bad_peer(g.id, tb.id, tb.send))?;
                let conn = (g.id, to, tb.chan);
                let n = met.entry(conn).or_default();
                let (rb, rj) = *receives.get(&conn).and_then(|v| v.get(*n)).ok_or_else(|| unpaired(conn))?;
                *n += 1;
                let ri = at(to).ok_or_else(|| unpaired(conn))?;
                let receiver = &p.gpus[ri].tbs[rb].steps[rj];
                let op = if receiver.kind.reduces() { Op::Reduce } else { Op::Copy };
                let pc = piece(&mut s, st.cnt);
                let t = s.add(Transfer::new(pc, g.id, to, router.route(g.id, to)?, op, vec![], None));
                sent[gi][b][j] = Some(t);
                got[ri][rb][rj] = Some(t);
            }
        }
    }
    if let Some((&conn, _)) = receives.iter().find(|(c, v)| met.get(*c).copied().unwrap_or(0) != v.len()) {
        return Err(unpaired(conn));
    }
    // Dependencies: what a step waits for is done when the step it names received (or ran
    // locally) its transfer; a nop stands for its own dependency.
    let done = |gi: usize, b: usize, j: usize| -> Option<usize> { got[gi][b][j].or(sent[gi][b][j]) };
    let mut blocks: Vec<Vec<Operation>> = Vec::new();
    let mut ranks = Vec::new();
    for (gi, g) in p.gpus.iter().enumerate() {
        for (b, tb) in g.tbs.iter().enumerate() {
            let mut ops = Vec::with_capacity(tb.steps.len() + 1);
            let mut carried: Vec<usize> = Vec::new();
            for (j, st) in tb.steps.iter().enumerate() {
                if st.depid >= 0 {
                    let (db, dj) = (st.depid as usize, usize::try_from(st.deps).unwrap_or(usize::MAX));
                    let named = g.tbs.iter().position(|t| t.id == db).and_then(|x| {
                        let steps = &g.tbs[x].steps;
                        // A nop named as a dependency: what it waits for, in turn.
                        let mut k = dj.min(steps.len().saturating_sub(1));
                        while steps.get(k).is_some_and(|s| s.kind == StepType::Nop) && k > 0 {
                            k -= 1;
                        }
                        done(gi, x, k)
                    });
                    carried.extend(named);
                }
                if st.kind == StepType::Nop {
                    continue;
                }
                let received = got[gi][b][j].filter(|_| st.kind.receives());
                if let Some(x) = received {
                    ops.push((x, false));
                }
                let waiting = std::mem::take(&mut carried);
                if let Some(y) = sent[gi][b][j] {
                    let after = &mut s.transfers[y].after;
                    after.extend(received);
                    after.extend(waiting.iter().copied().filter(|&d| d != y));
                    ops.push((y, true));
                } else if let Some(l) = got[gi][b][j].filter(|_| !st.kind.receives()) {
                    s.transfers[l].after.extend(waiting.iter().copied().filter(|&d| d != l));
                    ops.push((l, false));
                }
            }
            blocks.push(ops);
            ranks.push(g.id);
        }
    }
    for t in &mut s.transfers {
        t.after.sort_unstable();
        t.after.dedup();
    }
    Ok((s, BlockPlan { channels: p.nchannels, blocks, ranks }))
}

/// The runtime model's time of `p` on `topo` for a buffer of `bytes` (the nccl-tests size
/// the runtime's loop covers, as the exporter judges it): base latency and the makespan of
/// its blocks under the program's protocol.
pub fn time(p: &Program, topo: &Topology, bytes: u64) -> Result<RuntimeEstimate> {
    let (s, plan) = as_schedule(p, topo)?;
    let size = Rat::from_integer(bytes as i128);
    let protocol = p.proto;
    let k = slices_for(&s, topo, size, protocol);
    let makespan = sim::makespan_in_blocks_us(&s, topo, size, protocol, k, &plan)?;
    let time_us = if s.transfers.is_empty() { 0.0 } else { protocol.base_latency_us() + makespan };
    Ok(RuntimeEstimate { time_us, protocol, slices: k })
}

fn bad_peer(gpu: usize, tb: usize, peer: i64) -> CollsynthError {
    CollsynthError::bad(format!("gpu {gpu} tb {tb}: peer {peer} is not another rank of the program"))
}

fn unpaired((src, dst, chan): (usize, usize, usize)) -> CollsynthError {
    CollsynthError::bad(format!("rank {src} -> rank {dst} on channel {chan}: sends and receives do not pair up"))
}
