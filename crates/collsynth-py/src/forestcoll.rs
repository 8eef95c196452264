//! Python entry points specific to forestcoll (registered by `lib.rs`).

use pyo3::prelude::*;

/// `(done, total)` of the running ForestColl synthesis (switches removed + tree edges packed);
/// `total` is 0 before the first one. Polled by a progress bar from another thread, which
/// needs the synthesis call to release the GIL.
#[pyfunction]
fn forestcoll_progress() -> (u64, u64) {
    collsynth_core::synth::forestcoll::PROGRESS.get()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(forestcoll_progress, m)?)?;
    Ok(())
}
