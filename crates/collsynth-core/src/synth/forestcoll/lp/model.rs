//! LP (6) of ForestColl appendix E, built for `microlp` and solved in `f64`, then made
//! exact: rounded to multiples of `1/K`, repaired and verified in integers.
//!
//! Units: the link bandwidths scaled to coprime integers `b_e` (factor `σ`, see
//! [`crate::synth::forestcoll::rooted::scaled`]); the LP itself sees `b_e / max b` for
//! conditioning, and its values are scaled back.
//!
//! Logical graph: without switches, the physical links (all between compute nodes). With
//! switches, appendix E's `b'` indirection: one logical arc per ordered pair of compute nodes
//! `(α, β)` that has a path whose interior nodes are switches (a direct link counts), with a
//! variable capacity `b'_{αβ}` carried by a flow in `G`. We aggregate the multi-commodity
//! flow *by source* (one commodity per `α`, absorbed at every `β` by `b'_{αβ}`): a
//! single-source flow decomposes into paths that deliver exactly `b'_{αβ}` to each `β`, so
//! this has the same feasible `b'` as one commodity per pair, with `N |E|` instead of
//! `N^2 |E|` flow variables. Commodities travel through switches only (a compute node on a
//! route would be relaying; trees already express that).

use crate::error::{CollsynthError, Result};
use crate::flow::{Cap, FlowNetwork};
use crate::topology::Topology;
use microlp::{ComparisonOp, LinearExpr, OptimizationDirection, Problem, Variable};
use num_integer::Integer;

/// A logical arc between ranks, with its physical routes once known.
#[derive(Debug, Clone)]
pub struct LogicalArc {
    pub src: usize,
    pub dst: usize,
    /// Switch-free: the link. With switches: `None` (capacity from the commodity flows).
    pub link: Option<usize>,
}

/// The LP's size, to decide whether `auto` solves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub variables: usize,
    pub constraints: usize,
}

/// The instance: logical arcs and, with switches, the links each commodity may use.
pub struct Instance {
    pub n: usize,
    pub arcs: Vec<LogicalArc>,
    /// `commodity_links[α]`: links the commodity of rank α may carry (empty without switches).
    pub commodity_links: Vec<Vec<usize>>,
    pub switches: bool,
    pub caps: Vec<Cap>,
}

impl Instance {
    pub fn new(topo: &Topology, caps: Vec<Cap>) -> Instance {
        let n = topo.n_ranks();
        let switches = topo.n_switches() > 0;
        let mut arcs = Vec::new();
        let mut commodity_links = vec![Vec::new(); n];
        if !switches {
            for (l, link) in topo.links.iter().enumerate() {
                let (a, b) = (topo.rank_of(link.src).unwrap(), topo.rank_of(link.dst).unwrap());
                arcs.push(LogicalArc { src: a, dst: b, link: Some(l) });
            }
        } else {
            for (alpha, links) in commodity_links.iter_mut().enumerate() {
                let start = topo.rank_node(alpha);
                let mut seen = vec![false; topo.n_nodes()];
                seen[start] = true;
                let mut stack = vec![start];
                let mut reach = Vec::new();
                while let Some(u) = stack.pop() {
                    for l in topo.out_links(u) {
                        let w = topo.links[l].dst;
                        if w == start {
                            continue;
                        }
                        links.push(l);
                        if !seen[w] {
                            seen[w] = true;
                            if topo.is_compute(w) {
                                reach.push(topo.rank_of(w).unwrap());
                            } else {
                                stack.push(w);
                            }
                        }
                    }
                }
                reach.sort_unstable();
                arcs.extend(reach.into_iter().map(|b| LogicalArc { src: alpha, dst: b, link: None }));
            }
        }
        Instance { n, arcs, commodity_links, switches, caps }
    }

    pub fn size(&self) -> Size {
        let (n, a) = (self.n, self.arcs.len());
        // x; c_RE, c_BC; 2N flow blocks (arcs + source arcs); b' and commodity flows.
        let commodity: usize = self.commodity_links.iter().map(|l| l.len()).sum();
        let variables = n + 2 * a + 2 * n * (a + n) + if self.switches { a + commodity } else { 0 };
        // Per block: arc caps, source caps, conservation; per arc: RE + BC <= cap; per
        // commodity node: conservation; per link: capacity.
        let constraints =
            a + 2 * n * (a + 2 * n) + if self.switches { n * n + commodity / 2 + self.caps.len() } else { 0 };
        Size { variables, constraints }
    }
}

/// The LP optimum in `f64` (integer bandwidth units).
pub struct FloatSolution {
    pub objective: f64,
    pub x: Vec<f64>,
    pub c_bc: Vec<f64>,
    pub c_re: Vec<f64>,
    /// Per rank α, the commodity flow on `commodity_links[α]` (switches only).
    pub phi: Vec<Vec<f64>>,
    pub b_prime: Vec<f64>,
}

pub fn solve(topo: &Topology, inst: &Instance) -> Result<FloatSolution> {
    let n = inst.n;
    let bmax = *inst.caps.iter().max().unwrap_or(&1) as f64;
    let cap = |l: usize| inst.caps[l] as f64 / bmax;
    let inf = f64::INFINITY;
    let mut p = Problem::new(OptimizationDirection::Maximize);
    let x: Vec<Variable> = (0..n).map(|_| p.add_var(1.0, (0.0, inf))).collect();
    let c_re: Vec<Variable> = inst.arcs.iter().map(|_| p.add_var(0.0, (0.0, inf))).collect();
    let c_bc: Vec<Variable> = inst.arcs.iter().map(|_| p.add_var(0.0, (0.0, inf))).collect();
    // Link sharing: c_RE + c_BC <= b (or b').
    let mut b_prime = Vec::new();
    if inst.switches {
        b_prime = inst.arcs.iter().map(|_| p.add_var(0.0, (0.0, inf))).collect::<Vec<_>>();
    }
    for (a, arc) in inst.arcs.iter().enumerate() {
        let mut e: LinearExpr = [(c_re[a], 1.0), (c_bc[a], 1.0)].into();
        let rhs = match arc.link {
            Some(l) => cap(l),
            None => {
                e.add(b_prime[a], -1.0);
                0.0
            }
        };
        p.add_constraint(e, ComparisonOp::Le, rhs);
    }
    // The 2N max-flow blocks: BC from s to t (forward arcs, c_BC), RE from t to s (written
    // as s to t on the reversed arcs, c_RE).
    for reversed in [false, true] {
        let caps = if reversed { &c_re } else { &c_bc };
        for t in 0..n {
            let mut balance: Vec<LinearExpr> = (0..n).map(|_| LinearExpr::empty()).collect();
            for (a, arc) in inst.arcs.iter().enumerate() {
                let (u, v) = if reversed { (arc.dst, arc.src) } else { (arc.src, arc.dst) };
                if u == t {
                    continue; // flow leaving the sink is useless
                }
                let f = p.add_var(0.0, (0.0, inf));
                p.add_constraint([(f, 1.0), (caps[a], -1.0)], ComparisonOp::Le, 0.0);
                balance[v].add(f, 1.0);
                balance[u].add(f, -1.0);
            }
            for v in 0..n {
                let g = p.add_var(0.0, (0.0, inf));
                p.add_constraint([(g, 1.0), (x[v], -1.0)], ComparisonOp::Le, 0.0);
                balance[v].add(g, 1.0);
            }
            for (v, mut e) in balance.into_iter().enumerate() {
                if v == t {
                    for &xv in &x {
                        e.add(xv, -1.0);
                    }
                }
                p.add_constraint(e, ComparisonOp::Ge, 0.0);
            }
        }
    }
    // Commodity flows (switches): per source α, conservation at switches, absorption of
    // b'_{αβ} at β, and the link capacities over all commodities.
    let mut phi_vars: Vec<Vec<Variable>> = vec![Vec::new(); n];
    if inst.switches {
        let mut on_link: Vec<LinearExpr> = topo.links.iter().map(|_| LinearExpr::empty()).collect();
        let mut arc_of = std::collections::HashMap::new();
        for (a, arc) in inst.arcs.iter().enumerate() {
            arc_of.insert((arc.src, arc.dst), a);
        }
        for alpha in 0..n {
            let mut node: std::collections::BTreeMap<usize, LinearExpr> = Default::default();
            for &l in &inst.commodity_links[alpha] {
                let f = p.add_var(0.0, (0.0, inf));
                phi_vars[alpha].push(f);
                on_link[l].add(f, 1.0);
                let link = &topo.links[l];
                node.entry(link.dst).or_insert_with(LinearExpr::empty).add(f, 1.0);
                if link.src != topo.rank_node(alpha) {
                    node.entry(link.src).or_insert_with(LinearExpr::empty).add(f, -1.0);
                }
            }
            for (v, mut e) in node {
                if let Some(beta) = topo.rank_of(v) {
                    let a = arc_of[&(alpha, beta)];
                    e.add(b_prime[a], -1.0);
                }
                p.add_constraint(e, ComparisonOp::Eq, 0.0);
            }
        }
        for (l, e) in on_link.into_iter().enumerate() {
            p.add_constraint(e, ComparisonOp::Le, cap(l));
        }
    }
    let sol = p
        .solve()
        .map_err(|e| CollsynthError::internal(format!("allreduce LP: {e}")))?
        .into_solution()
        .map_err(|_| CollsynthError::internal("allreduce LP: the solve was interrupted"))?;
    let val = |v: Variable| sol.var_value(v).max(0.0) * bmax;
    Ok(FloatSolution {
        objective: sol.objective() * bmax,
        x: x.iter().map(|&v| val(v)).collect(),
        c_bc: c_bc.iter().map(|&v| val(v)).collect(),
        c_re: c_re.iter().map(|&v| val(v)).collect(),
        phi: phi_vars.iter().map(|vs| vs.iter().map(|&v| val(v)).collect()).collect(),
        b_prime: b_prime.iter().map(|&v| val(v)).collect(),
    })
}

/// An exact, verified solution in units of `1/K` of the integer bandwidths.
#[derive(Debug, Clone)]
pub struct ExactSolution {
    pub k: Cap,
    pub x: Vec<Cap>,
    /// Per logical arc, its physical routes with their units: `(route, bc, re)`.
    pub routes: Vec<Vec<(Vec<usize>, Cap, Cap)>>,
}

impl ExactSolution {
    pub fn total(&self) -> Cap {
        self.x.iter().sum()
    }
}

/// Paths of commodity α (float amounts) to each logical arc.
fn decompose(
    topo: &Topology,
    inst: &Instance,
    fs: &FloatSolution,
    alpha: usize,
    arc_of: &dyn Fn(usize, usize) -> Option<usize>,
) -> Vec<(usize, Vec<usize>, f64)> {
    let tol = 1e-9 * fs.objective.max(1.0);
    let links = &inst.commodity_links[alpha];
    let mut flow: Vec<f64> = fs.phi[alpha].clone();
    let mut absorb = vec![0.0; inst.n];
    for (a, arc) in inst.arcs.iter().enumerate().filter(|(_, arc)| arc.src == alpha) {
        absorb[arc.dst] = fs.b_prime[a];
    }
    let mut out_of: std::collections::HashMap<usize, Vec<usize>> = Default::default();
    for (i, &l) in links.iter().enumerate() {
        out_of.entry(topo.links[l].src).or_default().push(i);
    }
    let start = topo.rank_node(alpha);
    let mut paths = Vec::new();
    for _ in 0..(4 * links.len() + 4 * inst.n) {
        // Follow positive flow from α until a compute node that still absorbs.
        let mut path: Vec<usize> = Vec::new();
        let mut seen = vec![false; topo.n_nodes()];
        let mut u = start;
        seen[u] = true;
        let end = loop {
            if u != start {
                if let Some(b) = topo.rank_of(u) {
                    break Some(b);
                }
            }
            let next = out_of.get(&u).and_then(|v| {
                v.iter()
                    .copied()
                    .filter(|&i| flow[i] > tol && !seen[topo.links[links[i]].dst])
                    .max_by(|&a, &b| flow[a].total_cmp(&flow[b]))
            });
            match next {
                Some(i) => {
                    path.push(i);
                    u = topo.links[links[i]].dst;
                    seen[u] = true;
                }
                None => break None,
            }
        };
        let Some(beta) = end else { break };
        if path.is_empty() {
            break;
        }
        let amount = path.iter().map(|&i| flow[i]).fold(absorb[beta], f64::min);
        for &i in &path {
            flow[i] -= amount;
        }
        absorb[beta] -= amount;
        if let Some(a) = arc_of(alpha, beta) {
            paths.push((a, path.iter().map(|&i| links[i]).collect(), amount));
        }
        if amount <= tol {
            // Numerical dust: drop the arc that stopped us.
            for &i in &path {
                if flow[i] <= tol {
                    flow[i] = 0.0;
                }
            }
            if absorb[beta] <= tol {
                absorb[beta] = 0.0;
            }
        }
    }
    paths
}

/// Best rational approximation with denominator <= `max_den` within `tol`, as (p, q).
fn rational(v: f64, max_den: i128, tol: f64) -> Option<(i128, i128)> {
    let (mut h0, mut h1, mut k0, mut k1) = (0i128, 1i128, 1i128, 0i128);
    let mut r = v;
    for _ in 0..40 {
        let a = r.floor();
        let ai = a as i128;
        let (h2, k2) = (ai * h1 + h0, ai * k1 + k0);
        if k2 > max_den {
            return None;
        }
        if (h2 as f64 / k2 as f64 - v).abs() <= tol {
            return Some((h2, k2));
        }
        (h0, h1, k0, k1) = (h1, h2, k1, k2);
        let frac = r - a;
        if frac.abs() < 1e-15 {
            return None;
        }
        r = 1.0 / frac;
    }
    None
}

/// Round the float solution to multiples of `1/K` and repair it into an exact feasible
/// solution, checked with integer max-flows. `K`: the lcm of the denominators (<= 1000)
/// that reproduce every value within the solver's tolerance, if <= 10^6 (then the rounding
/// is exact on the solver's vertex); else `fallback_k`, rounding down as the paper does.
pub fn exact(topo: &Topology, inst: &Instance, fs: &FloatSolution, fallback_k: Cap) -> Result<ExactSolution> {
    let n = inst.n;
    let mut arc_index = std::collections::HashMap::new();
    for (a, arc) in inst.arcs.iter().enumerate() {
        arc_index.insert((arc.src, arc.dst), a);
    }
    let arc_of = |u: usize, v: usize| arc_index.get(&(u, v)).copied();
    let mut paths: Vec<(usize, Vec<usize>, f64)> = Vec::new();
    if inst.switches {
        for alpha in 0..n {
            paths.extend(decompose(topo, inst, fs, alpha, &arc_of));
        }
    }
    let bmax = *inst.caps.iter().max().unwrap_or(&1) as f64;
    let tol = 1e-6 * bmax;
    let values = fs.x.iter().chain(&fs.c_bc).chain(&fs.c_re).copied().chain(paths.iter().map(|p| p.2));
    let mut k: Cap = 1;
    let mut ok = true;
    for v in values {
        if v.abs() <= tol {
            continue;
        }
        match rational(v, 1000, tol) {
            Some((_, q)) => {
                k = k.lcm(&q);
                if k > 1_000_000 {
                    ok = false;
                    break;
                }
            }
            None => {
                ok = false;
                break;
            }
        }
    }
    if !ok {
        k = fallback_k;
    }
    let kf = k as f64;
    let round = |v: f64| -> Cap {
        let y = v * kf;
        let r = y.round();
        if (y - r).abs() <= 1e-3 {
            r.max(0.0) as Cap
        } else {
            y.floor().max(0.0) as Cap
        }
    };
    let mut x: Vec<Cap> = fs.x.iter().map(|&v| round(v)).collect();
    let mut bc: Vec<Cap> = fs.c_bc.iter().map(|&v| round(v)).collect();
    let mut re: Vec<Cap> = fs.c_re.iter().map(|&v| round(v)).collect();
    // Logical capacities in units: physical links (switch-free) or rounded paths.
    let mut routes: Vec<Vec<(Vec<usize>, Cap)>> = vec![Vec::new(); inst.arcs.len()];
    if inst.switches {
        let mut load = vec![0 as Cap; topo.links.len()];
        for (a, route, amount) in &paths {
            let u = round(*amount);
            if u == 0 {
                continue;
            }
            for &l in route {
                load[l] += u;
            }
            match routes[*a].iter_mut().find(|r| &r.0 == route) {
                Some(r) => r.1 += u,
                None => routes[*a].push((route.clone(), u)),
            }
        }
        // Physical capacities, exactly: trim the largest routes through an overfull link.
        for l in 0..topo.links.len() {
            let limit = inst.caps[l] * k;
            while load[l] > limit {
                let (a, i) = routes
                    .iter()
                    .enumerate()
                    .flat_map(|(a, rs)| rs.iter().enumerate().map(move |(i, r)| (a, i, r)))
                    .filter(|(_, _, r)| r.0.contains(&l) && r.1 > 0)
                    .max_by_key(|(_, _, r)| r.1)
                    .map(|(a, i, _)| (a, i))
                    .expect("an overfull link carries a route");
                let uses = routes[a][i].0.iter().filter(|&&m| m == l).count() as Cap;
                let cut = ((load[l] - limit) + uses - 1) / uses;
                let cut = cut.min(routes[a][i].1);
                routes[a][i].1 -= cut;
                for &m in &routes[a][i].0 {
                    load[m] -= cut;
                }
            }
        }
    } else {
        for (a, arc) in inst.arcs.iter().enumerate() {
            let l = arc.link.expect("switch-free arcs are links");
            routes[a].push((vec![l], inst.caps[l] * k));
        }
    }
    for a in 0..inst.arcs.len() {
        let avail: Cap = routes[a].iter().map(|r| r.1).sum();
        if bc[a] + re[a] > avail {
            re[a] = re[a].min(avail);
            bc[a] = bc[a].min(avail - re[a]);
        }
    }
    // Root shares: lower them until both flow conditions hold exactly.
    loop {
        let mut changed = false;
        for reversed in [false, true] {
            let caps = if reversed { &re } else { &bc };
            if let Some((deficit, side)) = violated(inst, caps, &x, reversed) {
                let mut left = deficit;
                let mut order: Vec<usize> = (0..n).filter(|&v| side[v] && x[v] > 0).collect();
                order.sort_by_key(|&v| std::cmp::Reverse(x[v]));
                for v in order {
                    let d = left.min(x[v]);
                    x[v] -= d;
                    left -= d;
                    if left == 0 {
                        break;
                    }
                }
                if left > 0 {
                    return Err(CollsynthError::internal("allreduce LP repair failed"));
                }
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Assign the BC and RE units of each logical arc to its routes.
    let routes = routes
        .into_iter()
        .enumerate()
        .map(|(a, rs)| {
            let (mut need_bc, mut need_re) = (bc[a], re[a]);
            rs.into_iter()
                .filter_map(|(route, units)| {
                    let b = need_bc.min(units);
                    need_bc -= b;
                    let r = need_re.min(units - b);
                    need_re -= r;
                    (b + r > 0).then_some((route, b, r))
                })
                .collect()
        })
        .collect();
    Ok(ExactSolution { k, x, routes })
}

/// The first sink whose max-flow from the roots (capacity `x_v` each) is below `Σ x`, with
/// the deficit and the roots on the source side of its minimum cut.
fn violated(inst: &Instance, caps: &[Cap], x: &[Cap], reversed: bool) -> Option<(Cap, Vec<bool>)> {
    let n = inst.n;
    let total: Cap = x.iter().sum();
    if total == 0 {
        return None;
    }
    let s = n;
    let mut edges: Vec<(usize, usize, Cap)> = inst
        .arcs
        .iter()
        .zip(caps)
        .filter(|(arc, &c)| c > 0 && arc.src != arc.dst)
        .map(|(arc, &c)| if reversed { (arc.dst, arc.src, c) } else { (arc.src, arc.dst, c) })
        .collect();
    edges.extend((0..n).map(|v| (s, v, x[v])));
    let mut net = FlowNetwork::new(n + 1, &edges);
    for t in 0..n {
        let f = net.max_flow(s, t);
        if f < total {
            let side = net.min_cut_source_side(s);
            return Some((total - f, side[..n].to_vec()));
        }
    }
    None
}
