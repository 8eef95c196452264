use super::*;

#[test]
fn deterministic_and_in_range() {
    let (mut a, mut b) = (Rng::new(7), Rng::new(7));
    for n in 1..200 {
        let x = a.below(n);
        assert_eq!(x, b.below(n));
        assert!(x < n);
    }
    assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
}
