//! Python entry points of the topology finder (registered by `lib.rs`): what `collsynth find`
//! and `bench/bench_find.py` call. See docs/find.md.

use crate::guard;
use collsynth_core::find::{self, Candidate, Member, Workload};
use collsynth_core::rational::{to_f64, to_fraction_string};
use collsynth_core::units::{parse_bandwidth, parse_latency, parse_size};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The candidate keys shared by both entry points.
fn candidate_dict<'py>(py: Python<'py>, c: &Candidate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("topology", c.expr.to_string())?;
    d.set_item("N", c.n)?;
    d.set_item("degree", c.degree)?;
    d.set_item("latency_steps", c.steps)?;
    d.set_item("bandwidth_factor", to_fraction_string(&c.tau))?;
    d.set_item("bandwidth_factor_value", to_f64(&c.tau))?;
    d.set_item("diameter", c.diameter)?;
    d.set_item("bandwidth_optimal", c.bw_optimal())?;
    d.set_item("bidirectional", c.symmetric)?;
    Ok(d)
}

fn member_dict<'py>(py: Python<'py>, m: &Member) -> PyResult<Bound<'py, PyDict>> {
    let d = candidate_dict(py, &m.candidate)?;
    d.set_item("allreduce_us", m.allreduce_us)?;
    d.set_item("alltoall_us", m.alltoall_us)?;
    d.set_item("alltoall_exact", m.alltoall_exact)?;
    Ok(d)
}

/// The Pareto frontier for (nodes, degree) judged by the workload: dict with `frontier` (list
/// of candidate dicts, T_L ascending), `recommended` (the member with the least allreduce
/// time) and the workload (`alpha_us`, `node_bw_GBps`, `size_bytes`, `m_over_b_us`).
#[pyfunction]
#[pyo3(signature = (nodes, degree, bidirectional=false, alpha="10us", node_bw="100Gbps", size="1MiB"))]
fn find_topologies<'py>(
    py: Python<'py>,
    nodes: i64,
    degree: i64,
    bidirectional: bool,
    alpha: &str,
    node_bw: &str,
    size: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let (nodes, degree) = (count("--nodes", nodes)?, count("--degree", degree)?);
    let (w, report) = py.detach(|| {
        guard(|| {
            let w = workload(alpha, node_bw, size)?;
            let report = find::find(nodes, degree, bidirectional, &w)?;
            Ok((w, report))
        })
    })?;
    let d = PyDict::new(py);
    let list = PyList::empty(py);
    for m in &report.frontier {
        list.append(member_dict(py, m)?)?;
    }
    d.set_item("frontier", list)?;
    d.set_item("recommended", member_dict(py, &report.frontier[report.recommended])?)?;
    d.set_item("alpha_us", w.alpha_us)?;
    d.set_item("node_bw_GBps", to_f64(&w.node_bw_gbps))?;
    d.set_item("node_bw_exact", to_fraction_string(&w.node_bw_gbps))?;
    d.set_item("size_bytes", to_f64(&w.size_bytes))?;
    d.set_item("size_bytes_exact", to_fraction_string(&w.size_bytes))?;
    d.set_item("m_over_b_us", w.m_over_b_us())?;
    Ok(d)
}

/// The frontier alone (no workload, no all-to-all): a list of candidate dicts. Base
/// evaluations and per-size pools are cached across calls, as a sweep over N wants.
#[pyfunction]
#[pyo3(signature = (nodes, degree, bidirectional=false))]
fn find_frontier(py: Python<'_>, nodes: i64, degree: i64, bidirectional: bool) -> PyResult<Bound<'_, PyList>> {
    let (nodes, degree) = (count("--nodes", nodes)?, count("--degree", degree)?);
    let f = py.detach(|| guard(|| find::frontier(nodes, degree, bidirectional)))?;
    let list = PyList::empty(py);
    for c in &f {
        list.append(candidate_dict(py, c)?)?;
    }
    Ok(list)
}

/// Every frontier up to `max_nodes` for each degree (`find --sweep`): a list of dicts `N`,
/// `degree`, `frontier` (candidate dicts with `allreduce_us` for the workload), `recommended`
/// (index of the least allreduce time), ordered by N then degree; targets with no known
/// topology are absent. Runs on every core without the GIL; poll [`find_sweep_progress`].
#[pyfunction]
#[pyo3(signature = (max_nodes, degrees, bidirectional=false, alpha="10us", node_bw="100Gbps", size="1MiB"))]
fn find_sweep<'py>(
    py: Python<'py>,
    max_nodes: i64,
    degrees: Vec<i64>,
    bidirectional: bool,
    alpha: &str,
    node_bw: &str,
    size: &str,
) -> PyResult<Bound<'py, PyList>> {
    let degrees: Vec<usize> = degrees.into_iter().map(|d| count("--degrees", d)).collect::<PyResult<_>>()?;
    let max_nodes = count("--sweep", max_nodes)?;
    let (w, rows) = py.detach(|| {
        guard(|| {
            let w = workload(alpha, node_bw, size)?;
            find::check_workload(&w)?;
            Ok((w, find::sweep::sweep(max_nodes, &degrees, bidirectional)?))
        })
    })?;
    let list = PyList::empty(py);
    for r in &rows {
        let d = PyDict::new(py);
        d.set_item("N", r.n)?;
        d.set_item("degree", r.degree)?;
        let members = PyList::empty(py);
        for c in &r.frontier {
            let m = candidate_dict(py, c)?;
            m.set_item("allreduce_us", w.allreduce_us(c))?;
            members.append(m)?;
        }
        d.set_item("frontier", members)?;
        d.set_item("recommended", find::recommend(&r.frontier, &w))?;
        list.append(d)?;
    }
    Ok(list)
}

fn workload(alpha: &str, node_bw: &str, size: &str) -> collsynth_core::error::Result<Workload> {
    Ok(Workload {
        alpha_us: parse_latency(alpha)?,
        node_bw_gbps: parse_bandwidth(node_bw)?,
        size_bytes: parse_size(size)?,
    })
}

/// `(done, total)` targets of the running [`find_sweep`].
#[pyfunction]
fn find_sweep_progress() -> (u64, u64) {
    find::sweep::PROGRESS.get()
}

/// A count from the caller; a negative one is BadInput naming it as given (the core's own
/// range checks report the rest).
fn count(name: &str, v: i64) -> PyResult<usize> {
    usize::try_from(v).map_err(|_| crate::BadInput::new_err(format!("{name} must be a whole number >= 0, got {v}")))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(find_topologies, m)?)?;
    m.add_function(wrap_pyfunction!(find_frontier, m)?)?;
    m.add_function(wrap_pyfunction!(find_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(find_sweep_progress, m)?)?;
    Ok(())
}
