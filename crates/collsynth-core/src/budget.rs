//! What a call may spend: memory, estimated before the large allocations, against one
//! budget (the CLI's `--memory-budget`), and a cancellation flag that long loops poll so that
//! Ctrl-C stops them within a fraction of a second.
//!
//! An allocation the allocator cannot serve aborts the process (no error, no message), so
//! every structure whose size the input chooses is estimated first and refused above the
//! budget with the estimate in the message. Where no estimate is known before the work (a
//! synthesizer's routes, its flat transfers), [`Counting`] keeps the bytes in use, and the
//! same polls that answer Ctrl-C stop the call once they pass the budget.

use crate::error::{CollsynthError, Result};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// The budget when none is set: half the physical memory, at most 8 GiB (8 GiB where the
/// physical memory cannot be read).
pub const DEFAULT_CAP: u64 = 8 << 30;

/// 0: not set, the default applies.
static BUDGET: AtomicU64 = AtomicU64::new(0);
static CANCELLED: AtomicBool = AtomicBool::new(false);

/// Half the physical memory (`MemTotal` of /proc/meminfo), at most [`DEFAULT_CAP`].
pub fn default_budget() -> u64 {
    static DEFAULT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| {
        let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
        match total_kib {
            Some(kib) if kib > 0 => (kib.saturating_mul(1024) / 2).min(DEFAULT_CAP),
            _ => DEFAULT_CAP,
        }
    })
}

/// The memory budget in bytes now in force.
pub fn memory_budget() -> u64 {
    match BUDGET.load(Ordering::Relaxed) {
        0 => default_budget(),
        b => b,
    }
}

/// Set the budget (`None`: back to the default). At least 1 MiB, so that every small input fits.
pub fn set_memory_budget(bytes: Option<u64>) -> Result<()> {
    match bytes {
        Some(b) if b < 1 << 20 => Err(CollsynthError::bad(format!("--memory-budget {b} bytes is below 1 MiB"))),
        Some(b) => {
            BUDGET.store(b, Ordering::Relaxed);
            Ok(())
        }
        None => {
            BUDGET.store(0, Ordering::Relaxed);
            Ok(())
        }
    }
}

/// Bytes in a readable unit (`1.5 GiB`).
pub fn human(bytes: u128) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Refuse `what` when it needs more than the budget: `count` items of `each` bytes (`None`
/// for a count past every integer).
pub fn check_memory(what: &str, count: Option<u128>, each: u128) -> Result<()> {
    let need = count.and_then(|c| c.checked_mul(each));
    let budget = memory_budget();
    if need.is_none_or(|n| n > u128::from(budget)) {
        let need = need.map_or("more than 2^128 bytes".to_string(), |n| format!("about {}", human(n)));
        return Err(CollsynthError::bad(format!(
            "{what} needs {need} of memory, above the budget of {} (--memory-budget)",
            human(u128::from(budget))
        )));
    }
    Ok(())
}

/// Ask every running loop that polls [`check_cancelled`] to stop (the binding sets it on
/// Ctrl-C; a new call clears it with [`reset_cancelled`]).
pub fn cancel() {
    CANCELLED.store(true, Ordering::Relaxed);
}

pub fn reset_cancelled() {
    CANCELLED.store(false, Ordering::Relaxed);
}

pub fn is_cancelled() -> bool {
    CANCELLED.load(Ordering::Relaxed)
}

/// `Err` once [`cancel`] was called, or once the bytes in use ([`Counting`]) pass the budget:
/// long loops call this every few milliseconds of work.
pub fn check_cancelled() -> Result<()> {
    if is_cancelled() {
        return Err(CollsynthError::Cancelled);
    }
    over_budget(in_use(), memory_budget())
}

/// The refusal of a call that holds `used` bytes under `budget`, if above it.
pub fn over_budget(used: usize, budget: u64) -> Result<()> {
    if used as u64 > budget {
        return Err(CollsynthError::bad(format!(
            "stopped with {} of memory in use, above the budget of {} (--memory-budget)",
            human(used as u128),
            human(u128::from(budget))
        )));
    }
    Ok(())
}

/// Bytes allocated and not yet freed through [`Counting`] (0 where it is not the allocator).
pub fn in_use() -> usize {
    IN_USE.load(Ordering::Relaxed)
}

static IN_USE: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting the bytes in use, so that a call whose size no estimate
/// foresaw is stopped at the budget by its next poll instead of aborting in the allocator.
pub struct Counting;

// SAFETY: every method forwards to `System` with the same arguments; the count is a relaxed
// atomic beside it and never changes what is returned.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            IN_USE.fetch_add(new_size, Ordering::Relaxed);
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[cfg(test)]
mod tests;
