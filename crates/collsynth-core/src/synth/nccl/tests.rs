use super::*;
use crate::api;
use crate::cost::loads::bandwidth_term_us;
use crate::zoo::from_spec;

fn gib() -> Rat {
    Rat::from_integer(1 << 30)
}

fn synth(spec: &str, alg: &str, c: Collective) -> (Topology, Schedule) {
    let topo = from_spec(spec).unwrap();
    let done = api::synthesize(&topo, c, alg, &Request::default(), gib()).unwrap_or_else(|e| panic!("{spec} {alg}: {e}"));
    (done.topology, done.schedule)
}

#[test]
fn explore() {
    for spec in ["dgx-a100:1", "dgx-a100:2", "hgx-h100:2", "mi250:2", "dgx1", "dgx-a100:4"] {
        let topo = from_spec(spec).unwrap();
        let ch = search::search(&topo).unwrap();
        eprintln!("{spec}: speed {} searched {} total {} fallback {} chain0 {:?}", ch.speed, ch.searched, ch.total, ch.fallback, ch.chains[0]);
        for alg in ["nccl-ring", "ring", "nccl-tree"] {
            let (t, s) = synth(spec, alg, Collective::Allreduce);
            let bt = bandwidth_term_us(&s, &t, gib());
            eprintln!("  {alg}: algbw {:.2} GB/s, transfers {}", 1073741824.0 / crate::rational::to_f64(&bt) / 1000.0, s.transfers.len());
        }
    }
}
