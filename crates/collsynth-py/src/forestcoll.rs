//! Python entry points specific to forestcoll (registered by `lib.rs`).

use pyo3::prelude::*;

pub(crate) fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
