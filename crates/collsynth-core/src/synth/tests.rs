//! Every registered algorithm x every collective it declares, on random valid topologies
//! (`crate::testing::arb_topology`: directed, asymmetric, heterogeneous, with and without
//! switches, several boxes): the result is a verified schedule that the cost model
//! evaluates, or a one-line "does not apply" (`Infeasible` or `BadInput`), never an internal
//! error or a panic.

use crate::api;
use crate::error::CollsynthError;
use crate::ir::Collective;
use crate::rational::Rat;
use crate::synth::{self, Request};
use crate::testing::{arb_topology, describe};
use crate::topology::Topology;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// What one (algorithm, collective, topology) gave.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Verified,
    DoesNotApply(String),
}

/// Synthesize (verified inside `api::synthesize`), then bound and evaluate like `synth`
/// does; a panic anywhere is caught and reported.
fn outcome(t: &Topology, alg: &str, c: Collective, root: usize, size: Rat) -> Result<Outcome, String> {
    let run = || -> crate::Result<()> {
        let req = Request { root, ..Default::default() };
        let done = api::synthesize(t, c, alg, &req, size)?;
        let b = api::bounds(&done.topology, c, done.schedule.root)?;
        api::evaluate(&done.schedule, &done.topology, size, 1, &b)?;
        Ok(())
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Err(_) => Err("panicked".into()),
        Ok(Ok(())) => Ok(Outcome::Verified),
        Ok(Err(CollsynthError::Infeasible(m) | CollsynthError::BadInput(m))) if !m.is_empty() && !m.contains('\n') => {
            Ok(Outcome::DoesNotApply(m))
        }
        Ok(Err(e)) => Err(format!("{e:?}")),
    }
}

/// Runs `cases` random topologies with 2..=`max_ranks` ranks through every collective of
/// `alg` (rooted ones from a random root, at a random size from 1 byte to 1 GiB); returns
/// (verified, does-not-apply) counts. The runner is deterministic: every algorithm sees the
/// same topologies, so their bounds (memoized in `api::bounds`; the allreduce LP is most of
/// the cost) are computed once.
/// `REGISTRY_CASES=n` replaces every count and seeds randomly (a longer hunt by hand; CI
/// uses the counts below and a fixed seed).
fn check(alg: &str, cases: u32, max_ranks: usize) -> (usize, usize) {
    let hunt: Option<u32> = std::env::var("REGISTRY_CASES").ok().and_then(|v| v.parse().ok());
    let cases = hunt.unwrap_or(cases);
    let algorithm = synth::find(alg).unwrap();
    let counts = std::cell::RefCell::new((0usize, std::collections::BTreeMap::<String, usize>::new()));
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    let mut runner = match hunt {
        Some(_) => TestRunner::new(config),
        None => TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha)),
    };
    let sizes = [1, 1000, 1 << 20, 3 << 28];
    let strategy = (arb_topology(max_ranks), 0usize..1024, 0..sizes.len());
    let result = runner.run(&strategy, |(t, pick, size)| {
        let size = Rat::from_integer(sizes[size]);
        for &c in algorithm.collectives {
            let root = pick % t.n_ranks();
            let got = outcome(&t, alg, c, root, size).map_err(|e| {
                TestCaseError::fail(format!("{alg} {} root {root} size {size}: {e}\n{}", c.name(), describe(&t)))
            })?;
            let mut counts = counts.borrow_mut();
            match got {
                Outcome::Verified => counts.0 += 1,
                // Tallied by the message without its numbers.
                Outcome::DoesNotApply(m) => {
                    *counts.1.entry(m.replace(|c: char| c.is_ascii_digit(), "")).or_default() += 1
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (ok, reasons) = counts.into_inner();
    let no = reasons.values().sum();
    eprintln!("registry property: {alg}: {cases} topologies (N <= {max_ranks}), {ok} verified, {no} do not apply");
    for (why, k) in reasons {
        eprintln!("  {k} x {why}");
    }
    (ok, no)
}

// Cases per algorithm (every one with N from 2 to 24) keep the whole file to about a minute
// on two cores: most of the time is the allreduce LP of `api::bounds` and ForestColl's
// allreduce, which grow fast with N and links. `REGISTRY_CASES=300` hunts longer.

/// One test per algorithm (they run in parallel): `cases` topologies, N from 2 to 24; each
/// algorithm must verify on some of them.
macro_rules! on_random_topologies {
    ($($test:ident: $alg:literal, $cases:literal;)*) => {
        $(
            #[test]
            fn $test() {
                let (verified, _) = check($alg, $cases, 24);
                assert!(verified > 0, "{}", $alg);
            }
        )*
        /// The algorithms that have a row above.
        const ON_RANDOM_TOPOLOGIES: &[&str] = &[$($alg),*];
    };
}

on_random_topologies! {
    forestcoll_on_random_topologies: "forestcoll", 12;
    tacos_on_random_topologies: "tacos", 16;
    bfb_on_random_topologies: "bfb", 16;
    circulant_on_random_topologies: "circulant", 12;
    ring_on_random_topologies: "ring", 16;
    direct_on_random_topologies: "direct", 16;
    rhd_on_random_topologies: "rhd", 16;
    dbt_on_random_topologies: "dbt", 16;
    nccl_ring_on_random_topologies: "nccl-ring", 16;
    nccl_tree_on_random_topologies: "nccl-tree", 16;
}

/// A registered algorithm without a row above would escape the property test.
#[test]
fn every_algorithm_has_a_random_topology_row() {
    for alg in synth::algorithms() {
        assert!(ON_RANDOM_TOPOLOGIES.contains(&alg.name), "add a row for '{}' to on_random_topologies!", alg.name);
    }
}

/// Every option an algorithm takes has its one line of help in `synth::OPTIONS` (but TACOS's
/// `size`, which the CLI's `--size` fills), and every described option is taken by some algorithm.
#[test]
fn every_option_is_described_once_and_used() {
    let taken: Vec<&str> = synth::algorithms().iter().flat_map(|a| a.options.iter().copied()).collect();
    for name in &taken {
        assert!(*name == "size" || synth::option_help(name).is_some_and(|h| !h.is_empty()), "--{name} has no help");
    }
    for (i, o) in synth::OPTIONS.iter().enumerate() {
        assert!(taken.contains(&o.name), "--{} is taken by no algorithm", o.name);
        assert!(!o.help.contains('\n'), "--{}: help is not one line", o.name);
        assert!(synth::OPTIONS[..i].iter().all(|p| p.name != o.name), "--{} described twice", o.name);
    }
}
