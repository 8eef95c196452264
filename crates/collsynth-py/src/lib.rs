//! Thin PyO3 binding: converts arguments, calls `collsynth-core`, maps errors.
//! No algorithm lives here. Every entry point runs under `guard`, so a Rust panic
//! surfaces as `collsynth.InternalError`, never as a crash across the binding.

use collsynth_core::api;
use collsynth_core::ir::{self, Collective, Schedule};
use collsynth_core::rational::{to_f64, to_fraction_string, Rat};
use collsynth_core::synth::{self, Request};
use collsynth_core::topology::json;
use collsynth_core::units::parse_size;
use collsynth_core::{budget, import, verify, zoo, CollsynthError, Topology};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

mod circulant;
mod exec_plan;
mod find;
mod msccl;
mod mscclpp;
mod stream;
mod values;

create_exception!(_core, BadInput, PyValueError, "Bad user input: exit status 2 in the CLI.");
create_exception!(_core, Infeasible, BadInput, "No schedule exists for this request (a BadInput: exit status 2).");
create_exception!(_core, InternalError, PyRuntimeError, "A bug inside collsynth: exit status 1.");

pub(crate) fn to_py(e: CollsynthError) -> PyErr {
    // A message quotes the input, which may hold line breaks: the CLI prints one line.
    let m = one_line(e.message());
    match e {
        CollsynthError::BadInput(_) => BadInput::new_err(m),
        CollsynthError::Infeasible(_) => Infeasible::new_err(m),
        CollsynthError::Internal(_) => InternalError::new_err(m),
        CollsynthError::Cancelled => pyo3::exceptions::PyKeyboardInterrupt::new_err(m),
    }
}

/// `m` with its control characters escaped (`\n`, `\u{0}`), so that it prints as one line.
pub(crate) fn one_line(m: &str) -> String {
    if !m.chars().any(char::is_control) {
        return m.to_string();
    }
    m.chars().map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() }).collect()
}

/// Run `f`, turning core errors and panics into Python exceptions.
pub(crate) fn guard<T>(f: impl FnOnce() -> collsynth_core::Result<T>) -> PyResult<T> {
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

/// Run `f` without the GIL on a worker thread while this thread looks for signals every
/// 50 ms: on Ctrl-C the core is asked to stop (`budget::cancel`, polled by its long loops) and
/// the KeyboardInterrupt is raised once `f` has returned, so a long call answers Ctrl-C.
pub(crate) fn interruptible<T: Send>(py: Python<'_>, f: impl FnOnce() -> PyResult<T> + Send) -> PyResult<T> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    budget::reset_cancelled();
    let (tx, rx) = channel();
    // A Mutex makes the receiver Sync, as a closure run without the GIL needs.
    let rx = std::sync::Mutex::new(rx);
    std::thread::scope(|scope| {
        // The stack the calling thread would have had (deep recursions stay as they were).
        let spawned = std::thread::Builder::new().stack_size(64 << 20).spawn_scoped(scope, move || {
            let _ = tx.send(f());
        });
        if let Err(e) = spawned {
            return Err(InternalError::new_err(format!("cannot start a worker thread: {e}")));
        }
        let mut interrupted: Option<PyErr> = None;
        loop {
            let next = py.detach(|| match rx.lock() {
                Ok(rx) => rx.recv_timeout(std::time::Duration::from_millis(50)),
                Err(_) => Err(RecvTimeoutError::Disconnected),
            });
            match next {
                Ok(result) => return interrupted.map_or(result, Err),
                Err(RecvTimeoutError::Timeout) => {
                    if interrupted.is_none() {
                        if let Err(e) = py.check_signals() {
                            budget::cancel();
                            interrupted = Some(e);
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(
                        interrupted.unwrap_or_else(|| InternalError::new_err("a worker thread ended without a result"))
                    )
                }
            }
        }
    })
}

/// Set the memory budget of every later call, in bytes (`None`: the default, half the
/// physical memory, at most 8 GiB); returns the budget in force.
#[pyfunction]
#[pyo3(signature = (bytes=None))]
fn set_memory_budget(bytes: Option<u64>) -> PyResult<u64> {
    guard(|| budget::set_memory_budget(bytes))?;
    Ok(budget::memory_budget())
}

#[pyclass(name = "Topology", module = "collsynth._core", frozen)]
#[derive(Clone)]
pub(crate) struct PyTopology {
    pub(crate) inner: Topology,
}

#[pymethods]
impl PyTopology {
    /// Build a zoo topology from a spec such as `torus:4x4` (BadInput on a bad spec).
    #[staticmethod]
    fn from_spec(py: Python<'_>, spec: &str) -> PyResult<Self> {
        // Millions of nodes take seconds: without the GIL, so that Ctrl-C is seen meanwhile.
        interruptible(py, || guard(|| zoo::from_spec(spec))).map(|inner| PyTopology { inner })
    }

    /// Parse topology JSON text; returns (topology, warnings).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<(Self, Vec<String>)> {
        guard(|| json::read(text)).map(|l| (PyTopology { inner: l.topology }, l.warnings))
    }

    /// Read NCCL / RCCL topology XML (`NCCL_TOPO_DUMP_FILE`) into `boxes` copies joined by
    /// `fabric` (`rails`, `switch`, `fat-tree:K`, or None for one box); bandwidth and
    /// latencies are unit strings. Returns (topology, warnings).
    #[staticmethod]
    #[pyo3(signature = (text, name, boxes=1, fabric=None, latency=None, fabric_bandwidth=None, fabric_latency=None))]
    fn from_nccl_xml(
        text: &str,
        name: &str,
        boxes: usize,
        fabric: Option<&str>,
        latency: Option<&str>,
        fabric_bandwidth: Option<&str>,
        fabric_latency: Option<&str>,
    ) -> PyResult<(Self, Vec<String>)> {
        guard(|| {
            use collsynth_core::units::{parse_bandwidth, parse_latency};
            let mut spec = import::ClusterSpec::single();
            spec.boxes = boxes;
            spec.fabric = fabric.map(import::Fabric::parse).transpose().map_err(|e| e.context("--fabric"))?;
            if let Some(l) = latency {
                spec.box_latency = parse_latency(l).map_err(|e| e.context("--latency"))?;
            }
            if let Some(b) = fabric_bandwidth {
                spec.fabric_bandwidth = Some(parse_bandwidth(b).map_err(|e| e.context("--fabric-bandwidth"))?);
            }
            if let Some(l) = fabric_latency {
                spec.fabric_latency = parse_latency(l).map_err(|e| e.context("--fabric-latency"))?;
            }
            import::nccl_topology(name, text, &spec)
        })
        .map(|i| (PyTopology { inner: i.topology }, i.warnings))
    }

    /// Canonical topology JSON text (Ctrl-C answered while it is made).
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        interruptible(py, || guard(|| json::write_cancellable(&self.inner)))
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

    /// Uniform all-to-all throughput (`bound::alltoall`): `alltoall_rate_GBps` (per ordered
    /// pair of ranks), `alltoall_us` for every rank sending `size` bytes in total, and
    /// `alltoall_exact` (false for the bandwidth-tax estimate on large topologies).
    #[pyo3(signature = (size="1MiB"))]
    fn alltoall<'py>(&self, py: Python<'py>, size: &str) -> PyResult<Bound<'py, PyDict>> {
        let bytes = to_f64(&size_arg(size)?);
        let a = interruptible(py, || guard(|| collsynth_core::bound::alltoall::alltoall(&self.inner)))?;
        let d = PyDict::new(py);
        d.set_item("alltoall_rate_GBps", a.rate_gbps)?;
        d.set_item("alltoall_us", a.time_us(self.inner.n_ranks(), bytes))?;
        d.set_item("alltoall_exact", a.exact)?;
        Ok(d)
    }

    /// The topology of a sub-collective over `ranks` (the other compute nodes become switches).
    fn restrict(&self, ranks: Vec<usize>) -> PyResult<Self> {
        guard(|| collsynth_core::topology::restrict::restrict_ranks(&self.inner, &ranks))
            .map(|inner| PyTopology { inner })
    }

    /// Metrics as a dict with the `topo show --json` keys.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = interruptible(py, || guard(|| self.inner.metrics()))?;
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
        d.set_item("min_egress_exact", to_fraction_string(&m.min_egress))?;
        d.set_item("max_egress_GBps", to_f64(&m.max_egress))?;
        d.set_item("max_egress_exact", to_fraction_string(&m.max_egress))?;
        Ok(d)
    }
}

pub(crate) fn size_arg(size: &str) -> PyResult<Rat> {
    guard(|| parse_size(size).map_err(|e| e.context("--size")))
}

/// A verified schedule together with the topology it runs on.
#[pyclass(name = "Schedule", module = "collsynth._core", frozen)]
pub(crate) struct PySchedule {
    /// Flat, or compact (stated per orbit, `ir::orbit`): verify, evaluate, to_json and the
    /// summary getters read it as it is; everything that needs every transfer reads [`Self::flat`].
    pub(crate) inner: Schedule,
    pub(crate) topo: Topology,
    /// The expansion of a compact `inner`, made on first use.
    flat: std::sync::OnceLock<Schedule>,
    /// The evaluation made beside the verifier ([`synthesize`] with a pipeline), until
    /// `evaluate` at its size and pipeline takes it.
    evaluated: std::sync::Mutex<Option<Evaluated>>,
}

/// A schedule's bounds and evaluation at `size` (as asked) and `pipeline`.
pub(crate) struct Evaluated {
    size: Rat,
    pipeline: usize,
    bounds: api::Bounds,
    evaluation: api::Evaluation,
}

impl Evaluated {
    /// [`api::bounds`] and [`api::evaluate`] of `s`; `None` on an error or a panic, which
    /// `evaluate` then meets again itself, where it was always reported.
    fn of(s: &Schedule, topo: &Topology, size: Rat, pipeline: usize) -> Option<Evaluated> {
        let run = || {
            let bounds = api::bounds(topo, s.collective, s.root)?;
            let evaluation = api::evaluate(s, topo, size, pipeline, &bounds)?;
            Ok::<_, CollsynthError>(Evaluated { size, pipeline, bounds, evaluation })
        };
        catch_unwind(AssertUnwindSafe(run)).ok()?.ok()
    }
}

impl PySchedule {
    pub(crate) fn new(inner: Schedule, topo: Topology) -> PySchedule {
        PySchedule { inner, topo, flat: std::sync::OnceLock::new(), evaluated: std::sync::Mutex::new(None) }
    }

    /// The flat schedule (the schedule itself unless it is compact).
    pub(crate) fn flat(&self) -> PyResult<&Schedule> {
        if self.inner.is_flat() {
            return Ok(&self.inner);
        }
        if let Some(f) = self.flat.get() {
            return Ok(f);
        }
        let f = guard(|| ir::orbit::expand(&self.inner))?;
        Ok(self.flat.get_or_init(|| f))
    }

    /// The bytes this schedule moves at the size text `size` ([`api::moved_size`]), for the
    /// model probes that cost at exact bytes.
    fn moved(&self, size: &str) -> PyResult<Rat> {
        Ok(api::moved_size(self.inner.collective, self.inner.n_ranks, size_arg(size)?).moved)
    }
}

/// `size_moved_bytes`, `size_moved_exact` and `size_moved_note` ([`api::MovedSize`]).
fn set_moved(d: &Bound<'_, PyDict>, size: &api::MovedSize) -> PyResult<()> {
    d.set_item("size_moved_bytes", to_f64(&size.moved))?;
    d.set_item("size_moved_exact", to_fraction_string(&size.moved))?;
    d.set_item("size_moved_note", size.note.as_deref())
}

#[pymethods]
impl PySchedule {
    /// Parse a schedule file (format collsynth-schedule/1); returns (schedule, warnings).
    /// Structure only: call `verify()` to check it.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<(Self, Vec<String>)> {
        guard(|| ir::json::read(text)).map(|(inner, topo, w)| (PySchedule::new(inner, topo), w))
    }

    fn to_json(&self) -> String {
        ir::json::write(&self.inner, &self.topo)
    }

    /// Write the schedule file's text to the existing file `path` (truncated), streamed
    /// through a buffer, never as one string: the caller makes the file and renames it into
    /// place (atomic_write). OSError on a write failure.
    fn write_json(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        stream::to_path(py, path, |out| ir::json::write_to(&self.inner, &self.topo, out))
    }

    #[getter]
    fn collective(&self) -> &'static str {
        self.inner.collective.name()
    }
    #[getter]
    fn algorithm(&self) -> String {
        self.inner.provenance.algorithm.clone()
    }
    #[getter]
    fn n_ranks(&self) -> usize {
        self.inner.n_ranks
    }
    #[getter]
    fn root(&self) -> usize {
        self.inner.root
    }
    #[getter]
    fn n_transfers(&self) -> usize {
        self.inner.n_transfers()
    }
    /// The same schedule stated flat (every transfer, no group): the expansion of a compact
    /// schedule, or a copy of a flat one. Not verified: call `verify()` on it.
    fn flat_form(&self, py: Python<'_>) -> PyResult<PySchedule> {
        // Expanded afresh, not through the cached `flat` (which would then be held twice).
        let flat = py.detach(|| guard(|| ir::orbit::expand(&self.inner)))?;
        Ok(PySchedule::new(flat, self.topo.clone()))
    }
    /// A compact schedule's symmetry: (group, |G|, representative transfers); None when flat.
    #[getter]
    fn compact(&self) -> Option<(String, usize, usize)> {
        self.inner.symmetry.as_ref().map(|g| (g.name.clone(), g.order(), ir::ranges::n_expanded(&self.inner)))
    }
    /// The transfers stored when some are range transfers (`ir::ranges`); None otherwise.
    #[getter]
    fn range_transfers(&self) -> Option<usize> {
        ir::ranges::has_ranges(&self.inner).then_some(self.inner.transfers.len())
    }
    #[getter]
    fn n_pieces(&self) -> usize {
        self.inner.pieces.len()
    }
    #[getter]
    fn steps(&self) -> usize {
        self.inner.steps()
    }
    #[getter]
    fn topology(&self) -> PyTopology {
        PyTopology { inner: self.topo.clone() }
    }
    #[getter]
    fn options(&self) -> Vec<(String, String)> {
        self.inner.provenance.options.clone()
    }
    /// Result facts of the synthesizer as a dict, e.g. ForestColl's `k`.
    #[getter]
    fn details<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        values::set_all(py, &d, &self.inner.provenance.details)?;
        Ok(d)
    }

    /// Run the verifier: a dict report, or BadInput naming the first violation.
    fn verify<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let report = guard(|| {
            verify::verify(&self.inner, &self.topo)
                .map_err(|v| CollsynthError::bad(format!("verification failed: {v}")))
        })?;
        let d = PyDict::new(py);
        d.set_item("transfers", report.transfers)?;
        d.set_item("pieces", report.pieces)?;
        d.set_item("depth", report.depth)?;
        Ok(d)
    }

    /// Bounds, alpha-beta model and simulator at `size` (text with units), as the JSON keys.
    #[pyo3(signature = (size, pipeline=1))]
    fn evaluate<'py>(&self, py: Python<'py>, size: &str, pipeline: usize) -> PyResult<Bound<'py, PyDict>> {
        let m = size_arg(size)?;
        let ready = self.evaluated.lock().ok().and_then(|mut e| e.take_if(|e| e.size == m && e.pipeline == pipeline));
        let (b, e) = match ready {
            Some(done) => (done.bounds, done.evaluation),
            None => interruptible(py, || {
                guard(|| {
                    let b = api::bounds(&self.topo, self.inner.collective, self.inner.root)?;
                    let e = api::evaluate(&self.inner, &self.topo, m, pipeline, &b)?;
                    Ok((b, e))
                })
            })?,
        };
        let d = bounds_dict(py, &self.topo, self.inner.collective, &b)?;
        d.set_item("size_bytes", to_f64(&m))?;
        d.set_item("size_bytes_exact", to_fraction_string(&m))?;
        set_moved(&d, &e.size)?;
        // One clock: time and bandwidths are the runtime model's; the store-and-forward
        // simulator's time is kept under its own name (docs/contracts.md).
        d.set_item("time_us", e.time_us)?;
        d.set_item("time_model", "runtime")?;
        d.set_item("sf_time_us", e.sf_time_us)?;
        d.set_item("alpha_beta_us", e.alpha_beta_us)?;
        d.set_item("latency_us", e.latency_us)?;
        d.set_item("bandwidth_us", e.bandwidth_us)?;
        d.set_item("algbw_GBps", e.algbw_gbps)?;
        d.set_item("busbw_GBps", e.busbw_gbps)?;
        d.set_item("optimality", to_f64(&e.optimality))?;
        d.set_item("optimality_exact", to_fraction_string(&e.optimality))?;
        d.set_item("steps", e.steps)?;
        d.set_item("latency_steps", e.direct.latency_steps)?;
        d.set_item("bandwidth_factor", to_fraction_string(&e.direct.bandwidth_factor))?;
        d.set_item("moore_latency_steps", e.direct.moore_steps)?;
        d.set_item("bandwidth_factor_optimum", to_fraction_string(&e.direct.optimum_factor))?;
        let rt = e.runtime.time_us;
        d.set_item("runtime_time_us", rt)?;
        d.set_item("runtime_algbw_GBps", if rt > 0.0 { to_f64(&e.size.moved) / rt / 1e3 } else { 0.0 })?;
        d.set_item("runtime_protocol", e.runtime.protocol.name())?;
        d.set_item("runtime_slices", e.runtime.slices)?;
        d.set_item("time_bound_us", e.time_bound_us)?;
        d.set_item("time_optimality", e.time_optimality)?;
        Ok(d)
    }

    /// The runtime model alone at `size` under `protocol` (LL, LL128, Simple; default: the
    /// one NCCL's tuner would pick): time, protocol, slices per piece.
    #[pyo3(signature = (size, protocol=None))]
    fn runtime<'py>(&self, py: Python<'py>, size: &str, protocol: Option<&str>) -> PyResult<Bound<'py, PyDict>> {
        use collsynth_core::cost::runtime::{self, Protocol};
        let m = size_arg(size)?;
        let moved = api::moved_size(self.inner.collective, self.inner.n_ranks, m);
        let flat = if protocol.is_some() { Some(self.flat()?) } else { None };
        let r = interruptible(py, || {
            guard(|| match (protocol, flat) {
                (Some(name), Some(flat)) => {
                    let p = Protocol::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| {
                        collsynth_core::CollsynthError::bad(format!("unknown protocol '{name}' (LL, LL128, Simple)"))
                    })?;
                    runtime::runtime_time(flat, &self.topo, moved.moved, p)
                }
                _ => api::runtime(&self.inner, &self.topo, m),
            })
        })?;
        let d = PyDict::new(py);
        d.set_item("size_bytes", to_f64(&m))?;
        set_moved(&d, &moved)?;
        d.set_item("runtime_time_us", r.time_us)?;
        let bytes = to_f64(&moved.moved);
        d.set_item("runtime_algbw_GBps", if r.time_us > 0.0 { bytes / r.time_us / 1e3 } else { 0.0 })?;
        d.set_item("runtime_protocol", r.protocol.name())?;
        d.set_item("runtime_slices", r.slices)?;
        Ok(d)
    }

    /// The event simulator alone: time, chunk transfers, busiest link.
    #[pyo3(signature = (size, pipeline=1))]
    fn simulate<'py>(&self, py: Python<'py>, size: &str, pipeline: usize) -> PyResult<Bound<'py, PyDict>> {
        let m = size_arg(size)?;
        let r = interruptible(py, || guard(|| api::simulate(&self.inner, &self.topo, m, pipeline)))?;
        let d = PyDict::new(py);
        d.set_item("size_bytes", to_f64(&m))?;
        d.set_item("size_bytes_exact", to_fraction_string(&m))?;
        set_moved(&d, &api::moved_size(self.inner.collective, self.inner.n_ranks, m))?;
        d.set_item("time_us", r.time_us)?;
        d.set_item("chunk_transfers", r.transfers)?;
        d.set_item(
            "busiest_link",
            r.busiest_link.map(|l| {
                let link = &self.topo.links[l];
                format!("{} -> {}", self.topo.nodes[link.src].name, self.topo.nodes[link.dst].name)
            }),
        )?;
        d.set_item("busiest_link_busy_us", r.busiest_link_busy_us)?;
        Ok(d)
    }

    /// Bytes each link carries over the whole schedule at `size` (the core's exact link loads),
    /// as (src, dst, bytes) in the topology's link order.
    fn link_loads(&self, size: &str) -> PyResult<Vec<(String, String, f64)>> {
        let m = self.moved(size)?;
        // alpha_beta checks the schedule's pieces and routes against the topology first
        let flat = self.flat()?;
        guard(|| collsynth_core::cost::alpha_beta(flat, &self.topo, m, 1))?;
        let loads = collsynth_core::cost::link_loads(flat, &self.topo, m);
        Ok(self
            .topo
            .links
            .iter()
            .zip(loads)
            .map(|(l, b)| (self.topo.nodes[l.src].name.clone(), self.topo.nodes[l.dst].name.clone(), to_f64(&b)))
            .collect())
    }

    /// The transfers of shard `k` (`kind` "shard") or step `k` (`kind` "step") at `size`, in
    /// schedule order, as chosen by the core (`ir::select`): (transfer, piece, shard, src rank,
    /// dst rank, op, step, level, bytes, hops as (src node, dst node) names).
    fn select(&self, kind: &str, k: usize, size: &str) -> PyResult<Vec<SelectedRow>> {
        let m = self.moved(size)?;
        let sel = match kind {
            "shard" => ir::select::Selection::Shard(k),
            "step" => ir::select::Selection::Step(k),
            _ => return Err(BadInput::new_err(format!("select: kind must be shard or step, got '{kind}'"))),
        };
        // Drawing names every transfer, so a compact schedule is expanded first.
        let flat = self.flat()?;
        let picked = guard(|| ir::select::select(flat, &self.topo, sel, m))?;
        let name = |n: usize| self.topo.nodes[n].name.clone();
        Ok(picked
            .into_iter()
            .map(|t| {
                let op = if t.op == ir::Op::Copy { "copy" } else { "reduce" };
                let hops =
                    t.route.iter().map(|&l| (name(self.topo.links[l].src), name(self.topo.links[l].dst))).collect();
                (t.transfer, t.piece, t.shard, t.src, t.dst, op, t.step, t.level, to_f64(&t.bytes), hops)
            })
            .collect())
    }

    /// The analytic alpha-beta model alone.
    fn alpha_beta<'py>(&self, py: Python<'py>, size: &str) -> PyResult<Bound<'py, PyDict>> {
        let m = size_arg(size)?;
        let moved = api::moved_size(self.inner.collective, self.inner.n_ranks, m);
        let flat = self.flat()?;
        let e = guard(|| collsynth_core::cost::alpha_beta(flat, &self.topo, moved.moved, 1))?;
        let d = PyDict::new(py);
        d.set_item("size_bytes", to_f64(&m))?;
        set_moved(&d, &moved)?;
        d.set_item("alpha_beta_us", e.total_us)?;
        d.set_item("latency_us", e.latency_us)?;
        d.set_item("bandwidth_us", e.bandwidth_us)?;
        Ok(d)
    }
}

fn bounds_dict<'py>(py: Python<'py>, topo: &Topology, c: Collective, b: &api::Bounds) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let opt = |r: &Option<Rat>| r.as_ref().map(to_f64);
    d.set_item("inv_throughput", to_fraction_string(&b.inv_throughput))?;
    d.set_item("bound_algbw_GBps", to_f64(&b.algbw))?;
    d.set_item("bound_algbw_exact", to_fraction_string(&b.algbw))?;
    d.set_item("bottleneck_cut", b.cut.iter().map(|&v| topo.nodes[v].name.clone()).collect::<Vec<_>>())?;
    if c == Collective::Allreduce {
        let exact = |r: &Option<Rat>| r.as_ref().map(to_fraction_string);
        d.set_item("rs_ag_algbw_GBps", opt(&b.rs_ag_algbw))?;
        d.set_item("rs_ag_algbw_exact", exact(&b.rs_ag_algbw))?;
        d.set_item("lp_algbw_GBps", opt(&b.lp_algbw))?;
        d.set_item("lp_algbw_exact", exact(&b.lp_algbw))?;
    }
    Ok(d)
}

/// `--time-only`: an algorithm's own account of the collective's time, without building the
/// schedule, as a dict with the `synth --json` keys: `N`, `time_us`, `time_model`,
/// `synthesis_seconds`, `algbw_GBps`, `busbw_GBps`, then the algorithm's own keys.
#[pyfunction]
#[pyo3(signature = (topo, collective, algorithm, root=0, options=BTreeMap::new(), size="1GiB"))]
fn time_only<'py>(
    py: Python<'py>,
    topo: &PyTopology,
    collective: &str,
    algorithm: &str,
    root: usize,
    options: BTreeMap<String, String>,
    size: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let c = collective_arg(collective)?;
    let m = size_arg(size)?;
    let req = Request { root, options, size: None };
    let t = interruptible(py, || guard(|| api::time_only(&topo.inner, c, algorithm, &req, m)))?;
    let d = PyDict::new(py);
    d.set_item("N", t.report.n_ranks)?;
    d.set_item("synthesis_seconds", t.synthesis_seconds)?;
    d.set_item("time_us", t.report.time_us)?;
    d.set_item("time_model", t.report.time_model)?;
    d.set_item("algbw_GBps", t.algbw_gbps)?;
    d.set_item("busbw_GBps", t.busbw_gbps)?;
    set_moved(&d, &t.size)?;
    values::set_all(py, &d, &t.report.keys)?;
    Ok(d)
}

/// `(done, total)` of `algorithm`'s running synthesis (total 0 before it starts), or None for
/// an algorithm that counts no progress. Polled by a bar from another thread while the
/// synthesis call runs without the GIL.
#[pyfunction]
fn progress(algorithm: &str) -> Option<(u64, u64)> {
    if algorithm == "auto" {
        return Some(api::AUTO_PROGRESS.get());
    }
    synth::find(algorithm).ok().and_then(|a| a.extras.progress).map(|p| p.get())
}

pub(crate) fn collective_arg(name: &str) -> PyResult<Collective> {
    guard(|| Collective::parse(name))
}

/// `msccl_export`'s arguments (runtime, protocol, channels, unfused, pipeline, size range,
/// judge size), for `auto` ranking its candidates by their exported programs.
type MscclArgs = (String, String, Option<usize>, bool, Option<usize>, Option<(u64, u64)>, Option<String>);

/// Synthesize and verify: (schedule, synthesis seconds). With `pipeline`, the schedule is
/// also evaluated at `size` beside the verifier, and its `evaluate(size, pipeline)` answers
/// at once. With `msccl` and `auto`: the candidate whose MSCCL program, exported with those
/// arguments, is judged fastest (`api::synthesize_for_msccl`).
#[pyfunction]
#[pyo3(signature = (topo, collective, algorithm, root=0, options=BTreeMap::new(), size="1GiB", pipeline=None, msccl=None))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, one each
pub(crate) fn synthesize(
    py: Python<'_>,
    topo: &PyTopology,
    collective: &str,
    algorithm: &str,
    root: usize,
    options: BTreeMap<String, String>,
    size: &str,
    pipeline: Option<usize>,
    msccl: Option<MscclArgs>,
) -> PyResult<(PySchedule, f64)> {
    let c = collective_arg(collective)?;
    let m = size_arg(size)?;
    let req = Request { root, options, size: None };
    if let (Some(args), "auto") = (msccl, algorithm) {
        // `auto` for the program written: candidates ranked by their exported programs.
        let (runtime, protocol, channels, unfused, pipe, range, judged_at) = args;
        let ask = msccl::ask(&runtime, &protocol, channels, unfused, pipe, range, judged_at.as_deref())?;
        let done = interruptible(py, || guard(|| api::synthesize_for_msccl(&topo.inner, c, &req, m, &ask)))?;
        let evaluated = pipeline.and_then(|p| Evaluated::of(&done.schedule, &done.topology, m, p));
        let mut schedule = PySchedule::new(done.schedule, done.topology);
        schedule.evaluated = std::sync::Mutex::new(evaluated);
        return Ok((schedule, done.synthesis_seconds));
    }
    // Without the GIL, so that a progress bar can poll the synthesizer's counters meanwhile.
    let (done, evaluated) = interruptible(py, || {
        guard(|| {
            let run = || {
                api::synthesize_then(&topo.inner, c, algorithm, &req, m, |s, t| {
                    pipeline.and_then(|p| Evaluated::of(s, t, m, p))
                })
            };
            match pipeline {
                Some(_) => api::with_time_bound_ahead(&topo.inner, c, &req, run),
                None => run(),
            }
        })
    })?;
    let mut schedule = PySchedule::new(done.schedule, done.topology);
    schedule.evaluated = std::sync::Mutex::new(evaluated);
    Ok((schedule, done.synthesis_seconds))
}

/// Exact bounds of a collective as a dict with the `bound --json` keys.
#[pyfunction]
#[pyo3(signature = (topo, collective, root=0))]
fn bounds<'py>(py: Python<'py>, topo: &PyTopology, collective: &str, root: usize) -> PyResult<Bound<'py, PyDict>> {
    let c = collective_arg(collective)?;
    // The metrics first: they refuse a topology too large to measure before the bound runs.
    let (m, b) = interruptible(py, || guard(|| Ok((topo.inner.metrics()?, api::bounds(&topo.inner, c, root)?))))?;
    let d = bounds_dict(py, &topo.inner, c, &b)?;
    d.set_item("diameter", m.diameter)?;
    d.set_item("moore_steps", collsynth_core::bound::latency::moore_steps(m.n, m.max_degree))?;
    d.set_item("one_ported_rounds", collsynth_core::bound::latency::one_ported_broadcast_rounds(m.n))?;
    Ok(d)
}

/// One registered algorithm: (name, help, collectives, options, has a time-only path, its
/// schedule depends on the size).
/// One transfer of `Schedule.select` (see there).
type SelectedRow = (usize, usize, usize, usize, usize, &'static str, usize, usize, f64, Vec<(String, String)>);
type AlgorithmRow = (&'static str, &'static str, Vec<&'static str>, Vec<&'static str>, bool, bool);

/// Registered algorithms, in the registry's order.
#[pyfunction]
fn algorithms() -> Vec<AlgorithmRow> {
    synth::algorithms()
        .into_iter()
        .map(|a| {
            let collectives = a.collectives.iter().map(|c| c.name()).collect();
            (a.name, a.help, collectives, a.options.to_vec(), a.extras.time_only.is_some(), a.extras.sized)
        })
        .collect()
}

/// Every algorithm option with its one line of help: (name, help), in the CLI's order.
#[pyfunction]
fn algorithm_options() -> Vec<(&'static str, &'static str)> {
    synth::OPTIONS.iter().map(|o| (o.name, o.help)).collect()
}

/// Bytes of a size string (`1GiB`, `12MB`, `4096`), exact as "p/q".
#[pyfunction]
fn size_bytes(size: &str) -> PyResult<String> {
    size_arg(size).map(|r| to_fraction_string(&r))
}

/// nccl-tests' size sweep `-b minbytes -e maxbytes -f factor` as whole bytes (K, M, G are
/// powers of 1024 there, as in nccl-tests).
#[pyfunction]
fn nccl_tests_sizes(minbytes: &str, maxbytes: &str, factor: u64) -> PyResult<Vec<u64>> {
    use collsynth_core::units;
    guard(|| {
        let min = units::parse_nccl_tests_size(minbytes)?;
        let max = units::parse_nccl_tests_size(maxbytes)?;
        units::nccl_tests_sizes(min, max, factor)
    })
}

/// nccl-tests' bus-bandwidth factor of `collective` on `n` ranks (busbw = algbw * factor).
#[pyfunction]
fn busbw_factor(collective: &str, n: usize) -> PyResult<f64> {
    if n == 0 {
        return Err(to_py(collsynth_core::CollsynthError::bad("busbw needs at least 1 rank")));
    }
    Ok(collective_arg(collective)?.busbw_factor(n))
}

/// nccl-tests' (size, count) columns of a requested size in `elt`-byte elements on `n` ranks.
#[pyfunction]
fn nccl_tests_count(collective: &str, bytes: u64, elt: u64, n: u64) -> PyResult<(u64, u64)> {
    Ok(collective_arg(collective)?.nccl_tests_count(bytes, elt, n))
}

/// The text of an input file read as `kind` (`"schedule JSON"`, `"MSCCL XML"`, `"topology
/// JSON"`, `"NCCL topology XML"`), no further than that kind's cap: the one reader of inputs.
#[pyfunction]
fn read_input(py: Python<'_>, path: std::path::PathBuf, kind: &str) -> PyResult<String> {
    let kind = collsynth_core::input::Kind::from_name(kind)
        .ok_or_else(|| InternalError::new_err(format!("no input kind {kind:?}")))?;
    py.detach(|| guard(|| collsynth_core::input::read(&path, kind)))
}

/// Each input kind and the most bytes read of it.
#[pyfunction]
fn input_caps() -> Vec<(&'static str, u64)> {
    collsynth_core::input::Kind::ALL.iter().map(|(k, n)| (*n, k.cap())).collect()
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
    m.add_function(wrap_pyfunction!(set_memory_budget, m)?)?;
    m.add("Infeasible", m.py().get_type::<Infeasible>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add_class::<PyTopology>()?;
    m.add_class::<PySchedule>()?;
    m.add_function(wrap_pyfunction!(families, m)?)?;
    m.add_function(wrap_pyfunction!(synthesize, m)?)?;
    m.add_function(wrap_pyfunction!(bounds, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(algorithm_options, m)?)?;
    m.add_function(wrap_pyfunction!(size_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(time_only, m)?)?;
    m.add_function(wrap_pyfunction!(progress, m)?)?;
    m.add_function(wrap_pyfunction!(nccl_tests_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(busbw_factor, m)?)?;
    m.add_function(wrap_pyfunction!(nccl_tests_count, m)?)?;
    m.add_function(wrap_pyfunction!(read_input, m)?)?;
    m.add_function(wrap_pyfunction!(input_caps, m)?)?;
    circulant::register(m)?;
    exec_plan::register(m)?;
    find::register(m)?;
    msccl::register(m)?;
    mscclpp::register(m)?;
    Ok(())
}
