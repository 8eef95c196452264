//! How many flat transfers collapse into range transfers, per synthesizer (docs/schedule-format.md
//! "Range transfers"): `cargo test -p collsynth-core --release ranges::tests::measure -- --ignored --nocapture`.

use crate::ir::orbit;
use crate::ir::ranges::{compress, flat};
use crate::ir::Collective;
use crate::synth::{self, Request};
use crate::zoo;

const CASES: &[(&str, &str, Collective)] = &[
    ("torus:8x8", "bfb", Collective::Allgather),
    ("torus:20x20", "bfb", Collective::Allgather),
    ("hypercube:8", "bfb", Collective::Allgather),
    ("circulant:64:1,5", "bfb", Collective::Allgather),
    ("circulant:128:1,3,9", "bfb", Collective::Allgather),
    ("torus:8x8", "bfb", Collective::Allreduce),
    ("dgx-a100:16", "forestcoll", Collective::Allgather),
    ("torus:8x8", "forestcoll", Collective::Allgather),
    ("torus:8x8", "tacos", Collective::Allgather),
    ("mesh:8x8", "tacos", Collective::Allgather),
    ("torus:8x8", "ring", Collective::Allgather),
    ("torus:8x8", "ring", Collective::Allreduce),
    ("torus:8x8", "forestcoll", Collective::Allreduce),
    ("dgx-a100:16", "forestcoll", Collective::Allreduce),
    ("mesh:8x8", "tacos", Collective::Allreduce),
];

/// Runs of consecutive pieces with one (src, dst, route, op, step, slots) and as many
/// dependencies, wherever they stand in the list: what a reordering could collapse at most.
fn order_free(s: &crate::ir::Schedule) -> usize {
    let mut keys: Vec<_> = s
        .transfers
        .iter()
        .map(|t| {
            (
                t.src,
                t.dst,
                t.route.clone(),
                t.op == crate::ir::Op::Copy,
                t.step,
                t.src_slot,
                t.dst_slot,
                t.after.len(),
                t.piece,
            )
        })
        .collect();
    keys.sort_unstable();
    let mut runs = 0;
    for (i, k) in keys.iter().enumerate() {
        let continues = i > 0 && {
            let p = &keys[i - 1];
            (&p.0, &p.1, &p.2, p.3, p.4, p.5, p.6, p.7) == (&k.0, &k.1, &k.2, k.3, k.4, k.5, k.6, k.7) && p.8 + 1 == k.8
        };
        runs += usize::from(!continues);
    }
    runs
}

#[test]
#[ignore = "a measurement, printed: run with --ignored --nocapture"]
fn measure() {
    println!("| topology | algorithm | collective | flat transfers | as ranges | order-free bound | stored | stored as ranges |");
    println!("|---|---|---|---|---|---|---|---|");
    for &(spec, alg, c) in CASES {
        let topo = zoo::from_spec(spec).unwrap();
        let s = synth::run(&topo, c, alg, &Request::default()).unwrap();
        if alg == "bfb" && c == Collective::Allgather {
            // BFB's flat emission (what a topology without a regular group gets).
            let f = crate::synth::bfb::allgather(&topo).unwrap();
            let cf = compress(&f);
            assert_eq!(flat(&cf).unwrap().as_ref(), &f);
            println!(
                "| {spec} | bfb (flat emission) | allgather | {} | {} | {} | | |",
                f.transfers.len(),
                cf.transfers.len(),
                order_free(&f)
            );
        }
        let s = flat(&s).unwrap().into_owned();
        let f = orbit::expand(&s).unwrap();
        let cf = compress(&f);
        assert_eq!(flat(&cf).unwrap().as_ref(), &f);
        let cs = compress(&s);
        println!(
            "| {spec} | {alg} | {} | {} | {} | {} | {} | {} |",
            c.name(),
            f.transfers.len(),
            cf.transfers.len(),
            order_free(&f),
            s.transfers.len(),
            cs.transfers.len()
        );
    }
}
