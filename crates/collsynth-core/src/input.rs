//! Reading an input file: every kind has a cap, and reading stops one byte past it, so
//! `/dev/zero`, `/dev/urandom` or a runaway pipe costs at most the cap, never all memory.

use crate::error::{CollsynthError, Result};
use std::io::Read;
use std::path::Path;

/// The largest NCCL / RCCL topology dump read (a full 16-GPU RCCL dump is about 20 kB).
pub const NCCL_XML_BYTES: u64 = 4 << 20;

/// What a file is read as; each kind has its own cap ([`Kind::cap`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A schedule file (`collsynth-schedule/1` or `/2`), or anything a schedule command takes
    /// that is JSON: an MSCCL++ plan, an executor program.
    Schedule,
    /// An MSCCL program (XML).
    MscclXml,
    /// A topology file (JSON).
    Topology,
    /// An NCCL / RCCL topology dump (XML).
    NcclXml,
}

impl Kind {
    /// Every kind with its name, as the binding and the messages spell it.
    pub const ALL: [(Kind, &'static str); 4] = [
        (Kind::Schedule, "schedule JSON"),
        (Kind::MscclXml, "MSCCL XML"),
        (Kind::Topology, "topology JSON"),
        (Kind::NcclXml, "NCCL topology XML"),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(k, _)| *k == self).map_or("input", |(_, n)| n)
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(k, _)| *k)
    }

    /// The most bytes read. A flat schedule at the largest scale we write is a few hundred
    /// MiB; the NCCL dump's cap is its reader's too (`import::xml::MAX_BYTES`).
    pub fn cap(self) -> u64 {
        match self {
            Kind::Schedule => 1 << 30,
            Kind::MscclXml => 256 << 20,
            Kind::Topology => 256 << 20,
            Kind::NcclXml => NCCL_XML_BYTES,
        }
    }
}

/// `n` bytes as the messages show a cap: `4 MiB`, `1 GiB`.
fn shown(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n => format!("{n} bytes"),
    }
}

/// The text of the file at `path`, read as `kind`: BadInput naming the file when it cannot be
/// read, is not UTF-8, or holds more than the kind's cap (nothing past the cap is read).
pub fn read(path: &Path, kind: Kind) -> Result<String> {
    let shown_path = path.display();
    let fail = |e: std::io::Error| CollsynthError::bad(format!("{shown_path}: cannot read file: {}", io_reason(&e)));
    if path.is_dir() {
        return Err(CollsynthError::bad(format!("{shown_path}: cannot read file: is a directory")));
    }
    let cap = kind.cap();
    let fifo = std::fs::metadata(path).is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()));
    let bytes = if fifo {
        read_fifo(path, cap, &fail)?
    } else {
        let mut bytes = Vec::new();
        std::fs::File::open(path).map_err(fail)?.take(cap + 1).read_to_end(&mut bytes).map_err(fail)?;
        bytes
    };
    if bytes.len() as u64 > cap {
        return Err(CollsynthError::bad(format!(
            "{shown_path}: larger than the {} read for {} {} (stopped reading there)",
            shown(cap),
            if matches!(kind, Kind::MscclXml | Kind::NcclXml) { "an" } else { "a" },
            kind.name()
        )));
    }
    String::from_utf8(bytes).map_err(|_| CollsynthError::bad(format!("{shown_path}: cannot read file: not UTF-8 text")))
}

/// A FIFO's bytes, up to `cap + 1`. Opened without blocking: with no writer that reads
/// nothing at once and is refused (as a FIFO that nothing reads is refused as an output),
/// where a blocking open would wait forever; while a writer is slow, Ctrl-C is polled.
fn read_fifo(path: &Path, cap: u64, fail: &dyn Fn(std::io::Error) -> CollsynthError) -> Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(fail)?;
    let (mut bytes, mut buf, mut heard) = (Vec::new(), vec![0u8; 1 << 16], false);
    while bytes.len() as u64 <= cap {
        match file.read(&mut buf) {
            Ok(0) if !heard => {
                return Err(CollsynthError::bad(format!(
                    "{}: cannot read file: it is a FIFO that nothing writes (not read)",
                    path.display()
                )))
            }
            Ok(0) => break,
            Ok(n) => {
                heard = true;
                bytes.extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                heard = true; // a writer holds it open: wait for its bytes
                crate::budget::check_cancelled()?;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(fail(e)),
        }
    }
    Ok(bytes)
}

/// The OS's reason without Rust's ` (os error N)` suffix, as Python's `strerror` shows it.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests;
