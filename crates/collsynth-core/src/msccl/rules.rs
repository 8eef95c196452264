//! The structural rules the MSCCL runtimes enforce (or silently rely on) when they load an
//! algorithm: ids, peers, channels, limits, buffer bounds, dependencies. Each rule with its
//! source: docs/msccl.md; the runtime checks are in `msccl_parser.cc` / `topo.cc`.

use super::model::{Buf, CType, Gpu, Program, Runtime, Step, StepType, ThreadBlock, MAX_COUNT, MAX_NODES_PER_RANK};
use crate::hash::FastMap as HashMap;
use crate::ir::Collective;
use std::collections::hash_map::Entry;
use std::collections::BTreeMap;

/// Reductions one fused `re` chain may hold (`MSCCL_MAX_REDUCE_FUSION`).
const MAX_REDUCE_FUSION: usize = 16;

/// Every rule violation of `p` for `runtime`, one self-contained line each, starting with its
/// location (`algo:`, `gpu 2:`, `gpu 2 tb 5:`, `gpu 2 tb 5 step 7:`; tb is the `id`, step the
/// position in the thread block). Empty means the runtime would load the program. A `hasdep="1"`
/// nobody waits on is harmless and not reported. Cross-GPU matching (send/recv order) is the
/// interpreter's job, not this one's.
pub fn check(p: &Program, runtime: Runtime) -> Vec<String> {
    let mut out = Vec::new();
    check_algo(p, runtime, &mut out);
    check_gpu_ids(p, &mut out);
    for g in &p.gpus {
        check_gpu(p, g, runtime, &mut out);
    }
    out.extend(check_limits(p, runtime));
    out
}

/// Per GPU, in `p.gpus` order: (thread blocks, distinct channels used, most steps in one thread
/// block), for reports.
pub fn tb_usage(p: &Program) -> Vec<(usize, usize, usize)> {
    p.gpus
        .iter()
        .map(|g| {
            let mut chans: Vec<usize> = g.tbs.iter().map(|tb| tb.chan).collect();
            chans.sort_unstable();
            chans.dedup();
            let max_steps = g.tbs.iter().map(|tb| tb.steps.len()).max().unwrap_or(0);
            (g.tbs.len(), chans.len(), max_steps)
        })
        .collect()
}

/// What the runtime's arrays and fields hold, on a finished program: thread blocks per rank
/// and per channel, peers per channel, and every stored value in its C type. The exporter
/// fits its programs to these (`lower`); empty means they fit.
pub fn check_limits(p: &Program, d: Runtime) -> Vec<String> {
    let mut out = Vec::new();
    for g in &p.gpus {
        out.extend(too_many_blocks(g.id, g.tbs.len(), d));
        check_channels(g, d, &mut out);
        check_storage(g, d, &mut out);
        check_nodes(p, g, &mut out);
    }
    out
}

/// `MSCCL_MAX_NUM_THREAD_BLOCKS`: the problem of rank `rank` with `blocks` thread blocks, if any
/// (the exporter asks before emitting, from its assignment's count).
pub fn too_many_blocks(rank: usize, blocks: usize, d: Runtime) -> Option<String> {
    let max = d.limits().thread_blocks;
    (blocks > max).then(|| {
        format!("gpu {rank}: {blocks} thread blocks, {} allows at most {max} (MSCCL_MAX_NUM_THREAD_BLOCKS)", d.name())
    })
}

/// Every value of `g` as its runtime stores it: a value its C type cannot hold is stored as
/// its low bits without a warning (a `depid` of 128 waits on the flag of block -128).
fn check_storage(g: &Gpu, d: Runtime, out: &mut Vec<String>) {
    let l = d.limits();
    let stored = |what: &str, field: &str, v: i64, ty: CType| {
        (ty.store(v) != v).then(|| {
            format!(
                "{what}=\"{v}\" is stored as {} by {} ({} {field}, at most {})",
                ty.store(v),
                d.name(),
                ty.name(),
                ty.max()
            )
        })
    };
    for tb in &g.tbs {
        let loc = format!("gpu {} tb {}", g.id, tb.id);
        let fields = [
            stored("send", "sendPeer", tb.send, l.peer),
            stored("recv", "recvPeer", tb.recv, l.peer),
            stored("chan", "channelId", tb.chan as i64, l.channel_id),
            stored("steps", "nSteps", tb.steps.len() as i64, l.n_steps),
        ];
        out.extend(fields.into_iter().flatten().map(|m| format!("{loc}: {m}")));
        for (k, st) in tb.steps.iter().enumerate() {
            let fields = [
                (st.depid >= 0).then(|| stored("depid", "dependentBid", st.depid, l.dependent_bid)).flatten(),
                (st.depid >= 0).then(|| stored("deps", "dependentStep", st.deps, l.dependent_step)).flatten(),
                stored("srcoff", "srcOffset", st.srcoff, l.offset),
                stored("dstoff", "dstOffset", st.dstoff, l.offset),
                stored("cnt", "count", st.cnt as i64, l.count),
            ];
            out.extend(fields.into_iter().flatten().map(|m| format!("{loc} step {k}: {m}")));
        }
    }
}

fn check_algo(p: &Program, d: Runtime, out: &mut Vec<String>) {
    if p.ngpus == 0 {
        out.push("algo: ngpus=\"0\": at least one GPU is required".to_string());
    }
    let max_channels = d.limits().channels;
    if !(1..=max_channels).contains(&p.nchannels) {
        out.push(format!(
            "algo: nchannels=\"{}\" is outside 1..={max_channels} (MAXCHANNELS of {})",
            p.nchannels,
            d.name()
        ));
    }
    if p.nchunksperloop == 0 {
        out.push("algo: nchunksperloop=\"0\": the runtime cuts the buffer into that many chunks".to_string());
    }
    if d.coll_name(p.collective).is_none() {
        out.push(format!("algo: collective {} has no MSCCL coll name in {}", p.collective.name(), d.name()));
    }
    check_bytes(p, d, out);
    if d.legacy() {
        if let Some(n) = p.nthreads.filter(|n| n % 32 != 0) {
            out.push(format!("algo: nthreads=\"{n}\" must be a multiple of 32 (warp size)"));
        }
    } else if !p.inplace && !p.outofplace {
        out.push(format!("algo: inplace=\"0\" and outofplace=\"0\": {} never selects it", d.name()));
    }
}

/// The selection window: the old runtime treats `maxBytes` as an exclusive bound, so 0 selects
/// nothing; the new one reads 0 as unbounded.
fn check_bytes(p: &Program, d: Runtime, out: &mut Vec<String>) {
    if p.max_bytes == 0 {
        if d.legacy() {
            out.push(
                "algo: maxBytes=\"0\" means never in the old runtime (it selects only minBytes <= size < maxBytes)"
                    .to_string(),
            );
        }
    } else if p.min_bytes > p.max_bytes {
        out.push(format!("algo: minBytes=\"{}\" is greater than maxBytes=\"{}\"", p.min_bytes, p.max_bytes));
    }
}

fn check_gpu_ids(p: &Program, out: &mut Vec<String>) {
    let mut seen = vec![0usize; p.ngpus];
    for g in &p.gpus {
        match seen.get_mut(g.id) {
            Some(n) => *n += 1,
            None => {
                out.push(format!("gpu {}: id is not a rank 0..{} (ngpus=\"{}\")", g.id, p.ngpus as i64 - 1, p.ngpus))
            }
        }
    }
    for (id, n) in seen.into_iter().enumerate() {
        match n {
            0 => out.push(format!("gpu {id}: missing (ngpus=\"{}\" needs one <gpu> per rank)", p.ngpus)),
            1 => {}
            _ => out.push(format!("gpu {id}: appears {n} times")),
        }
    }
}

fn check_gpu(p: &Program, g: &Gpu, d: Runtime, out: &mut Vec<String>) {
    check_chunks(p, g, out);
    check_tb_ids(g, out);
    for tb in &g.tbs {
        check_tb(p, g, tb, d, out);
    }
    check_connections(g, out);
    check_deps(g, out);
    check_cycles(g, out);
}

/// Old-runtime consistency of the buffer sizes with `nchunksperloop` (applied in both runtimes:
/// the new executor's chunk size assumes the same relation).
fn check_chunks(p: &Program, g: &Gpu, out: &mut Vec<String>) {
    let (i_mult, o_mult) = match p.collective {
        Collective::Allgather => (p.ngpus, 1),
        Collective::ReduceScatter => (1, p.ngpus),
        _ => (1, 1),
    };
    for (name, chunks, mult) in [("i_chunks", g.i_chunks, i_mult), ("o_chunks", g.o_chunks, o_mult)] {
        if chunks > 0 && chunks * mult != p.nchunksperloop {
            let times = if mult == 1 { String::new() } else { format!(" x ngpus {mult}") };
            out.push(format!(
                "gpu {}: {name}=\"{chunks}\"{times} != nchunksperloop=\"{}\" (the old runtime rejects the file)",
                g.id, p.nchunksperloop
            ));
        }
    }
}

/// The parser's node budget for this rank: it stores <algo>, every <gpu>, and this rank's
/// <tb>s and <step>s, and fails as soon as it has stored MAX_NODES of them.
fn check_nodes(p: &Program, g: &Gpu, out: &mut Vec<String>) {
    let steps: usize = g.tbs.iter().map(|tb| tb.steps.len()).sum();
    let nodes = 1 + p.gpus.len() + g.tbs.len() + steps;
    if nodes >= MAX_NODES_PER_RANK {
        out.push(format!(
            "gpu {}: the runtime parser would store {nodes} nodes for this rank (algo, gpus, tbs, steps); it fails at {MAX_NODES_PER_RANK}",
            g.id
        ));
    }
}

/// Ids must be exactly 0..T-1: the runtime rejects duplicates and holes.
fn check_tb_ids(g: &Gpu, out: &mut Vec<String>) {
    let mut count: BTreeMap<usize, usize> = BTreeMap::new();
    for tb in &g.tbs {
        *count.entry(tb.id).or_default() += 1;
    }
    for (&id, &n) in &count {
        if n > 1 {
            out.push(format!("gpu {} tb {id}: duplicate thread block id ({n} thread blocks have it)", g.id));
        }
    }
    let top = count.keys().next_back().copied().unwrap_or(0);
    let holes: Vec<String> = (0..top).filter(|id| !count.contains_key(id)).map(|id| id.to_string()).collect();
    if !holes.is_empty() {
        out.push(format!(
            "gpu {}: thread block id(s) {} missing (ids must be 0..T-1 with no holes)",
            g.id,
            holes.join(", ")
        ));
    }
}

fn check_tb(p: &Program, g: &Gpu, tb: &ThreadBlock, d: Runtime, out: &mut Vec<String>) {
    let loc = format!("gpu {} tb {}", g.id, tb.id);
    for (dir, peer) in [("send", tb.send), ("recv", tb.recv)] {
        if peer == g.id as i64 {
            out.push(format!("{loc}: {dir}=\"{peer}\" is the GPU itself"));
        } else if peer != -1 && !(0..p.ngpus as i64).contains(&peer) {
            out.push(format!("{loc}: {dir}=\"{peer}\" is neither -1 nor a rank 0..{}", p.ngpus as i64 - 1));
        }
    }
    if tb.chan >= p.nchannels {
        out.push(format!("{loc}: chan=\"{}\" but nchannels=\"{}\"", tb.chan, p.nchannels));
    }
    if tb.steps.len() > d.max_steps_per_tb() {
        out.push(format!("{loc}: {} steps, {} stores at most {}", tb.steps.len(), d.name(), d.max_steps_per_tb()));
    }
    if let Some((k, st)) = tb.steps.iter().enumerate().find(|(k, st)| st.s != *k) {
        out.push(format!("{loc} step {k}: s=\"{}\", expected {k} (s counts 0,1,2,... including nops)", st.s));
    }
    for (k, st) in tb.steps.iter().enumerate() {
        check_step(g, tb, st, &format!("{loc} step {k}"), out);
    }
    check_load_order(tb, &loc, out);
}

fn check_step(g: &Gpu, tb: &ThreadBlock, st: &Step, loc: &str, out: &mut Vec<String>) {
    let ty = st.kind.name();
    if st.kind == StepType::Nop {
        if st.depid < 0 {
            out.push(format!("{loc}: a nop must carry a dependency (depid/deps), it exists only for that"));
        }
    } else if st.cnt == 0 {
        out.push(format!("{loc}: cnt=\"0\" on a {ty} step (it must move at least one chunk)"));
    } else if st.cnt >= MAX_COUNT {
        out.push(format!("{loc}: cnt=\"{}\" must be below {MAX_COUNT} (MSCCL_MAX_COUNT)", st.cnt));
    }
    if st.kind.sends() && tb.send == -1 {
        out.push(format!("{loc}: a {ty} step sends but the thread block has send=\"-1\""));
    }
    if st.kind.receives() && tb.recv == -1 {
        out.push(format!("{loc}: a {ty} step receives but the thread block has recv=\"-1\""));
    }
    if st.kind.reads_src() {
        check_bounds(g, st.srcbuf, st.srcoff, st.cnt, &format!("{loc}: srcoff"), out);
    }
    if st.kind.writes_dst() {
        check_bounds(g, st.dstbuf, st.dstoff, st.cnt, &format!("{loc}: dstoff"), out);
    }
}

/// `off..off+cnt` must lie inside the buffer (at least one chunk is checked when cnt is 0).
fn check_bounds(g: &Gpu, buf: Buf, off: i64, cnt: usize, what: &str, out: &mut Vec<String>) {
    let (chunks, name) = match buf {
        Buf::Input => (g.i_chunks, "i_chunks"),
        Buf::Output => (g.o_chunks, "o_chunks"),
        Buf::Scratch => (g.s_chunks, "s_chunks"),
    };
    // Offsets and counts come from the file: near i64::MAX their sum must not overflow.
    let end = i64::try_from(cnt.max(1)).ok().and_then(|c| off.checked_add(c));
    if off < 0 || end.is_none_or(|end| end > i64::try_from(chunks).unwrap_or(i64::MAX)) {
        out.push(format!("{what}=\"{off}\" cnt=\"{cnt}\" is outside buffer {} ({name}=\"{chunks}\")", buf.letter()));
    }
}

/// Replays the runtime's per-thread-block loading loop for the two things it gets wrong
/// silently or fatally: a fused `re` chain longer than 16 (overflows `srcs[]`), and
/// dependencies collected by nops that the next real step does not anchor with its own dep.
fn check_load_order(tb: &ThreadBlock, loc: &str, out: &mut Vec<String>) {
    let mut chain_key: Option<(Buf, i64, Buf)> = None;
    let (mut reductions, mut chain_start, mut pending_deps) = (0usize, 0usize, 0usize);
    for (k, st) in tb.steps.iter().enumerate() {
        let mut continuation = false;
        if st.kind == StepType::LocalReduce {
            continuation = chain_key == Some((st.dstbuf, st.dstoff, st.srcbuf)) && st.depid == -1;
            if !continuation {
                chain_key = None;
            }
        }
        if st.depid >= 0 {
            pending_deps += 1;
        }
        if st.kind == StepType::Nop {
            continue;
        }
        if !continuation {
            if pending_deps > 0 && st.depid < 0 {
                out.push(format!(
                    "{loc} step {k}: follows nop dependencies but has no depid itself (the runtime rejects the file: \
                     the step after nops must carry a dependency too)"
                ));
            }
            pending_deps = 0;
        }
        if st.kind != StepType::LocalReduce {
            chain_key = None;
            continue;
        }
        if !continuation {
            chain_start = reductions;
        }
        reductions += 1;
        if reductions - chain_start == MAX_REDUCE_FUSION + 1 {
            out.push(format!(
                "{loc} step {k}: the runtime fuses more than {MAX_REDUCE_FUSION} consecutive re steps on the same dst \
                 (MSCCL_MAX_REDUCE_FUSION); split the chain with a dependency or hasdep"
            ));
        }
        chain_key =
            if st.hasdep || reductions == MAX_REDUCE_FUSION { None } else { Some((st.dstbuf, st.dstoff, st.srcbuf)) };
    }
}

/// Each (peer, direction, channel) NCCL connection must be driven by one thread block.
fn check_connections(g: &Gpu, out: &mut Vec<String>) {
    let mut owner: HashMap<(i64, &str, usize), usize> = HashMap::default();
    for tb in &g.tbs {
        for (dir, peer) in [("send", tb.send), ("recv", tb.recv)] {
            if peer < 0 {
                continue;
            }
            match owner.entry((peer, dir, tb.chan)) {
                Entry::Vacant(e) => {
                    e.insert(tb.id);
                }
                Entry::Occupied(e) => out.push(format!(
                    "gpu {} tb {}: the {dir} connection with gpu {peer} on channel {} is already owned by tb {} \
                     (one thread block per peer, direction and channel)",
                    g.id,
                    tb.id,
                    tb.chan,
                    e.get()
                )),
            }
        }
    }
}

/// Per channel: at most 32 thread blocks that send and 32 that receive (the parser counts
/// `nSendPeers`/`nRecvPeers` per block with a peer; blocks without one are not limited).
fn check_channels(g: &Gpu, d: Runtime, out: &mut Vec<String>) {
    let max = d.limits().per_channel;
    let mut per_chan: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    for tb in &g.tbs {
        let e = per_chan.entry(tb.chan).or_default();
        e.0 += usize::from(tb.send >= 0);
        e.1 += usize::from(tb.recv >= 0);
    }
    for (chan, (sends, recvs)) in per_chan {
        for (dir, n) in [("send", sends), ("recv", recvs)] {
            if n > max {
                out.push(format!(
                    "gpu {} channel {chan}: {n} thread blocks with a {dir} peer, at most {max} \
                     (MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL)",
                    g.id
                ));
            }
        }
    }
}

/// The thread block with this id (the first, if duplicated).
fn tb_by_id(g: &Gpu, id: i64) -> Option<&ThreadBlock> {
    g.tbs.iter().find(|tb| tb.id as i64 == id)
}

/// Every (depid, deps) must name a step of another thread block of the same GPU that
/// publishes its flag (`hasdep="1"`, not a nop, which the runtime drops).
fn check_deps(g: &Gpu, out: &mut Vec<String>) {
    for tb in &g.tbs {
        for (k, st) in tb.steps.iter().enumerate() {
            if let Some(msg) = dep_problem(g, tb, st) {
                out.push(format!("gpu {} tb {} step {k}: {msg}", g.id, tb.id));
            }
        }
    }
}

fn dep_problem(g: &Gpu, tb: &ThreadBlock, st: &Step) -> Option<String> {
    let (depid, deps) = (st.depid, st.deps);
    let pair = format!("depid=\"{depid}\" deps=\"{deps}\"");
    if depid == -1 && deps == -1 {
        return None;
    }
    if depid < 0 || deps < 0 {
        return Some(format!("{pair}: both must be -1 or both name a step"));
    }
    if depid == tb.id as i64 {
        return Some(format!("{pair} names its own thread block (program order already covers it)"));
    }
    let Some(target) = tb_by_id(g, depid) else {
        return Some(format!("{pair}: gpu {} has no thread block {depid}", g.id));
    };
    let Some(dep_step) = target.steps.get(deps as usize) else {
        return Some(format!("{pair}: tb {depid} has only {} steps", target.steps.len()));
    };
    let at = format!("gpu {} tb {depid} step {deps}", g.id);
    if dep_step.kind == StepType::Nop {
        return Some(format!(
            "{pair} waits on {at}, a nop: the runtime drops nops and never publishes their flag (deadlock)"
        ));
    }
    if !dep_step.hasdep {
        return Some(format!(
            "{pair} waits on {at}, which does not have hasdep=\"1\": the runtime would never publish the flag (deadlock)"
        ));
    }
    None
}

/// A cycle through program order and dependencies among one GPU's thread blocks deadlocks.
/// Reports one cycle per GPU, as its dependency edges.
fn check_cycles(g: &Gpu, out: &mut Vec<String>) {
    let mut base = Vec::with_capacity(g.tbs.len());
    let mut total = 0;
    for tb in &g.tbs {
        base.push(total);
        total += tb.steps.len();
    }
    // preds[v]: nodes v waits for (previous step of its tb, its dependency target).
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); total];
    for (t, tb) in g.tbs.iter().enumerate() {
        for (k, st) in tb.steps.iter().enumerate() {
            let v = base[t] + k;
            if k > 0 {
                preds[v].push(v - 1);
            }
            if let Some(u) = dep_node(g, &base, tb, st) {
                preds[v].push(u);
            }
        }
    }
    if let Some(cycle) = find_cycle(&preds) {
        let locate = |v: usize| {
            let t = base.partition_point(|&b| b <= v) - 1;
            (g.tbs[t].id, v - base[t])
        };
        let mut waits = Vec::new();
        for w in cycle.windows(2) {
            let ((tv, kv), (tu, ku)) = (locate(w[0]), locate(w[1]));
            if tv != tu {
                waits.push(format!("tb {tv} step {kv} waits on tb {tu} step {ku}"));
            }
        }
        out.push(format!("gpu {}: dependency cycle ({}): the runtime would deadlock", g.id, waits.join(", ")));
    }
}

/// Node index of a step's valid cross-thread-block dependency target.
fn dep_node(g: &Gpu, base: &[usize], tb: &ThreadBlock, st: &Step) -> Option<usize> {
    if st.depid < 0 || st.deps < 0 || st.depid == tb.id as i64 {
        return None;
    }
    let t = g.tbs.iter().position(|x| x.id as i64 == st.depid)?;
    let k = st.deps as usize;
    (k < g.tbs[t].steps.len()).then(|| base[t] + k)
}

/// Some cycle of the "waits for" graph as a node walk `v0, v1, ..., v0` (each waits for the
/// next), or None if acyclic. Kahn's algorithm leaves exactly the nodes on or behind cycles;
/// walking predecessors inside that set must revisit a node.
fn find_cycle(preds: &[Vec<usize>]) -> Option<Vec<usize>> {
    let n = preds.len();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indeg = vec![0usize; n];
    for (v, ps) in preds.iter().enumerate() {
        for &u in ps {
            succs[u].push(v);
            indeg[v] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut done = vec![false; n];
    while let Some(u) = ready.pop() {
        done[u] = true;
        for &v in &succs[u] {
            indeg[v] -= 1;
            if indeg[v] == 0 {
                ready.push(v);
            }
        }
    }
    let start = (0..n).find(|&v| !done[v])?;
    let mut seen_at = vec![usize::MAX; n];
    let mut walk = Vec::new();
    let mut v = start;
    while seen_at[v] == usize::MAX {
        seen_at[v] = walk.len();
        walk.push(v);
        v = *preds[v].iter().find(|&&u| !done[u])?;
    }
    let mut cycle = walk.split_off(seen_at[v]);
    cycle.push(v);
    Some(cycle)
}

#[cfg(test)]
mod tests;
