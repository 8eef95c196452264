//! The base and generative topologies of the finder (§6.2, App. F, Table 9): for a size N
//! and degree d, every zoo spec that is an N-node degree-d member of a family, each evaluated
//! exactly by BFB (`bfb::plan`: T_L = steps = diameter, exact tau). Evaluations are cached
//! for the life of the process, so a sweep over many N pays for each base once.

use super::circulant_bfs::CirculantBfs;
use super::{Candidate, FactorKey};
use crate::error::Result;
use crate::synth::bfb::{self, Symmetry};
use crate::topology::Topology;
use crate::zoo::{self, Expr};
use num_integer::Integer;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The distance-regular graphs of the zoo's `drg` catalogue: (name, N, degree).
pub const DRG_CATALOGUE: &[(&str, usize, usize)] = &[
    ("octahedron", 6, 4),
    ("paley9", 9, 4),
    ("k55-minus-i", 10, 4),
    ("heawood-distance3", 14, 4),
    ("line-petersen", 15, 4),
    ("q4", 16, 4),
    ("line-heawood", 21, 4),
    ("pg23-incidence", 26, 4),
    ("ag24-minus-parallel-class", 32, 4),
    ("odd4", 35, 4),
    ("line-tutte8cage", 45, 4),
    ("doubled-odd4", 70, 4),
    ("gq33-incidence", 80, 4),
    ("petersen", 10, 3),
    ("heawood", 14, 3),
];

/// The paper's DBJMod instances (Table 9): (D, n), N = D^n, degree D.
const DBJMOD: &[(usize, usize)] = &[(2, 3), (2, 4), (3, 2), (4, 2)];

/// Generator sets enumerated in full when there are at most this many; else structured ones.
const ENUMERATE_LIMIT: u128 = 600;

/// Longest run of structured generator sets tried per family.
const STRUCTURED_STARTS: usize = 256;

/// Every this many generator sets, one is searched first to seed the depth bound.
const SEED_STRIDE: usize = 16;

/// Circulant generator sets kept (the best by diameter, then total distance) and measured.
const CIRCULANTS_KEPT: usize = 3;

/// Above this many nodes the girth (needed by the degree expansion only) is not computed.
const GIRTH_MAX_NODES: usize = 512;

/// Every base candidate with `n` nodes and degree `d` (symmetric ones only when
/// `bidirectional`); specs that fail to build (disconnected) are skipped. Guarantees: each has
/// `exact` BFB values, and `simple` only when the topology has exactly n d links of one
/// bandwidth (so its line graph has d n nodes).
pub fn bases(n: usize, d: usize, bidirectional: bool) -> Result<Vec<Candidate>> {
    let mut out = Vec::new();
    for spec in specs(n, d, bidirectional) {
        if let Some(c) = evaluate_base(&spec, d, |_| true)? {
            if c.n == n && (c.symmetric || !bidirectional) {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// A base's zoo spec, with what is known of its candidate before it is built.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseSpec {
    pub text: String,
    /// Its [`Candidate::factor_key`], where the generator search already measured the
    /// diameter (circulants; they are vertex-transitive, so one BFS gives it).
    pub key: Option<FactorKey>,
    /// Known by construction not to be [`Candidate::simple`] (a Kautz graph's dropped loops).
    pub not_simple: bool,
    /// Its family and parameters, where it is measured without being built.
    pub arcs: Option<Arcs>,
}

/// The arcs of a base measured without a `Topology` (see `evaluate_base`).
#[derive(Debug, Clone, PartialEq)]
pub enum Arcs {
    /// `[d]circulant:N:..` as N and its shifts (i -> i + s).
    Circulant(usize, Vec<usize>),
    /// `kautz:D:N` as (D, N).
    Kautz(usize, usize),
}

impl BaseSpec {
    fn plain(text: String) -> BaseSpec {
        BaseSpec { text, key: None, not_simple: false, arcs: None }
    }
}

/// The zoo specs of every base with `n` nodes and degree `d`, in the finder's preference
/// order (which breaks ties between equal candidates).
pub fn specs(n: usize, d: usize, bidirectional: bool) -> Vec<BaseSpec> {
    let mut s: Vec<BaseSpec> = plain_specs(n, d, bidirectional).into_iter().map(BaseSpec::plain).collect();
    if !bidirectional {
        s.extend(directed_specs(n, d));
    }
    if d.is_multiple_of(2) && d >= 4 && n > d + 1 {
        s.extend(kept_circulants(n, d / 2, false).iter().map(|c| circulant_spec(n, c, false)));
    }
    s
}

/// The product-ready candidate ([`Candidate::product_ready`]) of `spec`, if it is one with
/// `n` nodes (and symmetric when `bidirectional`). A spec known not to be simple is not
/// built; a built topology that is not simple is not measured: that spares most BFB plans
/// of the sizes and degrees only products ask for.
pub fn ready_base(spec: &BaseSpec, n: usize, d: usize, bidirectional: bool) -> Result<Option<Candidate>> {
    if spec.not_simple {
        return Ok(None);
    }
    let c = evaluate_base(spec, d, |topo| is_simple(topo, d))?;
    Ok(c.filter(|c| c.n == n && (c.symmetric || !bidirectional) && c.product_ready()))
}

/// The spec of a kept circulant, with its key: diameter from the search, girth known when
/// symmetric (every undirected one; a directed one whose offsets are closed under negation)
/// or small enough to compute (see [`measure`]).
fn circulant_spec(n: usize, kept: &KeptCirculant, directed: bool) -> BaseSpec {
    let (offsets, diameter) = kept;
    let text = format!("{}:{n}:{}", if directed { "dcirculant" } else { "circulant" }, join(offsets));
    let symmetric = !directed || {
        let mut neg: Vec<usize> = offsets.iter().map(|&o| (n - o % n) % n).collect();
        let mut own: Vec<usize> = offsets.iter().map(|&o| o % n).collect();
        neg.sort_unstable();
        own.sort_unstable();
        neg == own
    };
    let key = (*diameter, !symmetric && n > GIRTH_MAX_NODES, text.len());
    let mut shifts = offsets.clone();
    if !directed {
        shifts.extend(offsets.iter().map(|&o| n - o));
    }
    BaseSpec { text, key: Some(key), not_simple: false, arcs: Some(Arcs::Circulant(n, shifts)) }
}

/// The specs of the families with no search: complete, complete bipartite, rings, hypercube,
/// Hamming, twisted torus and the distance-regular catalogue.
fn plain_specs(n: usize, d: usize, bidirectional: bool) -> Vec<String> {
    let mut s = Vec::new();
    if n == d + 1 {
        s.push(format!("complete:{n}"));
    }
    if d >= 2 && n == 2 * d {
        s.push(format!("bipartite:{d},{d}"));
    }
    if d == 1 && n >= 3 && !bidirectional {
        s.push(format!("ring:{n}"));
    }
    if d == 2 && n >= 3 {
        s.push(format!("biring:{n}"));
    }
    if d >= 2 && n > 2 && 1usize.checked_shl(d as u32) == Some(n) {
        s.push(format!("hypercube:{d}"));
    }
    s.extend(hamming(n, d));
    if d == 4 && n.is_multiple_of(2) {
        let a = (((n / 2) as f64).sqrt().round()) as usize;
        if a >= 2 && 2 * a * a == n {
            s.push(format!("twisted-torus:{}x{a}", 2 * a));
        }
    }
    s.extend(DRG_CATALOGUE.iter().filter(|g| (g.1, g.2) == (n, d)).map(|g| format!("drg:{}", g.0)));
    s
}

/// The unidirectional families: generalized Kautz (any N), de Bruijn (N = d^k), Diamond,
/// DBJMod and directed circulants.
fn directed_specs(n: usize, d: usize) -> Vec<BaseSpec> {
    let mut s = Vec::new();
    if d >= 2 && n > d + 1 {
        let kautz = BaseSpec {
            not_simple: zoo::kautz_drops_loops(d, n),
            arcs: Some(Arcs::Kautz(d, n)),
            ..BaseSpec::plain(format!("kautz:{d}:{n}"))
        };
        s.push(kautz);
        if is_power_of(n, d) {
            s.push(BaseSpec::plain(format!("debruijn:{d}:{n}")));
        }
    }
    if (n, d) == (8, 2) {
        s.push(BaseSpec::plain("diamond".to_string()));
    }
    s.extend(
        DBJMOD
            .iter()
            .filter(|&&(b, k)| b.pow(k as u32) == n && b == d)
            .map(|(b, k)| BaseSpec::plain(format!("dbjmod:{b}:{k}"))),
    );
    if d >= 2 && n > d + 1 {
        s.extend(kept_circulants(n, d, true).iter().map(|c| circulant_spec(n, c, true)));
    }
    s
}

/// Hamming graphs H(k, q), k >= 2, q >= 3 (q = 2 is the hypercube): q^k nodes, degree k(q-1).
fn hamming(n: usize, d: usize) -> Vec<String> {
    (2..=d)
        .filter(|k| d.is_multiple_of(*k))
        .filter_map(|k| {
            let q = d / k + 1;
            (q >= 3 && q.checked_pow(k as u32) == Some(n)).then(|| format!("hamming:{k},{q}"))
        })
        .collect()
}

fn is_power_of(n: usize, b: usize) -> bool {
    let mut x = b;
    while x < n {
        x = match x.checked_mul(b) {
            Some(x) => x,
            None => return false,
        };
    }
    x == n && n > b
}

fn join(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// The generator sets of the `CIRCULANTS_KEPT` best circulants on Z_n with `k` offsets
/// (directed: i -> i+s; undirected: i <-> i+s, s <= n/2), by (diameter, total distance) —
/// one BFS each, the graph being vertex-transitive. All sets when there are few (the paper's
/// F.4 choice, Boesch-Wang's {m, m+1}, is among them), else runs {a, a+1, ..} and
/// {1, a, a+1, ..} (which contain it as well).
pub fn best_circulants(n: usize, k: usize, directed: bool) -> Vec<KeptCirculant> {
    let top = if directed { n - 1 } else { n / 2 };
    if k == 0 || k > top {
        return Vec::new();
    }
    let sets: Vec<Vec<usize>> =
        generator_sets(top, k).into_iter().filter(|s| s.iter().fold(n, |g, &x| g.gcd(&x)) == 1).collect();
    best_within(&mut CirculantBfs::new(n), &sets, directed, usize::MAX)
}

/// Offsets of a kept circulant and its diameter.
pub type KeptCirculant = (Vec<usize>, usize);

/// The best [`CIRCULANTS_KEPT`] of `sets` (at most) among those of diameter <= `limit`.
fn best_within(bfs: &mut CirculantBfs, sets: &[Vec<usize>], directed: bool, limit: usize) -> Vec<KeptCirculant> {
    let n = bfs.n();
    // Among equal diameters prefer Thm 22's {m, m+1} (the paper's choice, so its names appear).
    let thm22 = boesch_wang(n).filter(|_| sets.first().is_some_and(|s| s.len() == 2) && !directed);
    // The best so far, sorted: once there are enough, a set of larger diameter than the last
    // kept cannot enter, so its BFS stops at that depth.
    let mut best: Vec<(Score, &Vec<usize>)> = Vec::with_capacity(CIRCULANTS_KEPT + 1);
    // The kept sets are the least by (score, set) whatever the order they are met in, so a
    // first pass over every SEED_STRIDE-th set finds a good bound early: most of the others'
    // searches then stop at its depth instead of running to their (often large) diameter.
    let seeds = sets.iter().step_by(SEED_STRIDE);
    let rest = sets.iter().enumerate().filter(|(i, _)| i % SEED_STRIDE != 0).map(|(_, s)| s);
    for s in seeds.chain(rest) {
        let bound = if best.len() == CIRCULANTS_KEPT { best[CIRCULANTS_KEPT - 1].0 .0 } else { limit };
        let Some((diameter, total)) = bfs.distances(s, directed, bound.min(limit)) else { continue };
        let run = s.windows(2).all(|w| w[1] == w[0] + 1);
        let paper = thm22.is_some_and(|m| s[..] == [m, m + 1]);
        let entry = ((diameter, !paper, total, !run), s);
        let at = best.partition_point(|b| *b < entry);
        if at < CIRCULANTS_KEPT {
            best.insert(at, entry);
            best.truncate(CIRCULANTS_KEPT);
        }
    }
    best.into_iter().map(|((diameter, ..), s)| (s.clone(), diameter)).collect()
}

/// [`best_circulants`], cached for the life of the process: a size's bases are listed for its
/// pool, for its best product factor and for both directions.
fn kept_circulants(n: usize, k: usize, directed: bool) -> Arc<Vec<KeptCirculant>> {
    type Kept = Mutex<HashMap<(usize, usize, bool), Arc<Vec<KeptCirculant>>>>;
    static KEPT: OnceLock<Kept> = OnceLock::new();
    let kept = KEPT.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(hit) = kept.lock().expect("find circulants").get(&(n, k, directed)) {
        return hit.clone();
    }
    let sets = Arc::new(best_circulants(n, k, directed));
    kept.lock().expect("find circulants").insert((n, k, directed), sets.clone());
    sets
}

/// How a circulant ranks: (diameter, not Thm 22's set, total distance, not a run).
type Score = (usize, bool, usize, bool);

/// Thm 22 (Boesch-Wang): for n > 6, C(n, {m, m+1}) with m = ceil((-1 + sqrt(2n - 1)) / 2)
/// has the least diameter, m, of all degree-4 circulants.
fn boesch_wang(n: usize) -> Option<usize> {
    (n > 6).then(|| (1..n).find(|&m| (2 * m + 1) * (2 * m + 1) >= 2 * n - 1).unwrap_or(1))
}

/// k-subsets of 1..=top: all when few, else structured runs.
pub(super) fn generator_sets(top: usize, k: usize) -> Vec<Vec<usize>> {
    if binomial(top, k) <= ENUMERATE_LIMIT {
        let mut all = Vec::new();
        let mut cur: Vec<usize> = (1..=k).collect();
        loop {
            all.push(cur.clone());
            // Next combination in lexicographic order.
            let Some(i) = (0..k).rev().find(|&i| cur[i] < top - (k - 1 - i)) else { break };
            cur[i] += 1;
            for j in i + 1..k {
                cur[j] = cur[j - 1] + 1;
            }
        }
        return all;
    }
    let mut sets = Vec::new();
    for a in 1..=STRUCTURED_STARTS.min(top + 1 - k) {
        sets.push((a..a + k).collect());
    }
    for a in 2..=STRUCTURED_STARTS.min(top + 2 - k) {
        let mut s = vec![1];
        s.extend(a..a + k - 1);
        sets.push(s);
    }
    sets
}

fn binomial(n: usize, k: usize) -> u128 {
    let mut r: u128 = 1;
    for i in 0..k.min(n) as u128 {
        r = r.saturating_mul(n as u128 - i) / (i + 1);
    }
    r
}

/// The process-wide cache of base evaluations by spec (None: the spec did not build).
fn cache() -> &'static Mutex<HashMap<String, Option<Candidate>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Candidate>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Build `spec` and evaluate it with BFB, through the cache; `d` is its nominal degree (the
/// paper's, counting a Kautz graph's self-loops that the zoo drops). A spec that does not
/// build is None; an evaluation error is returned.
pub fn evaluate(spec: &str, d: usize) -> Result<Option<Candidate>> {
    evaluate_if(spec, d, |_| true)
}

/// [`evaluate`], except that a built topology failing `worth` is neither measured nor cached
/// (None; a cached evaluation is returned whatever `worth` says).
fn evaluate_if(spec: &str, d: usize, worth: impl Fn(&Topology) -> bool) -> Result<Option<Candidate>> {
    if let Some(hit) = cache().lock().expect("find cache").get(spec) {
        return Ok(hit.clone());
    }
    let value = match zoo::from_spec(spec) {
        Ok(topo) if !worth(&topo) => return Ok(None),
        Ok(topo) => Some(measure(Expr::Spec(spec.to_string()), &topo, d)?),
        Err(_) => None,
    };
    cache().lock().expect("find cache").insert(spec.to_string(), value.clone());
    Ok(value)
}

/// [`evaluate_if`] of a base: circulants and Kautz graphs are measured from their arcs
/// without being built ([`measure_circulant`], [`measure_kautz`]: the same candidate; cached
/// alike, whatever `worth` says, which only spares building).
fn evaluate_base(spec: &BaseSpec, d: usize, worth: impl Fn(&Topology) -> bool) -> Result<Option<Candidate>> {
    let Some(arcs) = &spec.arcs else {
        return evaluate_if(&spec.text, d, worth);
    };
    if let Some(hit) = cache().lock().expect("find cache").get(&spec.text) {
        return Ok(hit.clone());
    }
    let measured = match arcs {
        Arcs::Circulant(n, shifts) => measure_circulant(&spec.text, *n, shifts, d),
        Arcs::Kautz(degree, n) => measure_kautz(&spec.text, *degree, *n, d),
    };
    let Some(c) = measured else {
        return evaluate_if(&spec.text, d, worth);
    };
    cache().lock().expect("find cache").insert(spec.text.clone(), Some(c.clone()));
    Ok(Some(c))
}

/// [`measure`] of `kautz:D:N` (`spec`, nominal degree `d`) from its arcs x -> -(D x + a) mod
/// N, a = 1..D, self-loops dropped as the zoo drops them, without a `Topology`: BFB by
/// `bfb::profile_arcs` with the reflection x -> N - 1 - x, simplicity, symmetry and girth
/// from the arc list. Guarantees: the candidate `measure` gives on `zoo::from_spec(spec)`;
/// None where the arcs repeat (the zoo would merge them) or `profile_arcs` is None.
pub fn measure_kautz(spec: &str, degree: usize, n: usize, d: usize) -> Option<Candidate> {
    let mut arcs: Vec<(usize, usize)> = (0..n)
        .flat_map(|x| (1..=degree).map(move |a| (x, (n - (degree * x + a) % n) % n)))
        .filter(|&(x, y)| x != y)
        .collect();
    arcs.sort_unstable();
    if arcs.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    let expr = Expr::Spec(spec.to_string());
    let reflection = zoo::symmetry::rank_automorphism(&expr, n)?;
    let profile = bfb::profile_arcs(n, &arcs, &reflection)?;
    let symmetric = arcs.iter().all(|&(x, y)| arcs.binary_search(&(y, x)).is_ok());
    // One link per arc, all of one bandwidth.
    let simple = arcs.len() == n * d;
    Some(exact(expr, n, d, &profile, simple, symmetric, || Some(max_girth_of_arcs(n, &arcs, n))))
}

/// [`measure`] of the circulant `spec` on Z_n with arcs i -> i + s for the `shifts` (as the
/// zoo builds it: a repeated arc is one link of the summed bandwidth), from one BFS and rank
/// 0's subproblems (`bfb::profile::circulant`) instead of a built topology. Guarantees: the
/// candidate `measure` gives on `zoo::from_spec(spec)`; None where that profile is None.
pub fn measure_circulant(spec: &str, n: usize, shifts: &[usize], d: usize) -> Option<Candidate> {
    let profile = bfb::profile::circulant(n, shifts)?;
    let mut arcs: Vec<usize> = shifts.iter().map(|&s| s % n).collect();
    arcs.sort_unstable();
    let runs: Vec<usize> = arcs.chunk_by(|a, b| a == b).map(<[usize]>::len).collect();
    arcs.dedup();
    // One link per distinct shift and node; all of one bandwidth iff the multiplicities agree.
    let simple = arcs.len() == d && runs.iter().all(|&r| r == runs[0]);
    let symmetric = arcs.iter().all(|&s| arcs.binary_search(&(n - s)).is_ok());
    // Vertex-transitive: node 0's shortest cycle, through an in-neighbour -s.
    let girth = || {
        let dist = bfb::profile::circulant_distances(n, arcs.iter().copied())?;
        arcs.iter().map(|&s| dist[n - s] as usize + 1).min()
    };
    Some(exact(Expr::Spec(spec.to_string()), n, d, &profile, simple, symmetric, girth))
}

/// One link per arc, all of one bandwidth, n d links: [`Candidate::simple`].
fn is_simple(topo: &Topology, d: usize) -> bool {
    let bw0 = topo.links.first().map(|l| l.bandwidth);
    topo.links.len() == topo.n_ranks() * d && topo.links.iter().all(|l| Some(l.bandwidth) == bw0)
}

/// The exact BFB candidate of a built topology of nominal degree `d`, `expr` the expression
/// that built it. Where the zoo knows `expr` to be vertex-transitive, BFB solves one rank's
/// subproblems only (`bfb::profile`: the same steps and tau as the full plan); where it knows
/// an automorphism, one rank's per orbit (`bfb::profile_with_automorphism`).
pub fn measure(expr: Expr, topo: &Topology, d: usize) -> Result<Candidate> {
    let symmetry = if zoo::vertex_transitive(&expr) { Symmetry::VertexTransitive } else { Symmetry::Unknown };
    let n = topo.n_ranks();
    let profile = match zoo::symmetry::rank_automorphism(&expr, n) {
        // Kautz and de Bruijn graphs: half the ranks' subproblems.
        Some(sigma) if symmetry == Symmetry::Unknown => bfb::profile_with_automorphism(topo, &sigma)?,
        _ => bfb::profile(topo, symmetry)?,
    };
    let simple = is_simple(topo, d);
    let symmetric = topo.is_bidirectional();
    Ok(exact(expr, n, d, &profile, simple, symmetric, || Some(max_girth(topo, symmetry))))
}

/// The exact candidate of `expr` (n nodes, degree d) with BFB's `profile` (diameter = steps).
/// Its girth is 2 when `symmetric`, else `girth()` up to [`GIRTH_MAX_NODES`] nodes (unknown
/// above: too costly for what it buys).
fn exact(
    expr: Expr,
    n: usize,
    d: usize,
    profile: &bfb::profile::Profile,
    simple: bool,
    symmetric: bool,
    girth: impl FnOnce() -> Option<usize>,
) -> Candidate {
    let girth = if symmetric {
        Some(2)
    } else if n <= GIRTH_MAX_NODES {
        girth()
    } else {
        None
    };
    Candidate {
        expr,
        n,
        degree: d,
        steps: profile.steps,
        tau: profile.tau,
        diameter: profile.steps,
        simple,
        exact: true,
        symmetric,
        girth,
    }
}

/// max over nodes u of the shortest directed cycle through u: the distance between two copies
/// of u in a degree expansion. Vertex-transitive: node 0's (every node has the same).
fn max_girth(t: &Topology, symmetry: Symmetry) -> usize {
    let nodes = match symmetry {
        Symmetry::VertexTransitive => t.n_nodes().min(1),
        Symmetry::Unknown => t.n_nodes(),
    };
    let arcs: Vec<(usize, usize)> = t.links.iter().map(|l| (l.src, l.dst)).collect();
    max_girth_of_arcs(t.n_nodes(), &arcs, nodes)
}

/// max over nodes u < `nodes` of the shortest directed cycle through u, in the graph of the
/// `arcs` on `0..n` (0 without nodes).
fn max_girth_of_arcs(n: usize, arcs: &[(usize, usize)], nodes: usize) -> usize {
    let adjacency = Adjacency::of_arcs(n, arcs);
    let mut bfs = CycleBfs::new(n);
    (0..nodes).map(|u| bfs.shortest_cycle(&adjacency, u)).max().unwrap_or(0)
}

/// Out- and in-neighbours of nodes `0..n`, one per arc.
struct Adjacency {
    outs: Vec<Vec<usize>>,
    ins: Vec<Vec<usize>>,
}

impl Adjacency {
    fn of_arcs(n: usize, arcs: &[(usize, usize)]) -> Adjacency {
        let (mut outs, mut ins) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        for &(u, v) in arcs {
            outs[u].push(v);
            ins[v].push(u);
        }
        Adjacency { outs, ins }
    }
}

/// Breadth-first search for the shortest directed cycle through a node, with its buffers.
struct CycleBfs {
    dist: Vec<usize>,
    /// In-neighbours of the current node.
    closes: Vec<bool>,
    queue: Vec<usize>,
}

impl CycleBfs {
    fn new(nodes: usize) -> CycleBfs {
        CycleBfs { dist: vec![usize::MAX; nodes], closes: vec![false; nodes], queue: Vec::with_capacity(nodes) }
    }

    /// min over in-neighbours w of u of dist(u -> w) + 1 (`usize::MAX` when none is
    /// reachable). The search stops at the first in-neighbour it reaches: nodes are reached
    /// by nondecreasing distance, so that one is the nearest.
    fn shortest_cycle(&mut self, g: &Adjacency, u: usize) -> usize {
        for &w in &g.ins[u] {
            self.closes[w] = true;
        }
        self.queue.clear();
        self.queue.push(u);
        self.dist[u] = 0;
        let mut found = if self.closes[u] { 1 } else { usize::MAX };
        let mut head = 0;
        'search: while found == usize::MAX {
            let Some(&x) = self.queue.get(head) else { break };
            head += 1;
            for &y in &g.outs[x] {
                if self.dist[y] == usize::MAX {
                    self.dist[y] = self.dist[x] + 1;
                    self.queue.push(y);
                    if self.closes[y] {
                        found = self.dist[y] + 1;
                        break 'search;
                    }
                }
            }
        }
        for &x in &self.queue {
            self.dist[x] = usize::MAX;
        }
        for &w in &g.ins[u] {
            self.closes[w] = false;
        }
        found
    }
}

#[cfg(test)]
mod tests;
