use super::*;

#[test]
fn estimates_above_the_budget_are_refused_with_both_figures() {
    let budget = memory_budget();
    assert!(check_memory("a table", Some(1), u128::from(budget)).is_ok());
    let err = check_memory("a table", Some(2), u128::from(budget)).unwrap_err();
    assert!(matches!(err, CollsynthError::BadInput(_)));
    assert!(err.message().starts_with("a table needs about "), "{err}");
    assert!(err.message().contains("(--memory-budget)"), "{err}");
    // a count past every integer is refused too, never wrapped
    let err = check_memory("a table", None, 8).unwrap_err();
    assert!(err.message().contains("more than 2^128 bytes"), "{err}");
    let err = check_memory("a table", Some(u128::MAX), 2).unwrap_err();
    assert!(err.message().contains("more than 2^128 bytes"), "{err}");
}

#[test]
fn the_default_is_at_most_8_gib_and_a_tiny_budget_is_refused() {
    assert!(default_budget() <= DEFAULT_CAP);
    assert!(default_budget() >= 1 << 20);
    assert!(set_memory_budget(Some(1000)).is_err());
}

#[test]
fn human_sizes() {
    assert_eq!(human(512), "512 B");
    assert_eq!(human(1536), "1.5 KiB");
    assert_eq!(human(8 << 30), "8.0 GiB");
    assert_eq!(human(1 << 63), "8.0 EiB");
}

#[test]
fn the_bytes_in_use_are_counted_and_a_call_past_the_budget_is_stopped() {
    // 1 GiB zeroed: the kernel maps it lazily, so the test costs nothing; other tests running
    // beside this one allocate and free far less than the margin.
    let before = in_use();
    let block: Vec<u8> = vec![0; 1 << 30];
    assert!(in_use() >= before + (3 << 28), "{} then {}", before, in_use());
    drop(block);
    assert!(in_use() < before + (1 << 28));
    assert!(over_budget(1 << 20, 1 << 20).is_ok());
    let err = over_budget((1 << 20) + 1, 1 << 20).unwrap_err();
    assert!(matches!(err, CollsynthError::BadInput(_)));
    assert_eq!(err.message(), "stopped with 1.0 MiB of memory in use, above the budget of 1.0 MiB (--memory-budget)");
}
