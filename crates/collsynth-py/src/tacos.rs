//! Python entry points specific to tacos (registered by `lib.rs`).

use crate::{guard, time_only_call, PySchedule, PyTopology};
use collsynth_core::synth::tacos;
use collsynth_core::topology::restrict::restrict_ranks;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;

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
    let (t, secs, _, _) =
        time_only_call(py, topo, (collective, tacos::TACOS.name, false), root, options, size, |t, c, r, m| {
            tacos::time_only(t, c, r, Some(m))
        })?;
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
