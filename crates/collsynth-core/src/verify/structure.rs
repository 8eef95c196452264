//! Structural checks: everything that can be checked without running the schedule.

use super::{plain, Cx, Violation};
use crate::ir::{Collective, Op};
use crate::rational::{to_fraction_string as frac, Rat};
use num_traits::{CheckedAdd, One, Zero};

pub(super) fn check(cx: &Cx) -> Result<(), Violation> {
    header(cx)?;
    shards(cx)?;
    pieces(cx)?;
    for i in 0..cx.s.transfers.len() {
        transfer(cx, i)?;
    }
    Ok(())
}

fn header(cx: &Cx) -> Result<(), Violation> {
    let (s, topo) = (cx.s, cx.topo);
    if s.n_ranks != topo.n_ranks() {
        return Err(plain(format!(
            "the schedule is for {} ranks but topology '{}' has {}",
            s.n_ranks,
            topo.name,
            topo.n_ranks()
        )));
    }
    if s.root >= s.n_ranks {
        return Err(Violation {
            rank: Some(s.root),
            ..plain(format!("root {} is not a rank (N = {})", s.root, s.n_ranks))
        });
    }
    Ok(())
}

fn shards(cx: &Cx) -> Result<(), Violation> {
    let s = cx.s;
    let (n, k, name) = (s.n_ranks, s.shards.len(), s.collective.name());
    match s.collective {
        Collective::Allgather | Collective::Allgatherv | Collective::ReduceScatter if k != n => {
            return Err(plain(format!("{name} needs {n} shards (one per rank), found {k}")));
        }
        Collective::Broadcast | Collective::Reduce if k != 1 => {
            return Err(plain(format!("{name} needs exactly 1 shard, found {k}")));
        }
        Collective::Allreduce if k == 0 => return Err(plain("allreduce needs at least 1 shard, found 0")),
        _ => {}
    }
    let zero_ok = s.collective == Collective::Allgatherv;
    let mut sum = Rat::zero();
    for (i, f) in s.shards.iter().enumerate() {
        if *f < Rat::zero() || (!zero_ok && f.is_zero()) {
            let need = if zero_ok { ">= 0" } else { "> 0" };
            return Err(plain(format!("shard {i} has size {} (must be {need})", frac(f))));
        }
        sum = sum
            .checked_add(f)
            .ok_or_else(|| plain("shard sizes overflow exact arithmetic (denominators too large)"))?;
    }
    if !sum.is_one() {
        return Err(plain(format!("shard sizes sum to {}, not 1", frac(&sum))));
    }
    if matches!(s.collective, Collective::Allgather | Collective::ReduceScatter) {
        let each = Rat::new(1, n as i128);
        if let Some((i, f)) = s.shards.iter().enumerate().find(|(_, f)| **f != each) {
            return Err(plain(format!(
                "shard {i} has size {}, but {name} shards are 1/N = {} (unequal shards need allgatherv)",
                frac(f),
                frac(&each)
            )));
        }
    }
    Ok(())
}

fn pieces(cx: &Cx) -> Result<(), Violation> {
    let s = cx.s;
    let (zero, one) = (Rat::zero(), Rat::one());
    for (p, pc) in s.pieces.iter().enumerate() {
        let bad = |what: String| Err(Violation { piece: Some(p), ..plain(format!("piece {p}: {what}")) });
        if pc.shard >= s.shards.len() {
            return bad(format!("shard {} does not exist ({} shards)", pc.shard, s.shards.len()));
        }
        if !(zero <= pc.start && pc.start < pc.end && pc.end <= one) {
            return bad(format!(
                "[{}, {}) of shard {} is not a non-empty interval within [0, 1)",
                frac(&pc.start),
                frac(&pc.end),
                pc.shard
            ));
        }
    }
    // Each shard's pieces, by start, must tile [0, 1): no gap, no overlap.
    let mut by_shard: Vec<usize> = (0..s.pieces.len()).collect();
    by_shard.sort_by(|&a, &b| {
        let (x, y) = (&s.pieces[a], &s.pieces[b]);
        (x.shard, &x.start, &x.end, a).cmp(&(y.shard, &y.start, &y.end, b))
    });
    let mut next = 0; // into by_shard
    for shard in 0..s.shards.len() {
        let first = next;
        while next < by_shard.len() && s.pieces[by_shard[next]].shard == shard {
            next += 1;
        }
        let of_shard = &by_shard[first..next];
        if of_shard.is_empty() {
            if s.shards[shard].is_zero() {
                continue; // an empty allgatherv shard has nothing to move
            }
            return Err(plain(format!("shard {shard} has no pieces")));
        }
        let gap = |a: &Rat, b: &Rat| {
            plain(format!("the pieces of shard {shard} do not tile it: [{}, {}) is in no piece", frac(a), frac(b)))
        };
        let mut covered = zero; // [0, covered) is tiled so far
        for (j, &p) in of_shard.iter().enumerate() {
            let pc = &s.pieces[p];
            if pc.start > covered {
                return Err(Violation { piece: Some(p), ..gap(&covered, &pc.start) });
            }
            if pc.start < covered {
                let q = of_shard[j - 1];
                let upto = std::cmp::min(covered, pc.end);
                return Err(Violation {
                    piece: Some(p),
                    ..plain(format!(
                        "the pieces of shard {shard} do not tile it: pieces {q} and {p} overlap on [{}, {})",
                        frac(&pc.start),
                        frac(&upto)
                    ))
                });
            }
            covered = pc.end;
        }
        if covered != one {
            return Err(gap(&covered, &one));
        }
    }
    Ok(())
}

fn transfer(cx: &Cx, i: usize) -> Result<(), Violation> {
    let (s, topo) = (cx.s, cx.topo);
    let t = &s.transfers[i];
    let n = s.n_ranks;
    if t.piece >= s.pieces.len() {
        return Err(cx.at(i, format!("the piece does not exist ({} pieces)", s.pieces.len())));
    }
    for r in [t.src, t.dst] {
        if r >= n {
            return Err(Violation { rank: Some(r), ..cx.at(i, format!("rank {r} does not exist (N = {n})")) });
        }
    }
    for &a in &t.after {
        if a >= s.transfers.len() {
            return Err(
                cx.at(i, format!("depends on transfer {a}, which does not exist ({} transfers)", s.transfers.len()))
            );
        }
    }
    if t.uses_scratch() && !s.collective.is_reduction() {
        return Err(
            cx.at(i, format!("uses scratch slots, which only reductions have ({} copies)", s.collective.name()))
        );
    }
    if t.is_local() {
        return local(cx, i);
    }
    if t.op == Op::Reduce && !s.collective.is_reduction() {
        return Err(cx.at(i, format!("op is reduce, but {} only copies", s.collective.name())));
    }
    // The route: links of the topology, each starting where the previous one ended, from
    // the source rank's node to the destination rank's.
    if t.route.is_empty() {
        return Err(cx.at(i, "the route is empty"));
    }
    if let Some(&l) = t.route.iter().find(|&&l| l >= topo.links.len()) {
        return Err(Violation {
            link: Some(l),
            ..cx.at(i, format!("route link {l} does not exist (the topology has {} links)", topo.links.len()))
        });
    }
    let (from, to) = (topo.rank_node(t.src), topo.rank_node(t.dst));
    let hole = |at: usize, next: usize, link: usize, how: String| {
        let what = match topo.link_between(at, next) {
            None => format!("route over a missing link {} -> {}", cx.node(at), cx.node(next)),
            Some(l) => format!("the route leaves out {}", cx.link(l)),
        };
        Err(Violation { link: Some(link), ..cx.at(i, format!("{what}: {how}")) })
    };
    let first = t.route[0];
    if topo.links[first].src != from {
        let how = format!("rank {} is at {} but the route starts with {}", t.src, cx.node(from), cx.link(first));
        return hole(from, topo.links[first].src, first, how);
    }
    for w in t.route.windows(2) {
        let (a, b) = (&topo.links[w[0]], &topo.links[w[1]]);
        if a.dst != b.src {
            let how = format!("{} is followed by {}", cx.link(w[0]), cx.link(w[1]));
            return hole(a.dst, b.src, w[1], how);
        }
    }
    let last = t.route[t.route.len() - 1];
    if topo.links[last].dst != to {
        let how = format!("the route ends with {} but rank {} is at {}", cx.link(last), t.dst, cx.node(to));
        return hole(topo.links[last].dst, to, last, how);
    }
    Ok(())
}

/// A local transfer moves a value between two different slots of one rank, over no link.
fn local(cx: &Cx, i: usize) -> Result<(), Violation> {
    let t = &cx.s.transfers[i];
    let r = t.src;
    if t.src_slot == t.dst_slot {
        return Err(Violation { rank: Some(r), ..cx.at(i, "a rank sends to itself (same rank and slot)") });
    }
    if let Some(&l) = t.route.first() {
        return Err(Violation {
            link: Some(l),
            ..cx.at(i, format!("a local transfer (rank {r}, slot {} -> {}) has a route", t.src_slot, t.dst_slot))
        });
    }
    Ok(())
}
