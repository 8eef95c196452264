//! The executor's structural checks, and the bounds of its fixed-size device arrays that it
//! does not check (an overflow there is memory corruption, so we refuse it too). Sources:
//! `execution_plan.cc` (`loadExecutionPlan`: "GPU rank does not match"; `getSizeAndChunks`,
//! `checkMessageSize`; `setupOperation`: channel and buffer indirection), `executor.cc`
//! (`setupDeviceExecutionPlan`: `MAX_OPERATION`), `execution_common.hpp` (the limits).

use super::model::*;

/// Every structural problem, in plan order (empty: the executor loads the plan and every
/// index an op uses lands inside the tables it indexes).
pub fn check(p: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    let n = p.gpus.len();
    if n == 0 {
        out.push("gpus: empty".into());
    }
    if p.buffer_alignment == 0 {
        out.push("buffer_alignment: must be positive".into());
    }
    if p.threads_per_block == 0 || p.threads_per_block > MAX_THREADS_PER_BLOCK {
        out.push(format!(
            "num_threads_per_block {}: the kernel is built for 1 to {MAX_THREADS_PER_BLOCK} threads",
            p.threads_per_block
        ));
    }
    if p.min_message_size > p.max_message_size {
        out.push("min_message_size is above max_message_size: no message size is valid".into());
    }
    for (r, g) in p.gpus.iter().enumerate() {
        let at = format!("gpus[{r}]");
        if g.id != r {
            out.push(format!("{at}: GPU rank does not match (id {})", g.id));
        }
        if g.input_chunks == 0 && g.output_chunks == 0 {
            out.push(format!("{at}: input_chunks and output_chunks are both 0"));
        }
        if let Some(why) = chunk_ratio(p, g) {
            out.push(format!("{at}: Size per chunks inconsistent: {why}"));
        }
        for c in &g.channels {
            match c {
                ChannelDecl::Peer { kind, connected_to } => {
                    if !matches!(kind, Chan::Memory | Chan::Port) {
                        out.push(format!("{at}: a {} channel with connected_to", kind.code()));
                    }
                    for &peer in connected_to {
                        if peer >= n || peer == r {
                            out.push(format!("{at}: channel to rank {peer} (ranks are 0..{n}, not itself)"));
                        }
                    }
                }
                ChannelDecl::Switch { groups, .. } => {
                    for grp in groups {
                        if !grp.contains(&r) || grp.iter().any(|&x| x >= n) {
                            out.push(format!(
                                "{at}: switch rank group {grp:?} must hold this rank and ranks below {n}"
                            ));
                        }
                    }
                }
            }
        }
        for (i, b) in g.remote_buffers.iter().enumerate() {
            if b.rank >= n || b.rank == r {
                out.push(format!("{at}.remote_buffers[{i}]: rank {} (ranks are 0..{n}, not itself)", b.rank));
            } else if p.gpus[b.rank].chunks(b.buf) == 0 {
                out.push(format!("{at}.remote_buffers[{i}]: rank {} has no {} chunks", b.rank, b.buf.code()));
            }
            if b.access.iter().any(|c| !matches!(c, Chan::Memory | Chan::Port)) {
                out.push(format!("{at}.remote_buffers[{i}]: access channel types are memory or port"));
            }
        }
        let declared = |kind: Chan| match kind {
            Chan::Switch => g.switch_channels().len(),
            k => g.peer_channels(k).len(),
        };
        for (t, tb) in g.threadblocks.iter().enumerate() {
            let at = format!("{at}.threadblocks[{t}]");
            if tb.id != t {
                out.push(format!("{at}: id {} (thread blocks are listed by id, 0, 1, ...)", tb.id));
            }
            for (kind, ids) in &tb.channels {
                if ids.len() > MAX_CHANNEL {
                    out.push(format!(
                        "{at}: {} {} channels (the device table holds {MAX_CHANNEL})",
                        ids.len(),
                        kind.code()
                    ));
                }
                if let Some(&bad) = ids.iter().find(|&&c| c >= declared(*kind)) {
                    out.push(format!("{at}: {} channel {bad} is not declared by the GPU", kind.code()));
                }
            }
            for (kind, ids) in &tb.remote_refs {
                if ids.len() > MAX_CHANNEL {
                    out.push(format!(
                        "{at}: {} remote buffers for {} (the device table holds {MAX_CHANNEL})",
                        ids.len(),
                        kind.code()
                    ));
                }
                for &b in ids {
                    match g.remote_buffers.get(b) {
                        None => out.push(format!("{at}: remote buffer {b} is not declared by the GPU")),
                        Some(rb) if !rb.access.contains(kind) => {
                            out.push(format!("{at}: remote buffer {b} is not registered for {} access", kind.code()))
                        }
                        _ => {}
                    }
                }
            }
            let expanded: usize = tb.ops.iter().map(|o| 1 + o.pipeline.as_ref().map_or(0, |pl| pl.ops.len())).sum();
            if expanded > MAX_OPERATION {
                out.push(format!("{at}: {expanded} operations (the executor allows {MAX_OPERATION} per thread block)"));
            }
            for (k, o) in tb.ops.iter().enumerate() {
                op(p, r, tb, o, &format!("{at}.ops[{k}]"), g.threadblocks.len(), &mut out);
                for (j, inner) in o.pipeline.iter().flat_map(|pl| pl.ops.iter()).enumerate() {
                    op(p, r, tb, inner, &format!("{at}.ops[{k}].ops[{j}]"), g.threadblocks.len(), &mut out);
                }
            }
        }
    }
    out
}

/// `getSizeAndChunks`: the chunk of input and output must be the same size; what that means
/// for the collective's input / output sizes.
fn chunk_ratio(p: &Plan, g: &Gpu) -> Option<String> {
    let n = p.gpus.len();
    let (i, o) = (g.input_chunks, g.output_chunks);
    if i == 0 || o == 0 {
        return None;
    }
    let ok = match p.collective.as_str() {
        "allgather" => o == n * i,
        "reducescatter" => i == n * o,
        "allreduce" => i == o,
        _ => true,
    };
    (!ok).then(|| format!("{} with {i} input and {o} output chunks on {n} ranks", p.collective))
}

fn op(p: &Plan, r: usize, tb: &ThreadBlock, o: &Op, at: &str, n_tbs: usize, out: &mut Vec<String>) {
    let g = &p.gpus[r];
    if o.channel_ids.len() > MAX_CHANNEL_PER_OPERATION {
        out.push(format!("{at}: {} channels (at most {MAX_CHANNEL_PER_OPERATION} per operation)", o.channel_ids.len()));
    }
    if o.src.len() > MAX_BUFFERS_PER_OPERATION || o.dst.len() > MAX_BUFFERS_PER_OPERATION {
        out.push(format!("{at}: more than {MAX_BUFFERS_PER_OPERATION} buffers in src_buff or dst_buff"));
    }
    let list = tb.channel_list(o.chan);
    if let Some(&c) = o.channel_ids.iter().find(|&&c| c >= list.len()) {
        out.push(format!("{at}: channel_ids {c} but the thread block lists {} {} channels", list.len(), o.chan.code()));
    }
    if let Some((id, size)) = o.tbg {
        if size == 0 || id >= size {
            out.push(format!("{at}: tbg_info tb_id {id} of tbg_size {size}"));
        }
    }
    if let Some((id, k)) = o.barrier {
        if id >= MAX_DEVICE_SYNCERS || k == 0 || k > n_tbs {
            out.push(format!(
                "{at}: barrier {id} of {k} thread blocks (ids below {MAX_DEVICE_SYNCERS}, 1..={n_tbs} blocks)"
            ));
        }
    }
    if o.semaphore_ids.len() > MAX_DEVICE_SEMAPHORES || o.semaphore_ids.iter().any(|&s| s >= g.semaphores.len()) {
        out.push(format!("{at}: semaphore_ids {:?} but the GPU declares {}", o.semaphore_ids, g.semaphores.len()));
    }
    if o.code.is_sync() && !matches!(o.chan, Chan::Memory | Chan::Port) {
        out.push(format!("{at}: {} needs a memory or port channel", o.code.name()));
    }
    if o.code.is_sync() && o.code != Code::Flush && o.channel_ids.is_empty() {
        out.push(format!("{at}: {} names no channel", o.code.name()));
    }
    if o.code == Code::Pipeline && o.pipeline.as_ref().is_some_and(|pl| pl.unit_size == 0) {
        out.push(format!("{at}: pipeline unit_size 0"));
    }
    let switches = g.switch_channels();
    for (which, refs) in [("src_buff", &o.src), ("dst_buff", &o.dst)] {
        for (i, rf) in refs.iter().enumerate() {
            let here = format!("{at}.{which}[{i}]");
            let (index, size) = rf.span();
            let (owner_chunks, what) = match *rf {
                Ref::Local { buf, .. } => (Some(g.chunks(buf)), buf.code().to_string()),
                Ref::Remote { buffer_id, .. } => {
                    let ids = tb.remote_list(o.chan);
                    match ids.get(buffer_id).and_then(|&b| g.remote_buffers.get(b)) {
                        Some(rb) if rb.rank < p.gpus.len() => {
                            (Some(p.gpus[rb.rank].chunks(rb.buf)), format!("rank {}'s {}", rb.rank, rb.buf.code()))
                        }
                        _ => {
                            out.push(format!(
                                "{here}: buffer_id {buffer_id} but the thread block lists {} {} remote buffers",
                                ids.len(),
                                o.chan.code()
                            ));
                            (None, String::new())
                        }
                    }
                }
                Ref::Switch { channel, .. } => {
                    match tb.channel_list(Chan::Switch).get(channel).and_then(|&c| switches.get(c)) {
                        Some(&(buf, _)) => (Some(g.chunks(buf)), format!("switch {}", buf.code())),
                        None => {
                            out.push(format!(
                                "{here}: switch_channel_id {channel} is not a switch channel of the thread block"
                            ));
                            (None, String::new())
                        }
                    }
                }
            };
            if size == 0 {
                out.push(format!("{here}: size 0"));
            }
            if let Some(c) = owner_chunks {
                if index + size > c {
                    out.push(format!("{here}: chunks {index}..{} but {what} has {c} chunks", index + size));
                }
            }
        }
    }
}
