use super::Transport;
use crate::flow::Cap;
use crate::rational::Rat;
use crate::synth::bfb::solve::{solve, Subproblem};
use proptest::prelude::*;

fn problem(classes: &[(u64, Cap)], caps: &[Cap]) -> Subproblem {
    Subproblem::of_classes(caps.to_vec(), classes)
}

/// The answer at `floor` against the solver: Ok iff U* <= floor, else a ratio in
/// (floor, U*].
fn check(classes: &[(u64, Cap)], caps: &[Cap], floor: Rat) -> Result<(), TestCaseError> {
    let optimum = solve(&problem(classes, caps)).optimum;
    match Transport::default().fits(classes, caps, floor) {
        Ok(()) => prop_assert!(optimum <= floor, "fits under {floor}, U* = {optimum}"),
        Err(ratio) => prop_assert!(floor < ratio && ratio <= optimum, "{ratio} vs floor {floor}, U* = {optimum}"),
    }
    Ok(())
}

/// Three senders of capacity 1, three sources each on two of them: the greedy puts the
/// first two on senders 1 and 2 and leaves the third short; one augmenting path (moving
/// the first source to sender 0) completes the split at U = 1. One source more does not
/// fit, and the violation is every class: ratio 4/3.
#[test]
fn augmenting_paths_complete_what_the_greedy_leaves() {
    let classes = [(0b011, 1), (0b101, 1), (0b110, 1)];
    assert_eq!(Transport::default().fits(&classes, &[1, 1, 1], Rat::from_integer(1)), Ok(()));
    let more = [(0b011, 1), (0b101, 1), (0b110, 2)];
    assert_eq!(Transport::default().fits(&more, &[1, 1, 1], Rat::from_integer(1)), Err(Rat::new(4, 3)));
    // A chain: the path moves two other sources one sender along each.
    let chain = [(0b0011, 2), (0b0110, 2), (0b1100, 2), (0b0010, 1)];
    assert_eq!(Transport::default().fits(&chain, &[2, 2, 2, 2], Rat::new(7, 8)), Ok(()));
    assert!(Transport::default().fits(&chain, &[2, 2, 2, 2], Rat::new(6, 8)).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// Random problems (up to 12 senders), floors at, around and far from U*.
    #[test]
    fn exact_against_the_solver(
        caps in proptest::collection::vec(1i128..5, 1..12),
        classes in proptest::collection::vec((any::<u64>(), 1i128..9), 1..14),
        num in 0i128..12, den in 1i128..6, near in 0usize..4,
    ) {
        let all = (1u64 << caps.len()) - 1;
        let classes: Vec<(u64, Cap)> = classes.into_iter().map(|(m, c)| (m & all, c)).filter(|c| c.0 != 0).collect();
        prop_assume!(!classes.is_empty());
        let optimum = solve(&problem(&classes, &caps)).optimum;
        let floor = match near {
            0 => optimum,
            1 => optimum - Rat::new(1, 97),
            2 => optimum + Rat::new(1, 97),
            _ => Rat::new(num, den),
        };
        check(&classes, &caps, floor)?;
    }

    /// Wide problems: up to 64 senders, sparse sender sets (what level sets give).
    #[test]
    fn wide_problems(
        senders in 8usize..=64,
        picks in proptest::collection::vec((proptest::collection::vec(0usize..64, 1..4), 1i128..20), 1..60),
        caps in proptest::collection::vec(1i128..4, 64),
        below in any::<bool>(),
    ) {
        let classes: Vec<(u64, Cap)> =
            picks.iter().map(|(ks, n)| (ks.iter().fold(0u64, |m, &k| m | 1 << (k % senders)), *n)).collect();
        let caps = &caps[..senders];
        let optimum = solve(&problem(&classes, caps)).optimum;
        let floor = if below { optimum - Rat::new(1, 1000) } else { optimum };
        check(&classes, caps, floor)?;
    }
}
