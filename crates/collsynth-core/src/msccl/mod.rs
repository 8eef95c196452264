//! MSCCL XML: the exporter (schedule -> program -> XML) and the validator (XML -> program ->
//! parser rules of both runtimes -> symbolic execution with the runtime's semantics).
//! Notes on the format and the choices made: `docs/msccl.md`.

pub mod interp;
pub mod lower;
pub mod model;
pub mod parse;
pub mod plan;
pub mod rules;
pub mod write;

pub use model::{Buf, Dialect, Gpu, Program, Protocol, Step, StepType, ThreadBlock};

use crate::error::{CollsynthError, Result};
use crate::ir::Schedule;
use crate::rational::Rat;
use crate::topology::Topology;

/// An exported schedule: the program, its XML, and the sub-chunks per piece it uses.
pub struct Exported {
    pub program: Program,
    /// The XML; empty from [`export_streamed`] ([`Exported::write_xml`] writes it).
    pub xml: String,
    pub dialect: Dialect,
    pub pipeline: usize,
    /// Why fused steps were dropped (the fused program's deadlock under the runtime's
    /// buffers, and the step counts), or None when the program is as fused as lowered.
    pub unfused_because: Option<String>,
}

/// Lower `s` (verified) and check the XML the way `validate` would; a problem there is a
/// bug (internal error): no XML that a runtime would reject, that computes a wrong result,
/// or that deadlocks under the runtime's connection buffers at any buffer size (every
/// maxAllowedCount, interleaved iterations of the buffer loop; `interp::check`) leaves this
/// function. With `auto_pipeline`, tree schedules (no steps) are cut into 4, else 2, else 1
/// sub-chunks per piece, the finest that fits the runtime's limits. A fused program that
/// fails is replaced by the same program without fused steps, which is deadlock-free at
/// every buffer size (`docs/msccl.md`).
pub fn export(s: &Schedule, o: &lower::Options, auto_pipeline: bool) -> Result<Exported> {
    export_with(s, o, auto_pipeline, true, None)
}

/// Picks the lowering of a schedule (flat, sub-chunked as it will be written) under the given
/// options: the options to lower it with (T, channels) and its time, or `None` when nothing
/// fits. `api::export_msccl` passes the runtime model's choice
/// (`cost::runtime::order::exported_lowering`).
pub type Chooser<'a> = &'a dyn Fn(&Schedule, &lower::Options) -> Result<Option<(lower::Options, f64)>>;

/// [`export`] (`text` false: [`export_streamed`]) writing the lowering `choose` picks: among
/// the sub-chunk depths `auto_pipeline` allows, the fastest (ties: the finer).
pub fn export_chosen(
    s: &Schedule,
    o: &lower::Options,
    auto_pipeline: bool,
    text: bool,
    choose: Chooser<'_>,
) -> Result<Exported> {
    export_with(s, o, auto_pipeline, text, Some(choose))
}

/// [`export`] for a file: the XML text is never built. The checks run on the program the
/// writer consumes (`rules::check`, `interp::check`) instead of on the text read back; the
/// writer and the parser agree on every program (tested: `msccl::tests`), so the verdict is
/// the same. [`Exported::write_xml`] then streams the text.
pub fn export_streamed(s: &Schedule, o: &lower::Options, auto_pipeline: bool) -> Result<Exported> {
    export_with(s, o, auto_pipeline, false, None)
}

impl Exported {
    /// The XML (as [`export`]'s `xml`) written to `out` tag by tag.
    pub fn write_xml(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        write::write_xml(&self.program, self.dialect, out)
    }
}

fn export_with(
    s: &Schedule,
    o: &lower::Options,
    auto_pipeline: bool,
    text: bool,
    choose: Option<Chooser<'_>>,
) -> Result<Exported> {
    // Every rank's program: a schedule stated per orbit is written out in full.
    let flat = crate::ir::orbit::flat(s)?;
    let s = flat.as_ref();
    let mut pipelines = if auto_pipeline && s.n_steps().is_none() { vec![4, 2, 1] } else { vec![o.pipeline.max(1)] };
    let chosen;
    let o = match choose {
        Some(choose) => {
            let mut best: Option<(f64, usize, lower::Options)> = None;
            for &k in &pipelines {
                let cut = crate::ir::transform::pipelined(s, k);
                if let Some((lowering, t)) = choose(&cut, &lower::Options { pipeline: k, ..o.clone() })? {
                    if best.as_ref().is_none_or(|b| t < b.0) {
                        best = Some((t, k, lowering));
                    }
                }
            }
            match best {
                Some((_, k, lowering)) => {
                    pipelines = vec![k];
                    chosen = lower::Options { pipeline: k, ..lowering };
                    &chosen
                }
                None => o,
            }
        }
        None => o,
    };
    let mut last = None;
    for k in pipelines {
        let ok = lower::Options { pipeline: k, ..o.clone() };
        let mut unfused_because: Option<(String, usize)> = None;
        for fuse in if o.fused { vec![true, false] } else { vec![false] } {
            let program = match lower::lower_with(s, &ok, fuse) {
                Ok(p) => p,
                Err(e @ CollsynthError::Infeasible(_)) => {
                    last = Some(e);
                    break;
                }
                Err(e) => return Err(e),
            };
            let checked = match text {
                true => self_check(&program, o.dialect),
                false => check_program(&program, o.dialect).map(|()| String::new()),
            };
            match checked {
                Ok(xml) => {
                    let unfused_because = unfused_because.map(|(why, steps)| {
                        format!(
                            "the fused program would hang the runtime ({}); exported without fused steps, \
                             deadlock-free at every buffer size with the same bytes per link (at most {} steps \
                             per rank instead of {steps})",
                            why.split(": gpu ").next().unwrap_or(&why),
                            max_steps(&program)
                        )
                    });
                    return Ok(Exported { program, xml, dialect: o.dialect, pipeline: k, unfused_because });
                }
                Err(problem) if fuse => {
                    unfused_because = Some((problem.clone(), max_steps(&program)));
                    last = Some(bug(problem));
                }
                Err(problem) => return Err(bug(problem)),
            }
        }
    }
    Err(last.unwrap_or_else(|| CollsynthError::internal("no pipeline tried")))
}

/// Steps of the busiest rank.
fn max_steps(p: &Program) -> usize {
    p.gpus.iter().map(|g| g.tbs.iter().map(|t| t.steps.len()).sum()).max().unwrap_or(0)
}

fn bug(problem: String) -> CollsynthError {
    CollsynthError::internal(format!("exported MSCCL XML fails its own validation: {problem}"))
}

/// Write `p`, read it back as the runtime would and run the validator on it; Err: the
/// first problem.
fn self_check(p: &Program, dialect: Dialect) -> std::result::Result<String, String> {
    let xml = write::to_xml(p, dialect);
    let parsed = parse::parse(&xml, dialect).map_err(|ps| ps[0].to_string())?;
    if &parsed != p {
        return Err("the XML does not read back as the program written".into());
    }
    check_program(&parsed, dialect)?;
    Ok(xml)
}

/// The runtimes' rules and the symbolic execution on `p`; Err: the first problem.
fn check_program(p: &Program, dialect: Dialect) -> std::result::Result<(), String> {
    if let Some(problem) = rules::check(p, dialect).into_iter().next() {
        return Err(problem);
    }
    if let Some(problem) = interp::check(p).into_iter().next() {
        return Err(problem);
    }
    Ok(())
}

/// The verdict on an XML file.
pub struct Validation {
    /// Per dialect (new, old): the parser's and the structural rules' problems (empty =
    /// that runtime accepts the file).
    pub dialects: Vec<(Dialect, Vec<String>)>,
    /// The program as read (by the first dialect whose parser accepts it).
    pub program: Option<Program>,
    /// Symbolic execution in every mode the file claims, unbounded and finite buffers
    /// (run when some dialect accepts the structure); empty = correct.
    pub execution: Vec<String>,
    /// With a topology: bytes per link as a fraction of M, and the bandwidth time per
    /// byte of M (1/(GB/s)) it implies.
    pub loads: Option<(Vec<Rat>, Rat)>,
}

impl Validation {
    /// Accepted by some runtime and correct when executed.
    pub fn ok(&self) -> bool {
        self.program.is_some() && self.execution.is_empty() && self.dialects.iter().any(|(_, ps)| ps.is_empty())
    }
}

/// Judge an XML text: both runtimes' parsers and rules, then symbolic execution; with
/// `topo`, the link loads. Never fails: every problem is in the result.
pub fn validate(text: &str, topo: Option<&Topology>) -> Result<Validation> {
    let read = |d| parse::parse(text, d).map_err(|ps| ps.iter().map(|p| p.to_string()).collect());
    let Validation { dialects, program, execution, .. } = plan::read::judge(read);
    let loads = match (&program, topo) {
        (Some(p), Some(t)) => {
            if t.n_ranks() != p.ngpus {
                return Err(CollsynthError::bad(format!(
                    "--topology has {} ranks but the XML is for ngpus = {}",
                    t.n_ranks(),
                    p.ngpus
                )));
            }
            Some(interp::link_loads(p, t).map_err(CollsynthError::bad)?)
        }
        _ => None,
    };
    Ok(Validation { dialects, program, execution, loads })
}

/// Read an XML file leniently for execution (the MPI executor): the first dialect whose
/// parser accepts it; structural rules are the validator's business.
pub fn read_program(text: &str) -> Result<Program> {
    parse::parse(text, Dialect::New)
        .or_else(|_| parse::parse(text, Dialect::Old))
        .map_err(|ps| CollsynthError::bad(ps.first().map_or("empty XML".to_string(), |p| p.to_string())))
}

#[cfg(test)]
mod tests;
