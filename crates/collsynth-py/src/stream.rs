//! Large texts leave the core in pieces: into a file given by its path (the caller makes it and
//! renames it into place, `fileio.atomic_write`), or through a Python `write(str)` callable
//! (`sys.stdout.write`), never as one string.

use pyo3::prelude::*;
use std::io::{self, Write};

/// Bytes handed to Python at once.
const PIECE: usize = 1 << 16;

/// `fill`'s bytes into the existing file `path` (truncated), through a buffer, with the
/// interpreter released.
pub(crate) fn to_path(
    py: Python<'_>,
    path: std::path::PathBuf,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()> + Send,
) -> PyResult<()> {
    py.detach(|| {
        let file = std::fs::OpenOptions::new().write(true).truncate(true).open(&path)?;
        let mut out = io::BufWriter::with_capacity(PIECE, file);
        fill(&mut out)?;
        out.flush()
    })
    .map_err(PyErr::from)
}

/// `fill`'s bytes (UTF-8) passed to `write` as `str` pieces of about 64 KiB, cut between
/// characters. A Python exception from `write` stops the writer and is raised.
pub(crate) fn to_callable(
    write: Bound<'_, PyAny>,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> PyResult<()> {
    let mut sink = Sink { write, pending: Vec::with_capacity(2 * PIECE), failed: None };
    let done = fill(&mut sink).and_then(|()| sink.pass(true));
    match (sink.failed.take(), done) {
        (Some(e), _) => Err(e),
        (None, r) => r.map_err(PyErr::from),
    }
}

struct Sink<'py> {
    write: Bound<'py, PyAny>,
    pending: Vec<u8>,
    failed: Option<PyErr>,
}

impl Sink<'_> {
    /// Hand the pending bytes up to the last whole character to Python (all of them at the end).
    fn pass(&mut self, end: bool) -> io::Result<()> {
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(e) if e.error_len().is_none() && !end => e.valid_up_to(),
            Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
        };
        if whole == 0 {
            return Ok(());
        }
        let text = std::str::from_utf8(&self.pending[..whole]).expect("checked above");
        if let Err(e) = self.write.call1((text,)) {
            self.failed = Some(e);
            return Err(io::Error::other("the Python writer failed"));
        }
        self.pending.drain(..whole);
        Ok(())
    }
}

impl Write for Sink<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if self.pending.len() >= PIECE {
            self.pass(false)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
