//! Random valid topologies for property tests, shared by every module's tests.
//!
//! Every strategy yields a [`Topology`] that passes the builder's validation (compute ranks
//! mutually reachable): a ring through every node keeps flat graphs strongly connected, and a
//! switch per box plus inter-box NIC links keep multi-box machines connected. Bandwidths are
//! exact rationals `a/d` (GB/s) and latencies multiples of 1/8 us (exact in binary), drawn
//! per link, so links are heterogeneous; "directed" strategies also make one-way links and
//! pairs whose two directions differ in bandwidth and latency.
//!
//! - [`arb_topology`]: any of the shapes below, 2..=`max_ranks` ranks (the general one).
//! - [`arb_flat`]: a ring through ranks and switches plus random extra links.
//! - [`arb_digraph`]: switch-free directed graphs (a directed ring plus random links).
//! - [`arb_boxes`]: boxes of GPUs behind a box switch, joined by NIC links (a network switch
//!   or a directed ring of boxes).
//!
//! `symmetric = true` makes every link a pair of equal links both ways (every node Eulerian),
//! for algorithms and oracles that only hold there.

use crate::rational::Rat;
use crate::topology::{NodeKind, Topology, TopologyBuilder};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

/// An exact bandwidth `a/d` GB/s with `a` in 1..=40 and `d` in {1, 2, 3, 4, 10}.
pub fn arb_bandwidth() -> impl Strategy<Value = Rat> + Clone {
    (1i128..=40, 0usize..5).prop_map(|(a, d)| Rat::new(a, [1, 2, 3, 4, 10][d]))
}

/// A latency in us: a multiple of 1/8 in [0, 5).
pub fn arb_latency() -> impl Strategy<Value = f64> + Clone {
    (0u32..40).prop_map(|x| f64::from(x) / 8.0)
}

/// One link's parameters.
fn arb_link() -> impl Strategy<Value = (Rat, f64)> + Clone {
    (arb_bandwidth(), arb_latency())
}

/// How a pair of nodes is joined in a directed strategy: one way, both ways equal, both ways
/// with independent bandwidth and latency, or only backwards.
#[derive(Debug, Clone, Copy)]
enum Join {
    Forward,
    Both,
    Asymmetric,
    Backward,
}

fn arb_join(symmetric: bool) -> BoxedStrategy<Join> {
    if symmetric {
        Just(Join::Both).boxed()
    } else {
        prop_oneof![Just(Join::Forward), Just(Join::Both), Just(Join::Asymmetric), Just(Join::Backward)].boxed()
    }
}

/// Add `u -> v` (parameters `a`) and, per `join`, the reverse (parameters `a` or `b`).
/// `Backward` adds only `v -> u`, so it must not be used where `u -> v` keeps connectivity.
fn join(tb: &mut TopologyBuilder, u: usize, v: usize, how: Join, a: (Rat, f64), b: (Rat, f64)) {
    match how {
        Join::Forward => tb.link(u, v, a.0, a.1),
        Join::Both => tb.bilink(u, v, a.0, a.1),
        Join::Asymmetric => {
            tb.link(u, v, a.0, a.1);
            tb.link(v, u, b.0, b.1);
        }
        Join::Backward => tb.link(v, u, a.0, a.1),
    }
}

/// A joined hop that keeps the forward direction (for the ring that guarantees connectivity).
fn keep_forward(how: Join) -> Join {
    match how {
        Join::Backward => Join::Forward,
        other => other,
    }
}

/// Flat topologies: `ranks` compute nodes and up to `max_switches` switches, placed in a
/// random order on a ring (each hop forward, or both ways), plus up to two extra random
/// links per node. Directed unless `symmetric`. A range starting at 1 also yields single
/// ranks (alone, or on a ring with switches).
pub fn arb_flat(
    ranks: std::ops::RangeInclusive<usize>,
    max_switches: usize,
    symmetric: bool,
) -> impl Strategy<Value = Topology> {
    (ranks, 0..=max_switches)
        .prop_flat_map(move |(n, s)| {
            let total = n + s;
            let order = Just((0..total).collect::<Vec<usize>>()).prop_shuffle();
            let ring = proptest::collection::vec((arb_join(symmetric), arb_link(), arb_link()), total);
            let extra = proptest::collection::vec(
                (0..total, 0..total, arb_join(symmetric), arb_link(), arb_link()),
                0..=2 * total,
            );
            (Just(n), order, ring, extra)
        })
        .prop_map(|(n, order, ring, extra)| {
            let total = order.len();
            let mut tb = TopologyBuilder::new("random");
            for i in 0..total {
                if i < n {
                    tb.compute(format!("r{i}"), None);
                } else {
                    tb.switch(format!("s{}", i - n), None);
                }
            }
            for (i, (how, a, b)) in ring.into_iter().enumerate().filter(|_| total > 1) {
                join(&mut tb, order[i], order[(i + 1) % total], keep_forward(how), a, b);
            }
            for (u, v, how, a, b) in extra.into_iter().filter(|(u, v, ..)| u != v) {
                join(&mut tb, u, v, how, a, b);
            }
            tb.build().expect("a ring through every node is strongly connected")
        })
}

/// Switch-free directed graphs with 2..=`max_ranks` ranks (see [`arb_flat`]).
pub fn arb_digraph(max_ranks: usize) -> impl Strategy<Value = Topology> {
    arb_flat(2..=max_ranks, 0, false)
}

/// Multi-box machines with 2..=`max_ranks` GPUs: 1 to 4 boxes of equally many GPUs, each GPU
/// joined to its box switch (up and down links may differ unless `symmetric`), sometimes
/// with direct GPU links inside the box; between boxes either every GPU's NIC joins one
/// network switch, or GPU i of box b links to GPU i of box b + 1 (a ring of boxes, one way
/// unless `symmetric`).
pub fn arb_boxes(max_ranks: usize, symmetric: bool) -> impl Strategy<Value = Topology> {
    let max_ranks = max_ranks.max(2);
    (1usize..=max_ranks.min(4))
        .prop_flat_map(move |nb| {
            let lo = if nb == 1 { 2 } else { 1 };
            (Just(nb), lo..=max_ranks / nb)
        })
        .prop_flat_map(move |(nb, g)| {
            let n = nb * g;
            let up = proptest::collection::vec((arb_join(symmetric), arb_link(), arb_link()), n);
            let nic = proptest::collection::vec((arb_join(symmetric), arb_link(), arb_link()), n);
            let inside = proptest::collection::vec((0..g, 0..g, arb_join(symmetric), arb_link(), arb_link()), 0..=g);
            (Just((nb, g)), up, nic, inside, any::<bool>())
        })
        .prop_map(|((nb, g), up, nic, inside, net_switch)| {
            let mut tb = TopologyBuilder::new("random-boxes");
            let gpu = |b: usize, i: usize| b * (g + 1) + i;
            for b in 0..nb {
                let group = format!("box{b}");
                for i in 0..g {
                    tb.compute(format!("b{b}.gpu{i}"), Some(&group));
                }
                tb.switch(format!("b{b}.sw"), Some(&group));
            }
            let net = (net_switch && nb > 1).then(|| tb.switch("net", None));
            for b in 0..nb {
                let sw = gpu(b, g);
                for i in 0..g {
                    let (how, a, c) = up[b * g + i];
                    // A box switch needs links both ways to every GPU for the box to stay connected.
                    let how = if matches!(how, Join::Forward | Join::Backward) { Join::Both } else { how };
                    join(&mut tb, gpu(b, i), sw, how, a, c);
                }
                for &(i, j, how, a, c) in inside.iter().filter(|(i, j, ..)| i != j) {
                    join(&mut tb, gpu(b, i), gpu(b, j), how, a, c);
                }
                if nb > 1 {
                    for i in 0..g {
                        let (how, a, c) = nic[b * g + i];
                        match net {
                            Some(net) => {
                                let how = if matches!(how, Join::Forward | Join::Backward) { Join::Both } else { how };
                                join(&mut tb, gpu(b, i), net, how, a, c);
                            }
                            None => join(&mut tb, gpu(b, i), gpu((b + 1) % nb, i), keep_forward(how), a, c),
                        }
                    }
                }
            }
            tb.build().expect("boxes joined by a switch or a ring of boxes are strongly connected")
        })
}

/// Any valid topology with 2..=`max_ranks` ranks: flat (with up to 3 switches or none) or
/// multi-box, directed and asymmetric or symmetric, with heterogeneous exact bandwidths and
/// latencies. Every compute rank reaches every other.
pub fn arb_topology(max_ranks: usize) -> BoxedStrategy<Topology> {
    let max_ranks = max_ranks.max(2);
    prop_oneof![
        2 => arb_flat(2..=max_ranks, 0, false),
        2 => arb_flat(2..=max_ranks, 3, false),
        1 => arb_flat(2..=max_ranks, 3, true),
        2 => arb_boxes(max_ranks, false),
        1 => arb_boxes(max_ranks, true),
    ]
    .boxed()
}

/// A compact one-line description (ranks, switches, links) for failure messages.
pub fn describe(t: &Topology) -> String {
    let links: Vec<String> = t
        .links
        .iter()
        .map(|l| {
            format!(
                "{}->{}:{}@{}",
                t.nodes[l.src].name,
                t.nodes[l.dst].name,
                crate::rational::to_fraction_string(&l.bandwidth),
                l.latency
            )
        })
        .collect();
    let switches = t.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count();
    format!("{} ranks, {switches} switches: {}", t.n_ranks(), links.join(" "))
}

#[cfg(test)]
mod tests;

/// An `io::Write` that keeps only what a streaming test asks: how many writes it saw, the
/// largest one, the total, and an FNV-1a hash of the bytes.
pub struct CountingWriter {
    pub writes: usize,
    pub largest: usize,
    pub total: usize,
    pub hash: u64,
}

impl CountingWriter {
    pub fn new() -> CountingWriter {
        CountingWriter { writes: 0, largest: 0, total: 0, hash: crate::ir::json::FNV1A_OFFSET }
    }
}

impl std::io::Write for CountingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writes += 1;
        self.largest = self.largest.max(buf.len());
        self.total += buf.len();
        self.hash = crate::ir::json::fnv1a_extend(self.hash, buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// FNV-1a 64 of a text (what [`CountingWriter`] computes).
pub fn fnv1a(text: &str) -> u64 {
    let mut w = CountingWriter::new();
    std::io::Write::write_all(&mut w, text.as_bytes()).expect("in memory");
    w.hash
}

/// `spec`'s `alg` schedule of `c` from the whole pipeline (synthesized and verified) at 1 GiB,
/// with the topology it runs on.
pub fn synthesized(spec: &str, c: crate::ir::Collective, alg: &str) -> crate::api::Synthesized {
    let topo = crate::zoo::from_spec(spec).unwrap();
    crate::api::synthesize(&topo, c, alg, &crate::synth::Request::default(), crate::rational::rat(1 << 30)).unwrap()
}
