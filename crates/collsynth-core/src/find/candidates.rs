//! The base and generative topologies of the finder (notes section 4, Table 9): for a size N
//! and degree d, every zoo spec that is an N-node degree-d member of a family, each evaluated
//! exactly by BFB (`bfb::plan`: T_L = steps = diameter, exact tau). Evaluations are cached
//! for the life of the process, so a sweep over many N pays for each base once.

use super::Candidate;
use crate::error::Result;
use crate::synth::bfb::{self, Symmetry};
use crate::topology::metrics::bfs_hops;
use crate::topology::Topology;
use crate::zoo::{self, Expr};
use num_integer::Integer;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

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
        if let Some(c) = evaluate(&spec, d)? {
            if c.n == n && (c.symmetric || !bidirectional) {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// The members of [`bases`] that can be product factors (simple, exact, bandwidth-optimal),
/// in the same order. A spec whose topology is not simple is built but not measured: that is
/// what spares most BFB plans of the sizes and degrees only products ask for.
pub fn product_ready_bases(n: usize, d: usize, bidirectional: bool) -> Result<Vec<Candidate>> {
    let mut out = Vec::new();
    for spec in specs(n, d, bidirectional) {
        if let Some(c) = evaluate_if(&spec, d, |topo| is_simple(topo, d))? {
            if c.n == n && (c.symmetric || !bidirectional) && c.product_ready() {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// The zoo specs of every family member with `n` nodes and degree `d`.
fn specs(n: usize, d: usize, bidirectional: bool) -> Vec<String> {
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
    if !bidirectional {
        s.extend(directed_specs(n, d));
    }
    if d.is_multiple_of(2) && d >= 4 && n > d + 1 {
        s.extend(best_circulants(n, d / 2, false).into_iter().map(|o| format!("circulant:{n}:{}", join(&o))));
    }
    s
}

/// The unidirectional families: generalized Kautz (any N), de Bruijn (N = d^k), Diamond,
/// DBJMod and directed circulants.
fn directed_specs(n: usize, d: usize) -> Vec<String> {
    let mut s = Vec::new();
    if d >= 2 && n > d + 1 {
        s.push(format!("kautz:{d}:{n}"));
        if is_power_of(n, d) {
            s.push(format!("debruijn:{d}:{n}"));
        }
    }
    if (n, d) == (8, 2) {
        s.push("diamond".to_string());
    }
    s.extend(DBJMOD.iter().filter(|&&(b, k)| b.pow(k as u32) == n && b == d).map(|(b, k)| format!("dbjmod:{b}:{k}")));
    if d >= 2 && n > d + 1 {
        s.extend(best_circulants(n, d, true).into_iter().map(|o| format!("dcirculant:{n}:{}", join(&o))));
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

/// The generator sets of the [`CIRCULANTS_KEPT`] best circulants on Z_n with `k` offsets
/// (directed: i -> i+s; undirected: i <-> i+s, s <= n/2), by (diameter, total distance) —
/// one BFS each, the graph being vertex-transitive. All sets when there are few (the paper's
/// F.4 choice, Boesch-Wang's {m, m+1}, is among them), else runs {a, a+1, ..} and
/// {1, a, a+1, ..} (which contain it as well).
pub fn best_circulants(n: usize, k: usize, directed: bool) -> Vec<Vec<usize>> {
    let top = if directed { n - 1 } else { n / 2 };
    if k == 0 || k > top {
        return Vec::new();
    }
    // Among equal diameters prefer Thm 22's {m, m+1} (the paper's choice, so its names appear).
    let thm22 = boesch_wang(n).filter(|_| k == 2 && !directed);
    let mut bfs = CirculantBfs::new(n);
    // The best so far, sorted: once there are enough, a set of larger diameter than the last
    // kept cannot enter, so its BFS stops at that depth.
    let mut best: Vec<(Score, Vec<usize>)> = Vec::with_capacity(CIRCULANTS_KEPT + 1);
    for s in generator_sets(top, k).into_iter().filter(|s| s.iter().fold(n, |g, &x| g.gcd(&x)) == 1) {
        let limit = if best.len() == CIRCULANTS_KEPT { best[CIRCULANTS_KEPT - 1].0 .0 } else { usize::MAX };
        let Some((diameter, total)) = bfs.distances(&s, directed, limit) else { continue };
        let run = s.windows(2).all(|w| w[1] == w[0] + 1);
        let paper = thm22.is_some_and(|m| s == [m, m + 1]);
        let entry = ((diameter, !paper, total, !run), s);
        let at = best.partition_point(|b| *b < entry);
        if at < CIRCULANTS_KEPT {
            best.insert(at, entry);
            best.truncate(CIRCULANTS_KEPT);
        }
    }
    best.into_iter().map(|(_, s)| s).collect()
}

/// How a circulant ranks: (diameter, not Thm 22's set, total distance, not a run).
type Score = (usize, bool, usize, bool);

/// Thm 22 (Boesch-Wang): for n > 6, C(n, {m, m+1}) with m = ceil((-1 + sqrt(2n - 1)) / 2)
/// has the least diameter, m, of all degree-4 circulants.
fn boesch_wang(n: usize) -> Option<usize> {
    (n > 6).then(|| (1..n).find(|&m| (2 * m + 1) * (2 * m + 1) >= 2 * n - 1).unwrap_or(1))
}

/// k-subsets of 1..=top: all when few, else structured runs.
fn generator_sets(top: usize, k: usize) -> Vec<Vec<usize>> {
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

/// Breadth-first search from 0 in circulants on Z_n, with buffers reused across generator sets.
struct CirculantBfs {
    n: usize,
    dist: Vec<u32>,
    queue: Vec<u32>,
    shifts: Vec<usize>,
}

impl CirculantBfs {
    fn new(n: usize) -> CirculantBfs {
        CirculantBfs { n, dist: vec![u32::MAX; n], queue: Vec::with_capacity(n), shifts: Vec::new() }
    }

    /// (diameter, sum of distances) from 0 in the circulant with `offsets` (i -> i+o, and
    /// i -> i-o unless `directed`); None if some node is unreachable or farther than `limit`
    /// (the search stops there).
    fn distances(&mut self, offsets: &[usize], directed: bool, limit: usize) -> Option<(usize, usize)> {
        let n = self.n;
        self.shifts.clear();
        self.shifts.extend_from_slice(offsets);
        if !directed {
            self.shifts.extend(offsets.iter().map(|&o| n - o));
        }
        self.dist.fill(u32::MAX);
        self.queue.clear();
        self.dist[0] = 0;
        self.queue.push(0);
        let (mut head, mut total) = (0, 0);
        while head < self.queue.len() {
            let u = self.queue[head] as usize;
            head += 1;
            let next = self.dist[u] + 1;
            if next as usize > limit && self.queue.len() < n {
                return None;
            }
            for &s in &self.shifts {
                // u + s < 2n: one subtraction instead of a division.
                let v = if u + s >= n { u + s - n } else { u + s };
                if self.dist[v] == u32::MAX {
                    self.dist[v] = next;
                    total += next as usize;
                    self.queue.push(v as u32);
                }
            }
        }
        let diameter = self.dist[*self.queue.last()? as usize] as usize;
        (self.queue.len() == n).then_some((diameter, total))
    }
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

/// One link per arc, all of one bandwidth, n d links: [`Candidate::simple`].
fn is_simple(topo: &Topology, d: usize) -> bool {
    let bw0 = topo.links.first().map(|l| l.bandwidth);
    topo.links.len() == topo.n_ranks() * d && topo.links.iter().all(|l| Some(l.bandwidth) == bw0)
}

/// The exact BFB candidate of a built topology of nominal degree `d`, `expr` the expression
/// that built it. Where the zoo knows `expr` to be vertex-transitive, BFB solves one rank's
/// subproblems only (`bfb::profile`: the same steps and tau as the full plan).
pub fn measure(expr: Expr, topo: &Topology, d: usize) -> Result<Candidate> {
    let symmetry = if zoo::vertex_transitive(&expr) { Symmetry::VertexTransitive } else { Symmetry::Unknown };
    let profile = bfb::profile(topo, symmetry)?;
    let n = topo.n_ranks();
    let simple = is_simple(topo, d);
    let symmetric = topo.is_bidirectional();
    let girth = if symmetric {
        Some(2)
    } else if n <= GIRTH_MAX_NODES {
        Some(max_girth(topo, symmetry))
    } else {
        None
    };
    Ok(Candidate {
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
    })
}

/// max over nodes u of the shortest directed cycle through u: the distance between two copies
/// of u in a degree expansion. Vertex-transitive: node 0's (every node has the same).
fn max_girth(t: &Topology, symmetry: Symmetry) -> usize {
    let nodes = match symmetry {
        Symmetry::VertexTransitive => t.n_nodes().min(1),
        Symmetry::Unknown => t.n_nodes(),
    };
    (0..nodes)
        .map(|u| {
            let d = bfs_hops(t, u);
            t.in_links(u).iter().map(|&l| d[t.links[l].src].saturating_add(1)).min().unwrap_or(usize::MAX)
        })
        .max()
        .unwrap_or(0)
}
