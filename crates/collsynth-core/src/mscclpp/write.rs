//! Writing a plan in the keys `execution_plan.cc` reads (the subset of docs/mscclpp.md). The
//! same plan gives the same bytes (keys sorted, two-space indent).

use super::model::*;
use serde_json::{json, Value};
use std::io::{self, Write};

pub fn to_json(p: &Plan) -> String {
    let mut out = Vec::new();
    write_json(p, &mut out).expect("writing to memory");
    String::from_utf8(out).expect("the writer writes UTF-8")
}

/// [`to_json`]'s text written to `out` one GPU at a time: only one GPU's JSON value exists at
/// once, never the whole plan's text. The bytes are serde_json's pretty printing of the whole
/// object (keys sorted, two-space indent): a nested value prints as it does alone, with every
/// line after the first indented by its depth (strings hold no raw line breaks). Give it a
/// buffered writer.
pub fn write_json(p: &Plan, out: &mut dyn Write) -> io::Result<()> {
    let fields = json!({
        "name": p.name,
        "collective": p.collective,
        "protocol": p.protocol,
        "inplace": p.inplace,
        "reuse_resources": p.reuse_resources,
        "use_double_scratch_buffer": p.double_scratch,
        "buffer_alignment": p.buffer_alignment,
        "min_message_size": p.min_message_size,
        "max_message_size": p.max_message_size,
        "num_threads_per_block": p.threads_per_block,
    });
    let Value::Object(fields) = fields else { unreachable!("an object literal") };
    let mut keys: Vec<&str> = fields.keys().map(String::as_str).chain(["gpus"]).collect();
    keys.sort_unstable();
    out.write_all(b"{")?;
    for (x, key) in keys.into_iter().enumerate() {
        out.write_all(if x == 0 { b"\n  \"" } else { b",\n  \"" })?;
        out.write_all(key.as_bytes())?;
        out.write_all(b"\": ")?;
        match fields.get(key) {
            Some(v) => write_nested(out, v, 1)?,
            None if p.gpus.is_empty() => out.write_all(b"[]")?,
            None => {
                for (i, g) in p.gpus.iter().enumerate() {
                    out.write_all(if i == 0 { b"[\n    " } else { b",\n    " })?;
                    write_nested(out, &gpu(g), 2)?;
                }
                out.write_all(b"\n  ]")?;
            }
        }
    }
    out.write_all(b"\n}\n")
}

/// `v` pretty-printed as a value `depth` levels deep: lines after the first indented.
fn write_nested(out: &mut dyn Write, v: &Value, depth: usize) -> io::Result<()> {
    let text = serde_json::to_string_pretty(v).expect("plain JSON values");
    let indent = "  ".repeat(depth);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.write_all(b"\n")?;
            out.write_all(indent.as_bytes())?;
        }
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

fn gpu(g: &Gpu) -> Value {
    let channels: Vec<Value> = g
        .channels
        .iter()
        .map(|c| match c {
            ChannelDecl::Peer { kind, connected_to } => {
                json!({"channel_type": kind.code(), "connected_to": connected_to})
            }
            ChannelDecl::Switch { buf, groups } => json!({
                "channel_type": "switch",
                "buffer_type": buf.code(),
                "rank_groups": groups.iter().map(|g| json!({"size": g.len(), "ranks": g})).collect::<Vec<_>>(),
            }),
        })
        .collect();
    let remote: Vec<Value> = g
        .remote_buffers
        .iter()
        .map(|b| {
            json!({"rank": b.rank, "type": b.buf.code(),
                   "access_channel_types": b.access.iter().map(|c| c.code()).collect::<Vec<_>>()})
        })
        .collect();
    json!({
        "id": g.id,
        "input_chunks": g.input_chunks,
        "output_chunks": g.output_chunks,
        "scratch_chunks": g.scratch_chunks,
        "threadblocks": g.threadblocks.iter().map(threadblock).collect::<Vec<_>>(),
        "channels": channels,
        "remote_buffers": remote,
        "semaphores": g.semaphores.iter().map(|v| json!({"init_value": v})).collect::<Vec<_>>(),
    })
}

fn threadblock(t: &ThreadBlock) -> Value {
    json!({
        "id": t.id,
        "ops": t.ops.iter().map(op).collect::<Vec<_>>(),
        "channels": t.channels.iter().map(|(c, ids)| json!({"channel_type": c.code(), "channel_ids": ids})).collect::<Vec<_>>(),
        "remote_buffer_refs": t.remote_refs.iter()
            .map(|(c, ids)| json!({"access_channel_type": c.code(), "remote_buffer_ids": ids}))
            .collect::<Vec<_>>(),
    })
}

fn reference(r: &Ref) -> Value {
    match *r {
        Ref::Local { buf, index, size } => json!({"type": buf.code(), "index": index, "size": size}),
        Ref::Remote { buffer_id, index, size } => json!({"buffer_id": buffer_id, "index": index, "size": size}),
        Ref::Switch { channel, index, size } => json!({"switch_channel_id": channel, "index": index, "size": size}),
    }
}

fn op(o: &Op) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("name".into(), o.code.name().into());
    if o.chan != Chan::None {
        m.insert("channel_type".into(), o.chan.code().into());
    }
    if !o.channel_ids.is_empty() {
        m.insert("channel_ids".into(), json!(o.channel_ids));
    }
    if !o.src.is_empty() {
        m.insert("src_buff".into(), o.src.iter().map(reference).collect());
    }
    if !o.dst.is_empty() {
        m.insert("dst_buff".into(), o.dst.iter().map(reference).collect());
    }
    if let Some((id, size)) = o.tbg {
        m.insert("tbg_info".into(), json!({"tb_id": id, "tbg_size": size}));
    }
    if let Some((id, n)) = o.barrier {
        m.insert("barrier_id".into(), id.into());
        m.insert("num_threadblocks".into(), n.into());
    }
    if !o.semaphore_ids.is_empty() {
        m.insert("semaphore_ids".into(), json!(o.semaphore_ids));
    }
    if let Some(r) = &o.reduce_op {
        m.insert("reduce_op".into(), r.as_str().into());
    }
    if let Some(p) = &o.pipeline {
        m.insert("iter_context".into(), json!({"unit_size": p.unit_size, "num_chunks": p.num_chunks}));
        m.insert("ops".into(), p.ops.iter().map(op).collect());
    }
    Value::Object(m)
}
