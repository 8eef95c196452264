//! The time of a program as written: closed forms on two ranks, and the written XML read
//! back gives the exporter's own judged numbers.

use super::*;
use crate::api;
use crate::ir::Collective;
use crate::msccl::model::{Program, Protocol};
use crate::topology::TopologyBuilder;

/// a <-> b at 100 GB/s (10^5 bytes per µs), no latency, generic classes (no overhead).
fn pair() -> Topology {
    let mut b = TopologyBuilder::new("pair");
    let (x, y) = (b.compute("a", None), b.compute("b", None));
    b.link(x, y, Rat::from_integer(100), 0.0);
    b.link(y, x, Rat::from_integer(100), 0.0);
    b.build().unwrap()
}

/// The XML of a two-rank allgather: each rank sends its half in `steps` steps from one
/// block, and receives the other half in a second block.
fn allgather_xml(steps: usize) -> String {
    let n = 2 * steps;
    let mut gpus = String::new();
    for g in 0..2 {
        let peer = 1 - g;
        let mut send = String::new();
        let mut recv = String::new();
        for j in 0..steps {
            let (mine, theirs) = (g * steps + j, peer * steps + j);
            send += &format!(
                r#"<step s="{j}" type="s" srcbuf="o" srcoff="{mine}" dstbuf="o" dstoff="{mine}" cnt="1" depid="-1" deps="-1" hasdep="0"/>"#
            );
            recv += &format!(
                r#"<step s="{j}" type="r" srcbuf="o" srcoff="{theirs}" dstbuf="o" dstoff="{theirs}" cnt="1" depid="-1" deps="-1" hasdep="0"/>"#
            );
        }
        gpus += &format!(
            r#"<gpu id="{g}" i_chunks="{steps}" o_chunks="{n}" s_chunks="0"><tb id="0" send="{peer}" recv="-1" chan="0">{send}</tb><tb id="1" send="-1" recv="{peer}" chan="0">{recv}</tb></gpu>"#
        );
    }
    format!(
        r#"<algo name="t" proto="Simple" nchannels="1" nchunksperloop="{n}" ngpus="2" coll="allgather" inplace="0" outofplace="1" minBytes="0" maxBytes="0">{gpus}</algo>"#
    )
}

fn program(xml: &str) -> Program {
    crate::msccl::parse::parse(xml, crate::msccl::Runtime::MscclNccl).unwrap()
}

#[test]
fn a_block_of_sends_streams_at_the_links_rate() {
    // 4 MB of output, each rank sends its 2 MB half in 2 steps of 1 MB (one Simple slice
    // each) from one block: 2 x 10 µs back to back on its link, and Simple's base latency.
    let topo = pair();
    let p = program(&allgather_xml(2));
    let (s, plan) = as_schedule(&p, &topo).unwrap();
    assert_eq!((s.transfers.len(), plan.blocks.len()), (4, 4));
    assert!(s.transfers.iter().all(|t| t.route.len() == 1 && t.op == Op::Copy && t.after.is_empty()));
    let t = time(&p, &topo, 4_000_000).unwrap();
    assert_eq!(t.protocol, Protocol::Simple);
    assert!((t.time_us - (20.0 + 8.4)).abs() < 1e-9, "{}", t.time_us);
}

#[test]
fn a_dependency_on_another_block_waits_for_its_receive() {
    // Rank 1 forwards nothing, but its send block waits (depid) for its receive block's
    // first step: rank 1's two sends start when rank 0's first message has arrived (10 µs),
    // and end 20 µs later.
    let topo = pair();
    let xml = allgather_xml(2).replacen(
        r#"<step s="0" type="s" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1""#,
        r#"<step s="0" type="s" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="1" deps="0""#,
        1,
    );
    assert_ne!(xml, allgather_xml(2));
    let p = program(&xml);
    let t = time(&p, &topo, 4_000_000).unwrap();
    assert!((t.time_us - (30.0 + 8.4)).abs() < 1e-9, "{}", t.time_us);
}

#[test]
fn sends_without_their_receives_are_refused() {
    let topo = pair();
    let xml = allgather_xml(2);
    let cut = xml.replacen(
        r#"<step s="1" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>"#,
        "",
        1,
    );
    assert_ne!(cut, xml);
    let err = as_schedule(&program(&cut), &topo).unwrap_err().to_string();
    assert!(err.contains("do not pair up"), "{err}");
    let three = crate::zoo::from_spec("ring:3").unwrap();
    assert!(as_schedule(&program(&xml), &three).unwrap_err().to_string().contains("2 ranks"));
}

#[test]
fn the_written_xml_read_back_gives_the_exporters_numbers() {
    // What `synth --size S --format msccl-xml` prints is `verify FILE.xml --topology T
    // --size S`'s: both time the program as written.
    for (spec, c, alg) in [
        ("hgx-h100:1", Collective::Allreduce, "auto"),
        ("ring:4", Collective::Allgather, "ring"),
        ("dgx1", Collective::ReduceScatter, "forestcoll"),
    ] {
        let topo = crate::zoo::from_spec(spec).unwrap();
        let size = Rat::from_integer(64 << 20);
        let done = api::synthesize(&topo, c, alg, &Default::default(), size).unwrap();
        let moved = api::moved_size(c, topo.n_ranks(), size).moved.to_integer() as u64;
        let o = crate::msccl::lower::Options::default();
        let x = api::export_msccl_at(&done.schedule, &topo, &o, true, true, moved).unwrap();
        let judged = x.judged.expect("judged");
        let v = crate::msccl::validate(&x.exported.xml, Some(&topo)).unwrap();
        assert!(v.ok(), "{spec}");
        let again = api::judge_program_at(v.program.as_ref().unwrap(), &topo, Some(size)).unwrap();
        assert_eq!(
            (again.time_us, again.algbw_gbps, again.busbw_gbps, again.protocol, again.bytes),
            (judged.time_us, judged.algbw_gbps, judged.busbw_gbps, judged.protocol, judged.bytes),
            "{spec}"
        );
    }
}
