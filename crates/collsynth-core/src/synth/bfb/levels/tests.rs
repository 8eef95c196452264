use super::{disjoint_optimum, share_bound, Scratch};
use crate::flow::Cap;
use crate::synth::bfb::solve::{brute_force, solve, Subproblem};
use proptest::prelude::*;

proptest! {
    /// The refinement's classes equal a per-source count of sender masks, on random bitsets.
    #[test]
    fn refinement_equals_the_per_source_count(
        words in 1usize..4,
        seed in proptest::collection::vec(any::<u64>(), 40),
        senders in 1usize..10,
    ) {
        let at = |i: usize| seed[i % seed.len()].rotate_left(i as u32);
        let sent: Vec<Vec<u64>> = (0..senders).map(|k| (0..words).map(|w| at(k * 7 + w) | at(k + w + 3)).collect()).collect();
        // Only sources some sender has (as in a level: every fresh source has one).
        let fresh: Vec<u64> = (0..words)
            .map(|w| at(w + 11) & sent.iter().fold(0, |acc, s| acc | s[w]))
            .collect();
        let mut a = Scratch::default();
        let flat: Vec<u64> = sent.concat();
        let rows: Vec<usize> = (0..senders).map(|k| k * words).collect();
        a.classes_of(&fresh, &flat, &rows);
        let mut count: std::collections::BTreeMap<u64, Cap> = Default::default();
        for v in (0..64 * words).filter(|&v| fresh[v / 64] >> (v % 64) & 1 == 1) {
            let mask = (0..senders).filter(|&k| sent[k][v / 64] >> (v % 64) & 1 == 1).fold(0u64, |m, k| m | 1 << k);
            *count.entry(mask).or_default() += 1;
        }
        prop_assert_eq!(a.classes, count.into_iter().collect::<Vec<_>>());
    }

    /// The senders' largest share bounds the solver's optimum from above.
    #[test]
    fn shares_bound_the_optimum(
        caps in proptest::collection::vec(1i128..4, 1..8),
        classes in proptest::collection::vec((any::<u64>(), 1i128..9), 1..8),
    ) {
        let all = (1u64 << caps.len()) - 1;
        let classes: Vec<(u64, Cap)> = classes.into_iter().map(|(m, c)| (m & all, c)).filter(|c| c.0 != 0).collect();
        prop_assume!(!classes.is_empty());
        let p = Subproblem::of_classes(caps.clone(), &classes);
        prop_assert!(solve(&p).optimum <= share_bound(&classes, |k| caps[k]));
    }

    /// The closed form of disjoint classes equals the solver (and brute force) wherever it
    /// answers, and answers exactly when the sender sets are pairwise disjoint.
    #[test]
    fn disjoint_classes_match_the_solver(
        caps in proptest::collection::vec(1i128..6, 1..12),
        owners in proptest::collection::vec(0usize..6, 12),
        counts in proptest::collection::vec(1i128..9, 6),
        meet in any::<bool>(),
    ) {
        // Class j: the senders j owns (disjoint), plus sender 0 in every class if `meet`.
        let classes: Vec<(u64, Cap)> = (0..6)
            .map(|j| {
                let own = (0..caps.len()).filter(|&k| owners[k] == j).fold(0u64, |m, k| m | 1 << k);
                (if meet && own != 0 { own | 1 } else { own }, counts[j])
            })
            .filter(|&(m, _)| m != 0)
            .collect();
        let union = classes.iter().fold(0, |u, c| u | c.0);
        let disjoint = classes.iter().map(|c| c.0.count_ones()).sum::<u32>() == union.count_ones();
        let got = disjoint_optimum(&classes, |k| caps[k]);
        prop_assert_eq!(got.is_some(), disjoint);
        if let Some(optimum) = got {
            let p = Subproblem::of_classes(caps.clone(), &classes);
            prop_assert_eq!(optimum, solve(&p).optimum);
            prop_assert_eq!(optimum, brute_force(&p));
        }
    }
}
