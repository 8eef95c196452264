//! `find --sweep`: the frontier of every (N, d) up to a size, in one process, as the paper runs
//! its finder "once for all Ns and ds" and saves the results. Targets run on every core,
//! smallest N first, sharing the process-wide caches of [`super::search`] and
//! [`super::candidates`] (a cache entry is the same whoever computes it first, so the result
//! does not depend on the schedule of the threads).

use super::{members, Candidate};
use crate::error::{CollsynthError, Result};
use crate::progress::Progress;

/// One target of a sweep and its frontier (as [`super::frontier`] gives it).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    pub n: usize,
    pub degree: usize,
    pub frontier: Vec<Candidate>,
}

/// Progress of the running sweep, for a progress bar: targets done, out of all.
pub static PROGRESS: Progress = Progress::new();

/// The frontier of every (N, d) with d in `degrees` and d < N <= `max_nodes`, ordered by N
/// then d. A target with no known topology (e.g. an odd bidirectional degree with no
/// symmetric family member) has no row. Guarantees: each row equals `frontier(N, d,
/// bidirectional)`. BadInput on an empty or out-of-range degree list or size.
pub fn sweep(max_nodes: usize, degrees: &[usize], bidirectional: bool) -> Result<Vec<SweepRow>> {
    if !(2..=super::MAX_NODES).contains(&max_nodes) {
        return Err(CollsynthError::bad(format!(
            "--sweep must be between 2 and {}, got {max_nodes}",
            super::MAX_NODES
        )));
    }
    if degrees.is_empty() {
        return Err(CollsynthError::bad("--degrees: no degree given"));
    }
    if let Some(&d) = degrees.iter().find(|&&d| !(1..=super::MAX_DEGREE).contains(&d)) {
        return Err(CollsynthError::bad(format!(
            "--degrees: each must be between 1 and {}, got {d}",
            super::MAX_DEGREE
        )));
    }
    let mut degrees = degrees.to_vec();
    degrees.sort_unstable();
    degrees.dedup();
    let targets: Vec<(usize, usize)> =
        (2..=max_nodes).flat_map(|n| degrees.iter().filter(move |&&d| d < n).map(move |&d| (n, d))).collect();
    PROGRESS.start(targets.len() as u64);
    // Every core runs targets: BFB within a target stays on its worker's thread.
    let rows = crate::parallel::each(targets.len(), usize::MAX, |i| {
        let (n, d) = targets[i];
        let row = members(n, d, bidirectional);
        PROGRESS.add(1);
        row
    });
    let mut out = Vec::with_capacity(targets.len());
    for (&(n, degree), row) in targets.iter().zip(rows) {
        let frontier = row?;
        if !frontier.is_empty() {
            out.push(SweepRow { n, degree, frontier });
        }
    }
    Ok(out)
}
