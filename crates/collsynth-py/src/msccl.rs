//! Python entry points of the MSCCL exporter and validator (registered by `lib.rs`).

use crate::{guard, PySchedule, PyTopology};
use collsynth_core::api;
use collsynth_core::msccl::{self, lower, Protocol, Runtime};
use collsynth_core::rational::to_fraction_string;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The exporter's options from the Python arguments (BadInput on an unknown runtime or
/// protocol).
fn lowering(
    runtime: &str,
    protocol: &str,
    channels: Option<usize>,
    unfused: bool,
    pipeline: usize,
    size_range: Option<(u64, u64)>,
) -> PyResult<lower::Options> {
    guard(|| {
        Ok(lower::Options {
            runtime: Runtime::parse(runtime)?,
            proto: Protocol::parse(protocol)?,
            channels,
            fused: !unfused,
            pipeline,
            size_range,
            order: None,
            spread: None,
        })
    })
}

/// An MSCCL export as the Python arguments ask it (`protocol="auto"`: chosen per schedule;
/// `size`: the size the program is judged at, rounded up to whole bytes).
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, one each
pub(crate) fn ask(
    runtime: &str,
    protocol: &str,
    channels: Option<usize>,
    unfused: bool,
    pipeline: Option<usize>,
    size_range: Option<(u64, u64)>,
    size: Option<&str>,
) -> PyResult<api::MscclAsk> {
    let bytes = match size {
        Some(text) => {
            let m = crate::size_arg(text)?.ceil().to_integer();
            Some(guard(|| {
                u64::try_from(m)
                    .map_err(|_| collsynth_core::CollsynthError::bad(format!("--size: {text} is too large")))
            })?)
        }
        None => None,
    };
    guard(|| {
        Ok(api::MscclAsk {
            runtime: Runtime::parse(runtime)?,
            protocol: if protocol == "auto" { None } else { Some(Protocol::parse(protocol)?) },
            channels,
            fused: !unfused,
            pipeline,
            size_range,
            bytes,
        })
    })
}

/// Export a verified schedule: a dict with `xml`, `program` (JSON text of the program, for
/// the MPI executor), `pipeline`, `nchunksperloop`, `nchannels`, `thread_blocks` (max per
/// rank), `max_steps` (per thread block), `s_chunks` (max per rank), `fallback` (a note, or
/// None), `judged` (the runtime model's time of the program in its thread blocks, or None:
/// `api::JudgedExport`) and `schedule` (the schedule exported: the fallback forest when there is one).
/// `protocol="auto"`: the one the runtime model picks for the size range, else for `size`
/// (default 1 GiB), `api::windows::protocol_for`.
#[pyfunction]
#[pyo3(signature = (schedule, runtime="msccl-nccl", protocol="Simple", channels=None, unfused=false, pipeline=None, size_range=None, size=None, text=true))]
#[allow(clippy::too_many_arguments)]
fn msccl_export<'py>(
    py: Python<'py>,
    schedule: &PySchedule,
    runtime: &str,
    protocol: &str,
    channels: Option<usize>,
    unfused: bool,
    pipeline: Option<usize>,
    size_range: Option<(u64, u64)>,
    size: Option<&str>,
    text: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let ask = ask(runtime, protocol, channels, unfused, pipeline, size_range, size)?;
    let done = crate::interruptible(py, || guard(|| ask.export(&schedule.inner, &schedule.topo, text)))?;
    let p = &done.exported.program;
    let d = PyDict::new(py);
    if text {
        d.set_item("xml", &done.exported.xml)?;
        d.set_item("program", p.to_json().to_string())?;
    } else {
        d.set_item("xml", py.None())?;
        d.set_item("program", py.None())?;
    }
    d.set_item("pipeline", done.exported.pipeline)?;
    d.set_item("nchunksperloop", p.nchunksperloop)?;
    d.set_item("nchannels", p.nchannels)?;
    d.set_item("thread_blocks", p.gpus.iter().map(|g| g.tbs.len()).max().unwrap_or(0))?;
    d.set_item("max_steps", p.gpus.iter().flat_map(|g| g.tbs.iter().map(|t| t.steps.len())).max().unwrap_or(0))?;
    d.set_item("s_chunks", p.gpus.iter().map(|g| g.s_chunks).max().unwrap_or(0))?;
    d.set_item("min_bytes", p.min_bytes)?;
    d.set_item("max_bytes", p.max_bytes)?;
    d.set_item("fallback", done.fallback)?;
    d.set_item("judged", judged_dict(py, done.judged.as_ref())?)?;
    d.set_item("schedule", PySchedule::new(done.schedule, schedule.topo.clone()))?;
    if !text {
        d.set_item("writer", MscclWriter { exported: done.exported })?;
    }
    Ok(d)
}

/// `{"bytes", "protocol", "time_us"}` of the program written, in its thread blocks
/// (`api::JudgedExport`), or None.
fn judged_dict<'py>(py: Python<'py>, j: Option<&api::JudgedExport>) -> PyResult<Bound<'py, PyAny>> {
    let Some(j) = j else { return Ok(py.None().into_bound(py)) };
    let d = PyDict::new(py);
    d.set_item("bytes", j.bytes)?;
    d.set_item("protocol", j.protocol)?;
    d.set_item("time_us", j.time_us)?;
    d.set_item("algbw_GBps", j.algbw_gbps)?;
    d.set_item("busbw_GBps", j.busbw_gbps)?;
    d.set_item("time_optimality", j.time_optimality)?;
    Ok(d.into_any())
}

/// The XML of an export made with `text=False`, written on demand.
#[pyclass(frozen)]
struct MscclWriter {
    exported: msccl::Exported,
}

#[pymethods]
impl MscclWriter {
    /// Stream the XML into the existing file `path` (truncated) through a buffer, never as
    /// one string: the caller makes the file and renames it into place (atomic_write).
    fn write_xml(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        crate::stream::to_path(py, path, |out| self.exported.write_xml(out))
    }

    /// Pass the XML to `write` (e.g. `sys.stdout.write`) in pieces of about 64 KiB.
    fn stream_xml(&self, write: Bound<'_, PyAny>) -> PyResult<()> {
        crate::stream::to_callable(write, |out| self.exported.write_xml(out))
    }
}

/// Sized export (`synth --size-windows`): one XML per size window of `lo..=hi` bytes, each
/// the fastest variant there by the simulator (`api::windows`). A list of dicts: `min_bytes`,
/// `max_bytes`, `variant` (how to ask for it), `algorithm`, `pipeline`, `time_us_at_min`,
/// `time_us_at_max`, `xml`, `nchunksperloop`, `nchannels`, `protocol`, `fallback`, `judged`. Without
/// `protocol`, each file in the one the runtime model assumed for its window. `text` false:
/// `xml` is None and `writer` streams each window's XML (as `msccl_export`'s).
#[pyfunction]
#[pyo3(signature = (topo, collective, algorithm, root, options, size_range, runtime="msccl-nccl", protocol=None, channels=None, unfused=false, text=true))]
#[allow(clippy::too_many_arguments)]
fn msccl_export_windows<'py>(
    py: Python<'py>,
    topo: &PyTopology,
    collective: &str,
    algorithm: &str,
    root: usize,
    options: std::collections::BTreeMap<String, String>,
    size_range: (u64, u64),
    runtime: &str,
    protocol: Option<&str>,
    channels: Option<usize>,
    unfused: bool,
    text: bool,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let c = crate::collective_arg(collective)?;
    let o = lowering(runtime, protocol.unwrap_or("Simple"), channels, unfused, 1, None)?;
    let protocol = protocol.map(|p| guard(|| Protocol::parse(p))).transpose()?;
    let req = collsynth_core::synth::Request { root, options, size: None };
    let done = crate::interruptible(py, || {
        guard(|| api::windows::export_windows_with(&topo.inner, c, algorithm, &req, size_range, &o, protocol, text))
    })?;
    done.into_iter()
        .map(|w| {
            let d = PyDict::new(py);
            let p = &w.export.exported.program;
            d.set_item("min_bytes", w.window.min_bytes)?;
            d.set_item("max_bytes", w.window.max_bytes)?;
            d.set_item("variant", &w.label)?;
            d.set_item("algorithm", &w.export.schedule.provenance.algorithm)?;
            d.set_item("pipeline", w.pipeline)?;
            d.set_item("time_us_at_min", w.window.time_us_at_min)?;
            d.set_item("time_us_at_max", w.window.time_us_at_max)?;
            d.set_item("slowdown", w.window.slowdown)?;
            match text {
                true => d.set_item("xml", &w.export.exported.xml)?,
                false => d.set_item("xml", py.None())?,
            }
            d.set_item("nchunksperloop", p.nchunksperloop)?;
            d.set_item("nchannels", p.nchannels)?;
            d.set_item("protocol", p.proto.name())?;
            d.set_item("fallback", &w.export.fallback)?;
            d.set_item("judged", judged_dict(py, w.export.judged.as_ref())?)?;
            if !text {
                d.set_item("writer", MscclWriter { exported: w.export.exported })?;
            }
            Ok(d)
        })
        .collect()
}

/// Judge an MSCCL XML text (see `msccl::validate`): a dict with `ok`, `refusal` (the one
/// line a refusal gives, None if ok), `runtimes` ({"new":
/// [problems], "old": [...]}), `execution` (problems), the program's header (`collective`,
/// `ngpus`, `nchunksperloop`, `nchannels`, `proto`, `inplace`, `outofplace`,
/// `thread_blocks`, `max_steps`) and, with a topology, `link_loads` ([(src, dst,
/// fraction of M as "p/q")] for loaded links) and `bandwidth_time_per_byte` ("p/q", in
/// 1/(GB/s)).
/// With a topology, also `judged`: the runtime model's time of the program as written at
/// `size` (`api::judge_program_at`).
#[pyfunction]
#[pyo3(signature = (text, topology=None, size=None))]
fn msccl_validate<'py>(
    py: Python<'py>,
    text: &str,
    topology: Option<&PyTopology>,
    size: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let topo = topology.map(|t| &t.inner);
    let size = size.map(|x| guard(|| collsynth_core::units::parse_size(x))).transpose()?;
    let v = py.detach(|| guard(|| msccl::validate(text, topo)))?;
    let judged = match (&v.program, topo, v.ok()) {
        (Some(p), Some(t), true) => Some(py.detach(|| guard(|| api::judge_program_at(p, t, size)))?),
        _ => None,
    };
    let d = PyDict::new(py);
    d.set_item("ok", v.ok())?;
    d.set_item("refusal", msccl::plan::read::refusal(&v))?;
    let runtimes = PyDict::new(py);
    for (runtime, problems) in &v.runtimes {
        runtimes.set_item(runtime.name(), problems)?;
    }
    d.set_item("runtimes", runtimes)?;
    d.set_item("execution", &v.execution)?;
    if let Some(p) = &v.program {
        d.set_item("collective", p.collective.name())?;
        d.set_item("ngpus", p.ngpus)?;
        d.set_item("nchunksperloop", p.nchunksperloop)?;
        d.set_item("nchannels", p.nchannels)?;
        d.set_item("proto", p.proto.name())?;
        d.set_item("inplace", p.inplace)?;
        d.set_item("outofplace", p.outofplace)?;
        d.set_item("thread_blocks", p.gpus.iter().map(|g| g.tbs.len()).max().unwrap_or(0))?;
        d.set_item("max_steps", p.gpus.iter().flat_map(|g| g.tbs.iter().map(|t| t.steps.len())).max().unwrap_or(0))?;
    }
    if let (Some((loads, time)), Some(t)) = (&v.loads, topo) {
        let rows: Vec<(String, String, String)> = loads
            .iter()
            .enumerate()
            .filter(|(_, l)| **l != collsynth_core::Rat::from_integer(0))
            .map(|(i, l)| {
                let link = &t.links[i];
                (t.nodes[link.src].name.clone(), t.nodes[link.dst].name.clone(), to_fraction_string(l))
            })
            .collect();
        d.set_item("link_loads", rows)?;
        d.set_item("bandwidth_time_per_byte", to_fraction_string(time))?;
        d.set_item("judged", judged_dict(py, judged.as_ref())?)?;
    }
    Ok(d)
}

/// The program of an MSCCL XML text as JSON (for the MPI executor); BadInput if neither
/// runtime's parser reads it.
#[pyfunction]
fn msccl_program(text: &str) -> PyResult<String> {
    guard(|| msccl::read_program(text).map(|p| p.to_json().to_string()))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(msccl_export, m)?)?;
    m.add_class::<MscclWriter>()?;
    m.add_function(wrap_pyfunction!(msccl_export_windows, m)?)?;
    m.add_function(wrap_pyfunction!(msccl_validate, m)?)?;
    m.add_function(wrap_pyfunction!(msccl_program, m)?)?;
    Ok(())
}
