//! Reading a plan as `ExecutionPlan::Impl` does (`loadExecutionPlan`, `parseChannels`,
//! `parseRemoteBuffer`, `setupOperations`, `setupOperation` in
//! `src/core/executor/execution_plan.cc`): required keys, their JSON types, the buffer,
//! channel and op codes, and defaults for the optional keys. The first problem is the answer,
//! as the executor throws at the first one; every message names where (`gpus[1].threadblocks[0]
//! .ops[3]`).

use super::model::*;
use serde_json::{Map, Value};

/// Largest chunk count or index we read: beyond it no plan is meaningful, and symbolic
/// execution would allocate per chunk.
pub const MAX_COUNT: u64 = 1 << 24;

type R<T> = std::result::Result<T, String>;

/// Parse a plan text. Err: one line naming the place and the problem.
pub fn parse(text: &str) -> R<Plan> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let top = v.as_object().ok_or("the plan is not a JSON object")?;
    if top
        .get("gpus")
        .and_then(Value::as_array)
        .is_some_and(|g| g.iter().any(|g| g.get("inputChunks").is_some() || g.get("chunkGroups").is_some()))
    {
        return Err("a legacy plan (camelCase keys such as inputChunks, mscclpp <= v0.7.0): the current \
                    executor reads input_chunks and rejects it"
            .into());
    }
    let gpus = arr(top, "gpus", "")?;
    let mut plan = Plan {
        name: string(top, "name", "")?,
        collective: string(top, "collective", "")?,
        protocol: string(top, "protocol", "")?,
        inplace: boolean(top, "inplace", "")?,
        reuse_resources: opt_bool(top, "reuse_resources", "", false)?,
        double_scratch: opt_bool(top, "use_double_scratch_buffer", "", false)?,
        buffer_alignment: opt_uint(top, "buffer_alignment", "", 16, u32::MAX as u64)?,
        min_message_size: opt_uint(top, "min_message_size", "", 0, u64::MAX)?,
        max_message_size: opt_uint(top, "max_message_size", "", u64::MAX, u64::MAX)?,
        threads_per_block: opt_uint(top, "num_threads_per_block", "", 1024, u32::MAX as u64)?,
        gpus: Vec::with_capacity(gpus.len()),
    };
    for (r, g) in gpus.iter().enumerate() {
        plan.gpus.push(gpu(g, &format!("gpus[{r}]"))?);
    }
    Ok(plan)
}

fn gpu(v: &Value, at: &str) -> R<Gpu> {
    let o = obj(v, at)?;
    let mut channels = Vec::new();
    for (i, c) in arr(o, "channels", at)?.iter().enumerate() {
        channels.push(channel(c, &format!("{at}.channels[{i}]"))?);
    }
    let mut remote_buffers = Vec::new();
    for (i, b) in opt_arr(o, "remote_buffers", at)?.iter().enumerate() {
        let here = format!("{at}.remote_buffers[{i}]");
        let bo = obj(b, &here)?;
        let access =
            arr(bo, "access_channel_types", &here)?.iter().map(|c| chan_of(c, &here)).collect::<R<Vec<_>>>()?;
        remote_buffers.push(RemoteBuffer {
            rank: count(bo, "rank", &here)?,
            buf: buf_of(bo.get("type"), &here)?,
            access,
        });
    }
    let mut semaphores = Vec::new();
    for (i, s) in opt_arr(o, "semaphores", at)?.iter().enumerate() {
        let here = format!("{at}.semaphores[{i}]");
        semaphores.push(uint(obj(s, &here)?, "init_value", &here, u32::MAX as u64)?);
    }
    let mut threadblocks = Vec::new();
    for (i, t) in arr(o, "threadblocks", at)?.iter().enumerate() {
        threadblocks.push(threadblock(t, &format!("{at}.threadblocks[{i}]"))?);
    }
    Ok(Gpu {
        id: count(o, "id", at)?,
        input_chunks: count(o, "input_chunks", at)?,
        output_chunks: count(o, "output_chunks", at)?,
        scratch_chunks: count(o, "scratch_chunks", at)?,
        threadblocks,
        channels,
        remote_buffers,
        semaphores,
    })
}

fn channel(v: &Value, at: &str) -> R<ChannelDecl> {
    let o = obj(v, at)?;
    match chan_of(o.get("channel_type").unwrap_or(&Value::Null), at)? {
        Chan::Switch => {
            let mut groups = Vec::new();
            for (i, g) in arr(o, "rank_groups", at)?.iter().enumerate() {
                let here = format!("{at}.rank_groups[{i}]");
                groups.push(counts(obj(g, &here)?, "ranks", &here)?);
            }
            Ok(ChannelDecl::Switch { buf: buf_of(o.get("buffer_type"), at)?, groups })
        }
        kind => Ok(ChannelDecl::Peer { kind, connected_to: counts(o, "connected_to", at)? }),
    }
}

fn threadblock(v: &Value, at: &str) -> R<ThreadBlock> {
    let o = obj(v, at)?;
    let mut channels = Vec::new();
    for (i, c) in arr(o, "channels", at)?.iter().enumerate() {
        let here = format!("{at}.channels[{i}]");
        let co = obj(c, &here)?;
        channels
            .push((chan_of(co.get("channel_type").unwrap_or(&Value::Null), &here)?, counts(co, "channel_ids", &here)?));
    }
    let mut remote_refs = Vec::new();
    for (i, c) in opt_arr(o, "remote_buffer_refs", at)?.iter().enumerate() {
        let here = format!("{at}.remote_buffer_refs[{i}]");
        let co = obj(c, &here)?;
        remote_refs.push((
            chan_of(co.get("access_channel_type").unwrap_or(&Value::Null), &here)?,
            counts(co, "remote_buffer_ids", &here)?,
        ));
    }
    let mut ops = Vec::new();
    for (i, op) in arr(o, "ops", at)?.iter().enumerate() {
        ops.push(operation(op, &format!("{at}.ops[{i}]"), false)?);
    }
    Ok(ThreadBlock { id: count(o, "id", at)?, ops, channels, remote_refs })
}

fn operation(v: &Value, at: &str, nested: bool) -> R<Op> {
    let o = obj(v, at)?;
    let name = string(o, "name", at)?;
    let code = Code::parse(&name).ok_or_else(|| format!("{at}: Invalid operation type: {name}"))?;
    let mut op = Op::new(code);
    if let Some(c) = o.get("channel_type") {
        op.chan = chan_of(c, at)?;
    }
    if o.contains_key("channel_ids") {
        op.channel_ids = counts(o, "channel_ids", at)?;
    }
    for (key, list) in [("src_buff", &mut op.src), ("dst_buff", &mut op.dst)] {
        for (i, r) in opt_arr(o, key, at)?.iter().enumerate() {
            list.push(reference(r, &format!("{at}.{key}[{i}]"))?);
        }
    }
    if let Some(t) = o.get("tbg_info") {
        let here = format!("{at}.tbg_info");
        let to = obj(t, &here)?;
        op.tbg = Some((count(to, "tb_id", &here)?, count(to, "tbg_size", &here)?));
    }
    if code == Code::Barrier {
        op.barrier = Some((count(o, "barrier_id", at)?, count(o, "num_threadblocks", at)?));
    }
    if matches!(code, Code::SemAcquire | Code::SemRelease) {
        op.semaphore_ids = counts(o, "semaphore_ids", at)?;
    }
    if let Some(r) = o.get("reduce_op") {
        op.reduce_op = Some(r.as_str().ok_or_else(|| format!("{at}.reduce_op: expected a string"))?.to_string());
    }
    if code == Code::Pipeline {
        if nested {
            return Err(format!("{at}: a pipeline inside a pipeline"));
        }
        let here = format!("{at}.iter_context");
        let it = obj(o.get("iter_context").unwrap_or(&Value::Null), &here)?;
        let mut ops = Vec::new();
        for (i, inner) in arr(o, "ops", at)?.iter().enumerate() {
            ops.push(operation(inner, &format!("{at}.ops[{i}]"), true)?);
        }
        op.pipeline = Some(Pipeline {
            unit_size: uint(it, "unit_size", &here, u32::MAX as u64)?,
            num_chunks: uint(it, "num_chunks", &here, MAX_COUNT)?,
            ops,
        });
    }
    Ok(op)
}

fn reference(v: &Value, at: &str) -> R<Ref> {
    let o = obj(v, at)?;
    let (index, size) = (count(o, "index", at)?, count(o, "size", at)?);
    if let Some(t) = o.get("type") {
        return Ok(Ref::Local { buf: buf_of(Some(t), at)?, index, size });
    }
    if o.contains_key("buffer_id") {
        return Ok(Ref::Remote { buffer_id: count(o, "buffer_id", at)?, index, size });
    }
    if o.contains_key("switch_channel_id") {
        return Ok(Ref::Switch { channel: count(o, "switch_channel_id", at)?, index, size });
    }
    Err(format!("{at}: a buffer reference needs type, buffer_id or switch_channel_id"))
}

fn place(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

fn obj<'a>(v: &'a Value, at: &str) -> R<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| format!("{}: expected an object", if at.is_empty() { "plan" } else { at }))
}

fn need<'a>(o: &'a Map<String, Value>, key: &str, at: &str) -> R<&'a Value> {
    o.get(key).ok_or_else(|| format!("{}: missing", place(at, key)))
}

fn string(o: &Map<String, Value>, key: &str, at: &str) -> R<String> {
    need(o, key, at)?.as_str().map(str::to_string).ok_or_else(|| format!("{}: expected a string", place(at, key)))
}

fn boolean(o: &Map<String, Value>, key: &str, at: &str) -> R<bool> {
    need(o, key, at)?.as_bool().ok_or_else(|| format!("{}: expected true or false", place(at, key)))
}

fn opt_bool(o: &Map<String, Value>, key: &str, at: &str, default: bool) -> R<bool> {
    if o.contains_key(key) {
        boolean(o, key, at)
    } else {
        Ok(default)
    }
}

fn arr<'a>(o: &'a Map<String, Value>, key: &str, at: &str) -> R<&'a Vec<Value>> {
    need(o, key, at)?.as_array().ok_or_else(|| format!("{}: expected a list", place(at, key)))
}

fn opt_arr<'a>(o: &'a Map<String, Value>, key: &str, at: &str) -> R<&'a [Value]> {
    match o.get(key) {
        None => Ok(&[]),
        Some(_) => arr(o, key, at).map(Vec::as_slice),
    }
}

fn whole(v: &Value, at: &str, max: u64) -> R<u64> {
    match v.as_u64() {
        Some(n) if n <= max => Ok(n),
        Some(n) => Err(format!("{at}: {n} is above the largest value read here ({max})")),
        None => Err(format!("{at}: expected a whole number, got {v}")),
    }
}

fn uint(o: &Map<String, Value>, key: &str, at: &str, max: u64) -> R<u64> {
    whole(need(o, key, at)?, &place(at, key), max)
}

fn opt_uint(o: &Map<String, Value>, key: &str, at: &str, default: u64, max: u64) -> R<u64> {
    match o.get(key) {
        None => Ok(default),
        Some(v) => whole(v, &place(at, key), max),
    }
}

/// A count or index: at most [`MAX_COUNT`].
fn count(o: &Map<String, Value>, key: &str, at: &str) -> R<usize> {
    uint(o, key, at, MAX_COUNT).map(|n| n as usize)
}

fn counts(o: &Map<String, Value>, key: &str, at: &str) -> R<Vec<usize>> {
    let here = place(at, key);
    arr(o, key, at)?
        .iter()
        .enumerate()
        .map(|(i, v)| whole(v, &format!("{here}[{i}]"), MAX_COUNT).map(|n| n as usize))
        .collect()
}

fn buf_of(v: Option<&Value>, at: &str) -> R<Buf> {
    let text = v.and_then(Value::as_str).ok_or_else(|| format!("{at}: missing buffer type"))?;
    Buf::parse(text).ok_or_else(|| format!("{at}: Invalid buffer type '{text}' (i, o, s)"))
}

fn chan_of(v: &Value, at: &str) -> R<Chan> {
    let text = v.as_str().ok_or_else(|| format!("{at}: missing channel type"))?;
    Chan::parse(text).ok_or_else(|| format!("{at}: Invalid channel type '{text}' (memory, port, switch, none)"))
}
