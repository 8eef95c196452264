//! The plan compiler on hand-built programs (aliasing per mode, declared chunk counts, scratch,
//! refusals) and, as an oracle, a numeric run of the compiled plans of every exported program:
//! each rank runs its op list in order with blocking receives, and the buffers must end as the
//! collective requires.

use super::read::{accepted, refusal, Format};
use super::*;
use crate::api;
use crate::msccl::{export, lower, validate, Runtime};
use crate::rational::rat;
use crate::synth::{self, Request};
use crate::zoo::from_spec;
use std::collections::VecDeque;

/// A step line: `step(s, type, src, dst, cnt, dep)` with src/dst as ("i", 0).
fn step(s: usize, ty: &str, src: (&str, i64), dst: (&str, i64), cnt: usize, dep: (i64, i64), hasdep: bool) -> String {
    format!(
        "      <step s=\"{s}\" type=\"{ty}\" srcbuf=\"{}\" srcoff=\"{}\" dstbuf=\"{}\" dstoff=\"{}\" cnt=\"{cnt}\" depid=\"{}\" deps=\"{}\" hasdep=\"{}\"/>\n",
        src.0, src.1, dst.0, dst.1, dep.0, dep.1, hasdep as u8
    )
}

fn tb(id: usize, send: i64, recv: i64, chan: usize, steps: &[String]) -> String {
    format!("    <tb id=\"{id}\" send=\"{send}\" recv=\"{recv}\" chan=\"{chan}\">\n{}    </tb>\n", steps.concat())
}

fn gpu(id: usize, chunks: (usize, usize, usize), tbs: &[String]) -> String {
    format!(
        "  <gpu id=\"{id}\" i_chunks=\"{}\" o_chunks=\"{}\" s_chunks=\"{}\">\n{}  </gpu>\n",
        chunks.0,
        chunks.1,
        chunks.2,
        tbs.concat()
    )
}

fn algo(coll: &str, n: usize, nchunks: usize, nchannels: usize, modes: (bool, bool), gpus: &[String]) -> String {
    format!(
        "<algo name=\"t\" proto=\"Simple\" nchannels=\"{nchannels}\" nchunksperloop=\"{nchunks}\" ngpus=\"{n}\" coll=\"{coll}\" inplace=\"{}\" outofplace=\"{}\" minBytes=\"0\" maxBytes=\"0\">\n{}</algo>\n",
        modes.0 as u8, modes.1 as u8, gpus.concat()
    )
}

const NO: (i64, i64) = (-1, -1);

/// 2-rank allgather: send own i[0], receive the peer's into o[peer], copy i[0] to o[rank].
fn allgather2(i_chunks: usize) -> String {
    let g = |r: usize| {
        let q = 1 - r as i64;
        let net = [step(0, "s", ("i", 0), ("i", 0), 1, NO, false), step(1, "r", ("o", q), ("o", q), 1, NO, false)];
        let local = [step(0, "cpy", ("i", 0), ("o", r as i64), 1, NO, false)];
        gpu(r, (i_chunks, 2, 0), &[tb(0, q, q, 0, &net), tb(1, -1, -1, 0, &local)])
    };
    algo("allgather", 2, 2, 1, (true, true), &[g(0), g(1)])
}

/// 2-rank reduce-scatter through scratch: the peer's half goes out, its contribution to mine
/// comes into s[0], and o[0] = i[rank] + s[0].
fn reduce_scatter2(o_chunks: usize) -> String {
    let g = |r: usize| {
        let q = 1 - r as i64;
        let net = [step(0, "s", ("i", q), ("i", q), 1, NO, false), step(1, "r", ("s", 0), ("s", 0), 1, NO, true)];
        let local = [
            step(0, "cpy", ("i", r as i64), ("o", 0), 1, NO, false),
            step(1, "re", ("s", 0), ("o", 0), 1, (0, 1), false),
        ];
        gpu(r, (2, o_chunks, 1), &[tb(0, q, q, 0, &net), tb(1, -1, -1, 0, &local)])
    };
    algo("reducescatter", 2, 2, 1, (true, true), &[g(0), g(1)])
}

/// 2-rank allreduce of one chunk: send i[0], receive and add into o[0] (rrc).
fn allreduce2(nchannels: usize, dep: Option<(i64, i64)>) -> String {
    let g = |r: usize| {
        let q = 1 - r as i64;
        let mut steps =
            vec![step(0, "s", ("i", 0), ("i", 0), 1, NO, false), step(1, "rrc", ("i", 0), ("o", 0), 1, NO, false)];
        if let Some(d) = dep {
            steps.push(step(2, "nop", ("i", -1), ("o", -1), 0, d, false));
        }
        gpu(r, (1, 1, 0), &[tb(0, q, q, 0, &steps)])
    };
    algo("allreduce", 2, 1, nchannels, (false, true), &[g(0), g(1)])
}

fn plan_of(xml: &str, aliasing: Aliasing) -> ExecPlan {
    load(xml, Format::Xml, aliasing).unwrap_or_else(|e| panic!("{e}\n{xml}"))
}

fn loc(region: Region, chunk: usize) -> Option<Loc> {
    Some(Loc { region, chunk })
}

#[test]
fn allgather_input_is_the_own_output_chunk_in_place() {
    let xml = allgather2(1);
    let out = plan_of(&xml, Aliasing::OutOfPlace);
    let inp = plan_of(&xml, Aliasing::InPlace);
    let r1 = (&out.ranks[1], &inp.ranks[1]);
    assert_eq!((r1.0.sendbuf_chunks, r1.0.recvbuf_chunks), (Some(1), 2));
    assert_eq!((r1.1.sendbuf_chunks, r1.1.recvbuf_chunks), (None, 2));
    assert_eq!(r1.0.input, Span { region: Region::SendBuf, first: 0, chunks: 1 });
    assert_eq!(r1.1.input, Span { region: Region::RecvBuf, first: 1, chunks: 1 });
    let send = |p: &RankProgram| p.ops.iter().find(|o| o.kind == StepType::Send).unwrap().first;
    assert_eq!(send(r1.0), loc(Region::SendBuf, 0));
    assert_eq!(send(r1.1), loc(Region::RecvBuf, 1));
    let copy = |p: &RankProgram| p.ops.iter().find(|o| o.kind == StepType::Copy).map(|o| (o.first, o.store));
    assert_eq!(copy(r1.0), Some((loc(Region::SendBuf, 0), loc(Region::RecvBuf, 1))));
    assert_eq!(copy(r1.1), Some((loc(Region::RecvBuf, 1), loc(Region::RecvBuf, 1))));
}

#[test]
fn reduce_scatter_output_is_the_own_input_slice_in_place_and_scratch_is_separate() {
    let xml = reduce_scatter2(1);
    let out = plan_of(&xml, Aliasing::OutOfPlace);
    let inp = plan_of(&xml, Aliasing::InPlace);
    let (o1, i1) = (&out.ranks[1], &inp.ranks[1]);
    assert_eq!((o1.sendbuf_chunks, o1.recvbuf_chunks, o1.scratch_chunks), (Some(2), 1, 1));
    assert_eq!((i1.sendbuf_chunks, i1.recvbuf_chunks, i1.scratch_chunks), (None, 2, 1));
    assert_eq!(i1.output, Span { region: Region::RecvBuf, first: 1, chunks: 1 });
    let re = |p: &RankProgram| p.ops.iter().find(|o| o.kind == StepType::LocalReduce).cloned().unwrap();
    // re: o[0] = o[0] + s[0]; o[0] is recvbuf 0 out of place, the own slice (chunk 1) in place.
    assert_eq!(
        (re(o1).first, re(o1).add, re(o1).store),
        (loc(Region::RecvBuf, 0), loc(Region::Scratch, 0), loc(Region::RecvBuf, 0))
    );
    assert_eq!((re(i1).first, re(i1).store), (loc(Region::RecvBuf, 1), loc(Region::RecvBuf, 1)));
    // The re waits for the receive into scratch: it comes after it in the rank's order.
    let pos = |p: &RankProgram, k| p.ops.iter().position(|o| o.kind == k).unwrap();
    assert!(pos(o1, StepType::Recv) < pos(o1, StepType::LocalReduce));
    assert_eq!(re(o1).cnt, 1);
}

#[test]
fn allreduce_shares_the_one_buffer_in_place_and_refuses_an_undeclared_mode() {
    let xml = allreduce2(1, None);
    let p = plan_of(&xml, Aliasing::OutOfPlace);
    let rrc = p.ranks[0].ops.iter().find(|o| o.kind == StepType::RecvReduceCopy).unwrap();
    assert_eq!((rrc.recv_from, rrc.send_to, rrc.first), (Some(1), None, None));
    assert_eq!((rrc.add, rrc.store), (loc(Region::SendBuf, 0), loc(Region::RecvBuf, 0)));
    let e = load(&xml, Format::Xml, Aliasing::InPlace).unwrap_err().to_string();
    assert_eq!(e, "program 't' is out-of-place only (inplace=0)");
    let in_place_ring = include_str!("plan_ring3.xml");
    let ring = plan_of(in_place_ring, Aliasing::InPlace);
    let all_ops = ring.ranks.iter().flat_map(|r| &r.ops);
    let regions: Vec<Region> = all_ops.flat_map(|o| [o.first, o.add, o.store]).flatten().map(|l| l.region).collect();
    assert!(!regions.is_empty() && regions.iter().all(|&r| r == Region::RecvBuf));
}

/// The message `collsynth verify` gives (its CLI prints this after the file name).
fn verify_message(xml: &str) -> String {
    format!("not a valid MSCCL program: {}", refusal(&validate(xml, None).unwrap()).unwrap())
}

fn refused(xml: &str) -> String {
    let e = load(xml, Format::Xml, Aliasing::OutOfPlace).unwrap_err();
    assert!(matches!(e, CollsynthError::BadInput(_)), "{e:?}");
    assert_eq!(e.to_string(), verify_message(xml));
    let json = crate::msccl::read_program(xml).unwrap().to_json().to_string();
    let from_json = load(&json, Format::Json, Aliasing::OutOfPlace).unwrap_err().to_string();
    assert_eq!(from_json, e.to_string(), "JSON and XML refusals differ");
    e.to_string()
}

#[test]
fn declared_chunk_counts_are_honoured() {
    // o_chunks="0" (allowed for a buffer reached through the in-place alias) bounds every
    // access to o: this program writes o, so no runtime runs it.
    assert!(refused(&reduce_scatter2(0)).contains("is outside buffer o (o_chunks=\"0\")"));
    // A declared count that is neither 0 nor the collective's is refused.
    assert!(refused(&allgather2(2)).contains("i_chunks=\"2\" x ngpus 2 != nchunksperloop=\"2\""));
    assert!(refused(&allgather2(0)).contains("is outside buffer i (i_chunks=\"0\")"));
    // The in-place ring declares o_chunks="0" and uses only i: accepted.
    let ring = include_str!("plan_ring3.xml");
    assert!(ring.contains("o_chunks=\"0\"") && load(ring, Format::Xml, Aliasing::InPlace).is_ok());
}

#[test]
fn the_rules_the_python_executor_used_to_judge_differently_are_rusts() {
    // A dependency on the thread block's own earlier step.
    assert!(refused(&allreduce2(1, Some((0, 0)))).contains("names its own thread block"));
    // A channel beyond the runtimes' 32.
    assert!(refused(&allreduce2(129, None)).contains("nchannels=\"129\" is outside 1..=32"));
    // A dependency on a nop (the runtime never publishes its flag).
    let g = |r: usize| {
        let q = 1 - r as i64;
        let net = [step(0, "s", ("i", 0), ("i", 0), 1, NO, false), step(1, "rrc", ("i", 0), ("o", 0), 1, NO, false)];
        let carrier = [step(0, "nop", ("i", -1), ("o", -1), 0, (0, 1), true)];
        let waiter = [step(0, "nop", ("i", -1), ("o", -1), 0, (1, 0), false)];
        gpu(r, (1, 1, 0), &[tb(0, q, q, 0, &net), tb(1, -1, -1, 0, &carrier), tb(2, -1, -1, 0, &waiter)])
    };
    let xml = algo("allreduce", 2, 1, 1, (false, true), &[g(0), g(1)]).replace(
        "type=\"rrc\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"",
        "type=\"rrc\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"",
    );
    assert!(refused(&xml).contains("a nop: the runtime drops nops"), "{}", verify_message(&xml));
    // A program the interpreter finds wrong (no reduction: rank 0 only copies) is refused too.
    let wrong = allreduce2(1, None).replacen("type=\"rrc\"", "type=\"r\"", 1);
    assert!(refused(&wrong).contains("out-of-place"), "{}", verify_message(&wrong));
}

#[test]
fn json_and_xml_give_the_same_plan_and_json_problems_name_their_place() {
    let xml = reduce_scatter2(1);
    let json = crate::msccl::read_program(&xml).unwrap().to_json().to_string();
    for a in [Aliasing::InPlace, Aliasing::OutOfPlace] {
        assert_eq!(plan_of(&xml, a), load(&json, Format::Json, a).unwrap());
    }
    let mut doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    doc["gpus"][1]["tbs"][0]["steps"][1]["cnt"] = serde_json::json!(1.5);
    let e = load(&doc.to_string(), Format::Json, Aliasing::InPlace).unwrap_err().to_string();
    assert_eq!(
        e,
        "not a valid MSCCL program: gpus[1].tbs[0].steps[1]: attribute cnt of node step is not an integer: \"1.5\""
    );
    doc["gpus"][1]["tbs"][0]["steps"][1]["cnt"] = serde_json::json!(null);
    let e = load(&doc.to_string(), Format::Json, Aliasing::InPlace).unwrap_err().to_string();
    assert!(e.starts_with("gpus[1].tbs[0].steps[1]: \"cnt\" must be a number"), "{e}");
    assert!(load("[1]", Format::Json, Aliasing::InPlace)
        .unwrap_err()
        .to_string()
        .contains("program: must be a JSON object"));
    assert!(matches!(accepted("{", Format::Json), Err(CollsynthError::BadInput(_))));
}

/// Runs every rank's op list in order, round-robin, with blocking receives and unbounded
/// connections; one element per chunk. Returns the final regions per rank, or the stuck ranks.
fn run_numbers(plan: &ExecPlan, input: impl Fn(usize, usize) -> i64) -> Result<Vec<[Vec<i64>; 3]>> {
    let mut mem: Vec<[Vec<i64>; 3]> = plan
        .ranks
        .iter()
        .map(|rp| {
            let mut m =
                [vec![0; rp.sendbuf_chunks.unwrap_or(0)], vec![-1; rp.recvbuf_chunks], vec![-1; rp.scratch_chunks]];
            for j in 0..rp.input.chunks {
                m[rp.input.region.code()][rp.input.first + j] = input(rp.rank, j);
            }
            m
        })
        .collect();
    let mut wires: HashMap<(usize, usize, usize), VecDeque<Vec<i64>>> = HashMap::default();
    let mut pc = vec![0usize; plan.ngpus];
    loop {
        let mut moved = false;
        for (r, rp) in plan.ranks.iter().enumerate() {
            while let Some(op) = rp.ops.get(pc[r]) {
                let read = |m: &[Vec<i64>; 3], l: Loc| m[l.region.code()][l.chunk..l.chunk + op.cnt].to_vec();
                let mut v = match op.recv_from {
                    Some(q) => match wires.get_mut(&(q, r, op.chan)).and_then(|w| w.pop_front()) {
                        Some(v) => v,
                        None => break,
                    },
                    None => read(&mem[r], op.first.unwrap()),
                };
                assert_eq!(v.len(), op.cnt, "message size");
                if let Some(a) = op.add {
                    v.iter_mut().zip(read(&mem[r], a)).for_each(|(x, y)| *x += y);
                }
                if let Some(s) = op.store {
                    mem[r][s.region.code()][s.chunk..s.chunk + op.cnt].copy_from_slice(&v);
                }
                if let Some(q) = op.send_to {
                    wires.entry((r, q, op.chan)).or_default().push_back(v);
                }
                pc[r] += 1;
                moved = true;
            }
        }
        if pc.iter().zip(&plan.ranks).all(|(&k, rp)| k == rp.ops.len()) {
            assert!(wires.values().all(|w| w.is_empty()), "messages left over");
            return Ok(mem);
        }
        if !moved {
            return Err(CollsynthError::internal(format!("stuck at {pc:?}")));
        }
    }
}

/// Checks the outputs of a numeric run against the collective.
fn check_numbers(plan: &ExecPlan, what: &str) {
    let n = plan.ngpus;
    let input = |r: usize, j: usize| (1i64 << r) * 1000 + j as i64;
    let mem = run_numbers(plan, input).unwrap_or_else(|e| panic!("{what}: {e}"));
    let in_len = plan.ranks[0].input.chunks;
    for (r, rp) in plan.ranks.iter().enumerate() {
        let o = rp.output;
        let got = &mem[r][o.region.code()][o.first..o.first + o.chunks];
        let sum = |c: usize| (0..n).map(|q| input(q, c)).sum::<i64>();
        let want: Option<Vec<i64>> = match plan.collective {
            Collective::Allgather => Some((0..o.chunks).map(|c| input(c / in_len, c % in_len)).collect()),
            Collective::ReduceScatter => Some((0..o.chunks).map(|j| sum(r * o.chunks + j)).collect()),
            Collective::Allreduce => Some((0..o.chunks).map(sum).collect()),
            Collective::Broadcast => Some((0..o.chunks).map(|c| input(plan.root, c)).collect()),
            Collective::Reduce => (r == plan.root).then(|| (0..o.chunks).map(sum).collect()),
            Collective::Allgatherv => None,
        };
        if let Some(want) = want {
            assert_eq!(got, &want[..], "{what}: rank {r}");
        }
    }
}

#[test]
fn hand_built_plans_compute_their_collectives_in_both_modes() {
    for xml in [allgather2(1), reduce_scatter2(1), allreduce2(2, None)] {
        for a in [Aliasing::InPlace, Aliasing::OutOfPlace] {
            if let Ok(plan) = load(&xml, Format::Xml, a) {
                check_numbers(&plan, &xml);
            }
        }
    }
    check_numbers(&plan_of(include_str!("plan_ring3.xml"), Aliasing::InPlace), "ring3");
}

#[test]
fn a_broken_order_is_caught_by_the_numeric_oracle() {
    // The oracle must be able to fail: drop rank 0's first send and the run gets stuck;
    // drop a reduction and the sums are wrong.
    let mut plan = plan_of(&allreduce2(1, None), Aliasing::OutOfPlace);
    let good = plan.clone();
    plan.ranks[0].ops.remove(0);
    assert!(run_numbers(&plan, |r, _| r as i64).is_err());
    let mut plan = good;
    plan.ranks[1].ops.iter_mut().for_each(|o| o.add = None);
    let outcome = std::panic::catch_unwind(|| check_numbers(&plan, "no reduction"));
    assert!(outcome.is_err());
}

/// Every synthesizer's exported program on a few topologies, both modes, runs to the right
/// numbers from its compiled plan (and compiles from its JSON to the same plan).
#[test]
fn every_exported_program_runs_correctly_from_its_plan() {
    let mut count = 0;
    for spec in ["ring:4", "switch:3", "torus:2x3", "biring:5"] {
        let topo = from_spec(spec).unwrap();
        for alg in synth::algorithms() {
            for &c in alg.collectives.iter().filter(|c| **c != Collective::Allgatherv) {
                let root = if c.is_rooted() { topo.n_ranks() - 1 } else { 0 };
                let req = Request { root, ..Request::default() };
                let Ok(done) = api::synthesize(&topo, c, alg.name, &req, rat(1 << 20)) else { continue };
                let e =
                    export(&done.schedule, &lower::Options { runtime: Runtime::MscclNccl, ..Default::default() }, true)
                        .unwrap();
                let json = e.program.to_json().to_string();
                for a in [Aliasing::InPlace, Aliasing::OutOfPlace] {
                    let plan = load(&e.xml, Format::Xml, a).unwrap();
                    assert_eq!(plan, load(&json, Format::Json, a).unwrap());
                    check_numbers(&plan, &format!("{spec} {} {} {a:?}", alg.name, c.name()));
                    count += 1;
                }
            }
        }
    }
    assert!(count >= 40, "{count}");
}
