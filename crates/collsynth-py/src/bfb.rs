//! Python entry points specific to bfb (registered by `lib.rs`).

use crate::{time_only_call, PyTopology};
use collsynth_core::rational::{to_f64, to_fraction_string};
use collsynth_core::synth::bfb;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;

/// `--time-only`: the BFB schedule's costs from its plans, without the IR, as a dict with the
/// `synth --json` keys the full path reports for them (`N`, `steps`, `latency_steps`,
/// `bandwidth_factor`, `moore_latency_steps`, `bandwidth_factor_optimum`, `alpha_beta_us`,
/// `latency_us`, `bandwidth_us`, `algbw_GBps`, `busbw_GBps`), `time_us` (the analytic model's,
/// `time_model` = "alpha-beta"), `synthesis_seconds` (the plans) and `details` (the
/// schedule's `provenance.details`: key, JSON literal).
#[pyfunction]
#[pyo3(signature = (topo, collective, root=0, options=BTreeMap::new(), size="1GiB"))]
fn bfb_time<'py>(
    py: Python<'py>,
    topo: &PyTopology,
    collective: &str,
    root: usize,
    options: BTreeMap<String, String>,
    size: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let (t, secs, c, m) =
        time_only_call(py, topo, (collective, bfb::BFB.name, true), root, options, size, |t, c, r, m| {
            bfb::time_only::time_only(t, c, r, m)
        })?;
    let d = PyDict::new(py);
    d.set_item("N", t.n_ranks)?;
    d.set_item("synthesis_seconds", secs)?;
    d.set_item("steps", t.steps)?;
    d.set_item("latency_steps", t.direct.latency_steps)?;
    d.set_item("bandwidth_factor", to_fraction_string(&t.direct.bandwidth_factor))?;
    d.set_item("moore_latency_steps", t.direct.moore_steps)?;
    d.set_item("bandwidth_factor_optimum", to_fraction_string(&t.direct.optimum_factor))?;
    // The analytic model is BFB's own clock (the paper's T_L + T_B); the simulator, the full
    // path's `time_us`, needs the transfers.
    let time_us = t.alpha_beta_us();
    let algbw = if time_us > 0.0 { to_f64(&m) / time_us / 1e3 } else { 0.0 }; // zero bytes (api::evaluate)
    d.set_item("time_us", time_us)?;
    d.set_item("time_model", "alpha-beta")?;
    d.set_item("algbw_GBps", algbw)?;
    d.set_item("busbw_GBps", algbw * c.busbw_factor(t.n_ranks))?;
    d.set_item("alpha_beta_us", time_us)?;
    d.set_item("latency_us", t.latency_us)?;
    d.set_item("bandwidth_us", t.bandwidth_us)?;
    d.set_item("details", t.details)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bfb_time, m)?)?;
    Ok(())
}
