//! The routes the runtime uses, as the only routes of the imported box.
//!
//! MSCCL XML names rank pairs only, and NCCL carries a pair over the path
//! `ncclTopoComputePaths` (NVIDIA/nccl src/graph/paths.cc) gives it: NVLink (or xGMI, or the
//! NVSwitch) where the pair has it, else PCIe through the lowest common switch, else through
//! the CPU; the network goes through the NIC `ncclTopoGetLocalNet` (src/graph/topo.cc) picks.
//! A topology that lets flows cross every PCIe switch and CPU overstates what a schedule can
//! get (GPU -> CPU -> GPU beside an NVLink, loops through a NIC). So the box is rebuilt:
//!
//! - **NVLink-connected** (NVLink, xGMI and NVSwitches join every GPU): GPU to GPU only over
//!   those. The PCIe / CPU side carries network traffic only, so it becomes one *feed* per
//!   GPU and NIC it uses: the GPU's share of its NCCL path to that NIC.
//! - **Otherwise** the PCIe / CPU graph stays (in a tree its one path between two GPUs is
//!   NCCL's), and each NIC is fed by its PCIe parent.
//!
//! Either way a NIC becomes a [`Port`]: the fabric builder gives it a send side and a receive
//! side, so no route enters a NIC from the box and leaves it back into the box.
//! docs/topology-file.md ("Routes") gives the rules and the choices.

use super::nccl::{BoxModel, BoxNode, LinkKind, Role};
use crate::rational::Rat;
use crate::topology::NodeKind;
use std::collections::HashMap;

/// NCCL's path types (src/include/graph.h `PATH_*`), ordered best first.
const LOC: u8 = 0;
const NVL: u8 = 1;
const C2C: u8 = 3;
const PIX: u8 = 4;
const PXB: u8 = 5;
const P2C: u8 = 6;
const PHB: u8 = 8;
const SYS: u8 = 9;
const DIS: u8 = 11;

/// A NIC as the fabric sees it: the box nodes feeding it and the bandwidth of each feed
/// (per direction; the fabric builder shares the port among them).
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    pub name: String,
    pub port: Rat,
    pub feeds: Vec<(usize, Rat)>,
}

/// A box whose only routes are the runtime's: nodes (ranks first), directed links, ports.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutedBox {
    pub nodes: Vec<BoxNode>,
    pub links: Vec<(usize, usize, Rat)>,
    pub ports: Vec<Port>,
    pub warnings: Vec<String>,
    /// Notes that matter only when boxes are joined by a fabric (a NIC no GPU picks).
    pub fabric_warnings: Vec<String>,
}

impl RoutedBox {
    pub fn n_ranks(&self) -> usize {
        self.nodes.iter().filter(|n| n.kind == NodeKind::Compute).count()
    }
}

/// The box's links merged per (src, dst, kind) as `ncclTopoConnectNodes` adds them, with
/// each node's links sorted by bandwidth, highest first (its insertion order).
struct Graph {
    links: Vec<(usize, usize, Rat, LinkKind)>,
    out: Vec<Vec<usize>>,
    index: HashMap<(usize, usize, LinkKind), usize>,
}

impl Graph {
    fn new(model: &BoxModel) -> Graph {
        let mut g = Graph { links: Vec::new(), out: vec![Vec::new(); model.nodes.len()], index: HashMap::new() };
        for l in &model.links {
            match g.index.get(&(l.src, l.dst, l.kind)) {
                Some(&i) => g.links[i].2 += l.bw,
                None => {
                    g.index.insert((l.src, l.dst, l.kind), g.links.len());
                    g.out[l.src].push(g.links.len());
                    g.links.push((l.src, l.dst, l.bw, l.kind));
                }
            }
        }
        for out in &mut g.out {
            out.sort_by(|&a, &b| g.links[b].2.cmp(&g.links[a].2));
        }
        g
    }

    fn reverse(&self, l: usize) -> Option<usize> {
        let (a, b, _, kind) = self.links[l];
        self.index.get(&(b, a, kind)).copied()
    }

    /// The bandwidth a link offers both ways (the smaller direction).
    fn both_ways(&self, l: usize) -> Rat {
        let bw = self.links[l].2;
        self.reverse(l).map_or(bw, |r| bw.min(self.links[r].2))
    }
}

/// A path to a base node: type, bandwidth (its narrowest link) and the links from the node
/// toward the base.
#[derive(Debug, Clone)]
struct Path {
    ty: u8,
    bw: Rat,
    hops: Vec<usize>,
}

/// `ncclTopoSetPaths`: every node's best path to `base` by NCCL's layered search: a better
/// type wins, then a higher bandwidth, then fewer hops. A path never crosses a GPU (NVB
/// through one GPU exists only between GPUs, which are not searched here). `start_bw` is
/// the base's own bandwidth (a NIC's port, the NET -> NIC link in NCCL).
fn paths_to(g: &Graph, roles: &[Role], base: usize, start_bw: Rat) -> Vec<Option<Path>> {
    let mut best: Vec<Option<Path>> = vec![None; roles.len()];
    best[base] = Some(Path { ty: LOC, bw: start_bw, hops: Vec::new() });
    let mut layer = vec![base];
    while !layer.is_empty() {
        let mut next: Vec<usize> = Vec::new();
        for &node in &layer {
            if node != base && roles[node] == Role::Gpu {
                continue;
            }
            let Some(path) = best[node].clone() else { continue };
            for &l in &g.out[node] {
                let (_, rem, bw, kind) = g.links[l];
                let Some(back) = g.reverse(l) else { continue };
                let bw = path.bw.min(bw);
                let mut ty = match kind {
                    LinkKind::Nvl => NVL,
                    LinkKind::C2c => C2C,
                    LinkKind::Pci => PIX,
                    LinkKind::Sys => SYS,
                };
                if roles[node] == Role::Pci && roles[rem] == Role::Pci {
                    ty = PXB;
                }
                if kind == LinkKind::Pci && (roles[node] == Role::Cpu || roles[rem] == Role::Cpu) {
                    ty = PHB;
                }
                let ty = ty.max(path.ty);
                let better = best[rem].as_ref().is_none_or(|r| {
                    ty < r.ty
                        || (ty == r.ty && r.bw < bw)
                        || (ty == r.ty && r.bw == bw && r.hops.len() > path.hops.len() + 1)
                });
                if better {
                    let mut hops = Vec::with_capacity(path.hops.len() + 1);
                    hops.push(back);
                    hops.extend_from_slice(&path.hops);
                    best[rem] = Some(Path { ty, bw, hops });
                    if !next.contains(&rem) {
                        next.push(rem);
                    }
                }
            }
        }
        layer = next;
    }
    best
}

/// `mergePathType`: C2C then PHB is P2C, otherwise the worse type.
fn merge_type(a: u8, b: u8) -> u8 {
    if a.max(b) == PHB && a.min(b) == C2C {
        P2C
    } else {
        a.max(b)
    }
}

/// `ncclTopoGetLocal`: the candidates with the highest bandwidth, among them the best type.
fn locals(candidates: &[Option<(u8, Rat)>]) -> Vec<usize> {
    let (mut min_type, mut max_bw) = (DIS, Rat::from_integer(0));
    let mut out = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let Some((ty, bw)) = *c else { continue };
        if bw > max_bw || (bw == max_bw && ty < min_type) {
            (max_bw, min_type) = (bw, ty);
            out.clear();
        }
        if bw == max_bw && ty == min_type {
            out.push(i);
        }
    }
    out
}

/// `mirrorBits` (topo.h): `val`'s low bits reversed within `pow2`.
fn mirror_bits(val: usize, pow2: usize) -> usize {
    let (mut mirror, mut b, mut mb) = (0, 1, pow2 >> 1);
    while b < pow2 {
        if val & b != 0 {
            mirror |= mb;
        }
        b <<= 1;
        mb >>= 1;
    }
    mirror
}

/// Whether NVLink, xGMI and NVSwitches join all the GPUs, and the GPU pairs with no NVLink
/// path of at most two links (NVL or NVB in paths.cc), which NCCL would send over PCIe.
fn nvlink_reach(model: &BoxModel, n: usize) -> (bool, bool, usize) {
    let fabric = |v: usize| matches!(model.nodes[v].role, Role::Gpu | Role::NvSwitch);
    let mut adj = vec![vec![false; model.nodes.len()]; model.nodes.len()];
    let mut any = false;
    for l in model.links.iter().filter(|l| l.kind == LinkKind::Nvl && fabric(l.src) && fabric(l.dst)) {
        adj[l.src][l.dst] = true;
        any = true;
    }
    // One hop: a direct link or the NVSwitch (a GPU -> NVS -> GPU path is NVL).
    let hop = |a: usize, b: usize| {
        adj[a][b] || (n..model.nodes.len()).any(|s| model.nodes[s].role == Role::NvSwitch && adj[a][s] && adj[s][b])
    };
    let mut far = 0;
    let mut seen = vec![false; n];
    let mut stack = vec![0];
    while let Some(a) = stack.pop() {
        if !std::mem::replace(&mut seen[a], true) {
            stack.extend((0..n).filter(|&b| !seen[b] && (hop(a, b) || hop(b, a))));
        }
    }
    for a in 0..n {
        for b in (0..n).filter(|&b| b != a) {
            if !hop(a, b) && !(0..n).any(|c| hop(a, c) && hop(c, b)) {
                far += 1;
            }
        }
    }
    (n <= 1 || seen.iter().all(|&s| s), any, far)
}

/// Rebuild `model` so that its only routes are the runtime's (module docs).
pub fn route(model: BoxModel) -> RoutedBox {
    let n = model.gpus.len();
    let (connected, any_nvlink, far) = nvlink_reach(&model, n);
    let mut warnings = model.warnings.clone();
    if connected {
        if far > 0 {
            warnings.push(format!(
                "{far} ordered GPU pairs have no NVLink / xGMI path of at most two links: NCCL would carry \
                 them over PCIe; here they go through other GPUs over NVLink / xGMI only"
            ));
        }
        nvlink_connected(&model, warnings)
    } else {
        if any_nvlink {
            warnings.push(
                "NVLink / xGMI joins only some of the GPUs: the PCIe side is kept for the others, so a pair \
                 with NVLink may also be routed over PCIe here (NCCL would not)"
                    .to_string(),
            );
        }
        pcie_tree(&model, warnings)
    }
}

/// The nodes for which `keep` holds, renumbered in order, and the map old -> new.
fn keep_nodes(model: &BoxModel, keep: impl Fn(&BoxNode) -> bool) -> (Vec<BoxNode>, Vec<Option<usize>>) {
    let mut nodes = Vec::new();
    let map = model
        .nodes
        .iter()
        .map(|v| {
            keep(v).then(|| {
                nodes.push(v.clone());
                nodes.len() - 1
            })
        })
        .collect();
    (nodes, map)
}

/// No NVLink between all GPUs: the PCIe / CPU graph stays; each NIC is fed by its parents.
fn pcie_tree(model: &BoxModel, warnings: Vec<String>) -> RoutedBox {
    let (nodes, map) = keep_nodes(model, |v| v.role != Role::Nic);
    let g = Graph::new(model);
    let links = (0..g.links.len())
        .filter_map(|l| {
            let (a, b, bw, _) = g.links[l];
            Some((map[a]?, map[b]?, bw))
        })
        .collect();
    let ports = model
        .nics
        .iter()
        .map(|nic| Port {
            name: model.nodes[nic.node].name.clone(),
            port: nic.port,
            feeds: g.out[nic.node].iter().filter_map(|&l| Some((map[g.links[l].1]?, g.both_ways(l)))).collect(),
        })
        .filter(|p| !p.feeds.is_empty())
        .collect();
    RoutedBox { nodes, links, ports, warnings, fabric_warnings: Vec::new() }
}

/// NVLink joins every GPU: GPU to GPU over NVLink only; the rest feeds the NICs.
fn nvlink_connected(model: &BoxModel, warnings: Vec<String>) -> RoutedBox {
    let (nodes, map) = keep_nodes(model, |v| matches!(v.role, Role::Gpu | Role::NvSwitch));
    let g = Graph::new(model);
    let links = (0..g.links.len())
        .filter_map(|l| {
            let (a, b, bw, kind) = g.links[l];
            (kind == LinkKind::Nvl).then_some(())?;
            Some((map[a]?, map[b]?, bw))
        })
        .collect();
    let roles: Vec<Role> = model.nodes.iter().map(|v| v.role).collect();
    let nic_paths: Vec<Vec<Option<Path>>> =
        model.nics.iter().map(|nic| paths_to(&g, &roles, nic.node, nic.port)).collect();
    let loc = Rat::from_integer(super::rules::LOC_BW);
    let mut cpu_paths: HashMap<usize, Vec<Option<Path>>> = HashMap::new();
    // Every GPU's path to every NIC, diverted through its CPU where NCCL cannot use GPU
    // Direct RDMA (`ncclTopoComputePaths` with `ncclTopoCheckGdr`: both ends `gdr` and a
    // path of type P2C or better).
    let mut to_nic: Vec<Vec<Option<Path>>> = Vec::with_capacity(model.gpus.len());
    for (gpu, info) in model.gpus.iter().enumerate() {
        let row = model
            .nics
            .iter()
            .zip(&nic_paths)
            .map(|(nic, paths)| {
                let p = paths[gpu].clone()?;
                if p.ty >= PHB || (info.gdr && nic.gdr && p.ty <= P2C) {
                    return Some(p);
                }
                let up =
                    cpu_paths.entry(info.cpu).or_insert_with(|| paths_to(&g, &roles, info.cpu, loc))[gpu].clone()?;
                let down = paths[info.cpu].clone()?;
                let hops = up.hops.iter().chain(&down.hops).copied().collect();
                Some(Path { ty: merge_type(up.ty, down.ty), bw: up.bw.min(down.bw), hops })
            })
            .collect();
        to_nic.push(row);
    }
    // `ncclTopoGetLocalNetType` under the default NETDEVS_POLICY AUTO: GPU `dev` starts at
    // local NIC (dev mod local GPUs), mirrored when the count is a power of two, and its
    // channels use ceil(local NICs / local GPUs) of them in turn.
    let metric = |p: &Option<Path>| p.as_ref().map(|p| (p.ty, p.bw));
    let mut chosen: Vec<(usize, usize)> = Vec::new();
    for (gpu, info) in model.gpus.iter().enumerate() {
        let nets = locals(&to_nic[gpu].iter().map(metric).collect::<Vec<_>>());
        let Some(&first) = nets.first() else { continue };
        let local_gpus = locals(&to_nic.iter().map(|row| metric(&row[first])).collect::<Vec<_>>()).len().max(1);
        let per_gpu = nets.len().div_ceil(local_gpus);
        let mut start = usize::try_from(info.dev).unwrap_or(0) % local_gpus;
        if nets.len().is_power_of_two() {
            start = mirror_bits(start, nets.len());
        }
        for c in 0..per_gpu {
            let nic = nets[(start + c) % nets.len()];
            if !chosen.contains(&(gpu, nic)) {
                chosen.push((gpu, nic));
            }
        }
    }
    // A feed is the GPU's share of its path: each link split evenly among the chosen paths
    // crossing it, so the feeds never ask more of a link than it has.
    let mut users: HashMap<usize, i128> = HashMap::new();
    for &(gpu, nic) in &chosen {
        for &h in to_nic[gpu][nic].as_ref().map_or(&[][..], |p| &p.hops) {
            *users.entry(h).or_default() += 1;
        }
    }
    let mut ports: Vec<Port> = Vec::new();
    let mut fabric_warnings = Vec::new();
    for (i, nic) in model.nics.iter().enumerate() {
        let mut feeds = Vec::new();
        for &(gpu, _) in chosen.iter().filter(|c| c.1 == i) {
            let Some(path) = &to_nic[gpu][i] else { continue };
            let share = path.hops.iter().map(|&h| g.both_ways(h) / Rat::from_integer(users[&h])).min();
            feeds.push((map[gpu].unwrap_or(gpu), share.unwrap_or(nic.port).min(nic.port)));
        }
        let name = model.nodes[nic.node].name.clone();
        if feeds.is_empty() {
            fabric_warnings.push(format!("{name}: no GPU's local NIC (ncclTopoGetLocalNet): left out of the fabric"));
        } else {
            ports.push(Port { name, port: nic.port, feeds });
        }
    }
    RoutedBox { nodes, links, ports, warnings, fabric_warnings }
}

#[cfg(test)]
mod tests;
