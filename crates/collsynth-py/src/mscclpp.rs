//! Python entry points of the MSCCL++ plan exporter and judge (registered by `lib.rs`).

use crate::{guard, PySchedule};
use collsynth_core::api;
use collsynth_core::mscclpp::{self, model::ChannelDecl, Plan};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The plan's shape: `collective`, `ranks`, `protocol`, `inplace`, `thread_blocks` (max per
/// rank), `max_ops` (per block), `scratch_chunks` (max per rank), `memory_channels` and
/// `port_channels` (declared, over all ranks).
fn shape(d: &Bound<'_, PyDict>, p: &Plan) -> PyResult<()> {
    let count = |kind: &str| -> usize {
        p.gpus
            .iter()
            .flat_map(|g| &g.channels)
            .map(|c| match c {
                ChannelDecl::Peer { kind: k, connected_to } if k.code() == kind => connected_to.len(),
                _ => 0,
            })
            .sum()
    };
    d.set_item("collective", &p.collective)?;
    d.set_item("ranks", p.gpus.len())?;
    d.set_item("protocol", &p.protocol)?;
    d.set_item("inplace", p.inplace)?;
    d.set_item("thread_blocks", p.gpus.iter().map(|g| g.threadblocks.len()).max().unwrap_or(0))?;
    d.set_item("max_ops", p.gpus.iter().flat_map(|g| g.threadblocks.iter().map(|t| t.ops.len())).max().unwrap_or(0))?;
    d.set_item("scratch_chunks", p.gpus.iter().map(|g| g.scratch_chunks).max().unwrap_or(0))?;
    d.set_item("input_chunks", p.gpus.first().map_or(0, |g| g.input_chunks))?;
    d.set_item("output_chunks", p.gpus.first().map_or(0, |g| g.output_chunks))?;
    d.set_item("memory_channels", count("memory"))?;
    d.set_item("port_channels", count("port"))?;
    Ok(())
}

/// Export a verified schedule as an MSCCL++ plan (judged before it is returned): a dict with
/// `json` (the text), `group` (thread blocks per slice group) and the plan's shape. `text`
/// false: `json` is None and `writer` streams the text (`mscclpp::export_streamed`).
#[pyfunction]
#[pyo3(signature = (schedule, group=None, text=true))]
fn mscclpp_export<'py>(
    py: Python<'py>,
    schedule: &PySchedule,
    group: Option<usize>,
    text: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let done = py.detach(|| guard(|| api::export_mscclpp(&schedule.inner, &schedule.topo, group, text)))?;
    let e = done.exported;
    let d = PyDict::new(py);
    d.set_item("json", if text { Some(&e.json) } else { None })?;
    d.set_item("group", e.group)?;
    d.set_item("fallback", done.fallback)?;
    d.set_item("schedule", PySchedule::new(done.schedule, schedule.topo.clone()))?;
    shape(&d, &e.plan)?;
    if !text {
        d.set_item("writer", PlanWriter { exported: e })?;
    }
    Ok(d)
}

/// The text of a plan exported with `text=False`, written on demand.
#[pyclass(frozen)]
struct PlanWriter {
    exported: mscclpp::Exported,
}

#[pymethods]
impl PlanWriter {
    /// Stream the plan into the existing file `path` (truncated), never as one string: the
    /// caller makes the file and renames it into place (atomic_write).
    fn write_json(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        crate::stream::to_path(py, path, |out| self.exported.write_json(out))
    }

    /// Pass the plan's text to `write` (e.g. `sys.stdout.write`) in pieces of about 64 KiB.
    fn stream_json(&self, write: Bound<'_, PyAny>) -> PyResult<()> {
        crate::stream::to_callable(write, |out| self.exported.write_json(out))
    }
}

/// Judge a plan text: `ok`, `refusal` (the first problem or None), `parse` (the reader's
/// problem or None), `structure` and `execution` (lists), and the shape when it reads.
#[pyfunction]
fn mscclpp_validate<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let v = py.detach(|| mscclpp::validate(text));
    let d = PyDict::new(py);
    d.set_item("ok", v.ok())?;
    d.set_item("refusal", v.refusal())?;
    d.set_item("parse", &v.parse)?;
    d.set_item("structure", &v.structure)?;
    d.set_item("execution", &v.execution)?;
    if let Some(p) = &v.plan {
        shape(&d, p)?;
    }
    Ok(d)
}

/// Is `text` an MSCCL++ plan (a JSON object with `gpus`), not a schedule file?
#[pyfunction]
fn mscclpp_looks_like_plan(text: &str) -> bool {
    mscclpp::looks_like_plan(text)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mscclpp_export, m)?)?;
    m.add_class::<PlanWriter>()?;
    m.add_function(wrap_pyfunction!(mscclpp_validate, m)?)?;
    m.add_function(wrap_pyfunction!(mscclpp_looks_like_plan, m)?)?;
    Ok(())
}
