//! `--tree-shape boxes`: a two-level forest for identical boxes on one switch (`mi250:N`),
//! for time rather than bandwidth.
//!
//! ForestColl's optimal forest on `mi250:2` (the general packing: 141 tree batches) has trees
//! up to 22 rank hops high, and a tree's height is paid in slices at every hop (the runtime
//! model, docs/simulator.md); 39 of its 141 take the switch two to four times. Here every
//! tree crosses the switch once, from its root to the same position in every other box
//! (as [`super::boxes`]), and spans each box with the same in-box tree, whose height is at
//! most one more than the box's diameter. The in-box trees are `T` per position, each
//! carrying `1/T` of its root's shard; they may use a switch route between two ranks of
//! the box (the switch links' spare capacity beyond the crossing), and are chosen to spread
//! the load: greedily (each rank joins where the busiest link of its route would be least
//! loaded), then by moving single ranks to another parent while that lowers
//! `sum over links of (load / bandwidth)^8`, a smooth stand-in for the busiest link.
//!
//! Not an optimum: the forest's algbw is reported exactly (`forest_algbw_exact`) and is
//! below the unlimited optimum (`mi250:2`: 320 of 354.13 GB/s), the price of one crossing
//! per tree and of the height limit.

use super::boxes::Boxes;
use super::emit::Tree;
use crate::rational::Rat;
use crate::topology::Topology;

/// In-box trees per position unless `--max-trees` says otherwise.
pub const DEFAULT_TREES: usize = 8;

/// The staggered reduce-scatter's forest ([`super::stagger`]): in-box trees per position,
/// the load potential's exponent and the height allowance over the box's diameter. More,
/// better balanced trees (336.8 of 354.13 GB/s on `mi250:2`, against 320 for the
/// allgather's) pay off there once the folds are ordered: 64 MiB at 329.6 us against 353 at
/// T = 8 (docs/forestcoll.md).
pub const REDUCE_TREES: usize = 16;
pub const REDUCE_POWER: i32 = 32;
pub const REDUCE_EXTRA_HEIGHT: usize = 2;

/// Rounds of single-rank moves at most (each round tries every rank of every tree once).
const ROUNDS: usize = 16;

/// The exponent of the load potential: the higher, the closer its minimum to the busiest
/// link's (on `mi250:2` at 8 trees per position: 8 stops at 320 GB/s, 32 reaches 336.8 but
/// its trees run slower at 1 MiB; 16 measured best over 1 MiB to 1 GiB, docs/forestcoll.md).
pub const POWER: i32 = 16;

/// How an in-box tree reaches a rank from its parent: by their direct link, or through the
/// switch (the parent's up link and the child's down link).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Via {
    Direct,
    Switch,
}

/// Which routes an in-box tree may take from a parent to a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Routes {
    /// The direct link, or through the switch (up then down).
    Any,
    /// The direct link only; growth takes the switch where the height leaves a rank no direct
    /// parent. Under Simple a switch route costs the NIC's message overhead at every fold.
    Direct,
}

/// One box's links by position: the direct links (`direct[p][q]`, a link index of box 0)
/// and, per position, the up and down switch link indices of box 0.
pub(super) struct BoxLinks {
    pub(super) g: usize,
    pub(super) direct: Vec<Vec<Option<usize>>>,
    pub(super) up: Vec<usize>,
    pub(super) down: Vec<usize>,
}

impl BoxLinks {
    fn route(&self, u: usize, v: usize, via: Via) -> [Option<usize>; 2] {
        match via {
            Via::Direct => [self.direct[u][v], None],
            Via::Switch => [Some(self.up[u]), Some(self.down[v])],
        }
    }

    fn vias(&self, u: usize, v: usize, routes: Routes) -> impl Iterator<Item = Via> + '_ {
        [Via::Direct, Via::Switch].into_iter().filter(move |&w| match w {
            Via::Direct => self.direct[u][v].is_some(),
            Via::Switch => routes == Routes::Any,
        })
    }

    /// The links `tree` takes in box 0, parents first (a link twice if taken twice).
    pub(super) fn tree_links(&self, tree: &InBox) -> Vec<usize> {
        tree.order().into_iter().flat_map(|v| self.route(tree.parent[v].0, v, tree.parent[v].1)).flatten().collect()
    }

    /// Hop count of the longest shortest path by direct links; None if disconnected.
    pub(super) fn diameter(&self) -> Option<usize> {
        let mut worst = 0;
        for s in 0..self.g {
            let mut dist = vec![usize::MAX; self.g];
            dist[s] = 0;
            let mut queue = std::collections::VecDeque::from([s]);
            while let Some(x) = queue.pop_front() {
                for y in 0..self.g {
                    if self.direct[x][y].is_some() && dist[y] == usize::MAX {
                        dist[y] = dist[x] + 1;
                        queue.push_back(y);
                    }
                }
            }
            worst = worst.max(*dist.iter().max()?);
            if worst == usize::MAX {
                return None;
            }
        }
        Some(worst)
    }
}

/// An in-box tree: `parent[v]` = (parent position, how), the root's entry unused.
#[derive(Debug, Clone)]
pub(super) struct InBox {
    pub(super) root: usize,
    pub(super) parent: Vec<(usize, Via)>,
}

impl InBox {
    fn depths(&self) -> Vec<usize> {
        let g = self.parent.len();
        let mut depth = vec![usize::MAX; g];
        depth[self.root] = 0;
        // Parents are reached first in `order`.
        for v in self.order() {
            depth[v] = depth[self.parent[v].0] + 1;
        }
        depth
    }

    /// Hops from the deepest rank up to the root.
    pub(super) fn height(&self) -> usize {
        self.depths().into_iter().max().unwrap_or(0)
    }

    /// Non-root positions, parents first (breadth first from the root, by position).
    fn order(&self) -> Vec<usize> {
        let g = self.parent.len();
        let mut out = Vec::with_capacity(g);
        let mut frontier = vec![self.root];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &x in &frontier {
                next.extend((0..g).filter(|&v| v != self.root && self.parent[v].0 == x));
            }
            out.extend(&next);
            frontier = next;
        }
        out
    }

    /// Positions in v's subtree (v included).
    fn subtree(&self, v: usize) -> Vec<bool> {
        let g = self.parent.len();
        let mut inside = vec![false; g];
        inside[v] = true;
        for x in self.order() {
            if inside[self.parent[x].0] {
                inside[x] = true;
            }
        }
        inside
    }
}

/// Link loads in tree-uses (one use carries `1/T` of a shard) and the links' bandwidths.
struct Loads {
    load: Vec<f64>,
    bw: Vec<f64>,
    power: i32,
}

impl Loads {
    fn add(&mut self, route: [Option<usize>; 2], w: f64) {
        route.iter().flatten().for_each(|&l| self.load[l] += w);
    }

    /// The busiest link of `route` after adding `w` to it (load over bandwidth).
    fn peak_with(&self, route: [Option<usize>; 2], w: f64) -> f64 {
        route.iter().flatten().map(|&l| (self.load[l] + w) / self.bw[l]).fold(0.0, f64::max)
    }

    fn potential(&self, links: &[usize]) -> f64 {
        links.iter().map(|&l| (self.load[l] / self.bw[l]).powi(self.power)).sum()
    }
}

/// The two-level forest with `t` in-box trees per position, or None when `topo` is not
/// identical boxes on one switch ([`Boxes::detect`]) or a box's direct links do not connect
/// it. Trees: spanning arborescences of every rank, `t` per root (count 1 each, k = t).
pub fn trees(topo: &Topology, t: usize) -> Option<Vec<Tree>> {
    trees_with(topo, t, POWER, 1)
}

/// [`trees`] with the load potential's exponent and the height allowance over the box's
/// diameter (in-box trees at most `diameter + extra` high). Tree `b G t + j G + p` is the
/// j-th tree of the rank at position p of box b ([`tree_of`]).
pub fn trees_with(topo: &Topology, t: usize, power: i32, extra: usize) -> Option<Vec<Tree>> {
    let (bx, links) = boxes_of(topo)?;
    let height = links.diameter()? + extra;
    let in_box = in_box_trees(topo, &bx, &links, t, height, power, Routes::Any);
    Some(place_forest(topo, &bx, &in_box.iter().map(|tree| (tree, 1)).collect::<Vec<_>>()))
}

/// The boxes of `topo` and box 0's links, when it is identical boxes on one switch.
pub(super) fn boxes_of(topo: &Topology) -> Option<(Boxes, BoxLinks)> {
    let bx = detect(topo)?;
    let links = box_links(topo, &bx)?;
    Some((bx, links))
}

/// The two-level forest of `in_box` (in-box trees with their counts): for every box, every
/// in-box tree rooted at the box's rank at its position, in that order, box by box.
pub(super) fn place_forest(topo: &Topology, bx: &Boxes, in_box: &[(&InBox, i128)]) -> Vec<Tree> {
    let boxes = bx.boxes();
    let g = boxes.first().map_or(0, Vec::len);
    let mut out = Vec::with_capacity(boxes.len() * in_box.len());
    for (b, ranks) in boxes.iter().enumerate() {
        for &(tree, count) in in_box {
            let root = ranks[tree.root];
            let mut edges = Vec::with_capacity(boxes.len() * g);
            place(topo, bx, ranks, tree, &mut edges);
            let others: Vec<&Vec<usize>> = boxes.iter().enumerate().filter(|&(c, _)| c != b).map(|(_, r)| r).collect();
            edges.extend(others.iter().map(|r| (root, r[tree.root], vec![bx.up(root), bx.down(r[tree.root])])));
            for r in others {
                place(topo, bx, r, tree, &mut edges);
            }
            out.push(Tree { root, count, edges });
        }
    }
    out
}

/// Identical boxes on one switch; boxes must match in bandwidth too: capacities are the
/// bandwidths on a common scale.
fn detect(topo: &Topology) -> Option<Boxes> {
    let scale = topo.links.iter().fold(1i128, |a, l| num_integer::lcm(a, *l.bandwidth.denom()));
    let caps: Vec<i128> = topo.links.iter().map(|l| (l.bandwidth * Rat::from_integer(scale)).to_integer()).collect();
    Boxes::detect(topo, &caps)
}

/// The boxes' ranks by position (`[b][p]`), as [`trees`] places them; None when `topo` is not
/// identical boxes on one switch.
pub fn layout(topo: &Topology) -> Option<Vec<Vec<usize>>> {
    Some(detect(topo)?.boxes().to_vec())
}

/// Where tree (piece) `i` of a forest of [`trees_with`] with `g` ranks per box and `t` trees
/// per position sits: (its root's box, its index j among its root's trees, its root's position).
pub fn tree_of(i: usize, g: usize, t: usize) -> (usize, usize, usize) {
    (i / (g * t), (i % (g * t)) / g, i % g)
}

/// Box 0's links by position.
fn box_links(topo: &Topology, bx: &Boxes) -> Option<BoxLinks> {
    let ranks = &bx.boxes()[0];
    let g = ranks.len();
    let direct = (0..g)
        .map(|p| (0..g).map(|q| topo.link_between(topo.rank_node(ranks[p]), topo.rank_node(ranks[q]))).collect())
        .collect();
    Some(BoxLinks {
        g,
        direct,
        up: ranks.iter().map(|&r| bx.up(r)).collect(),
        down: ranks.iter().map(|&r| bx.down(r)).collect(),
    })
}

/// `t` in-box trees per position of height at most `height` (see the module docs), the load
/// potential's exponent `power`, by `routes`, in the order (tree j of position 0, ..., tree j
/// of position G - 1) for j = 0..t.
pub(super) fn in_box_trees(
    topo: &Topology,
    bx: &Boxes,
    links: &BoxLinks,
    t: usize,
    height: usize,
    power: i32,
    routes: Routes,
) -> Vec<InBox> {
    let g = links.g;
    let n_boxes = bx.boxes().len() as f64;
    let bw: Vec<f64> = topo.links.iter().map(|l| crate::rational::to_f64(&l.bandwidth)).collect();
    // Bandwidths in shards (t tree-uses) per GB/s keep the potential's terms near 1.
    let bw = bw.iter().map(|b| b * t as f64).collect();
    let mut loads = Loads { load: vec![0.0; topo.links.len()], bw, power };
    // The crossings: a root's up link carries each of its trees to every other box, a
    // position's down link each other box's trees of that position.
    for p in 0..g {
        loads.load[links.up[p]] += (n_boxes - 1.0) * t as f64;
        loads.load[links.down[p]] += (n_boxes - 1.0) * t as f64;
    }
    // Every box runs every in-box tree once (its own root's and each other box's).
    let w = n_boxes;
    let mut trees = Vec::with_capacity(g * t);
    for _ in 0..t {
        for root in 0..g {
            trees.push(grow(links, &mut loads, root, height, w, routes));
        }
    }
    for _ in 0..ROUNDS {
        let mut moved = false;
        for tree in trees.iter_mut() {
            let root = tree.root;
            for v in (0..g).filter(|&v| v != root) {
                moved |= improve(links, &mut loads, tree, v, height, w, routes);
            }
        }
        if !moved {
            break;
        }
    }
    trees
}

/// Greedy growth: the rank, parent and route whose busiest link would be least loaded (ties:
/// the shallower parent, then the lower positions, direct before switch).
fn grow(links: &BoxLinks, loads: &mut Loads, root: usize, height: usize, w: f64, routes: Routes) -> InBox {
    let g = links.g;
    let mut depth = vec![usize::MAX; g];
    depth[root] = 0;
    let mut parent = vec![(root, Via::Direct); g];
    for _ in 1..g {
        let choose = |routes: Routes| {
            let mut best: Option<(f64, usize, usize, usize, Via)> = None;
            for v in (0..g).filter(|&v| depth[v] == usize::MAX) {
                for u in (0..g).filter(|&u| depth[u] < height) {
                    for via in links.vias(u, v, routes) {
                        let peak = loads.peak_with(links.route(u, v, via), w);
                        if best.is_none_or(|(p, d, ..)| peak < p || (peak == p && depth[u] < d)) {
                            best = Some((peak, depth[u], u, v, via));
                        }
                    }
                }
            }
            best
        };
        // The switch route reaches every rank from the root, so there is always a choice.
        let (_, _, u, v, via) =
            choose(routes).or_else(|| choose(Routes::Any)).expect("a rank joins through the switch at worst");
        loads.add(links.route(u, v, via), w);
        depth[v] = depth[u] + 1;
        parent[v] = (u, via);
    }
    InBox { root, parent }
}

/// Move v (with its subtree) to the parent and route that lowers the load potential most,
/// keeping the height; true if it moved.
fn improve(
    links: &BoxLinks,
    loads: &mut Loads,
    tree: &mut InBox,
    v: usize,
    height: usize,
    w: f64,
    routes: Routes,
) -> bool {
    let depth = tree.depths();
    let inside = tree.subtree(v);
    let below = (0..links.g).filter(|&x| inside[x]).map(|x| depth[x] - depth[v]).max().unwrap_or(0);
    let (pu, pvia) = tree.parent[v];
    let old = links.route(pu, v, pvia);
    let mut best: Option<(f64, usize, Via)> = None;
    for u in (0..links.g).filter(|&u| !inside[u] && depth[u] + 1 + below <= height) {
        for via in links.vias(u, v, routes).filter(|&via| (u, via) != (pu, pvia)) {
            let new = links.route(u, v, via);
            let touched: Vec<usize> = old.iter().chain(&new).flatten().copied().collect();
            let before = loads.potential(&touched);
            loads.add(old, -w);
            loads.add(new, w);
            let gain = before - loads.potential(&touched);
            loads.add(new, -w);
            loads.add(old, w);
            if gain > before * 1e-12 && best.is_none_or(|(g, ..)| gain > g) {
                best = Some((gain, u, via));
            }
        }
    }
    let Some((_, u, via)) = best else { return false };
    loads.add(old, -w);
    loads.add(links.route(u, v, via), w);
    tree.parent[v] = (u, via);
    true
}

/// The in-box tree's edges in the box whose positions are `ranks`, parents first.
fn place(topo: &Topology, bx: &Boxes, ranks: &[usize], tree: &InBox, out: &mut Vec<(usize, usize, Vec<usize>)>) {
    for v in tree.order() {
        let (u, via) = tree.parent[v];
        let (x, y) = (ranks[u], ranks[v]);
        let route = match via {
            Via::Direct => vec![topo.link_between(topo.rank_node(x), topo.rank_node(y)).expect("in-box link")],
            Via::Switch => vec![bx.up(x), bx.down(y)],
        };
        out.push((x, y, route));
    }
}

/// The forest's allgather algbw (GB/s, exact): `N T / max over links of (trees on it / b)`,
/// a tree counted `count` times and carrying `count / T` of its root's shard.
pub fn algbw(topo: &Topology, trees: &[Tree], t: usize) -> Rat {
    let mut count = vec![0i128; topo.links.len()];
    for tree in trees {
        for (_, _, route) in &tree.edges {
            route.iter().for_each(|&l| count[l] += tree.count);
        }
    }
    let worst = count
        .iter()
        .zip(&topo.links)
        .map(|(&c, l)| Rat::from_integer(c) / l.bandwidth)
        .max()
        .unwrap_or_else(|| Rat::from_integer(0));
    if worst == Rat::from_integer(0) {
        return worst;
    }
    Rat::from_integer((topo.n_ranks() * t) as i128) / worst
}
