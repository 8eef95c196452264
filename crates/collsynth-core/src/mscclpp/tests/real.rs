//! The real plans of microsoft/mscclpp (tests/data/mscclpp-plans, copied byte for byte),
//! each with its verdict pinned.

use crate::mscclpp::{model::Code, validate};

pub(super) fn plan(name: &str) -> String {
    let path = format!("{}/../../tests/data/mscclpp-plans/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).expect("test data present")
}

#[test]
fn allreduce_two_gpus_rres_is_accepted() {
    let v = validate(&plan("allreduce.json"));
    assert_eq!(v.refusal(), None);
    let p = v.plan.unwrap();
    assert_eq!((p.gpus.len(), p.gpus[0].threadblocks.len(), p.gpus[0].input_chunks), (2, 8, 16));
    assert_eq!(p.gpus[1].threadblocks[3].ops[3].code, Code::ReadReduceSend);
}

#[test]
fn reduce_broad_op_mix_is_accepted() {
    let v = validate(&plan("reduce.json"));
    assert_eq!(v.refusal(), None);
    assert_eq!(v.plan.unwrap().gpus[0].scratch_chunks, 4);
}

#[test]
fn transfer_pack_tbg_packets_and_groups_are_accepted() {
    let v = validate(&plan("transfer_pack_tbg.json"));
    assert_eq!(v.refusal(), None);
    let p = v.plan.unwrap();
    assert_eq!((p.collective.as_str(), p.uses_packets(), p.gpus[1].threadblocks.len()), ("allgather", true, 6));
}

#[test]
fn nvls_pipeline_relaxed_signal_does_not_publish_the_stores() {
    // glres's multimem stores into the peer are followed only by rlxsignal / rlxwait, which
    // order execution but not data (semaphore_device.hpp relaxedSignal): the peer may
    // return before the stores land.
    let v = validate(&plan("reduce_nvls_pipeline.json"));
    assert_eq!(
        v.execution,
        [
            "rank 0 can finish before rank 1 thread block 0 writes its output chunk 1 (no signal reaches rank 0 after it)",
            "rank 1 can finish before rank 0 thread block 0 writes its output chunk 0 (no signal reaches rank 1 after it)",
        ]
    );
    // With the final pair made fencing, the plan is accepted: the sum itself is right.
    let text = fixed_final_signals(&plan("reduce_nvls_pipeline.json"));
    assert_eq!(validate(&text).refusal(), None);
}

/// The plan with its last rlxsignal / rlxwait of every thread block made signal / wait.
fn fixed_final_signals(text: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    for g in v["gpus"].as_array_mut().unwrap() {
        for tb in g["threadblocks"].as_array_mut().unwrap() {
            let ops = tb["ops"].as_array_mut().unwrap();
            for name in ["rlxsignal", "rlxwait"] {
                let last = ops.iter_mut().rev().find(|o| o["name"] == name).unwrap();
                last["name"] = name.trim_start_matches("rlx").into();
            }
        }
    }
    v.to_string()
}

#[test]
fn legacy_plan_is_refused_by_the_current_reader() {
    let v = validate(&plan("legacy-allreduce_packet.json"));
    assert!(v.plan.is_none());
    assert!(v.parse.unwrap().starts_with("a legacy plan (camelCase keys such as inputChunks"));
}
