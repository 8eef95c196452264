use super::*;

/// Items of very different costs (the first is the slowest) come back in index order, the
/// same as one thread gives, and every index runs once.
#[test]
fn each_returns_results_in_index_order() {
    let runs = std::sync::atomic::AtomicUsize::new(0);
    let f = |i: usize| {
        runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // a busy loop whose length falls with i: workers finish out of order
        (0..(200 - i) * 1000).fold(i as u64, |a, x| a.wrapping_mul(31).wrapping_add(x as u64))
    };
    let many = each(200, usize::MAX, f);
    assert_eq!(runs.load(std::sync::atomic::Ordering::Relaxed), 200);
    let one = single_threaded(|| each(200, usize::MAX, f));
    let plain: Vec<u64> = (0..200).map(f).collect();
    assert_eq!(many, plain);
    assert_eq!(one, plain);
    assert!(each(0, usize::MAX, f).is_empty());
}

/// A worker runs its items alone: a parallel part inside one does not start threads of its
/// own on top of the workers'.
#[test]
fn each_runs_its_items_single_threaded() {
    assert_eq!(each(4, usize::MAX, |_| threads(usize::MAX)), [1; 4]);
}
