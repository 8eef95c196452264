//! Thin PyO3 binding: converts arguments, calls `collsynth-core`, maps errors.
//! No algorithm lives here. Every entry point runs under `guard`, so a Rust panic
//! surfaces as `collsynth.InternalError`, never as a crash across the binding.

use collsynth_core::rational::{to_f64, to_fraction_string};
use collsynth_core::topology::json;
use collsynth_core::{zoo, CollsynthError, Topology};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::panic::{catch_unwind, AssertUnwindSafe};

create_exception!(_core, BadInput, PyValueError, "Bad user input: exit status 2 in the CLI.");
create_exception!(_core, InternalError, PyRuntimeError, "A bug inside collsynth: exit status 1.");

fn to_py(e: CollsynthError) -> PyErr {
    match e {
        CollsynthError::BadInput(m) | CollsynthError::Infeasible(m) => BadInput::new_err(m),
        CollsynthError::Internal(m) => InternalError::new_err(m),
    }
}

/// Run `f`, turning core errors and panics into Python exceptions.
fn guard<T>(f: impl FnOnce() -> collsynth_core::Result<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(to_py),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(InternalError::new_err(format!("internal error: {msg}")))
        }
    }
}

#[pyclass(name = "Topology", module = "collsynth._core", frozen)]
struct PyTopology {
    inner: Topology,
}

#[pymethods]
impl PyTopology {
    /// Build a zoo topology from a spec such as `torus:4x4` (BadInput on a bad spec).
    #[staticmethod]
    fn from_spec(spec: &str) -> PyResult<Self> {
        guard(|| zoo::from_spec(spec)).map(|inner| PyTopology { inner })
    }

    /// Parse topology JSON text; returns (topology, warnings).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<(Self, Vec<String>)> {
        guard(|| json::read(text)).map(|l| (PyTopology { inner: l.topology }, l.warnings))
    }

    /// Canonical topology JSON text.
    fn to_json(&self) -> String {
        json::write(&self.inner)
    }

    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    #[getter]
    fn n_ranks(&self) -> usize {
        self.inner.n_ranks()
    }

    /// Nodes in order: (name, type, group, rank or None).
    fn nodes(&self) -> Vec<(String, &'static str, Option<String>, Option<usize>)> {
        let t = &self.inner;
        t.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), n.kind.as_str(), n.group.clone(), t.rank_of(i)))
            .collect()
    }

    /// Directed links after merging: (src name, dst name, bandwidth "p/q" GB/s, latency us).
    fn links(&self) -> Vec<(String, String, String, f64)> {
        let t = &self.inner;
        t.links
            .iter()
            .map(|l| {
                (t.nodes[l.src].name.clone(), t.nodes[l.dst].name.clone(), to_fraction_string(&l.bandwidth), l.latency)
            })
            .collect()
    }

    /// Metrics as a dict with the `topo show --json` keys.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = guard(|| Ok(self.inner.metrics()))?;
        let d = PyDict::new(py);
        d.set_item("name", &self.inner.name)?;
        d.set_item("N", m.n)?;
        d.set_item("switches", m.switches)?;
        d.set_item("links", m.links)?;
        d.set_item("min_degree", m.min_degree)?;
        d.set_item("max_degree", m.max_degree)?;
        d.set_item("min_in_degree", m.min_in_degree)?;
        d.set_item("max_in_degree", m.max_in_degree)?;
        d.set_item("diameter", m.diameter)?;
        d.set_item("average_distance", m.average_distance)?;
        d.set_item("bidirectional", m.bidirectional)?;
        d.set_item("min_egress_GBps", to_f64(&m.min_egress))?;
        d.set_item("max_egress_GBps", to_f64(&m.max_egress))?;
        d.set_item("max_egress_exact", to_fraction_string(&m.max_egress))?;
        Ok(d)
    }
}

/// Every zoo family: (name, args, help, extra options).
#[pyfunction]
fn families() -> Vec<(&'static str, &'static str, &'static str, Vec<&'static str>)> {
    zoo::families().into_iter().map(|f| (f.name, f.args, f.help, f.options.to_vec())).collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", collsynth_core::VERSION)?;
    m.add("BadInput", m.py().get_type::<BadInput>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add_class::<PyTopology>()?;
    m.add_function(wrap_pyfunction!(families, m)?)?;
    Ok(())
}
