//! MSCCL XML: the exporter (schedule -> program -> XML) and the validator (XML -> program ->
//! parser rules of both runtimes -> symbolic execution with the runtime's semantics).
//! Notes on the format and the choices made: `docs/msccl.md`.

pub mod interp;
pub mod lower;
pub mod model;
pub mod parse;
pub mod plan;
pub mod rules;
pub mod runtime;
pub mod write;

pub use model::{Buf, Gpu, Program, Protocol, Runtime, Step, StepType, ThreadBlock};

use crate::error::{CollsynthError, Result};
use crate::ir::Schedule;
use crate::rational::Rat;
use crate::topology::Topology;

/// An exported schedule: the program, its XML, and the sub-chunks per piece it uses.
pub struct Exported {
    pub program: Program,
    /// The XML; empty from [`export_streamed`] ([`Exported::write_xml`] writes it).
    pub xml: String,
    pub runtime: Runtime,
    pub pipeline: usize,
    /// Why fused steps were dropped (the fused program's deadlock under the runtime's
    /// buffers, and the step counts), or None when the program is as fused as lowered.
    pub unfused_because: Option<String>,
    /// The program written is a lowering the chooser judged ([`export_chosen`]); false for
    /// the exporter's own first fit.
    pub chosen: bool,
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
/// the sub-chunk depths `auto_pipeline` allows, the fastest (ties: the earlier tried). Judged,
/// a step schedule is tried cut in 2 as well as whole: when its pieces fit one slice of the
/// runtime's loop, only sub-chunks stream it inside a step.
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
        write::write_xml(&self.program, self.runtime, out)
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
    let pipelines = match (auto_pipeline, s.n_steps().is_none(), choose.is_some()) {
        (true, true, _) => vec![4, 2, 1],
        // Whole first, so that a tie keeps the schedule's own chunking.
        (true, false, true) => vec![1, 2],
        _ => vec![o.pipeline.max(1)],
    };
    let check = |program: &Program| match text {
        true => self_check(program, o.runtime),
        false => check_program(program, o.runtime).map(|()| String::new()),
    };
    match choose {
        Some(choose) => export_fastest(s, o, &pipelines, &check, choose),
        None => export_first(s, o, &pipelines, &check),
    }
}

/// The first sub-chunk depth of `pipelines` that fits the runtime, lowered with `o`; its
/// fused program, or the same lowering without fused steps when the fused one fails `check`.
fn export_first(
    s: &Schedule,
    o: &lower::Options,
    pipelines: &[usize],
    check: &dyn Fn(&Program) -> std::result::Result<String, String>,
) -> Result<Exported> {
    let mut last = None;
    for &k in pipelines {
        let ok = lower::Options { pipeline: k, ..o.clone() };
        let mut hung: Option<Hung> = None;
        for fuse in if o.fused { vec![true, false] } else { vec![false] } {
            let program = match lower::lower_with(s, &ok, fuse) {
                Ok(p) => p,
                Err(e @ CollsynthError::Infeasible(_)) => {
                    last = Some(e);
                    break;
                }
                Err(e) => return Err(e),
            };
            match check(&program) {
                Ok(xml) => return Ok(exported(program, xml, o.runtime, k, hung, false)),
                Err(problem) if fuse => {
                    hung = Some((problem.clone(), max_steps(&program)));
                    last = Some(bug(problem));
                }
                Err(problem) => return Err(bug(problem)),
            }
        }
    }
    Err(last.unwrap_or_else(|| CollsynthError::internal("no pipeline tried")))
}

/// A judged lowering: (time, sub-chunk depth, options).
type Candidate = (f64, usize, lower::Options);

/// Why a fused program was dropped: its problem and its busiest rank's step count.
type Hung = (String, usize);

/// The fastest program `choose` finds that the runtime runs: the depths' chosen lowerings in
/// order of their time (ties: the finer), each written if its fused program passes `check`.
/// Once one fails (it would hang the runtime), the fastest unfused lowering over every depth
/// (deadlock-free: docs/msccl.md) is judged too and written unless a fused one still to try
/// is faster.
fn export_fastest(
    s: &Schedule,
    o: &lower::Options,
    pipelines: &[usize],
    check: &dyn Fn(&Program) -> std::result::Result<String, String>,
    choose: Chooser<'_>,
) -> Result<Exported> {
    let chosen = |fused: bool| -> Result<Vec<Candidate>> {
        let mut out = Vec::new();
        for &k in pipelines {
            let cut = crate::ir::transform::pipelined(s, k)?;
            if let Some((lowering, t)) = choose(&cut, &lower::Options { pipeline: k, fused, ..o.clone() })? {
                out.push((t, k, lowering));
            }
        }
        // Stable: equal times keep the depth tried first.
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(out)
    };
    let tries = chosen(o.fused)?;
    // The fastest unfused lowering, once a fused program failed, and that failure (its
    // problem and step count).
    let mut unfused: Option<(Candidate, Hung)> = None;
    for (t, k, lowering) in tries {
        if unfused.as_ref().is_some_and(|u| u.0 .0 <= t) {
            break;
        }
        let ok = lower::Options { pipeline: k, ..lowering };
        let program = lower::lower_with(s, &ok, ok.fused)?;
        match check(&program) {
            Ok(xml) => return Ok(exported(program, xml, o.runtime, k, None, true)),
            Err(problem) if ok.fused => {
                if unfused.is_none() {
                    let hung = (problem, max_steps(&program));
                    unfused = chosen(false)?.into_iter().next().map(|best| (best, hung));
                }
            }
            Err(problem) => return Err(bug(problem)),
        }
    }
    let Some(((_, k, lowering), hung)) = unfused else {
        return export_first(s, o, pipelines, check);
    };
    let program = lower::lower_with(s, &lower::Options { pipeline: k, ..lowering }, false)?;
    match check(&program) {
        Ok(xml) => Ok(exported(program, xml, o.runtime, k, Some(hung), true)),
        Err(problem) => Err(bug(problem)),
    }
}

/// The program written, saying why its fused steps were dropped (`hung`: the fused
/// program's problem and its step count) when they were.
fn exported(
    program: Program,
    xml: String,
    runtime: Runtime,
    pipeline: usize,
    hung: Option<Hung>,
    chosen: bool,
) -> Exported {
    let unfused_because = hung.map(|(why, fused)| {
        let steps = match max_steps(&program) {
            n if n == fused => format!("at most {n} steps per rank, as many as fused"),
            n => format!("at most {n} steps per rank instead of {fused}"),
        };
        format!(
            "the fused program would hang the runtime ({}); exported without fused steps, deadlock-free at every \
             buffer size with the same bytes per link ({steps})",
            why.split(": gpu ").next().unwrap_or(&why),
        )
    });
    Exported { program, xml, runtime, pipeline, unfused_because, chosen }
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
fn self_check(p: &Program, runtime: Runtime) -> std::result::Result<String, String> {
    let xml = write::to_xml(p, runtime);
    let parsed = parse::parse(&xml, runtime).map_err(|ps| ps[0].to_string())?;
    if &parsed != p {
        return Err("the XML does not read back as the program written".into());
    }
    check_program(&parsed, runtime)?;
    Ok(xml)
}

/// The runtimes' rules and the symbolic execution on `p`; Err: the first problem.
fn check_program(p: &Program, runtime: Runtime) -> std::result::Result<(), String> {
    if let Some(problem) = rules::check(p, runtime).into_iter().next() {
        return Err(problem);
    }
    if let Some(problem) = interp::check_first(p) {
        return Err(problem);
    }
    Ok(())
}

/// The verdict on an XML file.
pub struct Validation {
    /// Per runtime (new, old): the parser's and the structural rules' problems (empty =
    /// that runtime accepts the file).
    pub runtimes: Vec<(Runtime, Vec<String>)>,
    /// The program as read (by the first runtime whose parser accepts it).
    pub program: Option<Program>,
    /// Symbolic execution in every mode the file claims, unbounded and finite buffers
    /// (run when some runtime accepts the structure); empty = correct.
    pub execution: Vec<String>,
    /// With a topology: bytes per link as a fraction of M, and the bandwidth time per
    /// byte of M (1/(GB/s)) it implies.
    pub loads: Option<(Vec<Rat>, Rat)>,
}

impl Validation {
    /// Accepted by some runtime and correct when executed.
    pub fn ok(&self) -> bool {
        self.program.is_some() && self.execution.is_empty() && self.runtimes.iter().any(|(_, ps)| ps.is_empty())
    }
}

/// Judge an XML text: both runtimes' parsers and rules, then symbolic execution; with
/// `topo`, the link loads. Never fails: every problem is in the result.
pub fn validate(text: &str, topo: Option<&Topology>) -> Result<Validation> {
    let read = |d| parse::parse(text, d).map_err(|ps| ps.iter().map(|p| p.to_string()).collect());
    let Validation { runtimes, program, execution, .. } = plan::read::judge(read);
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
    Ok(Validation { runtimes, program, execution, loads })
}

/// Read an XML file leniently for execution (the MPI executor): the first runtime whose
/// parser accepts it; structural rules are the validator's business.
pub fn read_program(text: &str) -> Result<Program> {
    parse::parse(text, Runtime::MscclNccl)
        .or_else(|_| parse::parse(text, Runtime::MscclLegacy))
        .map_err(|ps| CollsynthError::bad(ps.first().map_or("empty XML".to_string(), |p| p.to_string())))
}

#[cfg(test)]
mod tests;
