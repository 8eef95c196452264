//! A progress counter for long calls, polled by a bar from another thread (the Python layer
//! releases the GIL while the call runs). Relaxed atomics: a poll may see `done` and `total`
//! from slightly different moments, which a bar does not mind.

use std::sync::atomic::{AtomicU64, Ordering};

/// `done` out of `total` units of one running call (one global counter per kind of call, so
/// concurrent calls of the same kind mix their counts).
pub struct Progress {
    done: AtomicU64,
    total: AtomicU64,
}

impl Progress {
    pub const fn new() -> Progress {
        Progress { done: AtomicU64::new(0), total: AtomicU64::new(0) }
    }

    /// `(done, total)`; total 0 when nothing has started.
    pub fn get(&self) -> (u64, u64) {
        (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed))
    }

    /// A new call of `total` units: nothing done yet.
    pub fn start(&self, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    pub fn add(&self, amount: u64) {
        self.done.fetch_add(amount, Ordering::Relaxed);
    }
}

impl Default for Progress {
    fn default() -> Progress {
        Progress::new()
    }
}
