//! Our judge against the runtimes' own parsers: `tests/data/realparse/verdicts.json` holds what
//! msccl-executor-nccl's and RCCL's parser code, built for the host, did with each file of
//! `cases/` (README.md there). A file either runtime refuses, loads corrupted or crashes on
//! must be refused for that runtime; a file it loads faithfully must be accepted, unless one
//! of collsynth's stricter rules below refuses it, each for a stated reason.

use crate::msccl::{validate, Runtime};
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/realparse");

/// (what our first problem says, why we refuse what the parser loads as written).
const STRICTER: &[(&str, &str)] = &[
    ("must be 0 or 1", "hasdep=\"2\" on a nop: the parser never reads a nop's flag; we read every attribute"),
    ("<gpu> element(s), one per rank", "a rank without <gpu> loads as an empty program and never sends"),
    ("must not be negative", "a negative id or count names no rank, block or channel"),
    ("is not an integer", "\"+10\" and \" 10\" read as 10; a generator that writes them has a bug"),
    ("has only", "a dependency on a step that does not exist waits forever"),
    ("a nop must carry a dependency", "a nop exists only to carry a dependency"),
    ("is neither -1 nor a rank", "a peer outside 0..ngpus-1 has no connection"),
    ("id is not a rank", "a <gpu> id beyond ngpus is never loaded"),
    ("at least one GPU is required", "ngpus=\"0\" matches no communicator"),
    ("MAXCHANNELS of", "nchannels outside 1..MAXCHANNELS: setup and the proxy read nChannels channels"),
    ("longer than 255 characters", "a value of 256 characters overflows the parser's value buffer by one byte"),
    ("stores at most 64", "more than MSCCL_MAX_NUM_STEPS steps (s repeated) run nSteps past transmissions[]"),
];

fn verdicts() -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{DIR}/verdicts.json")).expect("verdicts.json");
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

#[test]
fn our_judge_agrees_with_the_runtimes_parsers_on_every_file() {
    let cases = verdicts();
    assert!(cases.len() >= 60, "{} files", cases.len());
    let mut used = vec![0usize; STRICTER.len()];
    let (mut refused, mut faithful) = (0, 0);
    for case in &cases {
        let file = case["file"].as_str().unwrap();
        let bytes = std::fs::read(format!("{DIR}/cases/{file}")).unwrap();
        let v = validate(&String::from_utf8_lossy(&bytes), None).unwrap();
        for (real, runtime) in [("azure", Runtime::MscclNccl), ("rccl", Runtime::Rccl)] {
            let verdict = case[real]["verdict"].as_str().unwrap();
            let ours = &v.runtimes.iter().find(|(r, _)| *r == runtime).unwrap().1;
            if verdict != "accepted-faithful" {
                refused += 1;
                assert!(!ours.is_empty(), "{file}: {real} {verdict} ({}), we accept it", case[real]["first_diff"]);
                continue;
            }
            faithful += 1;
            if let Some(first) = ours.first() {
                let k = STRICTER.iter().position(|(says, _)| first.contains(says));
                let k = k.unwrap_or_else(|| panic!("{file}: {real} loads it faithfully, we refuse: {first}"));
                used[k] += 1;
            }
        }
    }
    assert!((refused, faithful) == (126, 112), "verdicts moved: {refused} refused, {faithful} faithful");
    for ((says, _), n) in STRICTER.iter().zip(used) {
        assert!(n > 0, "no file needs the stricter rule '{says}'");
    }
}

#[test]
fn corrupted_files_are_refused_naming_the_stored_field() {
    for (file, runtime, says) in [
        ("limit-depid-int8-outside.xml", Runtime::MscclNccl, "is stored as -128 by msccl-nccl (int8_t dependentBid"),
        ("limit-deps-int16-outside.xml", Runtime::Rccl, "is stored as -32768 by rccl (int16_t dependentStep"),
        ("limit-peer-int16-wrap-65536.xml", Runtime::MscclNccl, "is stored as 1 by msccl-nccl (int16_t sendPeer"),
        ("selftest-int16.xml", Runtime::Rccl, "dstoff=\"39999\" is stored as -25537"),
        ("selftest-octal.xml", Runtime::MscclNccl, "depid=\"010\" of node step is read as 8"),
        ("limit-tbs-rccl-outside.xml", Runtime::Rccl, "65 thread blocks, rccl allows at most 64"),
        ("selftest-chan-eq-MAXCHANNELS32.xml", Runtime::MscclNccl, "(MAXCHANNELS of msccl-nccl)"),
        ("hostile-step-child.xml", Runtime::Rccl, "crashes on any element there"),
        // The demo's allreduce as written before runtime targets (176 blocks per rank).
        ("ours-dgx-a100x2-allreduce-forestcoll-unpacked.xml", Runtime::MscclNccl, "(int8_t dependentBid, at most 127)"),
        (
            "ours-dgx-a100x2-allreduce-forestcoll-unpacked.xml",
            Runtime::Rccl,
            "176 thread blocks, rccl allows at most 64",
        ),
    ] {
        let text = std::fs::read_to_string(format!("{DIR}/cases/{file}")).unwrap();
        let v = validate(&text, None).unwrap();
        let ours = &v.runtimes.iter().find(|(r, _)| *r == runtime).unwrap().1;
        assert!(ours.iter().any(|p| p.contains(says)), "{file}: {ours:?}");
    }
}
