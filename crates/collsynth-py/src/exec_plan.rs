//! Python entry point of the MSCCL plan compiler (`msccl::plan`): the MPI executor's only
//! source of what to run (registered by `lib.rs`).

use crate::guard;
use collsynth_core::msccl::interp::Aliasing;
use collsynth_core::msccl::plan::{self, read::Format, Loc, Span};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

/// Ops are tuples of these, -1 where absent; regions are 0 (send buffer), 1 (receive
/// buffer), 2 (scratch).
const OP_FIELDS: [&str; 13] = [
    "recv_from",
    "send_to",
    "chan",
    "first_region",
    "first_chunk",
    "add_region",
    "add_chunk",
    "store_region",
    "store_chunk",
    "cnt",
    "tb",
    "step",
    "type",
];

fn opt(x: Option<usize>) -> i64 {
    x.map_or(-1, |v| v as i64)
}

fn loc(l: Option<Loc>) -> (i64, i64) {
    l.map_or((-1, -1), |l| (l.region.code() as i64, l.chunk as i64))
}

fn span(s: Span) -> (usize, usize, usize) {
    (s.region.code(), s.first, s.chunks)
}

/// Read an MSCCL program (`format` "xml" or "json"), judge it as `collsynth verify` does
/// (BadInput "not a valid MSCCL program: ..." otherwise) and compile it for the mode: a dict
/// with `name`, `collective`, `ngpus`, `nchunksperloop`, `nchannels`, `root`, `inplace`,
/// `op_fields` (the names of an op's fields) and `ranks`, one dict per rank with `rank`,
/// `sendbuf_chunks` (None in place), `recvbuf_chunks`, `scratch_chunks`, `input` and
/// `output` ((region, first chunk, chunks)) and `ops` (tuples, in execution order).
#[pyfunction]
fn msccl_exec_plan<'py>(py: Python<'py>, text: &str, format: &str, inplace: bool) -> PyResult<Bound<'py, PyDict>> {
    let aliasing = if inplace { Aliasing::InPlace } else { Aliasing::OutOfPlace };
    let p = py.detach(|| guard(|| plan::load(text, Format::parse(format)?, aliasing)))?;
    let d = PyDict::new(py);
    d.set_item("name", &p.name)?;
    d.set_item("collective", p.collective.name())?;
    d.set_item("ngpus", p.ngpus)?;
    d.set_item("nchunksperloop", p.nchunksperloop)?;
    d.set_item("nchannels", p.nchannels)?;
    d.set_item("root", p.root)?;
    d.set_item("inplace", inplace)?;
    d.set_item("op_fields", OP_FIELDS.to_vec())?;
    let ranks = PyList::empty(py);
    for rp in &p.ranks {
        let r = PyDict::new(py);
        r.set_item("rank", rp.rank)?;
        r.set_item("sendbuf_chunks", rp.sendbuf_chunks)?;
        r.set_item("recvbuf_chunks", rp.recvbuf_chunks)?;
        r.set_item("scratch_chunks", rp.scratch_chunks)?;
        r.set_item("input", span(rp.input))?;
        r.set_item("output", span(rp.output))?;
        let ops = PyList::empty(py);
        for o in &rp.ops {
            let ((fr, fc), (ar, ac), (sr, sc)) = (loc(o.first), loc(o.add), loc(o.store));
            let ints = [opt(o.recv_from), opt(o.send_to), o.chan as i64, fr, fc, ar, ac, sr, sc];
            let tail = [o.cnt as i64, o.tb as i64, o.step as i64];
            let mut items: Vec<Bound<'py, PyAny>> = Vec::with_capacity(OP_FIELDS.len());
            for v in ints.iter().chain(&tail) {
                items.push(v.into_pyobject(py)?.into_any());
            }
            items.push(o.kind.name().into_pyobject(py)?.into_any());
            ops.append(PyTuple::new(py, items)?)?;
        }
        r.set_item("ops", ops)?;
        ranks.append(r)?;
    }
    d.set_item("ranks", ranks)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(msccl_exec_plan, m)?)?;
    Ok(())
}
