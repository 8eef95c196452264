//! serde_json values (a schedule's details, an algorithm's time report) as Python objects.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;
use serde_json::Value;

/// `v` as the object `json.loads` would give: None, bool, int, float, str, list, dict.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    match v {
        Value::Null => Ok(py.None().into_bound(py)),
        Value::Bool(b) => b.into_bound_py_any(py),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_bound_py_any(py),
            (None, Some(u)) => u.into_bound_py_any(py),
            _ => n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py),
        },
        Value::String(s) => s.into_bound_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            Ok(list.into_any())
        }
        Value::Object(map) => {
            let d = PyDict::new(py);
            for (k, item) in map {
                d.set_item(k, to_py(py, item)?)?;
            }
            Ok(d.into_any())
        }
    }
}

/// Set every entry of `details` on `d`, in order.
pub(crate) fn set_all(py: Python<'_>, d: &Bound<'_, PyDict>, details: &collsynth_core::ir::Details) -> PyResult<()> {
    for (k, v) in details.iter() {
        d.set_item(k, to_py(py, v)?)?;
    }
    Ok(())
}
