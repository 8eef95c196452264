//! The network TACOS matches on: *virtual links* between ranks, each with a cost for one
//! chunk, the physical route it takes (for the IR) and the resources it occupies (for
//! exclusivity in the time-expanded network).
//!
//! * Direct links between compute nodes are virtual links of their own (cost
//!   `latency + bytes / bandwidth`), each its own resource.
//! * Switches, `--switch-mode ports` (the default): every pair of ranks joined by a path
//!   whose inner nodes are all switches (shortest such path) gets a virtual link along it.
//!   Its hops are resources shared with every other virtual link through the same switch
//!   port; hop h is busy during `[t + offset_h, t + offset_h + cost_h)` (store and forward),
//!   so the time-expanded network sees the switch ports congest.
//! * Switches, `--switch-mode unwind:d` (paper, section IV-G): each one-level switch with
//!   attached ranks `r_0 < ... < r_{n-1}` becomes the point-to-point links
//!   `r_i -> r_{i+1}, ..., r_{i+d}` (mod n), `d <= n - 1`, each with the switch path's
//!   latency and `1/d` of its bandwidth, each its own resource.

use crate::error::{CollsynthError, Result};
use crate::rational::to_f64;
use crate::topology::Topology;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchMode {
    Ports,
    Unwind(usize),
}

impl SwitchMode {
    pub fn parse(text: &str) -> Result<SwitchMode> {
        let bad = || CollsynthError::bad(format!("--switch-mode: '{text}' is not 'ports' or 'unwind:D' (D >= 1)"));
        match text {
            "ports" => Ok(SwitchMode::Ports),
            _ => {
                let d = text.strip_prefix("unwind:").ok_or_else(bad)?;
                match d.parse::<usize>() {
                    Ok(d) if d >= 1 => Ok(SwitchMode::Unwind(d)),
                    _ => Err(bad()),
                }
            }
        }
    }

    pub fn name(self) -> String {
        match self {
            SwitchMode::Ports => "ports".into(),
            SwitchMode::Unwind(d) => format!("unwind:{d}"),
        }
    }
}

/// One hop of a virtual link: the resource it occupies, from `offset` after the start, for
/// `cost` microseconds.
#[derive(Debug, Clone, Copy)]
pub struct Hop {
    pub res: u32,
    pub offset: f64,
    pub cost: f64,
}

/// A virtual link, 24 bytes: the engine reads one per candidate and per delivery, and at
/// 40K ranks the 160K records must stay in cache, so its hops and route live in [`Net`].
#[derive(Debug, Clone, Copy)]
pub struct VLink {
    pub src: u32,
    pub dst: u32,
    /// Microseconds for one chunk, start to arrival.
    pub cost: f64,
    /// Its hops are `Net::hops[first_hop..first_hop + n_hops]`.
    first_hop: u32,
    n_hops: u32,
}

/// A virtual link while the network is built.
struct Draft {
    src: u32,
    dst: u32,
    cost: f64,
    hops: Vec<Hop>,
    route: Vec<usize>,
}

/// In-links of a rank whose last hop uses the same resource.
#[derive(Debug, Clone)]
pub struct InGroup {
    pub res: u32,
    /// The largest offset of that hop among the group: if the resource is busy past
    /// `t + offset`, no link of the group is free at t.
    pub offset: f64,
    /// Positions in `in_v[d]`, increasing.
    pub pos: Vec<u32>,
}

/// The hops of a rank's in-links: those of `in_v[d][i]` are at `starts[i]..starts[i + 1]`
/// of `res` and `offset` (see [`Hop`]).
#[derive(Debug, Clone, Default)]
pub struct InHops {
    pub starts: Vec<u32>,
    pub res: Vec<u32>,
    pub offset: Vec<f64>,
}

impl InHops {
    /// Is the in-link at position i free at t (every hop's resource free when it gets there),
    /// with resources also busy until the times `overlay` assigns them?
    #[inline]
    pub fn free(&self, i: usize, busy: &[f64], overlay: &[(u32, f64)], t: f64) -> bool {
        let r = self.starts[i] as usize..self.starts[i + 1] as usize;
        self.res[r.clone()].iter().zip(&self.offset[r]).all(|(&res, &o)| {
            let extra = overlay.iter().filter(|v| v.0 == res).map(|v| v.1).fold(0.0, f64::max);
            busy[res as usize].max(extra) <= t + o
        })
    }
}

#[derive(Debug, Clone)]
pub struct Net {
    pub n: usize,
    pub vlinks: Vec<VLink>,
    /// In-links of rank d; without shared resources they are numbered
    /// `in_start[d]..in_start[d + 1]` (`in_start` is empty on shared networks).
    pub in_v: Vec<Vec<u32>>,
    pub in_start: Vec<u32>,
    /// Out-links of rank u with their destinations (read per delivery: the pair saves a
    /// look-up in `vlinks`, a cache miss at scale).
    pub out_v: Vec<Vec<(u32, u32)>>,
    pub n_res: usize,
    /// The hops of all virtual links (see [`Net::hops_of`]).
    pub hops: Vec<Hop>,
    /// Shared networks: per rank, its in-links' hops in `in_v` order, as matching reads them
    /// (one sequential pass, half the bytes of [`Hop`]s, no look-up in `vlinks`); empty otherwise.
    pub in_hops: Vec<InHops>,
    /// Per virtual link, its physical links (indices into the topology's links).
    pub routes: Vec<Vec<usize>>,
    /// Some resource is used by more than one virtual link.
    pub shared: bool,
    /// The distinct destinations of the virtual links using each resource, in the order
    /// of their first use (only when `shared`): who may be able to send when it frees.
    pub res_dsts: Vec<Vec<u32>>,
    /// Per rank, its in-links grouped by their last hop's resource (only when `shared`),
    /// so that a busy switch port rules out all the links through it at once.
    pub in_groups: Vec<Vec<InGroup>>,
    /// Every virtual link has the same cost.
    pub uniform: bool,
}

impl Net {
    /// The hops of virtual link l, in route order.
    #[inline]
    pub fn hops_of(&self, l: u32) -> &[Hop] {
        let v = &self.vlinks[l as usize];
        &self.hops[v.first_hop as usize..(v.first_hop + v.n_hops) as usize]
    }
}

/// Microseconds for `bytes` on a link of `bw` GB/s (10^3 bytes per us) and latency `lat`.
fn hop_cost(lat: f64, bw: f64, bytes: f64) -> f64 {
    lat + bytes / (bw * 1e3)
}

/// The virtual links of `topo` for chunks of `bytes` bytes.
pub fn build(topo: &Topology, bytes: f64, mode: SwitchMode) -> Result<Net> {
    let n = topo.n_ranks();
    let mut vlinks: Vec<Draft> = Vec::new();
    let mut n_res = 0usize;
    let mut res_of_link = vec![u32::MAX; topo.links.len()];
    let mut link_res = |l: usize, n_res: &mut usize| -> u32 {
        if res_of_link[l] == u32::MAX {
            res_of_link[l] = *n_res as u32;
            *n_res += 1;
        }
        res_of_link[l]
    };
    // Direct compute-compute links (in both modes).
    for (i, l) in topo.links.iter().enumerate() {
        if let (Some(a), Some(b)) = (topo.rank_of(l.src), topo.rank_of(l.dst)) {
            let cost = hop_cost(l.latency, to_f64(&l.bandwidth), bytes);
            let res = link_res(i, &mut n_res);
            vlinks.push(Draft {
                src: a as u32,
                dst: b as u32,
                cost,
                hops: vec![Hop { res, offset: 0.0, cost }],
                route: vec![i],
            });
        }
    }
    if topo.n_switches() > 0 {
        match mode {
            SwitchMode::Ports => {
                // BFS from each rank through switches only.
                for a in 0..n {
                    let s = topo.rank_node(a);
                    let mut via = vec![usize::MAX; topo.n_nodes()];
                    let mut seen = vec![false; topo.n_nodes()];
                    seen[s] = true;
                    let mut queue = VecDeque::from([s]);
                    while let Some(u) = queue.pop_front() {
                        for i in topo.out_links(u) {
                            let w = topo.links[i].dst;
                            if seen[w] {
                                continue;
                            }
                            seen[w] = true;
                            via[w] = i;
                            if topo.is_compute(w) {
                                if u == s {
                                    continue; // a direct link, already a virtual link
                                }
                                let mut route = vec![i];
                                let mut v = u;
                                while v != s {
                                    route.push(via[v]);
                                    v = topo.links[via[v]].src;
                                }
                                route.reverse();
                                let mut hops = Vec::with_capacity(route.len());
                                let mut offset = 0.0;
                                for &l in &route {
                                    let link = &topo.links[l];
                                    let cost = hop_cost(link.latency, to_f64(&link.bandwidth), bytes);
                                    hops.push(Hop { res: link_res(l, &mut n_res), offset, cost });
                                    offset += cost;
                                }
                                vlinks.push(Draft {
                                    src: a as u32,
                                    dst: topo.rank_of(w).expect("compute") as u32,
                                    cost: offset,
                                    hops,
                                    route,
                                });
                            } else {
                                queue.push_back(w);
                            }
                        }
                    }
                }
            }
            SwitchMode::Unwind(d) => {
                for sw in (0..topo.n_nodes()).filter(|&v| !topo.is_compute(v)) {
                    let mut attached: Vec<usize> = topo.out_links(sw).map(|i| topo.links[i].dst).collect();
                    if attached.iter().any(|&v| !topo.is_compute(v))
                        || topo.in_links(sw).iter().any(|&i| !topo.is_compute(topo.links[i].src))
                    {
                        return Err(CollsynthError::bad(format!(
                            "--switch-mode unwind: switch '{}' is linked to another switch; unwinding needs \
                             one-level switches (use --switch-mode ports)",
                            topo.nodes[sw].name
                        )));
                    }
                    attached.retain(|&v| topo.link_between(v, sw).is_some());
                    let m = attached.len();
                    if m < 2 {
                        continue;
                    }
                    let dd = d.min(m - 1);
                    for (ia, &va) in attached.iter().enumerate() {
                        for k in 1..=dd {
                            let vb = attached[(ia + k) % m];
                            let up = topo.link_between(va, sw).expect("attached");
                            let down = topo.link_between(sw, vb).expect("attached");
                            let (lu, ld) = (&topo.links[up], &topo.links[down]);
                            let bw = to_f64(&lu.bandwidth).min(to_f64(&ld.bandwidth)) / dd as f64;
                            let cost = hop_cost(lu.latency + ld.latency, bw, bytes);
                            let res = n_res as u32;
                            n_res += 1;
                            vlinks.push(Draft {
                                src: topo.rank_of(va).expect("compute") as u32,
                                dst: topo.rank_of(vb).expect("compute") as u32,
                                cost,
                                hops: vec![Hop { res, offset: 0.0, cost }],
                                route: vec![up, down],
                            });
                        }
                    }
                }
            }
        }
    }
    // Without shared resources, number virtual links by destination (stable): a range of
    // destinations then owns a range of links, which lets the engine match ranges of
    // destinations on separate threads. Shared networks are matched on one thread and keep
    // links numbered by source, which keeps a rank's many out-links (switch fan-out)
    // together for the arrivals' offers.
    let mut use_count = vec![0u32; n_res];
    for h in vlinks.iter().flat_map(|v| &v.hops) {
        use_count[h.res as usize] += 1;
    }
    let shared = use_count.iter().any(|&u| u > 1);
    let mut in_start = Vec::new();
    if !shared {
        vlinks.sort_by_key(|v| v.dst);
        in_start = vec![0u32; n + 1];
        for v in &vlinks {
            in_start[v.dst as usize + 1] += 1;
        }
        for d in 0..n {
            in_start[d + 1] += in_start[d];
        }
    }
    let mut in_v = vec![Vec::new(); n];
    let mut out_v = vec![Vec::new(); n];
    let mut users: Vec<Vec<u32>> = vec![Vec::new(); n_res];
    for (i, v) in vlinks.iter().enumerate() {
        in_v[v.dst as usize].push(i as u32);
        out_v[v.src as usize].push((i as u32, v.dst));
        for h in &v.hops {
            users[h.res as usize].push(i as u32);
        }
    }
    let uniform = vlinks.windows(2).all(|w| w[0].cost == w[1].cost);
    let (mut res_dsts, mut in_groups) = (Vec::new(), Vec::new());
    if shared {
        let mut seen = vec![u32::MAX; n];
        res_dsts = users
            .iter()
            .enumerate()
            .map(|(r, u)| {
                let mut ds = Vec::new();
                for &x in u {
                    let d = vlinks[x as usize].dst;
                    if seen[d as usize] != r as u32 {
                        seen[d as usize] = r as u32;
                        ds.push(d);
                    }
                }
                ds
            })
            .collect();
        for links in &in_v {
            let mut groups: Vec<InGroup> = Vec::new();
            for (i, &l) in links.iter().enumerate() {
                let h = vlinks[l as usize].hops.last().expect("a hop");
                match groups.iter_mut().find(|g| g.res == h.res) {
                    Some(g) => {
                        g.offset = g.offset.max(h.offset);
                        g.pos.push(i as u32);
                    }
                    None => groups.push(InGroup { res: h.res, offset: h.offset, pos: vec![i as u32] }),
                }
            }
            in_groups.push(groups);
        }
    }
    // Hops stored in the order of the destinations' in-links (on point-to-point networks,
    // the order of the virtual links), so that matching a rank reads its in-links' hops in
    // one sequential pass.
    let mut hops = Vec::new();
    let mut first_hop = vec![0u32; vlinks.len()];
    let mut in_hops = Vec::with_capacity(if shared { n } else { 0 });
    for links in &in_v {
        let mut mine = InHops::default();
        for &l in links {
            first_hop[l as usize] = hops.len() as u32;
            let h = &vlinks[l as usize].hops;
            if shared {
                mine.starts.push(mine.res.len() as u32);
                mine.res.extend(h.iter().map(|h| h.res));
                mine.offset.extend(h.iter().map(|h| h.offset));
            }
            hops.extend_from_slice(h);
        }
        if shared {
            mine.starts.push(mine.res.len() as u32);
            in_hops.push(mine);
        }
    }
    let mut routes = Vec::with_capacity(vlinks.len());
    let vlinks = vlinks
        .into_iter()
        .zip(first_hop)
        .map(|(d, first_hop)| {
            routes.push(d.route);
            VLink { src: d.src, dst: d.dst, cost: d.cost, first_hop, n_hops: d.hops.len() as u32 }
        })
        .collect();
    // Every event time is at most every transfer run one after another (N^2 per chunk, 65536
    // chunks per rank at most): latencies near 1e308 us, valid, would overflow the clock.
    let most = hops.iter().map(|h| h.cost).fold(0.0, f64::max) * (n as f64) * (n as f64) * 65536.0;
    if !most.is_finite() {
        return Err(CollsynthError::bad(format!(
            "tacos: hop costs up to {:e} us, run one after another, are past what its clock (a double) holds",
            hops.iter().map(|h| h.cost).fold(0.0, f64::max)
        )));
    }
    Ok(Net { n, vlinks, in_v, in_start, out_v, n_res, hops, in_hops, routes, shared, res_dsts, in_groups, uniform })
}
