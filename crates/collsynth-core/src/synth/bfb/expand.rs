//! Expanded allgather schedules of the direct-connect paper (§5.1 and §5.2): on a
//! topology built from `line^k(E)` or `degree*n(E)`, the schedule is made from the schedule
//! of the base `E` by the paper's mapping instead of re-running BFB on the large graph.
//!
//! * `line^k(E)`: Def 1 applied k times (one new first step each; Thm 7 / Cor 10.1).
//! * `degree*n(E)`: Def 2 (one extra last step; Thm 11).
//! * anything else (a zoo spec, `power^n`, `product`): BFB on that graph directly, as the
//!   paper does for products.
//!
//! Expressions nest, so `line(degree*2(ring:4))` maps the degree mapping of BFB(ring:4).
//! Only allgather is mapped; reduce-scatter and allreduce stay plain BFB (docs/bfb.md).
//!
//! Both mappings rely on the shape every schedule here has (BFB's emission and the
//! mappings themselves): one link per route, `after` empty when the sender owns the shard,
//! else exactly the transfer that delivered that piece to the sender, and dependencies
//! pointing to earlier transfers. Anything else is an internal error.

use super::allgather as bfb_allgather;
use crate::cost::latency_bandwidth::latency_bandwidth_costs;
use crate::error::{CollsynthError, Result};
use crate::ir::{exact_value, Collective, Details, Op, Piece, Schedule, Transfer};
use crate::rational::Rat;
use crate::topology::Topology;
use crate::zoo::expand::{degree_expansion, line_graph_levels};
use crate::zoo::{from_spec, Expr};
use num_traits::One;
use std::collections::HashMap;

/// A schedule, the topology it is for, and how it was made (for `provenance.details`).
struct Built {
    topo: Topology,
    schedule: Schedule,
    construction: String,
}

/// The mapped allgather of `topo`, if its name is an expansion expression whose outermost
/// operation is `line^k` or `degree*n` and building that expression gives exactly `topo`
/// (a topology that merely carries such a name gets `None`: plain BFB applies). Guarantees:
/// the schedule is for `topo` (same ranks and links), its `provenance.details` has
/// `construction`, `steps`, `tau` and `bandwidth_optimal`.
pub fn mapped_allgather(topo: &Topology) -> Result<Option<Schedule>> {
    let Some(expr) = mapped_expr(topo) else { return Ok(None) };
    let built = build(&expr)?;
    if built.topo.links != topo.links || built.topo.n_ranks() != topo.n_ranks() {
        return Err(CollsynthError::internal(format!("{}: the mapped schedule is for another graph", topo.name)));
    }
    let mut s = built.schedule;
    s.provenance.details = details(&s, topo, &built.construction);
    Ok(Some(s))
}

/// Whether `topo`'s allgather is a mapped one (see [`mapped_allgather`]), without building it.
pub fn is_mapped(topo: &Topology) -> bool {
    mapped_expr(topo).is_some()
}

/// The expansion expression `topo` is exactly the build of, if its outermost operation is
/// `line^k` or `degree*n`.
fn mapped_expr(topo: &Topology) -> Option<Expr> {
    let expr = Expr::parse(&topo.name).ok()?;
    if !matches!(expr, Expr::Line(..) | Expr::Degree(..)) {
        return None;
    }
    // Compare with the zoo's own build: a JSON topology named like an expression may differ.
    from_spec(&topo.name).is_ok_and(|t| t == *topo).then_some(expr)
}

/// `provenance.details` of a mapped schedule.
fn details(s: &Schedule, topo: &Topology, construction: &str) -> Details {
    let n = topo.n_ranks() as i128;
    let c = latency_bandwidth_costs(s, topo);
    Details::new()
        .with("construction", construction)
        .with("steps", c.latency_steps)
        .with("tau", exact_value(&c.bandwidth_factor))
        .with("bandwidth_optimal", c.bandwidth_factor == Rat::new(n - 1, n))
}

/// The allgather of `expr` and its topology, mapped through every line / degree expansion.
fn build(expr: &Expr) -> Result<Built> {
    match expr {
        Expr::Line(k, inner) => {
            // line(line(G)) is L^2(G): one walk expansion, as the zoo builds it.
            let (mut k, mut base) = (*k, inner.as_ref());
            while let Expr::Line(k2, deeper) = base {
                (k, base) = (k + k2, deeper.as_ref());
            }
            let mut b = build(base)?;
            let levels = line_graph_levels(&b.topo, k, |i| Expr::Line(i, Box::new(base.clone())).to_string())?;
            for lg in levels {
                let schedule = line_map(&b.topo, &b.schedule, &lg)?;
                b = Built { topo: lg, schedule, construction: b.construction };
            }
            let times = if k == 1 { String::new() } else { format!(" (x{k})") };
            b.construction = format!("line-graph mapping{times} of {}", b.construction);
            Ok(b)
        }
        Expr::Degree(n, inner) => {
            let b = build(inner)?;
            let gn = degree_expansion(&b.topo, *n, &format!("degree*{n}({})", b.topo.name))?;
            let schedule = degree_map(&b.topo, &b.schedule, *n, &gn)?;
            Ok(Built {
                topo: gn,
                schedule,
                construction: format!("degree-expansion mapping (n={n}) of {}", b.construction),
            })
        }
        _ => {
            let topo = from_spec(&expr.to_string())?;
            let schedule = bfb_allgather(&topo)?;
            Ok(Built { topo, schedule, construction: format!("bfb({expr})") })
        }
    }
}

// ---------------------------------------------------------------------------------------
// The shape of a base schedule

/// Per shard, its pieces in order, and each piece's position in its shard's list.
struct ShardPieces {
    of_shard: Vec<Vec<usize>>,
    local: Vec<usize>,
}

impl ShardPieces {
    fn new(s: &Schedule) -> ShardPieces {
        let mut of_shard = vec![Vec::new(); s.n_ranks];
        let mut local = Vec::with_capacity(s.pieces.len());
        for (p, piece) in s.pieces.iter().enumerate() {
            local.push(of_shard[piece.shard].len());
            of_shard[piece.shard].push(p);
        }
        ShardPieces { of_shard, local }
    }
}

/// One transfer of a base schedule, checked against the shape the mappings need.
struct BaseTransfer {
    /// The link it uses (= the line-graph node of the sender-receiver pair).
    link: usize,
    /// Step (0-based).
    step: u32,
    /// The earlier transfer that delivered the piece to the sender; `None` if it owns it.
    fed_by: Option<usize>,
}

fn base_transfer(s: &Schedule, i: usize) -> Result<BaseTransfer> {
    let t = &s.transfers[i];
    let bad = |why: &str| CollsynthError::internal(format!("expansion mapping: base transfer {i} {why}"));
    let (&[link], Some(step)) = (t.route.as_slice(), t.step) else {
        return Err(bad("is not a one-link step transfer"));
    };
    let owner = s.pieces[t.piece].shard;
    let fed_by = match *t.after.as_slice() {
        [] if t.src == owner => None,
        [a] if a < i && s.transfers[a].dst == t.src && s.transfers[a].piece == t.piece => Some(a),
        _ => return Err(bad("does not depend on exactly the delivery of its piece to its sender")),
    };
    Ok(BaseTransfer { link, step, fed_by })
}

fn require_allgather(g: &Topology, s: &Schedule) -> Result<()> {
    if s.collective != Collective::Allgather || g.n_switches() > 0 || s.n_ranks != g.n_ranks() {
        return Err(CollsynthError::internal("expansion mapping needs an allgather on a direct-connect topology"));
    }
    Ok(())
}

fn copy(piece: usize, src: usize, dst: usize, link: usize, after: Option<usize>, step: u32) -> Transfer {
    Transfer::new(piece, src, dst, vec![link], Op::Copy, after.into_iter().collect(), Some(step))
}

// ---------------------------------------------------------------------------------------
// Def 1: the line graph

/// Def 1 (§5.1): the allgather on `lg` = L(g) (built by `zoo::expand::line_graph_levels`, so
/// node x of L(g) is link x of g) from the allgather `base` on g. Shard x = (v' -> v) is
/// cut like base shard v. Step 0: every x sends its whole shard to each out-neighbour. Base
/// step s becomes step s + 1: a transfer of v's piece C over (u -> w) becomes, for every
/// in-link x of v and out-link y of w with x != y, x's piece C from node (u -> w) to y.
/// Guarantees: an allgather on `lg` with one more step than `base`, each link's load per
/// step at most the base link's (Thm 7), every transfer after the one that brought its
/// piece to its sender.
fn line_map(g: &Topology, base: &Schedule, lg: &Topology) -> Result<Schedule> {
    require_allgather(g, base)?;
    // Each base transfer into w has an image per in-link of its shard's owner and out-link of
    // w: counted before any is made, since nested line graphs multiply them level by level.
    let images: u128 = base
        .transfers
        .iter()
        .map(|t| (g.in_links(base.pieces[t.piece].shard).len() * g.out_links(t.dst).len()) as u128)
        .sum();
    let each = (std::mem::size_of::<Transfer>() + 4 * std::mem::size_of::<usize>()) as u128;
    crate::budget::check_memory(&format!("the line-graph mapping onto {}", lg.name), Some(images), each)?;
    let sp = ShardPieces::new(base);
    let mut s = Schedule::new(Collective::Allgather, lg.n_ranks(), 0, super::BFB.name);
    // piece_start[x]: x's first piece; x's pieces are those of base shard head(x).
    let head = |x: usize| g.links[x].dst;
    let mut piece_start = Vec::with_capacity(lg.n_ranks());
    for x in 0..lg.n_ranks() {
        piece_start.push(s.pieces.len());
        for &p in &sp.of_shard[head(x)] {
            s.add_piece(Piece { shard: x, ..base.pieces[p].clone() });
        }
    }
    let first_sends = first_step(g, lg, &sp, &piece_start, &mut s);
    // images[slots[a] + i * outdeg(w) + j]: the image of base transfer a (into w) for the
    // i-th in-link of its shard's owner and the j-th out-link of w; u32::MAX where x == y.
    let mut slots = Vec::with_capacity(base.transfers.len());
    let mut images: Vec<u32> = Vec::new();
    for (a, t) in base.transfers.iter().enumerate() {
        let bt = base_transfer(base, a)?;
        let (u, w, e) = (t.src, t.dst, bt.link);
        let (v, c) = (base.pieces[t.piece].shard, sp.local[t.piece]);
        let outs = g.out_links(w);
        slots.push(images.len());
        for (i, &x) in g.in_links(v).iter().enumerate() {
            for (j, y) in outs.clone().enumerate() {
                if x == y {
                    images.push(u32::MAX);
                    continue;
                }
                // Where node e = (u -> w) got x's piece c: from x itself at step 0 (u = v), or
                // from the image of the base delivery to u (none if e is x, the owner).
                let after = match bt.fed_by {
                    None => Some(first_sends[x] + (e - g.out_links(v).start) * sp.of_shard[v].len() + c),
                    Some(_) if e == x => None,
                    Some(f) => {
                        let slot = slots[f] + i * g.out_links(u).len() + (e - g.out_links(u).start);
                        Some(images[slot] as usize)
                    }
                };
                // L(g)'s out-links of e lead to g's out-links of w, in the same order.
                let link = lg.out_links(e).start + j;
                debug_assert_eq!(lg.links[link].dst, y);
                let index = u32::try_from(s.transfers.len()).ok().filter(|&i| i != u32::MAX);
                images.push(index.ok_or_else(|| CollsynthError::bad("line-graph mapping: too many transfers"))?);
                s.add(copy(piece_start[x] + c, e, y, link, after, bt.step + 1));
            }
        }
    }
    Ok(s)
}

/// Def 1's new first step: every node x sends each of its pieces to each out-neighbour.
/// Returns, per x, the index of its first transfer; the transfer of local piece c to the
/// j-th out-neighbour is `first + j * pieces + c`.
fn first_step(g: &Topology, lg: &Topology, sp: &ShardPieces, piece_start: &[usize], s: &mut Schedule) -> Vec<usize> {
    let mut first = Vec::with_capacity(lg.n_ranks());
    for (x, &start) in piece_start.iter().enumerate() {
        first.push(s.transfers.len());
        let pieces = sp.of_shard[g.links[x].dst].len();
        for l in lg.out_links(x) {
            for c in 0..pieces {
                s.add(copy(start + c, x, lg.links[l].dst, l, None, 0));
            }
        }
    }
    first
}

// ---------------------------------------------------------------------------------------
// Def 2: the degree expansion

/// How base shard u's pieces are cut further for G * n: the refined bounds, and per base
/// piece its first refined piece and count.
struct Refined {
    /// Per shard: `[0, .., 1]`, the base cuts and every multiple of 1 / in-degree.
    bounds: Vec<Vec<Rat>>,
    /// Per base piece: (first refined index within its shard, count).
    sub: Vec<(usize, usize)>,
    /// Per shard, per refined index: the base piece containing it.
    base_piece: Vec<Vec<usize>>,
}

impl Refined {
    /// `parts[u]`: how many equal chunks shard u must also be cut into.
    fn new(base: &Schedule, sp: &ShardPieces, parts: &[usize]) -> Refined {
        let mut r = Refined { bounds: Vec::new(), sub: vec![(0, 0); base.pieces.len()], base_piece: Vec::new() };
        for (u, pieces) in sp.of_shard.iter().enumerate() {
            let k = parts[u] as i128;
            let mut b: Vec<Rat> = (0..=k).map(|a| Rat::new(a, k)).collect();
            b.extend(pieces.iter().map(|&p| base.pieces[p].start));
            b.sort_unstable();
            b.dedup();
            let mut owner = vec![0; b.len() - 1];
            for &p in pieces {
                let piece = &base.pieces[p];
                let first = b.partition_point(|x| *x < piece.start);
                let count = b.partition_point(|x| *x < piece.end) - first;
                r.sub[p] = (first, count);
                owner[first..first + count].fill(p);
            }
            r.bounds.push(b);
            r.base_piece.push(owner);
        }
        r
    }
}

/// Def 2 (§5.2): the allgather on `gn` = g * n (built by
/// `zoo::expand::degree_expansion`, so copy i of v is rank v n + i) from the allgather
/// `base` on g. Base transfer ((v, C), (u, w), t) becomes ((v_j, C), (u_j, w_i), t) for all
/// i, j; one extra step then gives every u_j each sibling u_i's shard in D equal chunks, D
/// = u_j's in-degree, chunk a over u_j's a-th in-link (its sender already holds u_i's
/// shard). Shards are cut at the base cuts and at the multiples of 1 / D. Guarantees: an
/// allgather on `gn` with one step more than `base` (none more for n = 1) and Thm 11's
/// bandwidth term on regular graphs, each transfer after the delivery of its piece.
fn degree_map(g: &Topology, base: &Schedule, n: usize, gn: &Topology) -> Result<Schedule> {
    require_allgather(g, base)?;
    let sp = ShardPieces::new(base);
    // n = 1 has no siblings: no extra step, so no extra cuts.
    let parts: Vec<usize> = (0..g.n_ranks()).map(|u| if n > 1 { gn.in_links(u * n).len() } else { 1 }).collect();
    let refined = Refined::new(base, &sp, &parts);
    let mut s = Schedule::new(Collective::Allgather, gn.n_ranks(), 0, super::BFB.name);
    let mut piece_start = Vec::with_capacity(gn.n_ranks());
    for (u, b) in refined.bounds.iter().enumerate() {
        for i in 0..n {
            piece_start.push(s.pieces.len());
            for w in b.windows(2) {
                s.add_piece(Piece { shard: u * n + i, start: w[0], end: w[1] });
            }
        }
        debug_assert_eq!(piece_start.len(), (u + 1) * n);
    }
    let images = copies(base, n, gn, &refined, &piece_start, &mut s)?;
    if n > 1 {
        let last = base.n_steps().unwrap_or(0);
        siblings(base, n, gn, &refined, &piece_start, &images, last, &mut s)?;
    }
    Ok(s)
}

/// Def 2 part 1. Returns, per base transfer b, the index of its first image: the image for
/// owner copy j, receiver copy i and refined sub-piece q is `first + (j n + i) sub + q`.
fn copies(
    base: &Schedule,
    n: usize,
    gn: &Topology,
    refined: &Refined,
    piece_start: &[usize],
    s: &mut Schedule,
) -> Result<Vec<usize>> {
    let mut images = Vec::with_capacity(base.transfers.len());
    for (b, t) in base.transfers.iter().enumerate() {
        let bt = base_transfer(base, b)?;
        let v = base.pieces[t.piece].shard;
        let (first, count) = refined.sub[t.piece];
        images.push(s.transfers.len());
        for j in 0..n {
            let (src, start) = (t.src * n + j, piece_start[v * n + j] + first);
            for i in 0..n {
                let dst = t.dst * n + i;
                let link = gn
                    .link_between(src, dst)
                    .ok_or_else(|| CollsynthError::internal("degree mapping: missing link of G * n"))?;
                for q in 0..count {
                    // The sender u_j got v_j's piece from the image (j, j) of the base delivery.
                    let after = bt.fed_by.map(|f| images[f] + (j * n + j) * count + q);
                    s.add(copy(start + q, src, dst, link, after, bt.step));
                }
            }
        }
    }
    Ok(images)
}

/// Def 2 part 2, at step `last`: every u_j receives each sibling u_i's shard, chunk a (of
/// D) over its a-th in-link (z_k -> u_j), after the image that delivered it to z_k.
#[allow(clippy::too_many_arguments)]
fn siblings(
    base: &Schedule,
    n: usize,
    gn: &Topology,
    refined: &Refined,
    piece_start: &[usize],
    images: &[usize],
    last: u32,
    s: &mut Schedule,
) -> Result<()> {
    let delivered: HashMap<(usize, usize), usize> =
        base.transfers.iter().enumerate().rev().map(|(b, t)| ((t.dst, t.piece), b)).collect();
    for (u, bounds) in refined.bounds.iter().enumerate() {
        for j in 0..n {
            let ins = gn.in_links(u * n + j);
            let chunk = Rat::one() / Rat::from_integer(ins.len() as i128);
            let mut q = 0;
            for (a, &l) in ins.iter().enumerate() {
                let (zk, end) = (gn.links[l].src, chunk * Rat::from_integer(a as i128 + 1));
                let chunk_pieces = q..bounds.partition_point(|x| *x < end);
                q = chunk_pieces.end;
                for q in chunk_pieces {
                    let p = refined.base_piece[u][q];
                    let b = *delivered.get(&(zk / n, p)).ok_or_else(|| {
                        CollsynthError::internal(format!("degree mapping: base rank {} never gets piece {p}", zk / n))
                    })?;
                    let (first, count) = refined.sub[p];
                    for i in (0..n).filter(|&i| i != j) {
                        let after = images[b] + (i * n + zk % n) * count + (q - first);
                        s.add(copy(piece_start[u * n + i] + q, zk, u * n + j, l, Some(after), last));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
