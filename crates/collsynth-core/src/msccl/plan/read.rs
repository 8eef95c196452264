//! The one judge of a program to execute: MSCCL XML, or the same program as JSON (the shape of
//! the XML, see `Program::to_json`), goes through the runtimes' attribute parsers, the
//! structural rules and the symbolic interpreter exactly as `collsynth verify` judges an XML
//! file. The JSON form is turned into the XML's element tree, so both share every check.

use super::super::model::{Program, Runtime, MAX_CHILDREN_PER_NODE};
use super::super::parse::{self, Element, Problem};
use super::super::{interp, rules, Validation};
use crate::error::{CollsynthError, Result};
use crate::ir::Collective;
use serde_json::Value;

/// How a program is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Xml,
    Json,
}

impl Format {
    pub fn parse(text: &str) -> Result<Format> {
        match text {
            "xml" => Ok(Format::Xml),
            "json" => Ok(Format::Json),
            _ => crate::bad_input!("unknown program format '{text}' (xml, json)"),
        }
    }
}

/// The program in `text` if some runtime loads it and it runs correctly in every mode it
/// claims; else BadInput "not a valid MSCCL program: " and the problem `collsynth verify`
/// names first ([`refusal`]).
pub fn accepted(text: &str, format: Format) -> Result<Program> {
    let v = match format {
        Format::Xml => super::super::validate(text, None)?,
        Format::Json => {
            let (tree, places) = json_tree(text)?;
            let at = |p: Problem| match p.line.and_then(|i| places.get(i)) {
                Some(place) => format!("{place}: {}", p.message),
                None => p.message,
            };
            judge(|d| parse::program(&spelled(&tree, d), d).map_err(|ps| ps.into_iter().map(at).collect()))
        }
    };
    match (refusal(&v), v.program) {
        (None, Some(p)) => Ok(p),
        (why, _) => crate::bad_input!("not a valid MSCCL program: {}", why.unwrap_or_default()),
    }
}

/// Why `v` is refused, None if it is accepted: when no runtime loads the program, the first
/// problem of the new runtime (else the old one); otherwise the first execution problem.
pub fn refusal(v: &Validation) -> Option<String> {
    if v.ok() {
        return None;
    }
    let parsing = v.runtimes.iter().flat_map(|(_, ps)| ps).next();
    let first = if v.program.is_none() { parsing } else { v.execution.first() };
    Some(first.cloned().unwrap_or_else(|| "no runtime accepts it".into()))
}

/// Both runtimes' parsers (`read`) and rules, then symbolic execution of the first program a
/// runtime accepts, in every mode it claims (no link loads).
pub fn judge(read: impl Fn(Runtime) -> std::result::Result<Program, Vec<String>>) -> Validation {
    let mut runtimes = Vec::new();
    let mut program = None;
    for d in Runtime::ALL {
        match read(d) {
            Ok(p) => {
                let problems = rules::check(&p, d);
                if problems.is_empty() && program.is_none() {
                    program = Some(p);
                }
                runtimes.push((d, problems));
            }
            Err(problems) => runtimes.push((d, problems)),
        }
    }
    let execution = match &program {
        Some(p) => interp::check(p),
        None => vec![],
    };
    Validation { runtimes, program, execution, loads: None }
}

/// The tree with `coll` spelled as runtime `d` spells it (JSON uses collsynth's names).
fn spelled(tree: &Element, d: Runtime) -> Element {
    let mut t = tree.clone();
    for (k, v) in &mut t.attrs {
        if k == "coll" {
            if let Some(name) = Collective::parse(v).ok().and_then(|c| d.coll_name(c)) {
                *v = name.to_string();
            }
        }
    }
    t
}

/// The `<algo>` tree of a JSON program and, per element (its `line`), where it is in the JSON
/// (`program`, `gpus[0].tbs[2].steps[5]`).
fn json_tree(text: &str) -> Result<(Element, Vec<String>)> {
    let doc: Value =
        serde_json::from_str(text).map_err(|e| CollsynthError::bad(format!("the program is not JSON: {e}")))?;
    let mut places = Vec::new();
    let tree = element("algo", &doc, "program".into(), &mut places)?;
    Ok((tree, places))
}

/// The key holding an element's children in JSON, and their element name.
fn children_of(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "algo" => Some(("gpus", "gpu")),
        "gpu" => Some(("tbs", "tb")),
        "tb" => Some(("steps", "step")),
        _ => None,
    }
}

fn element(name: &str, v: &Value, place: String, places: &mut Vec<String>) -> Result<Element> {
    let Value::Object(map) = v else {
        return crate::bad_input!("{place}: must be a JSON object, got {v}");
    };
    let mut el = Element {
        name: name.into(),
        attrs: Vec::new(),
        children: Vec::new(),
        comments: Vec::new(),
        line: places.len(),
    };
    places.push(place.clone());
    let children = children_of(name);
    for (key, x) in map {
        match (children, x) {
            (Some((list, child)), Value::Array(items)) if key == list => {
                if items.len() > MAX_CHILDREN_PER_NODE {
                    return crate::bad_input!(
                        "{place}: {key} has {} entries, more than the runtime parser's {MAX_CHILDREN_PER_NODE}",
                        items.len()
                    );
                }
                for (i, item) in items.iter().enumerate() {
                    el.children.push(element(child, item, format!("{}{key}[{i}]", prefix(&place)), places)?);
                }
            }
            // Derived from the program (`Program::root`), not an attribute.
            _ if name == "algo" && key == "root" => {}
            (_, Value::Number(n)) => el.attrs.push((attr_name(name, key), n.to_string())),
            (_, Value::String(s)) => el.attrs.push((attr_name(name, key), s.clone())),
            (_, Value::Bool(b)) => el.attrs.push((attr_name(name, key), if *b { "1" } else { "0" }.into())),
            _ => return crate::bad_input!("{place}: \"{key}\" must be a number, a string or a boolean, got {x}"),
        }
    }
    Ok(el)
}

/// JSON calls the `coll` attribute `collective`.
fn attr_name(element: &str, key: &str) -> String {
    if element == "algo" && key == "collective" { "coll" } else { key }.to_string()
}

fn prefix(place: &str) -> String {
    if place == "program" {
        String::new()
    } else {
        format!("{place}.")
    }
}
