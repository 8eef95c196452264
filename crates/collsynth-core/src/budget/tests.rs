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
