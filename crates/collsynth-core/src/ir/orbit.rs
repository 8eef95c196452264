//! Schedules stated per orbit (the *compact* form, docs/schedule-format.md).
//!
//! A finite abelian group G of topology automorphisms, given by commuting generators (each a
//! node permutation with the link permutation it induces, and its order), acts freely on the
//! ranks. A G-invariant schedule is the union of the orbits `{g t : g in G}` of a few
//! *representative* transfers. Elements are mixed-radix exponent tuples `(e0, e1, ..)` numbered
//! `e0 + d0 (e1 + d1 (..))`, generator 0 fastest, so the group costs the sum of its generators'
//! sizes, never `|G|` copies of anything.
//!
//! A compact [`Schedule`] has `symmetry` set; `transfers[a]` is orbit a's representative, and
//! the flat schedule it stands for ([`expand`]) is *orbit-major*: flat transfer `a |G| + g` is
//! `g` applied to representative a (ranks, route links and piece moved by g; a piece moves with
//! its shard, shard r being rank r's). `after` entries are flat indices in every form, so a
//! representative may wait for any member of any orbit. The order matters to the cost models,
//! which break ties by transfer index: orbit-major makes that order G-invariant (two members of
//! different orbits compare by orbit, whatever g), hence the flat timeline is G-invariant and
//! the quotient ([`quotient`]) reproduces it exactly.

use super::{Piece, Schedule, Transfer};
use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use crate::topology::Topology;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// From this many ranks on, synthesizers whose compact form is a different (not only a
/// reordered) schedule state it per orbit (the ring, BFB); smaller schedules stay flat, their
/// files as before.
pub const PER_ORBIT_FROM: usize = 64;

/// One generator of the group: a node permutation, the link permutation it induces, and its
/// order (the smallest m > 0 with g^m the identity).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generator {
    pub order: usize,
    pub nodes: Vec<usize>,
    pub links: Vec<usize>,
    /// The permutation of the ranks (a schedule expands without its topology).
    pub ranks: Vec<usize>,
}

impl Generator {
    /// The generator that moves node v to `nodes[v]` on `topo`: its link permutation (link
    /// `a -> b` to the link `nodes[a] -> nodes[b]`) and its order (the lcm of its cycles).
    /// Fails when `nodes` is no permutation or a link has no image.
    pub fn from_nodes(topo: &Topology, nodes: Vec<usize>) -> std::result::Result<Generator, String> {
        Generator::make(topo, nodes, false)
    }

    /// [`Generator::from_nodes`] for a group of automorphisms of the links a schedule uses
    /// ([`Group::on_used_links`]): a link whose image is no link maps to [`NO_LINK`].
    pub fn from_nodes_on_used_links(topo: &Topology, nodes: Vec<usize>) -> std::result::Result<Generator, String> {
        Generator::make(topo, nodes, true)
    }

    fn make(topo: &Topology, nodes: Vec<usize>, partial: bool) -> std::result::Result<Generator, String> {
        let n = topo.n_nodes();
        let mut seen = vec![false; n];
        if nodes.len() != n || nodes.iter().any(|&v| v >= n || std::mem::replace(&mut seen[v], true)) {
            return Err(format!("a generator must permute the topology's {n} nodes"));
        }
        let links = topo
            .links
            .iter()
            .map(|l| match topo.link_between(nodes[l.src], nodes[l.dst]) {
                None if partial => Ok(NO_LINK),
                image => image.ok_or_else(|| {
                    format!(
                        "a generator maps link {} -> {} to {} -> {}, which is no link",
                        topo.nodes[l.src].name,
                        topo.nodes[l.dst].name,
                        topo.nodes[nodes[l.src]].name,
                        topo.nodes[nodes[l.dst]].name
                    )
                }),
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let ranks = (0..topo.n_ranks())
            .map(|r| {
                topo.rank_of(nodes[topo.rank_node(r)]).ok_or_else(|| {
                    format!(
                        "a generator maps rank {r} to {}, which is no rank",
                        topo.nodes[nodes[topo.rank_node(r)]].name
                    )
                })
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut order = 1usize;
        let mut done = vec![false; n];
        for v in 0..n {
            let mut len = 0usize;
            let mut w = v;
            while !done[w] {
                done[w] = true;
                w = nodes[w];
                len += 1;
            }
            if len > 0 {
                order = lcm(order, len).ok_or("a generator's order overflows")?;
            }
        }
        Ok(Generator { order, nodes, links, ranks })
    }
}

/// The image of a link that a group of automorphisms of the used links
/// ([`Group::on_used_links`]) does not map onto a link (a link the schedule does not use).
pub const NO_LINK: usize = usize::MAX;

fn lcm(a: usize, b: usize) -> Option<usize> {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    (a / x).checked_mul(b)
}

/// A finite abelian group of automorphisms given by commuting generators (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// How to say it: `Z_32 x Z_32`.
    pub name: String,
    pub gens: Vec<Generator>,
    size: usize,
    /// The generators need only be automorphisms of the links the schedule uses (and of the
    /// nodes' kinds and the ranks), not of the whole topology ([`Group::on_used_links`]).
    used_links_only: bool,
}

impl Group {
    /// The group of `gens` (named after their orders). Fails when the product of the orders
    /// overflows. [`Group::check`] proves the rest (automorphisms, commuting, free on ranks).
    pub fn new(gens: Vec<Generator>) -> std::result::Result<Group, String> {
        let size = gens.iter().try_fold(1usize, |a, g| a.checked_mul(g.order)).ok_or("the group is too large")?;
        let name = gens.iter().map(|g| format!("Z_{}", g.order)).collect::<Vec<_>>().join(" x ");
        Ok(Group { name, gens, size, used_links_only: false })
    }

    /// A group that need only map the links a schedule uses onto links it uses, with equal
    /// bandwidth and latency (docs/schedule-format.md: a ring's rotation along a cycle that
    /// no automorphism of the topology follows, e.g. a snake through a torus). Its generators
    /// come from [`Generator::from_nodes_on_used_links`].
    pub fn on_used_links(gens: Vec<Generator>) -> std::result::Result<Group, String> {
        Ok(Group { used_links_only: true, ..Group::new(gens)? })
    }

    /// See [`Group::on_used_links`].
    pub fn used_links_only(&self) -> bool {
        self.used_links_only
    }

    /// |G|: the product of the generators' orders (the elements are distinct once
    /// [`Group::check`] has shown the action on ranks free).
    pub fn order(&self) -> usize {
        self.size
    }

    /// The exponents of element `g`, generator 0 first.
    pub fn digits(&self, g: usize) -> impl Iterator<Item = usize> + '_ {
        let mut rest = g;
        self.gens.iter().map(move |gen| {
            let d = rest % gen.order;
            rest /= gen.order;
            d
        })
    }

    fn element_of(&self, digits: impl Iterator<Item = usize>) -> usize {
        let (mut g, mut stride) = (0, 1);
        for (d, gen) in digits.zip(&self.gens) {
            g += (d % gen.order) * stride;
            stride *= gen.order;
        }
        g
    }

    /// The product `g h`.
    pub fn compose(&self, g: usize, h: usize) -> usize {
        let hs: Vec<usize> = self.digits(h).collect();
        self.element_of(self.digits(g).zip(hs).map(|(a, b)| a + b))
    }

    /// The inverse of `g`.
    pub fn inverse(&self, g: usize) -> usize {
        self.element_of(self.digits(g).zip(&self.gens).map(|(d, gen)| (gen.order - d) % gen.order))
    }

    /// The element with exponent 1 on generator `i` and 0 elsewhere.
    pub fn unit(&self, i: usize) -> usize {
        self.gens[..i].iter().map(|g| g.order).product()
    }

    fn apply(&self, g: usize, x: usize, perm: impl Fn(&Generator) -> &[usize]) -> usize {
        let mut x = x;
        for (d, gen) in self.digits(g).zip(&self.gens) {
            let p = perm(gen);
            for _ in 0..d {
                x = p[x];
            }
        }
        x
    }

    /// Node `v` moved by `g`.
    pub fn node(&self, g: usize, v: usize) -> usize {
        self.apply(g, v, |gen| &gen.nodes)
    }

    /// Link `l` moved by `g` ([`NO_LINK`] when a group on used links moves it off them).
    pub fn link(&self, g: usize, l: usize) -> usize {
        let mut x = l;
        for (d, gen) in self.digits(g).zip(&self.gens) {
            for _ in 0..d {
                x = match gen.links.get(x) {
                    Some(&y) => y,
                    None => return NO_LINK,
                };
            }
        }
        x
    }

    /// Rank `r` moved by `g`.
    pub fn rank(&self, g: usize, r: usize) -> usize {
        self.apply(g, r, |gen| &gen.ranks)
    }

    /// Proves what the compact form relies on: every generator is an automorphism of `topo`
    /// (a node permutation keeping names' kinds and compute ranks, mapping every link onto a
    /// link of equal bandwidth and latency), has the order it states, the generators commute,
    /// and G acts freely on the ranks (every rank's orbit has |G| members, so no element but
    /// the identity fixes a rank). Returns the rank orbits.
    pub fn check(&self, topo: &Topology) -> std::result::Result<RankOrbits, String> {
        let all: Vec<usize> = (0..topo.links.len()).collect();
        self.check_links(topo, &all)
    }

    /// [`Group::check`] for schedule `s`: a group on used links must map every link of the
    /// flat schedule's routes (the orbits of the representatives' route links) onto a link of
    /// equal bandwidth and latency; any other group must be an automorphism of all of `topo`.
    pub fn check_for(&self, topo: &Topology, s: &Schedule) -> std::result::Result<RankOrbits, String> {
        if !self.used_links_only {
            return self.check(topo);
        }
        self.check_links(topo, &used_links(self, s, topo.links.len())?)
    }

    fn check_links(&self, topo: &Topology, links: &[usize]) -> std::result::Result<RankOrbits, String> {
        let n = topo.n_nodes();
        for (i, gen) in self.gens.iter().enumerate() {
            let again = Generator::make(topo, gen.nodes.clone(), self.used_links_only)
                .map_err(|e| format!("generator {i}: {e}"))?;
            if again != *gen {
                return Err(format!("generator {i}: its links or order do not follow from its node permutation"));
            }
            for v in 0..n {
                let w = gen.nodes[v];
                if topo.nodes[v].kind != topo.nodes[w].kind {
                    return Err(format!(
                        "generator {i} maps {} to {}, a node of another kind",
                        topo.nodes[v].name, topo.nodes[w].name
                    ));
                }
            }
            for &l in links {
                let Some(b) = topo.links.get(gen.links[l]) else {
                    let a = &topo.links[l];
                    return Err(format!(
                        "generator {i} maps link {} -> {}, which the schedule uses, to no link",
                        topo.nodes[a.src].name, topo.nodes[a.dst].name
                    ));
                };
                let a = &topo.links[l];
                if a.bandwidth != b.bandwidth || a.latency.to_bits() != b.latency.to_bits() {
                    return Err(format!(
                        "generator {i} is no automorphism: link {} -> {} and its image {} -> {} differ in bandwidth or latency",
                        topo.nodes[a.src].name, topo.nodes[a.dst].name, topo.nodes[b.src].name, topo.nodes[b.dst].name
                    ));
                }
            }
            for (j, other) in self.gens.iter().enumerate().skip(i + 1) {
                if (0..n).any(|v| gen.nodes[other.nodes[v]] != other.nodes[gen.nodes[v]]) {
                    return Err(format!("generators {i} and {j} do not commute"));
                }
            }
        }
        RankOrbits::new(self, topo.n_ranks())
    }
}

impl Group {
    /// The group generated by the node permutations `perms` (candidates, such as the zoo's
    /// `zoo::symmetry::node_generators`) with its rank orbits, once [`Group::check`] has
    /// proved it (automorphisms, commuting, free on the ranks); else why not.
    pub fn of_permutations(
        topo: &Topology,
        perms: Vec<Vec<usize>>,
    ) -> std::result::Result<(Group, RankOrbits), String> {
        let gens = perms.into_iter().map(|p| Generator::from_nodes(topo, p)).collect::<std::result::Result<_, _>>()?;
        let group = Group::new(gens)?;
        let orbits = group.check(topo)?;
        Ok((group, orbits))
    }
}

/// The orbits of G on the ranks: for every rank r its orbit's representative (the smallest
/// rank of the orbit) and the element that moves the representative to r.
#[derive(Debug, Clone)]
pub struct RankOrbits {
    /// `rep[r]`: index of r's orbit (orbits numbered by their smallest rank).
    pub orbit: Vec<usize>,
    /// `from_rep[r]`: the g with `g rep = r`.
    pub from_rep: Vec<usize>,
    /// The representative rank of each orbit.
    pub reps: Vec<usize>,
}

impl RankOrbits {
    /// The orbits of `group` on ranks `0..nr`; fails when the action is not free.
    pub fn new(group: &Group, nr: usize) -> std::result::Result<RankOrbits, String> {
        if group.gens.iter().any(|g| g.ranks.len() != nr) {
            return Err(format!("a generator does not permute the {nr} ranks"));
        }
        let mut orbit = vec![usize::MAX; nr];
        let mut from_rep = vec![0usize; nr];
        let mut reps = Vec::new();
        for r0 in 0..nr {
            if orbit[r0] != usize::MAX {
                continue;
            }
            let o = reps.len();
            reps.push(r0);
            orbit[r0] = o;
            let mut stack = vec![r0];
            let mut size = 1usize;
            while let Some(r) = stack.pop() {
                for (i, gen) in group.gens.iter().enumerate() {
                    let w = gen.ranks[r];
                    let e = group.compose(from_rep[r], group.unit(i));
                    if orbit[w] == usize::MAX {
                        (orbit[w], from_rep[w]) = (o, e);
                        size += 1;
                        stack.push(w);
                    } else if from_rep[w] != e {
                        return Err(format!(
                            "the group does not act freely on the ranks (rank {w} is fixed by an element)"
                        ));
                    }
                }
            }
            if size != group.order() {
                return Err(format!(
                    "the group does not act freely on the ranks: rank {r0}'s orbit has {size} ranks, not |G| = {}",
                    group.order()
                ));
            }
        }
        Ok(RankOrbits { orbit, from_rep, reps })
    }
}

/// `group`, made of automorphisms of `made_on`, as automorphisms of `target`, a topology on
/// the same nodes (its transpose, when a reduction reverses a schedule made there): the same
/// node permutations, their links those of `target`.
pub fn on_topology(group: &Arc<Group>, made_on: &Topology, target: &Topology) -> Result<Arc<Group>> {
    if std::ptr::eq(made_on, target) || made_on.links == target.links {
        return Ok(group.clone());
    }
    let gens = group
        .gens
        .iter()
        .map(|g| Generator::make(target, g.nodes.clone(), group.used_links_only))
        .collect::<std::result::Result<Vec<_>, _>>()
        .and_then(|gens| if group.used_links_only { Group::on_used_links(gens) } else { Group::new(gens) })
        .map_err(|e| CollsynthError::internal(format!("symmetry on the reversed topology: {e}")))?;
    Ok(Arc::new(gens))
}

/// Finds a piece by (shard, start, end): how a piece moves with its shard.
pub struct PieceIndex(HashMap<(usize, Rat, Rat), usize>);

impl PieceIndex {
    pub fn new(pieces: &[Piece]) -> PieceIndex {
        PieceIndex(pieces.iter().enumerate().map(|(i, p)| ((p.shard, p.start, p.end), i)).collect())
    }

    /// The piece `[start, end)` of shard `shard`, if the schedule has it.
    pub fn find(&self, shard: usize, p: &Piece) -> Option<usize> {
        self.0.get(&(shard, p.start, p.end)).copied()
    }
}

/// Piece `p` moved by `g` (its shard moves like a rank), if the schedule has the image.
pub fn move_piece(s: &Schedule, index: &PieceIndex, g: usize, p: usize) -> Option<usize> {
    let group = s.symmetry.as_deref()?;
    let piece = s.pieces.get(p)?;
    let ranks = &group.gens.first()?.ranks;
    (piece.shard < ranks.len()).then(|| index.find(group.rank(g, piece.shard), piece))?
}

impl Schedule {
    /// Transfers of the flat schedule: the stored ones (a range transfer counting its pieces,
    /// [`super::ranges`]), times |G| for a compact schedule.
    pub fn n_transfers(&self) -> usize {
        super::ranges::n_expanded(self).saturating_mul(self.symmetry.as_ref().map_or(1, |g| g.order()))
    }

    /// The schedule is stated per orbit ([`crate::ir::orbit`]).
    pub fn is_compact(&self) -> bool {
        self.symmetry.is_some()
    }
}

/// The flat form of `s` (itself when it is flat): ranges ([`super::ranges`]) and orbits
/// expanded.
pub fn flat(s: &Schedule) -> Result<Cow<'_, Schedule>> {
    if s.symmetry.is_none() {
        return super::ranges::flat(s);
    }
    expand(s).map(Cow::Owned)
}

/// The flat schedule a compact `s` stands for, orbit-major (module docs), its ranges
/// ([`super::ranges`]) expanded first. Whether the group is made of automorphisms is the
/// verifier's question; this fails only on indices out of range (a piece without an image, a
/// rank or link beyond the generators') and on ranges that break their rules.
pub fn expand(s: &Schedule) -> Result<Schedule> {
    if super::ranges::has_ranges(s) {
        return expand(super::ranges::flat(s)?.as_ref());
    }
    let Some(group) = s.symmetry.as_deref() else { return Ok(s.clone()) };
    let bad = |why: String| CollsynthError::bad(format!("compact schedule: {why}"));
    let (n_ranks, n_links) = group.gens.first().map_or((0, 0), |g| (g.ranks.len(), g.links.len()));
    if let Some((a, _)) = s.transfers.iter().enumerate().find(|(_, t)| {
        t.src >= n_ranks
            || t.dst >= n_ranks
            || t.route.iter().any(|&l| l >= n_links)
            || t.after.iter().any(|&x| x >= s.transfers.len() * group.order())
    }) {
        return Err(bad(format!("representative {a} names a rank, link or transfer out of range")));
    }
    let order = group.order();
    let index = PieceIndex::new(&s.pieces);
    let total = s.transfers.len().checked_mul(order).filter(|&t| t < u32::MAX as usize);
    let total = total.ok_or_else(|| bad(format!("{} orbits of {order} transfers are too many", s.transfers.len())))?;
    // Built field by field: cloning the representatives (or each one's route and `after`)
    // only to replace them cost two throw-away allocations per flat transfer.
    let mut out = Schedule { transfers: Vec::with_capacity(total), symmetry: None, ..s.without_transfers() };
    for t in &s.transfers {
        for g in 0..order {
            let piece = move_piece(s, &index, g, t.piece)
                .ok_or_else(|| bad(format!("piece {} has no image under element {g}", t.piece)))?;
            let after = t.after.iter().map(|&x| (x / order) * order + group.compose(g, x % order)).collect();
            let route: Vec<usize> = t.route.iter().map(|&l| group.link(g, l)).collect();
            if route.contains(&NO_LINK) {
                return Err(bad(format!(
                    "element {g} moves a link of representative {} to no link",
                    out.transfers.len() / order
                )));
            }
            out.transfers.push(Transfer {
                piece,
                src: group.rank(g, t.src),
                dst: group.rank(g, t.dst),
                route,
                after,
                op: t.op,
                step: t.step,
                src_slot: t.src_slot,
                dst_slot: t.dst_slot,
                count: t.count,
            });
        }
    }
    Ok(out)
}

/// The representatives as a flat schedule of their own, each dependency replaced by its
/// orbit's representative (routes unchanged): the quotient of the dependency graph, whose
/// depth and cycles are the flat graph's (`verify` and [`Schedule::depth`] read it).
pub fn representatives(s: &Schedule) -> Schedule {
    debug_assert!(!super::ranges::has_ranges(s), "representatives of expanded ranges (ir::ranges::flat)");
    let order = s.symmetry.as_ref().map_or(1, |g| g.order());
    Schedule {
        transfers: s
            .transfers
            .iter()
            .map(|t| Transfer { after: t.after.iter().map(|&x| x / order).collect(), ..t.clone() })
            .collect(),
        symmetry: None,
        ..s.clone()
    }
}

/// Whether the whole-byte layout of `s` at `size` bytes moves with the group: every shard
/// starts at a whole byte (`size` times the fractions before it is an integer). Then a piece
/// and its images have the same bytes, sub-chunk by sub-chunk (`cost::ByteLayout` floors
/// positions within a shard alike), and the quotient's costs are the flat schedule's exactly;
/// otherwise rounding gives members of one orbit pieces one byte apart.
pub fn bytes_move_with_group(s: &Schedule, size: Rat) -> bool {
    let mut offset = Rat::from_integer(0);
    s.shards.iter().all(|f| {
        let whole = (size * offset).is_integer();
        offset += f;
        whole
    })
}

/// The quotient of a compact `s` for the cost models: the representatives on the same
/// topology, each route link replaced by the smallest link of its orbit and each dependency
/// by its orbit's representative. Since G acts freely on the transfers and on the links they
/// use, every link of an orbit carries the same traffic at the same times in the flat
/// schedule (the flat order is G-invariant, module docs): one queue per link orbit gives the
/// flat timeline, loads and busiest link exactly. Fails when some used link is fixed by an
/// element (its orbit is smaller than |G|).
pub fn quotient(s: &Schedule, topo: &Topology) -> Result<Schedule> {
    if super::ranges::has_ranges(s) {
        return quotient(super::ranges::flat(s)?.as_ref(), topo);
    }
    let Some(group) = s.symmetry.as_deref() else { return Ok(s.clone()) };
    let order = group.order();
    let rep = link_orbits(group, topo.links.len());
    let mut size = vec![0usize; topo.links.len()];
    for &r in &rep {
        size[r] += 1;
    }
    let mut q = Schedule { transfers: Vec::with_capacity(s.transfers.len()), symmetry: None, ..s.clone() };
    for (a, t) in s.transfers.iter().enumerate() {
        if let Some(&l) = t.route.iter().find(|&&l| l >= rep.len() || size[rep[l]] != order) {
            return Err(CollsynthError::bad(format!(
                "compact schedule: transfer {a} uses link {l}, which some group element other than the identity fixes"
            )));
        }
        q.transfers.push(Transfer {
            route: t.route.iter().map(|&l| rep[l]).collect(),
            after: t.after.iter().map(|&x| x / order).collect(),
            ..t.clone()
        });
    }
    Ok(q)
}

/// The links of the flat schedule's routes: the orbits of the representatives' route links,
/// sorted. Fails on a link out of range or one that some generator maps to no link.
pub fn used_links(group: &Group, s: &Schedule, m: usize) -> std::result::Result<Vec<usize>, String> {
    let mut seen = vec![false; m];
    let mut stack = Vec::new();
    for t in &s.transfers {
        for &l in &t.route {
            if l >= m {
                return Err(format!("a route names link {l}, beyond the topology's {m}"));
            }
            if !std::mem::replace(&mut seen[l], true) {
                stack.push(l);
            }
        }
    }
    while let Some(l) = stack.pop() {
        for (i, gen) in group.gens.iter().enumerate() {
            let w = gen.links.get(l).copied().unwrap_or(NO_LINK);
            if w >= m {
                return Err(format!("generator {i} maps link {l}, which the schedule uses, to no link"));
            }
            if !std::mem::replace(&mut seen[w], true) {
                stack.push(w);
            }
        }
    }
    Ok((0..m).filter(|&l| seen[l]).collect())
}

/// For every link, the smallest link of its orbit under the generators (links a group on
/// used links moves off them stay alone; no schedule route uses them).
fn link_orbits(group: &Group, m: usize) -> Vec<usize> {
    let mut rep = vec![usize::MAX; m];
    for l0 in 0..m {
        if rep[l0] != usize::MAX {
            continue;
        }
        rep[l0] = l0;
        let mut stack = vec![l0];
        while let Some(l) = stack.pop() {
            for gen in &group.gens {
                let w = gen.links[l];
                if w < m && rep[w] == usize::MAX {
                    rep[w] = l0;
                    stack.push(w);
                }
            }
        }
    }
    rep
}

#[cfg(test)]
pub(crate) mod tests;
