//! Channels, thread blocks and fusion: which thread block of which rank runs each send and
//! receive, and which receive–send pairs become one fused step.

use super::grid::Grid;
use super::Operation;
use crate::hash::FastMap as HashMap;
use crate::ir::{Op, Schedule, DATA};

/// A thread block: its send peer, receive peer (either may be absent) and channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TbSpec {
    pub chan: usize,
    pub recv: Option<usize>,
    pub send: Option<usize>,
}

/// The assignment for one channel count.
pub struct TbAssignment {
    pub channels: usize,
    /// Per rank: its thread blocks (communication ones, then one for local transfers if
    /// the rank has any; the initial-copy block is added by the emitter when needed).
    pub tbs: Vec<Vec<TbSpec>>,
    /// Thread block of each transfer's send (on its source) and receive (on its destination).
    pub send_tb: Vec<usize>,
    pub recv_tb: Vec<usize>,
    /// `fused[x] = Some(y)`: the receive of x and the send of y are one step, at x's place.
    pub fused: Vec<Option<usize>>,
    /// Sends that run inside a fused step.
    pub sent_early: Vec<bool>,
    /// A fused reduction whose sum is sent on and never stored (`rrs`).
    pub no_store: Vec<bool>,
}

/// What fusion needs of a schedule and its order T whatever the channel count and spread:
/// computed once per lowering, since `lower::fit` tries up to 64 of them (empty when not
/// fusing).
#[derive(Default)]
pub struct Prepared {
    /// Position in T of each transfer's send and receive.
    send_at: Vec<usize>,
    recv_at: Vec<usize>,
    /// Accesses of each (rank, slot, piece) in T.
    access: HashMap<(usize, u8, usize), Vec<Access>>,
    /// (transfer, the peer it forwards from): each network transfer that sends on a piece
    /// its source received from that peer (a candidate for a receive–send thread block).
    forwards: Vec<(usize, usize)>,
}

impl Prepared {
    pub fn new(s: &Schedule, order: &[Operation], fuse: bool) -> Prepared {
        if !fuse {
            return Prepared::default();
        }
        let (mut send_at, mut recv_at) = (vec![0usize; s.transfers.len()], vec![0usize; s.transfers.len()]);
        let mut access: HashMap<(usize, u8, usize), Vec<Access>> = HashMap::default();
        for (k, &(t, is_send)) in order.iter().enumerate() {
            let tr = &s.transfers[t];
            if is_send || tr.is_local() {
                access.entry((tr.src, tr.src_slot, tr.piece)).or_default().push((k, false, true));
            }
            if is_send {
                send_at[t] = k;
            } else {
                recv_at[t] = k;
                access.entry((tr.dst, tr.dst_slot, tr.piece)).or_default().push((k, true, tr.op == Op::Reduce));
            }
        }
        let mut forwards = Vec::new();
        for (i, t) in s.transfers.iter().enumerate().filter(|(_, t)| !t.is_local()) {
            for &x in &t.after {
                let d = &s.transfers[x];
                if !d.is_local() && d.dst == t.src && d.piece == t.piece && d.dst_slot == t.src_slot {
                    forwards.push((i, d.src));
                }
            }
        }
        Prepared { send_at, recv_at, access, forwards }
    }
}

/// [`TbAssignment::step_floor`]: the busiest connection of one channel and its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepFloor {
    pub steps: usize,
    pub rank: usize,
    pub channel: usize,
    pub peer: usize,
    /// The rank sends to `peer` (else it receives from it).
    pub send: bool,
}

impl std::fmt::Display for StepFloor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (verb, dir) = if self.send { ("sends", "to") } else { ("receives", "from") };
        write!(
            f,
            "rank {} {verb} {} times {dir} rank {} on channel {}, each a step of one thread block",
            self.rank, self.steps, self.peer, self.channel
        )
    }
}

/// How transfers are spread over channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// By piece: a piece's whole path (a tree, a ring pass) stays on one channel, so a
    /// receive can be fused with the send that forwards it.
    ByPiece,
    /// By connection, (source + destination) mod C: spreads a rank's many peers (a direct
    /// all-to-all, a star) over channels at both ends, where by piece cannot.
    ByConnection,
    /// By piece and half: a reduction transfer on channel 2 p, a copy on 2 p + 1 (mod C), so
    /// that an allreduce's reduce-scatter half and allgather half of one piece run in
    /// different thread blocks and pipeline across slices.
    ByHalf,
    /// By depth in the dependency DAG, `width` channels per depth (by piece among them),
    /// depth d's on d w .. d w + w - 1 (mod C): a thread block carries only transfers of one
    /// depth, which run at about the same time in every slice, so that the block's
    /// iteration barrier (slice j + 1 after slice j's last step) costs little.
    ByDepth { width: usize },
}

impl TbAssignment {
    /// Channel of every transfer among `channels`.
    pub fn channels_of(s: &Schedule, channels: usize, spread: Spread) -> Vec<usize> {
        let key: Vec<usize> = match spread {
            Spread::ByPiece => s.transfers.iter().map(|t| t.piece).collect(),
            Spread::ByConnection => s.transfers.iter().map(|t| t.src + t.dst).collect(),
            Spread::ByHalf => s.transfers.iter().map(|t| 2 * t.piece + usize::from(t.op != Op::Reduce)).collect(),
            Spread::ByDepth { width } => {
                let width = width.max(1);
                let mut depth = vec![0usize; s.transfers.len()];
                // Any linear extension: the numbering when the lowering already checked it.
                let order = crate::ir::transform::topological_order(s).unwrap_or_default();
                for i in order {
                    depth[i] = s.transfers[i].after.iter().map(|&a| depth[a] + 1).max().unwrap_or(0);
                }
                s.transfers.iter().zip(depth).map(|(t, d)| d * width + t.piece % width).collect()
            }
        };
        key.into_iter().map(|k| k % channels).collect()
    }

    /// Pair connections into thread blocks (receive-from-a with send-to-b where most
    /// forwards go a -> b), then fuse consecutive receive–send pairs of one block. `chan`:
    /// each transfer's channel among `channels` ([`TbAssignment::channels_of`]).
    pub fn new(
        s: &Schedule,
        grid: &Grid,
        ops: &[Operation],
        prep: &Prepared,
        channels: usize,
        chan: &[usize],
        fuse: bool,
    ) -> TbAssignment {
        let n = s.n_ranks;
        let ch = |t: usize| chan[t];
        // Connections in use and forwarding counts per (rank, channel).
        let mut recv_peers: Vec<HashMap<usize, Vec<usize>>> = vec![HashMap::default(); n];
        let mut send_peers: Vec<HashMap<usize, Vec<usize>>> = vec![HashMap::default(); n];
        for (i, t) in s.transfers.iter().enumerate().filter(|(_, t)| !t.is_local()) {
            send_peers[t.src].entry(ch(i)).or_default().push(t.dst);
            recv_peers[t.dst].entry(ch(i)).or_default().push(t.src);
        }
        let mut forwards: HashMap<(usize, usize, usize, usize), usize> = HashMap::default();
        for &(i, from) in &prep.forwards {
            let t = &s.transfers[i];
            *forwards.entry((t.src, ch(i), from, t.dst)).or_default() += 1;
        }
        // Forwarding counts by (rank, channel): each pairing reads only its own.
        let mut forwards_at: HashMap<(usize, usize), Vec<Forward>> = HashMap::default();
        for (&(r, c, a, b), &k) in &forwards {
            forwards_at.entry((r, c)).or_default().push((k, a, b));
        }
        let mut tbs = vec![Vec::new(); n];
        let mut index: HashMap<(usize, usize, bool, usize), usize> = HashMap::default();
        for r in 0..n {
            let mut chans: Vec<usize> = recv_peers[r].keys().chain(send_peers[r].keys()).copied().collect();
            chans.sort_unstable();
            chans.dedup();
            for c in chans {
                let cands = forwards_at.remove(&(r, c)).unwrap_or_default();
                let pairs = pair_up(c, &recv_peers[r], &send_peers[r], cands);
                for spec in pairs {
                    let id = tbs[r].len();
                    if let Some(a) = spec.recv {
                        index.insert((r, c, false, a), id);
                    }
                    if let Some(b) = spec.send {
                        index.insert((r, c, true, b), id);
                    }
                    tbs[r].push(spec);
                }
            }
        }
        // Local transfers run on one peerless block per rank that has any.
        let mut local_tb: Vec<Option<usize>> = vec![None; n];
        for t in s.transfers.iter().filter(|t| t.is_local()) {
            if local_tb[t.src].is_none() {
                local_tb[t.src] = Some(tbs[t.src].len());
                tbs[t.src].push(TbSpec { chan: 0, recv: None, send: None });
            }
        }
        let tb_of = |i: usize, is_send: bool| {
            let t = &s.transfers[i];
            match (t.is_local(), is_send) {
                (true, _) => local_tb[t.src].expect("assigned above"),
                (false, true) => index[&(t.src, ch(i), true, t.dst)],
                (false, false) => index[&(t.dst, ch(i), false, t.src)],
            }
        };
        let send_tb = (0..s.transfers.len()).map(|i| tb_of(i, true));
        let recv_tb = (0..s.transfers.len()).map(|i| tb_of(i, false));
        let mut plan = TbAssignment {
            channels,
            tbs,
            send_tb: send_tb.collect(),
            recv_tb: recv_tb.collect(),
            fused: vec![None; s.transfers.len()],
            sent_early: vec![false; s.transfers.len()],
            no_store: vec![false; s.transfers.len()],
        };
        if fuse {
            plan.fuse(s, grid, ops, prep);
        }
        plan
    }

    /// A floor under the steps of the busiest thread block any assignment of `chan` gets,
    /// without assigning: all of rank r's sends to b on channel c run in its one block with
    /// send peer b there (its receives from a likewise), and each send or receive takes a
    /// step of its own (a fused step holds one of each). `None` when the (rank, channel,
    /// peer) table would be large (beyond 2^22 counts): no floor then, only the assignment.
    pub fn step_floor(s: &Schedule, channels: usize, chan: &[usize]) -> Option<StepFloor> {
        let n = s.n_ranks;
        let cells = n.checked_mul(n)?.checked_mul(channels)?.checked_mul(2)?;
        if cells > 1 << 22 {
            return None;
        }
        // (rank, channel, peer, is the send) as one flat index: a few thousand counts.
        let cell =
            |r: usize, c: usize, peer: usize, send: bool| ((r * channels + c) * n + peer) * 2 + usize::from(send);
        let mut count = vec![0u32; cells];
        for (i, t) in s.transfers.iter().enumerate().filter(|(_, t)| !t.is_local()) {
            count[cell(t.src, chan[i], t.dst, true)] += 1;
            count[cell(t.dst, chan[i], t.src, false)] += 1;
        }
        let (at, &steps) = count.iter().enumerate().max_by_key(|&(k, &v)| (v, std::cmp::Reverse(k)))?;
        let (send, rest) = (at % 2 == 1, at / 2);
        let (peer, rest) = (rest % n, rest / n);
        Some(StepFloor { steps: steps as usize, rank: rest / channels, channel: rest % channels, peer, send })
    }

    /// Fuse a receive x with the next operation y of its thread block when y sends the same
    /// piece and nothing writes that (rank, piece) between them in T: then y reads exactly
    /// what x wrote, and sending it at x's place moves no other operation of the block.
    fn fuse(&mut self, s: &Schedule, grid: &Grid, order: &[Operation], prep: &Prepared) {
        let (send_at, recv_at, access) = (&prep.send_at, &prep.recv_at, &prep.access);
        // Each block's operations in T, blocks numbered rank by rank.
        let mut base = Vec::with_capacity(self.tbs.len());
        let mut total = 0;
        for tbs in &self.tbs {
            base.push(total);
            total += tbs.len();
        }
        let mut ops: Vec<Vec<Operation>> = vec![Vec::new(); total];
        for &(t, is_send) in order {
            let tr = &s.transfers[t];
            match is_send {
                true => ops[base[tr.src] + self.send_tb[t]].push((t, true)),
                false => ops[base[tr.dst] + self.recv_tb[t]].push((t, false)),
            }
        }
        let rank_of = |b: usize| base.partition_point(|&x| x <= b) - 1;
        for (b, list) in ops.iter().enumerate().filter(|(_, l)| l.len() > 1) {
            let rank = rank_of(b);
            let mut k = 0;
            while k + 1 < list.len() {
                let ((x, x_send), (y, y_send)) = (list[k], list[k + 1]);
                let (tx, ty) = (&s.transfers[x], &s.transfers[y]);
                let feeds = !tx.is_local() && tx.piece == ty.piece && tx.dst_slot == ty.src_slot;
                if !x_send && y_send && feeds {
                    let acc = &access[&(rank, tx.dst_slot, tx.piece)];
                    let later = |p: usize| acc.iter().filter(move |&&(q, _, _)| q > p);
                    let (px, py) = (recv_at[x], send_at[y]);
                    // y's ordering dependencies (other pieces it waits for) must be received
                    // before x's place in T, or the fused step would wait for a later one.
                    let waits_later = ty.after.iter().any(|&a| {
                        let d = &s.transfers[a];
                        d.dst == ty.src && d.piece != ty.piece && recv_at[a] > px
                    });
                    if !waits_later && !later(px).any(|&(q, w, _)| w && q < py) {
                        self.fused[x] = Some(y);
                        self.sent_early[y] = true;
                        // Not stored: a reduction whose sum nobody at this rank reads again
                        // (next comes an overwrite, or nothing and the rank need not keep it).
                        let next = later(py).next();
                        self.no_store[x] = tx.op == Op::Reduce
                            && later(px).take_while(|&&(q, _, _)| q < py).count() == 0
                            && match next {
                                Some(&(_, w, reads)) => w && !reads,
                                None => tx.dst_slot != DATA || !grid.final_at(rank, tx.piece),
                            };
                        k += 2;
                        continue;
                    }
                }
                k += 1;
            }
        }
    }
}

/// Forwards through one (rank, channel): (count, from peer, to peer).
type Forward = (usize, usize, usize);

/// An access to a (rank, piece) in T: (position, writes?, reads the old value?).
type Access = (usize, bool, bool);

/// The thread blocks of one rank and channel: greedy pairing of receive peers with send
/// peers by forwarding count (`cands`: (count, from, to), any order; ties by peer ids, so
/// deterministic), the rest alone.
fn pair_up(
    c: usize,
    recv_peers: &HashMap<usize, Vec<usize>>,
    send_peers: &HashMap<usize, Vec<usize>>,
    mut cands: Vec<Forward>,
) -> Vec<TbSpec> {
    let peers = |m: &HashMap<usize, Vec<usize>>| {
        let mut v = m.get(&c).cloned().unwrap_or_default();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (ins, outs) = (peers(recv_peers), peers(send_peers));
    cands.sort_unstable_by(|x, y| y.0.cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    let (mut in_used, mut out_used) = (vec![false; ins.len()], vec![false; outs.len()]);
    let mut specs = Vec::new();
    for (_, a, b) in cands {
        let (Ok(i), Ok(j)) = (ins.binary_search(&a), outs.binary_search(&b)) else { continue };
        if !in_used[i] && !out_used[j] {
            in_used[i] = true;
            out_used[j] = true;
            specs.push(TbSpec { chan: c, recv: Some(a), send: Some(b) });
        }
    }
    specs.extend(ins.iter().zip(&in_used).filter(|(_, &u)| !u).map(|(&a, _)| TbSpec {
        chan: c,
        recv: Some(a),
        send: None,
    }));
    specs.extend(outs.iter().zip(&out_used).filter(|(_, &u)| !u).map(|(&b, _)| TbSpec {
        chan: c,
        recv: None,
        send: Some(b),
    }));
    specs.sort_unstable();
    specs
}
