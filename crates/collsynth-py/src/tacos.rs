//! Python entry points specific to tacos (registered by `lib.rs`).

use crate::{collective_arg, guard, size_arg, PySchedule, PyTopology};
use collsynth_core::synth::tacos;
use collsynth_core::synth::{self, Request};
use collsynth_core::topology::restrict::restrict_ranks;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;
use std::time::Instant;

/// `--time-only`: the TACOS collective time without materializing the IR, as a dict
/// (`time_us`, `N`, `synthesis_seconds`, `events`, `parts`: [(name, seed, time_us)]).
#[pyfunction]
#[pyo3(signature = (topo, collective, root=0, options=BTreeMap::new(), size="1GiB"))]
fn tacos_time<'py>(
    py: Python<'py>,
    topo: &PyTopology,
    collective: &str,
    root: usize,
    options: BTreeMap<String, String>,
    size: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let c = collective_arg(collective)?;
    let m = size_arg(size)?;
    let req = Request { root, options, size: None };
    guard(|| synth::checked(&topo.inner, c, tacos::TACOS.name, &req).map(|_| ()))?;
    let start = Instant::now();
    let t = py.detach(|| guard(|| tacos::time_only(&topo.inner, c, &req, Some(m))))?;
    let secs = start.elapsed().as_secs_f64();
    let d = PyDict::new(py);
    d.set_item("time_us", t.time_us)?;
    d.set_item("N", t.n_ranks)?;
    d.set_item("synthesis_seconds", secs)?;
    d.set_item("events", t.events)?;
    d.set_item("parts", t.parts)?;
    Ok(d)
}

/// Synthesize with TACOS at an explicit size (with `ranks`, on the restricted topology),
/// verify: (schedule, synthesis seconds). The schedule carries the topology it runs on.
#[pyfunction]
#[pyo3(signature = (topo, collective, root=0, options=BTreeMap::new(), size="1GiB"))]
fn tacos_synthesize(
    py: Python<'_>,
    topo: &PyTopology,
    collective: &str,
    root: usize,
    options: BTreeMap<String, String>,
    size: &str,
) -> PyResult<(PySchedule, f64)> {
    // The generic path already passes the size and restricts to `ranks`.
    crate::synthesize(py, topo, collective, "tacos", root, options, size)
}

/// The topology of a sub-collective over `ranks` (the other compute nodes become switches).
#[pyfunction]
fn restrict_topology(topo: &PyTopology, ranks: Vec<usize>) -> PyResult<PyTopology> {
    guard(|| restrict_ranks(&topo.inner, &ranks)).map(|inner| PyTopology { inner })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tacos_time, m)?)?;
    m.add_function(wrap_pyfunction!(tacos_synthesize, m)?)?;
    m.add_function(wrap_pyfunction!(restrict_topology, m)?)?;
    Ok(())
}
