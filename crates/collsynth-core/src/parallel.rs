//! How many threads the core's parallel parts use: one policy for all of them (BFB's plan,
//! TACOS's matching, the finder's sweep, the circulant check). The cores are
//! `available_parallelism`, asked once; a part may cap them, and a caller that already keeps
//! every core busy runs its work under [`single_threaded`]. There is no environment override.
//! Every parallel part gives the same result for any thread count.

use std::ops::Range;

/// `available_parallelism`, asked once: on Linux every call reads the cgroup's CPU quota
/// from files, which cost more than the small profiles a finder sweep runs by thousands.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |c| c.get()))
}

thread_local! {
    /// Set on a thread that is already one of several workers sharing the cores.
    static ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The threads a parallel part may start: the cores, at most `cap`, at least 1; 1 on a
/// thread running under [`single_threaded`].
pub fn threads(cap: usize) -> usize {
    if ALONE.get() {
        1
    } else {
        cores().min(cap).max(1)
    }
}

/// A thread count asked for by a caller: `0` means "the policy's" ([`threads`] uncapped).
pub fn requested(threads_asked: usize) -> usize {
    if threads_asked == 0 {
        threads(usize::MAX)
    } else {
        threads_asked
    }
}

/// `f()` with the parallel parts on this thread alone, for callers that keep every core busy
/// themselves (a finder sweep's workers): more threads per plan would only compete for the
/// same cores, at a spawn and a join per level of every small profile. Results are the same
/// either way.
pub fn single_threaded<T>(f: impl FnOnce() -> T) -> T {
    /// Restores the flag however `f` ends.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ALONE.set(self.0);
        }
    }
    let _restore = Restore(ALONE.replace(true));
    f()
}

/// `(there(), here())`: `there` on a scoped thread while `here` runs on this one when
/// `side_by_side`, else `here` then `there` on this thread. A panic in either comes back
/// here as it was.
pub fn join<A: Send, B>(side_by_side: bool, there: impl FnOnce() -> A + Send, here: impl FnOnce() -> B) -> (A, B) {
    if !side_by_side {
        let b = here();
        return (there(), b);
    }
    std::thread::scope(|scope| {
        let a = scope.spawn(there);
        let b = here();
        (a.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), b)
    })
}

/// `f` on contiguous ranges covering `0..n`, on [`threads`]`(n / min_per_thread)` scoped
/// threads (one thread for small n, or under [`single_threaded`]); results in range order,
/// so the output never depends on the number of threads as long as `f` is a function of its
/// range's items.
pub fn in_ranges<T: Send>(n: usize, min_per_thread: usize, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    let threads = threads(n / min_per_thread);
    if threads == 1 {
        return vec![f(0..n)];
    }
    let chunk = n.div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            (0..threads).map(|i| scope.spawn(move || f(i * chunk..((i + 1) * chunk).min(n)))).collect();
        handles.into_iter().map(|h| h.join().expect("a worker thread panicked")).collect()
    })
}

/// `f(i)` for every i in `0..n`, on up to [`threads`]`(cap)` scoped threads that take the next
/// index as they finish one (items of very different costs keep every thread busy); each
/// thread runs under [`single_threaded`]. Results in index order, so the output never depends
/// on the number of threads as long as `f` is a function of its index.
pub fn each<T: Send>(n: usize, cap: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let workers = threads(cap.min(n));
    if workers <= 1 {
        return (0..n).map(f).collect();
    }
    let slots: Vec<std::sync::Mutex<Option<T>>> = (0..n).map(|_| std::sync::Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                single_threaded(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let out = f(i);
                    *slots[i].lock().expect("a worker thread panicked") = Some(out);
                })
            });
        }
    });
    slots.into_iter().map(|s| s.into_inner().expect("a worker thread panicked").expect("every index ran")).collect()
}

#[cfg(test)]
mod tests;
