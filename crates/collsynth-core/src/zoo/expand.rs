//! The direct-connect paper's topology expansions (§5, App. D): the line digraph
//! `L^k(G)` (Def 12), the degree expansion `G * n` (Def 13) and the Cartesian product /
//! power (Def 3, Def 14), built from the expression grammar of [`Expr`]; and the union
//! `G ∪ G^T` of appendix A.6, which turns a unidirectional graph into a
//! bidirectional one.
//!
//! They apply to direct-connect topologies (compute nodes only). The topology model merges
//! parallel links into one link of summed bandwidth and has no self-loops, so a multi-edge
//! of the paper is one link here and is expanded as one link (see [`line_graph`]).
//!
//! Node names and ranks (documented in docs/zoo.md):
//! - `L(G)`: one node per link `u -> v` of G, named `u>v`, in G's link order (by tail, then
//!   head); `L^k(G)` nodes are the walks of k links, named `n0>n1>n2`, in lexicographic order.
//! - `G * n`: copy i (0-based) of node v is named `v_i` and has index `v*n + i`.
//! - products and powers: the node with coordinates (c1, .., cm) is named `(c1,..,cm)` and
//!   has index `c1 + N1*(c2 + N2*(c3 + ..))`: the first coordinate varies fastest, as in the
//!   zoo's `torus` and `hamming`, so `product(biring:4; biring:8)` is `torus:4x8` rank for
//!   rank and `power^2(complete:4)` is `hamming:2,4`.
//! - `bi(G)`: G's nodes, names and ranks unchanged, so `bi(ring:5)` is `biring:5`.

use super::direct_connect::MAX_NODES;
use super::spec::Expr;
use super::Spec;
use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use crate::topology::{Topology, TopologyBuilder};

/// Build an expansion expression; the topology is named after its normalised form
/// ([`Expr`]'s `Display`). Errors are BadInput prefixed with that name.
pub(super) fn build(expr: &Expr) -> Result<Topology> {
    let name = expr.to_string();
    eval(expr).map_err(|e| e.context(&name))
}

/// Evaluate an expression bottom-up; each intermediate topology is named after its
/// sub-expression.
fn eval(expr: &Expr) -> Result<Topology> {
    let name = expr.to_string();
    match expr {
        Expr::Spec(spec) => super::build_family(spec),
        Expr::Line(k, inner) => {
            // line(line(G)) is L^2(G): evaluate it as one walk expansion so that the node
            // names are the same walks `a>b>c` whichever way it is written.
            let (mut k, mut base) = (*k, inner.as_ref());
            while let Expr::Line(k2, deeper) = base {
                (k, base) = (k + k2, deeper.as_ref());
            }
            line_graph(&eval(base)?, k, &name)
        }
        Expr::Degree(n, inner) => degree_expansion(&eval(inner)?, *n, &name),
        Expr::Power(n, inner) => {
            let g = eval(inner)?;
            cartesian_product(&vec![&g; *n], &name)
        }
        Expr::Product(factors) => {
            let graphs: Vec<Topology> = factors.iter().map(eval).collect::<Result<_>>()?;
            cartesian_product(&graphs.iter().collect::<Vec<_>>(), &name)
        }
        Expr::Bi(inner) => bidirectional_union(&eval(inner)?, &name),
    }
}

/// A directed link of a [`Digraph`].
#[derive(Debug, Clone)]
struct Arc {
    src: usize,
    dst: usize,
    bw: Rat,
    lat: f64,
}

/// A plain digraph while line graphs are iterated: node names, and arcs sorted by
/// (src, dst) with `out_start` the CSR offsets by source.
struct Digraph {
    names: Vec<String>,
    arcs: Vec<Arc>,
    out_start: Vec<usize>,
}

impl Digraph {
    /// `arcs` must be sorted by (src, dst).
    fn new(names: Vec<String>, arcs: Vec<Arc>) -> Self {
        let mut out_start = vec![0; names.len() + 1];
        for a in &arcs {
            out_start[a.src + 1] += 1;
        }
        for v in 0..names.len() {
            out_start[v + 1] += out_start[v];
        }
        Digraph { names, arcs, out_start }
    }

    fn of(t: &Topology) -> Self {
        let names = t.nodes.iter().map(|n| n.name.clone()).collect();
        let arcs = t.links.iter().map(|l| Arc { src: l.src, dst: l.dst, bw: l.bandwidth, lat: l.latency }).collect();
        Digraph::new(names, arcs)
    }

    fn out(&self, v: usize) -> &[Arc] {
        &self.arcs[self.out_start[v]..self.out_start[v + 1]]
    }

    fn to_topology(&self, name: &str) -> Result<Topology> {
        let mut b = TopologyBuilder::new(name);
        for n in &self.names {
            b.compute(n.clone(), None);
        }
        for a in &self.arcs {
            b.link(a.src, a.dst, a.bw, a.lat);
        }
        b.build()
    }
}

/// Refuse a topology with switches: the expansions are defined on direct-connect graphs
/// (a switch is no rank, so it cannot become a link-node or be copied).
fn require_direct(g: &Topology, what: &str) -> Result<()> {
    match g.n_switches() {
        0 => Ok(()),
        s => Err(CollsynthError::bad(format!(
            "{what} needs a topology without switches ({} has {s} switch{})",
            g.name,
            if s == 1 { "" } else { "es" }
        ))),
    }
}

/// Refuse results beyond the zoo's limits ([`MAX_NODES`] nodes, the families' link limit)
/// before building them; `nodes`/`links` are `None` on overflow.
fn check_size(what: &str, nodes: Option<usize>, links: Option<usize>) -> Result<()> {
    let nodes = nodes.unwrap_or(usize::MAX);
    if nodes > MAX_NODES {
        let n = if nodes == usize::MAX { "more than 2^64".to_string() } else { nodes.to_string() };
        return Err(CollsynthError::bad(format!("{what} would have {n} nodes (at most {MAX_NODES})")));
    }
    let spec = Spec { text: what.to_string(), family: String::new(), args: Vec::new(), options: Vec::new() };
    super::clusters::check_size(&spec, links.unwrap_or(usize::MAX))
}

/// The k-fold line digraph L^k(G) (§5.1, Def 12), k >= 1, of a topology without
/// switches. Guarantees: one node per link u -> v of the previous graph, a link
/// (u -> v) -> (v -> w) for every pair of consecutive links, so a d-regular G with N nodes
/// gives d^k N nodes of degree d (diameter D + k for the graphs of the paper; a directed
/// cycle stays itself). The link (u->v) -> (v->w) has the bandwidth and latency of v -> w,
/// so every node of L(G) keeps the egress of v in G and a uniform G keeps its bandwidth. G
/// has no self-loops (the model forbids them), so neither has L(G), and Def 1's
/// `v'v != vu` never excludes a link. Names and order: see the module documentation.
pub fn line_graph(g: &Topology, k: usize, name: &str) -> Result<Topology> {
    walk_levels(g, k, name, |_, _| Ok(()))?.to_topology(name)
}

/// L^1(G), .., L^k(G) as [`line_graph`] builds them, level i named `name(i)`: the graphs a
/// mapping through k line graphs passes. Nodes are named by their walks in G at every level
/// (mapping level by level through `line_graph(.., 1, ..)` would double the names each time).
pub fn line_graph_levels(g: &Topology, k: usize, name: impl Fn(usize) -> String) -> Result<Vec<Topology>> {
    let mut levels = Vec::with_capacity(k);
    walk_levels(g, k, &name(k), |step, graph| {
        levels.push(graph.to_topology(&name(step))?);
        Ok(())
    })?;
    Ok(levels)
}

/// The walks of 1..=k links of `g`, level by level, each level handed to `each` (with its
/// step) before the next is made; returns the last. `name` names the result in refusals.
fn walk_levels(
    g: &Topology,
    k: usize,
    name: &str,
    mut each: impl FnMut(usize, &Digraph) -> Result<()>,
) -> Result<Digraph> {
    require_direct(g, "line graph expansion")?;
    let base_names: Vec<String> = g.nodes.iter().map(|n| n.name.clone()).collect();
    let mut graph = Digraph::of(g);
    // Base node at the end of each node's walk (the node itself before the first step).
    let mut last: Vec<usize> = (0..g.n_nodes()).collect();
    for step in 1..=k {
        let links = graph.arcs.iter().try_fold(0usize, |acc, a| acc.checked_add(graph.out(a.dst).len()));
        check_size(&format!("line graph step {step} of {k}"), Some(graph.arcs.len()), links)?;
        // A node is named by its walk: one base name longer than its tail's.
        let names: u128 =
            graph.arcs.iter().map(|a| (graph.names[a.src].len() + base_names[last[a.dst]].len() + 1) as u128).sum();
        crate::budget::check_memory(&format!("the node names of {name}"), Some(names), 3)?;
        (graph, last) = line_step(&graph, &last, &base_names);
        each(step, &graph)?;
    }
    Ok(graph)
}

/// One line digraph step: node i of the result is arc i of `g`, named the walk of its tail
/// extended by the base node its head ends at. Arcs come out sorted because arcs of `g`
/// are sorted and each arc's successors are the (sorted) out-arcs of its head.
fn line_step(g: &Digraph, last: &[usize], base_names: &[String]) -> (Digraph, Vec<usize>) {
    let mut names = Vec::with_capacity(g.arcs.len());
    let mut new_last = Vec::with_capacity(g.arcs.len());
    let mut arcs = Vec::new();
    for (i, a) in g.arcs.iter().enumerate() {
        names.push(format!("{}>{}", g.names[a.src], base_names[last[a.dst]]));
        new_last.push(last[a.dst]);
        // Successor arcs of `a` are g's out-arcs of a.dst, whose indices start at out_start.
        let first = g.out_start[a.dst];
        for (j, b) in g.out(a.dst).iter().enumerate() {
            arcs.push(Arc { src: i, dst: first + j, bw: b.bw, lat: b.lat });
        }
    }
    (Digraph::new(names, arcs), new_last)
}

/// The degree expansion G * n (§5.2, Def 13), n >= 1, of a topology without switches
/// (and without self-loops, which the model guarantees). Guarantees: n copies v_0..v_{n-1}
/// of every node v, and a link u_i -> v_j for every link u -> v of G and all i, j
/// (including i = j), with the bandwidth and latency of u -> v: N n nodes, out-degree d n.
/// Copy i of node v is rank v n + i, named `{v}_{i}`.
pub fn degree_expansion(g: &Topology, n: usize, name: &str) -> Result<Topology> {
    require_direct(g, "degree expansion")?;
    let links = n.checked_mul(n).and_then(|nn| nn.checked_mul(g.links.len()));
    check_size(&format!("degree*{n} expansion"), g.n_nodes().checked_mul(n), links)?;
    let mut b = TopologyBuilder::new(name);
    for node in &g.nodes {
        for i in 0..n {
            b.compute(format!("{}_{i}", node.name), None);
        }
    }
    for l in &g.links {
        for i in 0..n {
            for j in 0..n {
                b.link(l.src * n + i, l.dst * n + j, l.bandwidth, l.latency);
            }
        }
    }
    b.build()
}

/// The Cartesian product G1 □ .. □ Gm (§5.3, Def 3) of topologies without switches,
/// m >= 1 (a power passes the same graph m times). Guarantees: node (c1,..,cm) links to
/// every node that differs in one coordinate j by a link cj -> c'j of Gj, with that link's
/// bandwidth and latency: prod N_i nodes, degrees add, distances add coordinate-wise (so
/// the diameter is the sum). Node (c1,..,cm) has index c1 + N1 (c2 + N2 (..)) and is named
/// `(c1,..,cm)` after the factors' node names.
pub fn cartesian_product(factors: &[&Topology], name: &str) -> Result<Topology> {
    for g in factors {
        require_direct(g, "Cartesian product")?;
    }
    let total = factors.iter().try_fold(1usize, |acc, g| acc.checked_mul(g.n_nodes()));
    let links = total.and_then(|t| {
        factors.iter().try_fold(0usize, |acc, g| acc.checked_add((t / g.n_nodes().max(1)).checked_mul(g.links.len())?))
    });
    check_size("Cartesian product", total, links)?;
    let total = total.unwrap_or_default();
    // strides[j] = N_1 .. N_{j-1}: the index step of coordinate j.
    let strides: Vec<usize> = factors.iter().scan(1, |s, g| Some(std::mem::replace(s, *s * g.n_nodes()))).collect();
    let coord = |x: usize, j: usize| (x / strides[j]) % factors[j].n_nodes();
    let mut b = TopologyBuilder::new(name);
    for x in 0..total {
        let parts: Vec<&str> = factors.iter().enumerate().map(|(j, g)| g.nodes[coord(x, j)].name.as_str()).collect();
        b.compute(format!("({})", parts.join(",")), None);
    }
    for (j, g) in factors.iter().enumerate() {
        for x in 0..total {
            let c = coord(x, j);
            for l in g.out_links(c).map(|i| &g.links[i]) {
                b.link(x, x - c * strides[j] + l.dst * strides[j], l.bandwidth, l.latency);
            }
        }
    }
    b.build()
}

/// The union G ∪ G^T (appendix A.6) of a topology without switches: G's nodes,
/// names and ranks, and for every link u -> v also v -> u with the same bandwidth and
/// latency. Guarantees: the result is bidirectional (every link has its reverse). Where G
/// already has v -> u, the added link is parallel to it and the topology model merges the
/// two (bandwidths add, the smaller latency stays), so a G that is already symmetric comes
/// back with every bandwidth doubled. A.6 applies it to a unidirectional (2-cycle-free)
/// reverse-symmetric degree-d graph: the result is 2d-regular with d links of G's bandwidth
/// each way.
pub fn bidirectional_union(g: &Topology, name: &str) -> Result<Topology> {
    // Switches would be fine for the union itself, but the expansions are defined on
    // direct-connect graphs and refusing them keeps the grammar's rule uniform.
    require_direct(g, "bidirectional union")?;
    check_size("bidirectional union", Some(g.n_nodes()), g.links.len().checked_mul(2))?;
    let mut b = TopologyBuilder::new(name);
    for n in &g.nodes {
        b.node(n.name.clone(), n.kind, n.group.as_deref());
    }
    for l in &g.links {
        b.bilink(l.src, l.dst, l.bandwidth, l.latency);
    }
    b.build()
}

#[cfg(test)]
mod tests;
