//! Python entry points of Träff's circulant schedules (registered by `lib.rs`): what the
//! MPI runtime (`collsynth.mpi`) and `collsynth circulant check` call. See docs/circulant.md.

use crate::guard;
use collsynth_core::synth::traff as core;
use collsynth_core::CollsynthError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn check_p(p: usize) -> collsynth_core::Result<()> {
    if p == 0 || p > core::MAX_P {
        return Err(CollsynthError::bad(format!("p must be in 1..={}, got {p}", core::MAX_P)));
    }
    Ok(())
}

/// One process's schedule for a broadcast from `root` among p processes: dict with `q`,
/// `skips` (q + 1 ints), `recv_blocks` and `send_blocks` (q ints each, Algorithms 4 and 5
/// for the virtual rank (rank - root) mod p), `recv_from` and `send_to` (q real ranks).
#[pyfunction]
#[pyo3(signature = (p, rank, root=0))]
fn circulant_schedule(py: Python<'_>, p: usize, rank: usize, root: usize) -> PyResult<Bound<'_, PyDict>> {
    let s = guard(|| core::process_schedule(p, rank, root))?;
    let d = PyDict::new(py);
    d.set_item("q", s.q)?;
    d.set_item("skips", s.skips)?;
    d.set_item("recv_blocks", s.recv_blocks)?;
    d.set_item("send_blocks", s.send_blocks)?;
    d.set_item("recv_from", s.recv_from)?;
    d.set_item("send_to", s.send_to)?;
    Ok(d)
}

/// Rounds of an n-block broadcast: n - 1 + ceil(log2 p) (0 for p = 1).
#[pyfunction]
fn circulant_rounds(p: usize, n: usize) -> PyResult<usize> {
    guard(|| {
        check_p(p)?;
        if n == 0 {
            return Err(CollsynthError::bad("n must be at least 1 block"));
        }
        Ok(core::rounds(p, n))
    })
}

/// Theorem 2's optimal block count for `size_bytes` with per-message latency `alpha_us`
/// and time per byte `beta_us_per_byte` (at least 1, at most max(1, size_bytes)).
#[pyfunction]
fn circulant_blocks(p: usize, size_bytes: f64, alpha_us: f64, beta_us_per_byte: f64) -> PyResult<usize> {
    guard(|| {
        check_p(p)?;
        if !(size_bytes >= 0.0 && alpha_us >= 0.0 && beta_us_per_byte >= 0.0) {
            return Err(CollsynthError::bad("size, alpha and beta must be >= 0"));
        }
        Ok(core::optimal_blocks(p, size_bytes, alpha_us, beta_us_per_byte))
    })
}

/// Exhaustively check the schedules for every p in `ps` on `threads` threads (0 = all
/// cores): dict with `ps`, `max_p`, `processes`, `broadcasts`, `rounds`,
/// `capped_duplicates`, `failures` (first 10 lines). Releases the GIL.
#[pyfunction]
#[pyo3(signature = (ps, threads=0))]
fn circulant_check(py: Python<'_>, ps: Vec<usize>, threads: usize) -> PyResult<Bound<'_, PyDict>> {
    guard(|| ps.iter().try_for_each(|&p| check_p(p)))?;
    let s = crate::interruptible(py, || guard(|| Ok(core::check_all(&ps, threads, &|_| {}))))?;
    let d = PyDict::new(py);
    d.set_item("ps", s.ps)?;
    d.set_item("max_p", s.max_p)?;
    d.set_item("processes", s.processes)?;
    d.set_item("broadcasts", s.broadcasts)?;
    d.set_item("rounds", s.rounds)?;
    d.set_item("capped_duplicates", s.capped_duplicates)?;
    d.set_item("failures", s.failures)?;
    Ok(d)
}

/// Microseconds to compute one process's receive and send schedules (Algorithms 4 and 5),
/// the best of `repeat` runs, each over `ranks` spread-out ranks (averaged).
#[pyfunction]
#[pyo3(signature = (p, ranks=64, repeat=5))]
fn circulant_schedule_time_us(py: Python<'_>, p: usize, ranks: usize, repeat: usize) -> PyResult<f64> {
    guard(|| check_p(p))?;
    py.detach(|| {
        guard(|| {
            let ranks = ranks.clamp(1, p);
            let mut best = f64::INFINITY;
            let mut sink = 0i64;
            for _ in 0..repeat.max(1) {
                let start = std::time::Instant::now();
                for j in 0..ranks {
                    let r = (j * (p / ranks).max(1) + j) % p;
                    let sk = core::Skips::new(p);
                    sink += sk.recv_schedule(r).iter().sum::<i64>() + sk.send_schedule(r).iter().sum::<i64>();
                }
                best = best.min(start.elapsed().as_secs_f64() * 1e6 / ranks as f64);
            }
            std::hint::black_box(sink);
            Ok(best)
        })
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(circulant_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(circulant_rounds, m)?)?;
    m.add_function(wrap_pyfunction!(circulant_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(circulant_check, m)?)?;
    m.add_function(wrap_pyfunction!(circulant_schedule_time_us, m)?)?;
    Ok(())
}
