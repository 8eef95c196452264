//! Mutations of a good plan (ours and a real one) are refused, each for its reason.

use super::real::plan;
use crate::api;
use crate::ir::Collective;
use crate::mscclpp::{export, validate};
use crate::rational::rat;
use crate::synth::Request;
use crate::zoo::from_spec;
use serde_json::Value;

pub(super) fn ours(spec: &str, c: Collective) -> Value {
    let topo = from_spec(spec).unwrap();
    let done = api::synthesize(&topo, c, "ring", &Request::default(), rat(1 << 20)).unwrap();
    let e = export(&done.schedule, &done.topology, Some(1)).unwrap();
    serde_json::from_str(&e.json).unwrap()
}

/// Every op of rank `r`'s thread blocks, as (tb, op index, op).
fn ops(v: &Value, r: usize) -> Vec<(usize, usize, Value)> {
    let mut out = Vec::new();
    for (t, tb) in v["gpus"][r]["threadblocks"].as_array().unwrap().iter().enumerate() {
        for (k, o) in tb["ops"].as_array().unwrap().iter().enumerate() {
            out.push((t, k, o.clone()));
        }
    }
    out
}

fn refusal(v: &Value) -> String {
    validate(&v.to_string()).refusal().expect("the mutant is refused")
}

#[test]
fn the_unmutated_plans_are_accepted() {
    for c in [Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce] {
        assert_eq!(validate(&ours("ring:4", c).to_string()).refusal(), None);
    }
}

#[test]
fn dropping_a_signal_deadlocks() {
    let mut v = ours("ring:4", Collective::Allreduce);
    let (t, k, _) = ops(&v, 1).into_iter().find(|(_, _, o)| o["name"] == "signal").unwrap();
    v["gpus"][1]["threadblocks"][t]["ops"].as_array_mut().unwrap().remove(k);
    assert!(refusal(&v).starts_with("deadlock: rank "), "{}", refusal(&v));
    assert!(refusal(&v).contains("waits on its memory channel from rank"));
}

#[test]
fn dropping_a_wait_races_or_finishes_early() {
    let mut v = ours("ring:4", Collective::Allgather);
    let (t, k, _) = ops(&v, 2).into_iter().find(|(_, _, o)| o["name"] == "wait").unwrap();
    v["gpus"][2]["threadblocks"][t]["ops"].as_array_mut().unwrap().remove(k);
    let why = refusal(&v);
    assert!(why.starts_with("race:") || why.contains("can finish before"), "{why}");
}

#[test]
fn dropping_the_nop_before_a_signal_is_a_race() {
    let mut v = ours("ring:4", Collective::ReduceScatter);
    let list = ops(&v, 0);
    let (t, k, _) = list.iter().find(|(_, _, o)| o["name"] == "signal").cloned().unwrap();
    assert_eq!(list.iter().find(|(tt, kk, _)| *tt == t && *kk == k - 1).unwrap().2["name"], "nop");
    v["gpus"][0]["threadblocks"][t]["ops"].as_array_mut().unwrap().remove(k - 1);
    assert!(refusal(&v).starts_with("race: rank 1 thread block 0 re reads rank 1 s chunk"), "{}", refusal(&v));
}

#[test]
fn swapping_a_buffer_is_caught() {
    // The put of rank 0's first send reads the output (never written there) instead of input.
    let mut v = ours("ring:4", Collective::Allreduce);
    let (t, k, _) = ops(&v, 0).into_iter().find(|(_, _, o)| o["name"] == "put").unwrap();
    v["gpus"][0]["threadblocks"][t]["ops"][k]["src_buff"][0]["type"] = "o".into();
    assert_eq!(refusal(&v), "rank 1 thread block 0 re reduces data that was never written");
}

#[test]
fn a_wrong_chunk_is_caught() {
    let mut v = ours("ring:4", Collective::Allreduce);
    let (t, k, o) = ops(&v, 0).into_iter().find(|(_, _, o)| o["name"] == "put").unwrap();
    let idx = o["src_buff"][0]["index"].as_u64().unwrap();
    v["gpus"][0]["threadblocks"][t]["ops"][k]["src_buff"][0]["index"] = ((idx + 1) % 4).into();
    assert!(refusal(&v).contains("(wrong chunk)"), "{}", refusal(&v));
}

#[test]
fn a_reduction_counted_twice_is_caught() {
    // In the real allreduce, GPU1's first thread block also reduces chunk 0 (GPU0's job).
    let mut v: Value = serde_json::from_str(&plan("allreduce.json")).unwrap();
    let rres = &mut v["gpus"][1]["threadblocks"][0]["ops"][3];
    for list in ["src_buff", "dst_buff"] {
        for r in rres[list].as_array_mut().unwrap() {
            r["index"] = 0.into();
        }
    }
    let why = refusal(&v);
    assert!(why.starts_with("race:") || why.contains("a rank counted twice"), "{why}");
}

#[test]
fn structural_errors_are_named() {
    let base = ours("ring:4", Collective::Allgather);
    type Mutation = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Mutation, &str)> = vec![
        (Box::new(|v| v["gpus"][1]["id"] = 3.into()), "gpus[1]: GPU rank does not match (id 3)"),
        (
            Box::new(|v| v["gpus"][0]["threadblocks"][0]["ops"][0]["name"] = "send".into()),
            "Invalid operation type: send",
        ),
        (Box::new(|v| v["gpus"][0]["output_chunks"] = 5.into()), "Size per chunks inconsistent"),
        (Box::new(|v| v["gpus"][0]["input_chunks"] = "1".into()), "expected a whole number"),
        (Box::new(|v| v["gpus"][0]["input_chunks"] = 1e30.into()), "expected a whole number"),
        (Box::new(|v| v["gpus"][0]["channels"][0]["channel_type"] = "nvlink".into()), "Invalid channel type 'nvlink'"),
        (Box::new(|v| v["gpus"][0]["remote_buffers"][0]["rank"] = 99.into()), "rank 99 (ranks are 0..4"),
    ];
    for (mutate, want) in cases {
        let mut v = base.clone();
        mutate(&mut v);
        let why = refusal(&v);
        assert!(why.contains(want), "{why} (wanted {want})");
    }
}

#[test]
fn too_many_operations_per_thread_block_are_refused() {
    let mut v = ours("ring:4", Collective::Allgather);
    let ops = v["gpus"][0]["threadblocks"][0]["ops"].as_array_mut().unwrap();
    ops.extend(std::iter::repeat_n(serde_json::json!({"name": "nop"}), 64));
    assert!(refusal(&v).contains("operations (the executor allows 64 per thread block)"));
}
