//! Schedule JSON, formats `collsynth-schedule/1` (flat) and `/2` (either form; written for a
//! schedule stated per orbit, `ir::orbit`, or holding range transfers, `ir::ranges`),
//! documented in docs/schedule-format.md.
//! The topology is embedded, so a schedule file is self-contained; routes are written as
//! node-index paths, so they do not depend on link numbering.

use super::{Collective, Executor, Op, Piece, Provenance, Schedule, Transfer, DATA};
use crate::error::{CollsynthError, Result};
use crate::rational::{parse_exact, to_fraction_string, Rat};
use crate::topology::{json as topo_json, Topology};
use serde_json::{json, Map, Value};

pub const FORMAT: &str = "collsynth-schedule/1";
/// The format of a compact schedule (a flat one is still written as [`FORMAT`], so that its
/// file is byte-identical to before).
pub const FORMAT_2: &str = "collsynth-schedule/2";

/// FNV-1a 64's starting value; [`fnv1a_extend`] folds bytes into a hash.
pub(crate) const FNV1A_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a 64 of `h` followed by `bytes` (not cryptographic; a dependency for a 64-bit
/// fingerprint is not worth it).
pub(crate) fn fnv1a_extend(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// FNV-1a 64 of the canonical topology JSON: names the topology a schedule was made for in
/// its file. Not a memo key: a collision there would be a wrong answer.
pub fn topology_hash(topo: &Topology) -> String {
    format!("fnv1a64:{:016x}", fnv1a_extend(FNV1A_OFFSET, topo_json::write(topo).as_bytes()))
}

fn route_nodes(topo: &Topology, t: &Transfer) -> Vec<usize> {
    let mut nodes = vec![topo.rank_node(t.src)];
    nodes.extend(t.route.iter().map(|&l| topo.links[l].dst));
    nodes
}

/// The schedule file text (with `topo` embedded).
pub fn write(s: &Schedule, topo: &Topology) -> String {
    let mut out = Vec::new();
    write_to(s, topo, &mut out).expect("writing to memory");
    String::from_utf8(out).expect("the writer writes UTF-8")
}

/// The schedule file text (with `topo` embedded), written to `out` piece by piece and
/// transfer by transfer: a schedule of millions of transfers never exists as one text.
/// Give it a buffered writer.
pub fn write_to(s: &Schedule, topo: &Topology, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    out.write_all(b"{\n")?;
    let options: Map<String, Value> =
        s.provenance.options.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    let details: Map<String, Value> = s
        .provenance
        .details
        .iter()
        .filter(|(k, _)| !super::is_timing(k))
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let mut provenance = json!({"algorithm": s.provenance.algorithm, "options": options,
                                "topology_hash": topology_hash(topo), "details": details});
    // Written only for a runtime's own kernels, so that other files stay byte-identical.
    if s.provenance.executor != Executor::Msccl {
        provenance["executor"] = json!(s.provenance.executor.name());
    }
    let format = if s.is_flat() { FORMAT } else { FORMAT_2 };
    let header = [
        ("format", json!(format)),
        ("collsynth_version", json!(crate::VERSION)),
        ("collective", json!(s.collective.name())),
        ("n_ranks", json!(s.n_ranks)),
        ("root", json!(s.root)),
        ("provenance", provenance),
        ("shards", Value::Array(s.shards.iter().map(|r| json!(to_fraction_string(r))).collect())),
    ];
    for (k, v) in header {
        writeln!(out, "  \"{k}\": {v},")?;
    }
    if let Some(g) = &s.symmetry {
        let gens: Vec<Value> = g.gens.iter().map(|gen| json!(gen.nodes)).collect();
        let mut sym = json!({"group": g.name, "order": g.order(), "generators": gens});
        if g.used_links_only() {
            sym["links"] = json!("used");
        }
        writeln!(out, "  \"symmetry\": {},", sym)?;
    }
    let topo_text = topo_json::write(topo);
    writeln!(out, "  \"topology\": {},", topo_text.trim_end().replace('\n', "\n  "))?;
    out.write_all(b"  \"pieces\": [")?;
    for (i, p) in s.pieces.iter().enumerate() {
        let sep = if i == 0 { "\n    " } else { ",\n    " };
        write!(out, "{sep}[{}, \"{}\", \"{}\"]", p.shard, to_fraction_string(&p.start), to_fraction_string(&p.end))?;
    }
    out.write_all(b"\n  ],\n  \"transfers\": [")?;
    for (i, t) in s.transfers.iter().enumerate() {
        let sep = if i == 0 { "\n    " } else { ",\n    " };
        let op = if t.op == Op::Copy { "copy" } else { "reduce" };
        let step = t.step.map(|x| x.to_string()).unwrap_or_else(|| "null".into());
        // Slots are written only when scratch is used, so older files stay byte-identical.
        let slots = if t.uses_scratch() {
            format!(", \"src_slot\": {}, \"dst_slot\": {}", t.src_slot, t.dst_slot)
        } else {
            String::new()
        };
        // A range's count is written only above 1 (format 2), so other files are unchanged.
        let count = if t.count == 1 { String::new() } else { format!(", \"count\": {}", t.count) };
        write!(
            out,
            "{sep}{{\"piece\": {}, \"src\": {}, \"dst\": {}, \"op\": \"{op}\", \"step\": {step}, \"route\": {:?}, \"after\": {:?}{slots}{count}}}",
            t.piece, t.src, t.dst, route_nodes(topo, t), t.after
        )?;
    }
    out.write_all(b"\n  ]\n}\n")
}

fn field<'a>(obj: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a Value> {
    obj.get(key).ok_or_else(|| CollsynthError::bad(format!("{at}: missing '{key}'")))
}

fn uint(v: &Value, at: &str) -> Result<usize> {
    v.as_u64().map(|x| x as usize).ok_or_else(|| CollsynthError::bad(format!("{at}: expected a whole number")))
}

fn fraction(v: &Value, at: &str) -> Result<Rat> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return Err(CollsynthError::bad(format!("{at}: expected a fraction \"p/q\""))),
    };
    parse_exact(&text).map_err(|e| e.context(at))
}

fn uints(v: &Value, at: &str) -> Result<Vec<usize>> {
    v.as_array()
        .ok_or_else(|| CollsynthError::bad(format!("{at}: expected a list")))?
        .iter()
        .map(|x| uint(x, at))
        .collect()
}

/// Parse a schedule file: (schedule, topology, topology warnings). Structural errors are
/// reported with their location; semantic checks are the verifier's job.
pub fn read(text: &str) -> Result<(Schedule, Topology, Vec<String>)> {
    let root: Value = serde_json::from_str(text)
        .map_err(|e| CollsynthError::bad(format!("malformed JSON at line {} column {}", e.line(), e.column())))?;
    let obj = root.as_object().ok_or_else(|| CollsynthError::bad("top level must be a JSON object"))?;
    match obj.get("format").and_then(Value::as_str) {
        Some(FORMAT | FORMAT_2) => {}
        Some(other) => {
            return Err(CollsynthError::bad(format!(
                "unsupported schedule format '{other}' (expected {FORMAT} or {FORMAT_2})"
            )))
        }
        None => return Err(CollsynthError::bad(format!("not a schedule file (no \"format\": \"{FORMAT}\")"))),
    }
    let loaded =
        topo_json::read(&field(obj, "topology", "schedule")?.to_string()).map_err(|e| e.context("topology"))?;
    let topo = loaded.topology;
    let collective = Collective::parse(field(obj, "collective", "schedule")?.as_str().unwrap_or(""))?;
    let n_ranks = uint(field(obj, "n_ranks", "schedule")?, "n_ranks")?;
    if n_ranks != topo.n_ranks() {
        return Err(CollsynthError::bad(format!("n_ranks is {n_ranks} but the topology has {} ranks", topo.n_ranks())));
    }
    let root = uint(field(obj, "root", "schedule")?, "root")?;
    let prov = field(obj, "provenance", "schedule")?;
    let executor = match prov.get("executor") {
        None => Executor::Msccl,
        Some(v) => Executor::parse(v.as_str().unwrap_or("")).map_err(|e| e.context("provenance.executor"))?,
    };
    let provenance = Provenance {
        executor,
        algorithm: prov.get("algorithm").and_then(Value::as_str).unwrap_or("unknown").to_string(),
        options: prov
            .get("options")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter().map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned).unwrap_or(v.to_string()))).collect()
            })
            .unwrap_or_default(),
        topology_hash: prov.get("topology_hash").and_then(Value::as_str).unwrap_or("").to_string(),
        details: prov
            .get("details")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default(),
    };
    let shards = field(obj, "shards", "schedule")?
        .as_array()
        .ok_or_else(|| CollsynthError::bad("shards: expected a list"))?
        .iter()
        .enumerate()
        .map(|(i, v)| fraction(v, &format!("shards[{i}]")))
        .collect::<Result<Vec<_>>>()?;
    let pieces = read_pieces(field(obj, "pieces", "schedule")?)?;
    let format_2 = obj.get("format").and_then(Value::as_str) == Some(FORMAT_2);
    let transfers = read_transfers(field(obj, "transfers", "schedule")?, &topo, format_2)?;
    let symmetry = match obj.get("symmetry") {
        None | Some(Value::Null) => None,
        Some(_) if obj.get("format").and_then(Value::as_str) != Some(FORMAT_2) => {
            return Err(CollsynthError::bad(format!("symmetry: only a {FORMAT_2} file states a schedule per orbit")))
        }
        Some(v) => Some(std::sync::Arc::new(read_symmetry(v, &topo)?)),
    };
    let copies = symmetry.as_ref().map_or(1, |g| g.order());
    check_steps(&transfers, copies)?;
    let s = Schedule { collective, n_ranks, root, shards, pieces, transfers, provenance, symmetry };
    super::ranges::check(&s)?;
    Ok((s, topo, loaded.warnings))
}

/// Step numbers size the cost models' per-step tables, so a step is at most the number of
/// transfers (a schedule with every step non-empty never needs more; gaps cost nothing but
/// must not make the reader's input a 28 GB allocation).
fn check_steps(transfers: &[Transfer], copies: usize) -> Result<()> {
    let stored = transfers.iter().fold(0usize, |a, t| a.saturating_add(t.count as usize));
    let limit = stored.saturating_mul(copies);
    match transfers.iter().enumerate().find(|(_, t)| t.step.is_some_and(|s| s as usize > limit)) {
        Some((i, t)) => Err(CollsynthError::bad(format!(
            "transfers[{i}].step: {} is beyond the number of transfers ({limit}); steps count rounds from 0",
            t.step.unwrap_or(0)
        ))),
        None => Ok(()),
    }
}

/// `{"group": .., "order": .., "generators": [[node images], ..]}`: each generator a
/// permutation of the topology's nodes (links follow). Whether they are automorphisms acting
/// freely is the verifier's job.
fn read_symmetry(v: &Value, topo: &Topology) -> Result<super::orbit::Group> {
    let obj = v.as_object().ok_or_else(|| CollsynthError::bad("symmetry: expected an object"))?;
    let gens = field(obj, "generators", "symmetry")?
        .as_array()
        .ok_or_else(|| CollsynthError::bad("symmetry.generators: expected a list"))?;
    if gens.is_empty() || gens.len() > 64 {
        return Err(CollsynthError::bad("symmetry.generators: expected 1 to 64 generators"));
    }
    let used_only = match obj.get("links") {
        None => false,
        Some(v) if v.as_str() == Some("used") => true,
        Some(_) => return Err(CollsynthError::bad("symmetry.links: expected \"used\" (or no key: all links)")),
    };
    let gens = gens
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let at = format!("symmetry.generators[{i}]");
            let nodes = uints(g, &at)?;
            let gen = if used_only {
                super::orbit::Generator::from_nodes_on_used_links(topo, nodes)
            } else {
                super::orbit::Generator::from_nodes(topo, nodes)
            };
            gen.map_err(|e| CollsynthError::bad(format!("{at}: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let group = if used_only { super::orbit::Group::on_used_links(gens) } else { super::orbit::Group::new(gens) };
    let group = group.map_err(|e| CollsynthError::bad(format!("symmetry: {e}")))?;
    if group.order() > topo.n_ranks() {
        return Err(CollsynthError::bad(format!(
            "symmetry: a group of order {} cannot act freely on {} ranks",
            group.order(),
            topo.n_ranks()
        )));
    }
    if let Some(order) = obj.get("order") {
        if uint(order, "symmetry.order")? != group.order() {
            return Err(CollsynthError::bad(format!(
                "symmetry.order: the generators make a group of order {}",
                group.order()
            )));
        }
    }
    Ok(group)
}

fn read_pieces(v: &Value) -> Result<Vec<Piece>> {
    let list = v.as_array().ok_or_else(|| CollsynthError::bad("pieces: expected a list"))?;
    list.iter()
        .enumerate()
        .map(|(i, p)| {
            let at = format!("pieces[{i}]");
            match p.as_array().map(Vec::as_slice) {
                Some([shard, start, end]) => {
                    Ok(Piece { shard: uint(shard, &at)?, start: fraction(start, &at)?, end: fraction(end, &at)? })
                }
                _ => Err(CollsynthError::bad(format!("{at}: expected [shard, \"start\", \"end\"]"))),
            }
        })
        .collect()
}

fn read_transfers(v: &Value, topo: &Topology, ranges: bool) -> Result<Vec<Transfer>> {
    let list = v.as_array().ok_or_else(|| CollsynthError::bad("transfers: expected a list"))?;
    list.iter().enumerate().map(|(i, t)| read_transfer(t, topo, &format!("transfers[{i}]"), ranges)).collect()
}

/// One transfer; `ranges`: a `count` key may make it a range transfer (format 2 only).
fn read_transfer(v: &Value, topo: &Topology, at: &str, ranges: bool) -> Result<Transfer> {
    let obj = v.as_object().ok_or_else(|| CollsynthError::bad(format!("{at}: expected an object")))?;
    let count = match obj.get("count") {
        None => 1,
        Some(_) if !ranges => {
            return Err(CollsynthError::bad(format!("{at}.count: only a {FORMAT_2} file holds range transfers")))
        }
        Some(v) => {
            let at = format!("{at}.count");
            let count = uint(v, &at)?;
            u32::try_from(count).map_err(|_| CollsynthError::bad(format!("{at}: {count} is too large")))?
        }
    };
    let op = match field(obj, "op", at)?.as_str() {
        Some("copy") => Op::Copy,
        Some("reduce") => Op::Reduce,
        _ => return Err(CollsynthError::bad(format!("{at}.op: expected \"copy\" or \"reduce\""))),
    };
    let step = match obj.get("step") {
        None | Some(Value::Null) => None,
        Some(s) => {
            let at = format!("{at}.step");
            let step = uint(s, &at)?;
            Some(u32::try_from(step).map_err(|_| CollsynthError::bad(format!("{at}: {step} is too large")))?)
        }
    };
    let nodes = uints(field(obj, "route", at)?, &format!("{at}.route"))?;
    let mut route = Vec::new();
    for w in nodes.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a >= topo.n_nodes() || b >= topo.n_nodes() {
            return Err(CollsynthError::bad(format!("{at}.route: node index out of range")));
        }
        route.push(topo.link_between(a, b).ok_or_else(|| {
            CollsynthError::bad(format!(
                "{at}.route: no link {} -> {} in the topology",
                topo.nodes[a].name, topo.nodes[b].name
            ))
        })?);
    }
    let src = uint(field(obj, "src", at)?, &format!("{at}.src"))?;
    let dst = uint(field(obj, "dst", at)?, &format!("{at}.dst"))?;
    if src >= topo.n_ranks() || dst >= topo.n_ranks() {
        return Err(CollsynthError::bad(format!("{at}: rank out of range")));
    }
    if nodes.first() != Some(&topo.rank_node(src)) || nodes.last() != Some(&topo.rank_node(dst)) {
        return Err(CollsynthError::bad(format!("{at}.route: must start at src and end at dst")));
    }
    let slot = |key: &str| -> Result<u8> {
        match obj.get(key) {
            None => Ok(DATA),
            Some(v) => u8::try_from(uint(v, &format!("{at}.{key}"))?)
                .map_err(|_| CollsynthError::bad(format!("{at}.{key}: at most 255"))),
        }
    };
    Ok(Transfer {
        src_slot: slot("src_slot")?,
        dst_slot: slot("dst_slot")?,
        piece: uint(field(obj, "piece", at)?, &format!("{at}.piece"))?,
        src,
        dst,
        route,
        op,
        after: uints(field(obj, "after", at)?, &format!("{at}.after"))?,
        step,
        count,
    })
}

#[cfg(test)]
mod tests;
