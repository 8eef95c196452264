//! MSCCL++ execution plans (the JSON the MSCCL++ executor loads): the exporter (schedule ->
//! plan -> JSON, judged before it is returned) and the judge of any plan (reader, the
//! executor's structural checks, symbolic execution). Format, choices and sources:
//! `docs/mscclpp.md`.

pub mod interp;
pub mod lower;
pub mod model;
pub mod parse;
pub mod rules;
pub mod write;

pub use model::Plan;

use crate::error::{CollsynthError, Result};
use crate::ir::Schedule;
use crate::topology::Topology;

/// An exported plan and its text.
pub struct Exported {
    pub plan: Plan,
    /// The plan's text; empty from [`export_streamed`] ([`Exported::write_json`] writes it).
    pub json: String,
    /// Thread blocks per group (slices of every data op).
    pub group: usize,
}

impl Exported {
    /// The text (as [`export`]'s `json`) written to `out` one GPU at a time.
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        write::write_json(&self.plan, out)
    }
}

/// Lower `s` (verified, on `topo`) and judge the text exactly as `validate` does; a problem
/// there is a bug (internal error), so no plan the judge refuses leaves this function.
/// `group`: thread blocks per slice group; None tries 4, 2, 1 and takes the first that fits.
pub fn export(s: &Schedule, topo: &Topology, group: Option<usize>) -> Result<Exported> {
    export_with(s, topo, group, true)
}

/// [`export`] for a file or a stream: the text is never built. The judge runs on the plan the
/// writer consumes (`rules::check`, `interp::check`) instead of on the text read back; the
/// writer and the reader agree on every plan (every [`export`] checks it, and
/// `mscclpp::tests` compares both verdicts on broken plans), so the verdict is the same.
/// [`Exported::write_json`] then streams the text.
pub fn export_streamed(s: &Schedule, topo: &Topology, group: Option<usize>) -> Result<Exported> {
    export_with(s, topo, group, false)
}

fn export_with(s: &Schedule, topo: &Topology, group: Option<usize>, text: bool) -> Result<Exported> {
    // Every rank's program: a schedule stated per orbit is written out in full.
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    let tries = group.map_or(lower::GROUP_SIZES.to_vec(), |g| vec![g]);
    let mut last = None;
    for g in tries {
        let plan = match lower::lower(s, topo, g) {
            Ok(p) => p,
            Err(e @ CollsynthError::Infeasible(_)) => {
                last = Some(e);
                continue;
            }
            Err(e) => return Err(e),
        };
        let checked = match text {
            true => self_check(&plan),
            false => check_plan(&plan).map(|()| String::new()),
        };
        return match checked {
            Ok(json) => Ok(Exported { plan, json, group: g }),
            Err(problem) => {
                Err(CollsynthError::internal(format!("exported MSCCL++ plan fails its own check: {problem}")))
            }
        };
    }
    Err(last.unwrap_or_else(|| CollsynthError::internal("no thread-block group tried")))
}

/// Write `p`, read it back as the executor would and judge it; Ok: the text, Err: the first
/// problem.
fn self_check(p: &Plan) -> std::result::Result<String, String> {
    let json = write::to_json(p);
    let v = validate(&json);
    if let Some(problem) = v.refusal() {
        return Err(problem);
    }
    if v.plan.as_ref() != Some(p) {
        return Err("the MSCCL++ plan does not read back as written".into());
    }
    Ok(json)
}

/// [`validate`]'s judge on the plan itself (no text): the structural checks, then symbolic
/// execution; Err: the first problem.
fn check_plan(p: &Plan) -> std::result::Result<(), String> {
    let structure = rules::check(p);
    let execution = if structure.is_empty() { interp::check(p) } else { vec![] };
    match structure.into_iter().chain(execution).next() {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

/// The verdict on a plan text.
pub struct Validation {
    /// The plan as read, None if the reader refused it (`parse` holds why).
    pub plan: Option<Plan>,
    pub parse: Option<String>,
    /// The executor's structural checks (run when the plan reads).
    pub structure: Vec<String>,
    /// Symbolic execution (run when the structure is sound): postcondition, deadlock, races.
    pub execution: Vec<String>,
}

impl Validation {
    pub fn ok(&self) -> bool {
        self.refusal().is_none()
    }

    /// The first problem, None if the plan is accepted.
    pub fn refusal(&self) -> Option<String> {
        self.parse.clone().or_else(|| self.structure.first().cloned()).or_else(|| self.execution.first().cloned())
    }
}

/// Judge a plan text: read, structural checks, then symbolic execution. Never fails.
pub fn validate(text: &str) -> Validation {
    match parse::parse(text) {
        Err(why) => Validation { plan: None, parse: Some(why), structure: vec![], execution: vec![] },
        Ok(plan) => {
            let structure = rules::check(&plan);
            let execution = if structure.is_empty() { interp::check(&plan) } else { vec![] };
            Validation { plan: Some(plan), parse: None, structure, execution }
        }
    }
}

/// Does `text` look like an MSCCL++ plan (a JSON object with `gpus` and no `transfers`)?
pub fn looks_like_plan(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.as_object().map(|o| o.contains_key("gpus") && !o.contains_key("transfers")))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests;
