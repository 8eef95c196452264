//! From one box to a cluster: N copies of an imported box joined through their NICs by a
//! fabric: `rails` (NIC i of every box on rail switch i), `switch` (one non-blocking
//! switch) or `fat-tree:K` (the NICs as the hosts of a k-ary fat tree, in box order).
//! A NIC has a send side `nicI.tx` (from its feeds to the fabric) and a receive side
//! `nicI.rx` (back), so no route turns inside a NIC (docs/topology-file.md, "Routes").

use super::routes::RoutedBox;
use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use crate::topology::{NodeKind, Topology, TopologyBuilder};

/// Most boxes in one cluster, and most nodes overall (the zoo's limit).
pub const MAX_BOXES: usize = 1 << 16;
const MAX_NODES: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fabric {
    Rails,
    Switch,
    FatTree(usize),
}

impl Fabric {
    /// `rails`, `switch` or `fat-tree:K` (K even, 2..=64).
    pub fn parse(text: &str) -> Result<Fabric> {
        match text.trim() {
            "rails" => Ok(Fabric::Rails),
            "switch" => Ok(Fabric::Switch),
            t => {
                let k = t.strip_prefix("fat-tree:").ok_or_else(|| {
                    CollsynthError::bad(format!("unknown fabric '{t}' (fabrics: rails, switch, fat-tree:K)"))
                })?;
                match k.trim().parse::<usize>() {
                    Ok(k) if (2..=64).contains(&k) && k % 2 == 0 => Ok(Fabric::FatTree(k)),
                    _ => Err(CollsynthError::bad(format!("fabric '{t}': K must be an even number from 2 to 64"))),
                }
            }
        }
    }
}

/// How to stamp boxes and join them.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSpec {
    pub boxes: usize,
    /// `None`: a single box, no fabric.
    pub fabric: Option<Fabric>,
    /// Latency (us) of every link inside a box.
    pub box_latency: f64,
    /// Bandwidth of every fabric link; `None`: each NIC's port bandwidth on its link, the
    /// largest NIC bandwidth between fat-tree switches.
    pub fabric_bandwidth: Option<Rat>,
    /// Latency (us) of every fabric link.
    pub fabric_latency: f64,
}

fn check(spec: &ClusterSpec, model: &RoutedBox) -> Result<()> {
    if spec.boxes == 0 || spec.boxes > MAX_BOXES {
        return Err(CollsynthError::bad(format!("boxes must be between 1 and {MAX_BOXES}, got {}", spec.boxes)));
    }
    if spec.boxes > 1 && spec.fabric.is_none() {
        return Err(CollsynthError::bad("more than one box needs a fabric (rails, switch or fat-tree:K)"));
    }
    if spec.fabric.is_some() && model.ports.is_empty() {
        return Err(CollsynthError::bad(
            "the box has no NIC with a <net> that a GPU uses: nothing to join a fabric with",
        ));
    }
    for (what, lat) in [("latency", spec.box_latency), ("fabric latency", spec.fabric_latency)] {
        if !lat.is_finite() || lat < 0.0 {
            return Err(CollsynthError::bad(format!("{what} must be a finite number >= 0, got {lat}")));
        }
    }
    if spec.fabric_bandwidth.is_some_and(|bw| bw <= Rat::from_integer(0)) {
        return Err(CollsynthError::bad("fabric bandwidth must be positive"));
    }
    let fabric_nodes = match spec.fabric {
        Some(Fabric::FatTree(k)) => {
            let ports = k * k * k / 4;
            let needed = spec.boxes * model.ports.len();
            if needed > ports {
                return Err(CollsynthError::bad(format!(
                    "fat-tree:{k} has {ports} host ports, the cluster needs {needed} ({} boxes x {} NICs)",
                    spec.boxes,
                    model.ports.len()
                )));
            }
            k * k + k * k / 4
        }
        Some(Fabric::Rails) => model.ports.len(),
        Some(Fabric::Switch) => 1,
        None => 0,
    };
    let per_box = model.nodes.len() + 2 * model.ports.len();
    let nodes = spec.boxes.saturating_mul(per_box).saturating_add(fabric_nodes);
    if nodes > MAX_NODES {
        return Err(CollsynthError::bad(format!("too large: {nodes} nodes (at most {MAX_NODES})")));
    }
    Ok(())
}

/// Max-min fair shares of `limit` among feeds of bandwidths `feeds` (water filling): each
/// feed gets min(its bandwidth, a common level), and the shares sum to min(limit, total).
pub fn water_fill(feeds: &[Rat], limit: Rat) -> Vec<Rat> {
    let mut order: Vec<usize> = (0..feeds.len()).collect();
    order.sort_by_key(|&i| feeds[i]);
    let mut shares = feeds.to_vec();
    let mut left = limit;
    for (done, &i) in order.iter().enumerate() {
        let level = left / Rat::from_integer((feeds.len() - done) as i128);
        if feeds[i] > level {
            for &j in &order[done..] {
                shares[j] = level;
            }
            break;
        }
        left -= feeds[i];
    }
    shares
}

/// The topology `name`: `spec.boxes` copies of `model` (nodes `box{b}.gpu0`, .., group
/// `box{b}`; a single box keeps the plain names) joined by the fabric. NICs exist only with
/// a fabric: without one nothing leaves the box.
pub fn build(name: &str, model: &RoutedBox, spec: &ClusterSpec) -> Result<Topology> {
    check(spec, model)?;
    let mut b = TopologyBuilder::new(name);
    // Per NIC: its feeds' shares of the port (or of the fabric bandwidth) and their sum,
    // the bandwidth of its link into the fabric; each side of a NIC then carries as much
    // as it passes on (ForestColl's edge splitting needs that balance).
    let shares: Vec<(Vec<Rat>, Rat)> = model
        .ports
        .iter()
        .map(|p| {
            let feeds: Vec<Rat> = p.feeds.iter().map(|f| f.1).collect();
            let s = water_fill(&feeds, spec.fabric_bandwidth.unwrap_or(p.port));
            let total = s.iter().copied().sum();
            (s, total)
        })
        .collect();
    let mut nic_nodes: Vec<Vec<(usize, usize)>> = Vec::with_capacity(spec.boxes);
    for bx in 0..spec.boxes {
        let group = format!("box{bx}");
        let prefix = if spec.boxes > 1 { format!("{group}.") } else { String::new() };
        let base = b.n_nodes();
        for node in &model.nodes {
            b.node(format!("{prefix}{}", node.name), node.kind, Some(&group));
        }
        for &(u, v, bw) in &model.links {
            b.link(base + u, base + v, bw, spec.box_latency);
        }
        let mut sides = Vec::new();
        for (port, (s, _)) in model.ports.iter().zip(&shares).take(if spec.fabric.is_some() { usize::MAX } else { 0 }) {
            let tx = b.node(format!("{prefix}{}.tx", port.name), NodeKind::Switch, Some(&group));
            let rx = b.node(format!("{prefix}{}.rx", port.name), NodeKind::Switch, Some(&group));
            for (&(v, _), &bw) in port.feeds.iter().zip(s) {
                b.link(base + v, tx, bw, spec.box_latency);
                b.link(rx, base + v, bw, spec.box_latency);
            }
            sides.push((tx, rx));
        }
        nic_nodes.push(sides);
    }
    let port_bw = |i: usize| shares[i].1;
    let lat = spec.fabric_latency;
    let join = |b: &mut TopologyBuilder, (tx, rx): (usize, usize), hub: usize, bw: Rat| {
        b.link(tx, hub, bw, lat);
        b.link(hub, rx, bw, lat);
    };
    match spec.fabric {
        None => {}
        Some(Fabric::Switch) => {
            let hub = b.node("fabric", NodeKind::Switch, None);
            for nics in &nic_nodes {
                for (i, &nic) in nics.iter().enumerate() {
                    join(&mut b, nic, hub, port_bw(i));
                }
            }
        }
        Some(Fabric::Rails) => {
            let rails: Vec<usize> =
                (0..model.ports.len()).map(|i| b.node(format!("rail{i}"), NodeKind::Switch, None)).collect();
            for nics in &nic_nodes {
                for (i, &nic) in nics.iter().enumerate() {
                    join(&mut b, nic, rails[i], port_bw(i));
                }
            }
        }
        Some(Fabric::FatTree(k)) => {
            let top = spec.fabric_bandwidth.unwrap_or_else(|| shares.iter().map(|s| s.1).max().unwrap_or_default());
            let edges = fat_tree(&mut b, k, top, lat);
            let ports = nic_nodes.iter().flat_map(|nics| nics.iter().enumerate());
            for (j, (i, &nic)) in ports.enumerate() {
                join(&mut b, nic, edges[j / (k / 2)], port_bw(i));
            }
        }
    }
    b.build()
}

/// The switches of a k-ary fat tree, joined at `top` GB/s (by default the largest NIC
/// bandwidth: full bisection for uniform NICs); its edge switches, whose hosts are the NICs,
/// box by box: NIC port j (counted over the cluster) on edge switch j / (k/2).
fn fat_tree(b: &mut TopologyBuilder, k: usize, top: Rat, lat: f64) -> Vec<usize> {
    let half = k / 2;
    let mut edges = Vec::with_capacity(k * half);
    let mut aggs = Vec::with_capacity(k * half);
    for pod in 0..k {
        for e in 0..half {
            edges.push(b.node(format!("ft.pod{pod}.edge{e}"), NodeKind::Switch, None));
        }
        for a in 0..half {
            aggs.push(b.node(format!("ft.pod{pod}.agg{a}"), NodeKind::Switch, None));
        }
    }
    let cores: Vec<usize> = (0..half * half).map(|c| b.node(format!("ft.core{c}"), NodeKind::Switch, None)).collect();
    for pod in 0..k {
        for e in 0..half {
            for a in 0..half {
                b.bilink(edges[pod * half + e], aggs[pod * half + a], top, lat);
            }
        }
        for a in 0..half {
            for c in 0..half {
                b.bilink(aggs[pod * half + a], cores[a * half + c], top, lat);
            }
        }
    }
    edges
}
