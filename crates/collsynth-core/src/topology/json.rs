//! Topology JSON, version 1 (see docs/contracts.md): reader and canonical writer.
//!
//! The writer is byte-stable: nodes in input order, links sorted by (src, dst) node index,
//! a pair of equal opposite links written once with `"bidirectional": true`. So
//! `write(read(write(t))) == write(t)`.

use super::{NodeKind, Topology, TopologyBuilder};
use crate::error::{CollsynthError, Result};
use crate::rational::{to_decimal, to_fraction_string, Rat};
use crate::units::{parse_bandwidth, parse_latency};
use serde_json::{Map, Value};

/// A parsed topology plus the warnings (unknown keys) met while reading it.
pub struct Loaded {
    pub topology: Topology,
    pub warnings: Vec<String>,
}

const TOP_KEYS: &[&str] = &["name", "nodes", "links", "version"];
const NODE_KEYS: &[&str] = &["name", "type", "group"];
const LINK_KEYS: &[&str] = &["src", "dst", "bandwidth", "latency", "bidirectional"];

/// Parse topology JSON text. Errors name the problem and where (`links[3].bandwidth: ...`).
pub fn read(text: &str) -> Result<Loaded> {
    let root: Value = serde_json::from_str(text).map_err(|e| {
        CollsynthError::bad(format!("malformed JSON at line {} column {}: {}", e.line(), e.column(), strip_pos(&e)))
    })?;
    let obj = root.as_object().ok_or_else(|| CollsynthError::bad("top level must be a JSON object"))?;
    let mut warnings = Vec::new();
    unknown_keys(obj, TOP_KEYS, "", &mut warnings);
    check_version(obj.get("version"))?;
    let name = match obj.get("name") {
        None => "topology".to_string(),
        Some(v) => v.as_str().ok_or_else(|| CollsynthError::bad("name: expected a string"))?.to_string(),
    };
    let mut b = TopologyBuilder::new(name);
    let nodes = array(obj, "nodes", "")?;
    for (i, node) in nodes.iter().enumerate() {
        read_node(&mut b, node, &format!("nodes[{i}]"), &mut warnings)?;
    }
    let links = match obj.get("links") {
        None => Vec::new(),
        Some(_) => array(obj, "links", "")?.clone(),
    };
    for (i, link) in links.iter().enumerate() {
        read_link(&mut b, link, &format!("links[{i}]"), &mut warnings)?;
    }
    Ok(Loaded { topology: b.build()?, warnings })
}

/// `"version"` is optional; when present it must be the integer 1 (the only version this
/// reader knows: a later version may mean something else by the same keys).
fn check_version(v: Option<&Value>) -> Result<()> {
    match v {
        None => Ok(()),
        Some(Value::Number(n)) if n.as_u64() == Some(1) => Ok(()),
        Some(other) => {
            Err(CollsynthError::bad(format!("version: {other} is not supported (this reader knows version 1)")))
        }
    }
}

fn strip_pos(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.find(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn unknown_keys(obj: &Map<String, Value>, known: &[&str], at: &str, warnings: &mut Vec<String>) {
    for k in obj.keys() {
        if !known.contains(&k.as_str()) {
            let place = if at.is_empty() { String::new() } else { format!("{at}: ") };
            warnings.push(format!("{place}unknown key '{k}' ignored"));
        }
    }
}

fn array<'a>(obj: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a Vec<Value>> {
    let loc = if at.is_empty() { key.to_string() } else { format!("{at}.{key}") };
    obj.get(key)
        .ok_or_else(|| CollsynthError::bad(format!("missing '{loc}'")))?
        .as_array()
        .ok_or_else(|| CollsynthError::bad(format!("{loc}: expected a list")))
}

fn string<'a>(obj: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a str> {
    obj.get(key)
        .ok_or_else(|| CollsynthError::bad(format!("{at}: missing '{key}'")))?
        .as_str()
        .ok_or_else(|| CollsynthError::bad(format!("{at}.{key}: expected a string")))
}

fn read_node(b: &mut TopologyBuilder, v: &Value, at: &str, warnings: &mut Vec<String>) -> Result<()> {
    let obj = v.as_object().ok_or_else(|| CollsynthError::bad(format!("{at}: expected an object")))?;
    unknown_keys(obj, NODE_KEYS, at, warnings);
    let name = string(obj, "name", at)?;
    if name.is_empty() {
        return Err(CollsynthError::bad(format!("{at}.name: empty node name")));
    }
    let kind = match string(obj, "type", at)? {
        "compute" => NodeKind::Compute,
        "switch" => NodeKind::Switch,
        other => {
            return Err(CollsynthError::bad(format!("{at}.type: expected \"compute\" or \"switch\", got \"{other}\"")))
        }
    };
    let group = match obj.get("group") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err(CollsynthError::bad(format!("{at}.group: expected a string"))),
    };
    if b.node_index(name).is_some() {
        return Err(CollsynthError::bad(format!("{at}: duplicate node name '{name}'")));
    }
    b.node(name, kind, group);
    Ok(())
}

/// A number or a string with units, read exactly.
fn quantity<T>(v: &Value, at: &str, parse: impl Fn(&str) -> Result<T>) -> Result<T> {
    match v {
        Value::Number(n) => parse(&n.to_string()).map_err(|e| e.context(at)),
        Value::String(s) => parse(s).map_err(|e| e.context(at)),
        _ => Err(CollsynthError::bad(format!("{at}: expected a number or a string with units"))),
    }
}

fn read_link(b: &mut TopologyBuilder, v: &Value, at: &str, warnings: &mut Vec<String>) -> Result<()> {
    let obj = v.as_object().ok_or_else(|| CollsynthError::bad(format!("{at}: expected an object")))?;
    unknown_keys(obj, LINK_KEYS, at, warnings);
    let endpoint = |key: &str| -> Result<usize> {
        let name = string(obj, key, at)?;
        b.node_index(name).ok_or_else(|| CollsynthError::bad(format!("{at}.{key}: unknown node '{name}'")))
    };
    let (src, dst) = (endpoint("src")?, endpoint("dst")?);
    let bw_value = obj.get("bandwidth").ok_or_else(|| CollsynthError::bad(format!("{at}: missing 'bandwidth'")))?;
    let bw = quantity(bw_value, &format!("{at}.bandwidth"), parse_bandwidth)?;
    let lat = match obj.get("latency") {
        None => 0.0,
        Some(v) => quantity(v, &format!("{at}.latency"), parse_latency)?,
    };
    let bidirectional = match obj.get("bidirectional") {
        None => false,
        Some(Value::Bool(x)) => *x,
        Some(_) => return Err(CollsynthError::bad(format!("{at}.bidirectional: expected true or false"))),
    };
    b.link_labeled(src, dst, bw, lat, at.to_string());
    if bidirectional {
        b.link_labeled(dst, src, bw, lat, at.to_string());
    }
    Ok(())
}

/// JSON text of a bandwidth: a plain number when it is a finite decimal, else `"p/q"`.
pub fn bandwidth_json(bw: &Rat) -> String {
    to_decimal(bw).unwrap_or_else(|| format!("\"{}\"", to_fraction_string(bw)))
}

/// JSON text of a latency in microseconds (shortest round-trip form).
pub fn latency_json(lat: f64) -> String {
    format!("{lat}")
}

fn quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// Canonical JSON text of `t` (one node or link per line), ending with a newline.
pub fn write(t: &Topology) -> String {
    match write_polled(t, || Ok(())) {
        Ok(text) => text,
        Err(_) => unreachable!("a poll that never fails"),
    }
}

/// [`write()`], answering Ctrl-C and the memory budget (`budget::check_cancelled`) between two
/// nodes or links: a million-node topology takes a second.
pub fn write_cancellable(t: &Topology) -> crate::error::Result<String> {
    write_polled(t, crate::budget::check_cancelled)
}

fn write_polled(t: &Topology, mut poll: impl FnMut() -> crate::error::Result<()>) -> crate::error::Result<String> {
    let mut out = format!("{{\n  \"name\": {},\n  \"nodes\": [", quote(&t.name));
    for (i, n) in t.nodes.iter().enumerate() {
        poll()?;
        let group = n.group.as_ref().map(|g| format!(", \"group\": {}", quote(g))).unwrap_or_default();
        let sep = if i == 0 { "" } else { "," };
        out += &format!("{sep}\n    {{\"name\": {}, \"type\": \"{}\"{group}}}", quote(&n.name), n.kind.as_str());
    }
    out += "\n  ],\n  \"links\": [";
    let mut first = true;
    for l in &t.links {
        poll()?;
        let reverse = t.link_between(l.dst, l.src).map(|i| &t.links[i]);
        let twin = reverse.is_some_and(|r| r.bandwidth == l.bandwidth && r.latency == l.latency);
        if twin && l.src > l.dst {
            continue;
        }
        let sep = if first { "" } else { "," };
        first = false;
        out += &format!(
            "{sep}\n    {{\"src\": {}, \"dst\": {}, \"bandwidth\": {}, \"latency\": {}{}}}",
            quote(&t.nodes[l.src].name),
            quote(&t.nodes[l.dst].name),
            bandwidth_json(&l.bandwidth),
            latency_json(l.latency),
            if twin { ", \"bidirectional\": true" } else { "" }
        );
    }
    out += "\n  ]\n}\n";
    Ok(out)
}

#[cfg(test)]
mod tests;
