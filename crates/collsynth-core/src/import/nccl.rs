//! One box from an NCCL / RCCL topology XML tree: GPUs (the ranks), the NVSwitch, PCI
//! switches, CPU root complexes (NUMA nodes) and NICs, with NCCL's bandwidths.
//!
//! Like NCCL (`ncclTopoGetSystemFromXml`): every `<nvlink>` row to an NVSwitch goes to one
//! switch node, repeated rows add up, a `<pci>` holding a `<gpu>` is the GPU and one holding
//! a `<nic>` is the NIC, a GPU without `rank` is not part of the communicator and is left out.

use super::rules::{self, Target};
use super::xml::Element;
use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use crate::topology::NodeKind;
use std::collections::HashMap;

/// Largest `count` of one `<nvlink>` / `<xgmi>` row and largest `link_width` (real values
/// are at most 18 and 16).
const MAX_COUNT: u64 = 1024;
/// Largest NIC speed in Mb/s (10^9 Mb/s = 125 TB/s).
const MAX_SPEED: i64 = 1_000_000_000;
/// NIC port speeds we take as plausible, in Mb/s: 1 Gb/s (the slowest Ethernet a server
/// still reports) to 3.2 Tb/s (twice today's fastest 1.6 Tb/s port); outside, a warning.
const PLAUSIBLE_SPEED: std::ops::RangeInclusive<i64> = 1_000..=3_200_000;
/// `<net name>` prefixes of virtual interfaces (containers, overlays, loopback): not a way
/// out of the box, so left out.
const VIRTUAL_NETS: [&str; 6] = ["docker", "veth", "calico", "tunl", "cni", "flannel"];

/// What a node is to NCCL (`topo.h` node types; our NIC is NCCL's NIC and NET together).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Gpu,
    Pci,
    Cpu,
    Nic,
    NvSwitch,
}

/// NCCL's link types (`topo.h` `LINK_NVL`, `LINK_C2C`, `LINK_PCI`, `LINK_SYS`): a path's
/// type follows from them (paths.cc). xGMI is RCCL's `LINK_NVL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    Nvl,
    C2c,
    Pci,
    Sys,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BoxNode {
    pub name: String,
    pub kind: NodeKind,
    pub role: Role,
}

/// A directed link of the box as NCCL builds it.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxLink {
    pub src: usize,
    pub dst: usize,
    /// GB/s; repeated (src, dst, kind) add up, as `ncclTopoConnectNodes` does.
    pub bw: Rat,
    pub kind: LinkKind,
}

/// A NIC with at least one port.
#[derive(Debug, Clone, PartialEq)]
pub struct Nic {
    pub node: usize,
    /// The sum of its `<net>` speeds, GB/s.
    pub port: Rat,
    /// Every port has `gdr="1"` (GPU Direct RDMA, `ncclTopoCheckGdr`).
    pub gdr: bool,
}

/// A rank's GPU: node `rank` of the box.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuInfo {
    /// `<gpu dev>`, which spreads GPUs over their local NICs (`ncclTopoGetLocalNetType`).
    pub dev: u64,
    pub gdr: bool,
    /// The CPU (NUMA node) it sits under: its local CPU.
    pub cpu: usize,
}

/// A box as NCCL sees it: ranks first (in `rank` order), then switches; directed links; the
/// NICs in file order. `import::routes` turns it into the routes the runtime uses.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxModel {
    pub nodes: Vec<BoxNode>,
    pub links: Vec<BoxLink>,
    pub nics: Vec<Nic>,
    /// Per rank.
    pub gpus: Vec<GpuInfo>,
    pub warnings: Vec<String>,
}

impl BoxModel {
    pub fn n_ranks(&self) -> usize {
        self.nodes.iter().filter(|n| n.kind == NodeKind::Compute).count()
    }
}

/// Which file family: NCCL (`version="1"`, `<nvlink>`) or RCCL (`version="2"`, `<xgmi>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Nccl,
    Rccl,
}

struct Gpu {
    node: usize,
    rank: u64,
    dev: u64,
    gdr: bool,
    cpu: usize,
    /// Per-link bandwidth of this GPU's NVLink / xGMI rows.
    link_bw: Rat,
    rows: Vec<Element>,
    c2c: Vec<Element>,
}

#[derive(Default)]
struct Walk {
    nodes: Vec<BoxNode>,
    links: Vec<BoxLink>,
    nics: Vec<Nic>,
    /// Next NIC index, and the NIC of every network device seen (by `<net dev>`, NCCL's id
    /// of a NET node in `ncclTopoAddNet`; by `name` when there is no `dev`).
    nic_count: usize,
    net_seen: HashMap<String, String>,
    gpus: Vec<Gpu>,
    by_bus: HashMap<u64, usize>,
    warnings: Vec<String>,
}

fn bad(el: &Element, msg: impl std::fmt::Display) -> CollsynthError {
    CollsynthError::bad(format!("{}: {msg}", el.at()))
}

/// A whole number attribute no larger than `max` (`None` when absent).
fn uint(el: &Element, key: &str, max: u64) -> Result<Option<u64>> {
    let Some(v) = el.attr(key) else { return Ok(None) };
    let t = v.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    };
    match parsed {
        Ok(n) if n <= max => Ok(Some(n)),
        Ok(n) => Err(bad(el, format!("{key}=\"{v}\": {n} is larger than {max}"))),
        Err(_) => Err(bad(el, format!("{key}=\"{v}\" is not a whole number"))),
    }
}

/// A PCI bus id as NCCL compares them (`busIdToInt64`: the hex digits, separators ignored).
fn bus_key(busid: &str) -> Option<u64> {
    let digits: String = busid.chars().filter(|c| *c != ':' && *c != '.').collect();
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    u64::from_str_radix(&digits, 16).ok()
}

/// The box described by the `<system>` element `root`.
pub fn read_box(root: &Element) -> Result<BoxModel> {
    if root.name != "system" {
        return Err(bad(root, "the top element of an NCCL topology file is <system>"));
    }
    let dialect = match root.attr("version").map(str::trim) {
        Some("1") => Dialect::Nccl,
        Some("2") => Dialect::Rccl,
        Some(v) => {
            return Err(bad(root, format!("version=\"{v}\" is not supported (NCCL writes 1, RCCL writes 2)")));
        }
        None => return Err(bad(root, "missing version (NCCL writes version=\"1\", RCCL version=\"2\")")),
    };
    let mut w = Walk::default();
    let mut cpus: Vec<(usize, rules::Cpu, String)> = Vec::new();
    for el in &root.children {
        if el.name != "cpu" {
            w.warnings.push(format!("{}: ignored (only <cpu> is read under <system>)", el.at()));
            continue;
        }
        let cpu = w.add(format!("cpu{}", cpus.len()), NodeKind::Switch, Role::Cpu);
        let attrs = rules::Cpu {
            arch: el.attr("arch").unwrap_or_default().to_string(),
            vendor: el.attr("vendor").unwrap_or_default().to_string(),
            family: uint(el, "familyid", u64::MAX)?.unwrap_or(0),
            model: uint(el, "modelid", u64::MAX)?.unwrap_or(0),
        };
        cpus.push((cpu, attrs, el.attr("host_hash").unwrap_or_default().to_string()));
        for child in &el.children {
            match child.name.as_str() {
                "pci" => w.pci(child, cpu, cpu, dialect)?,
                "nic" => {
                    // A socket NIC hangs on its CPU at LOC_BW (`ncclTopoAddCpu`).
                    if let Some(nic) = w.nic(child)? {
                        w.bilink(nic, cpu, Rat::from_integer(rules::LOC_BW), LinkKind::Pci);
                    }
                }
                _ => w.warnings.push(format!("{}: ignored under <cpu>", child.at())),
            }
        }
    }
    // SYS links between every two CPUs of one host, each direction at its source's rate.
    for (a, cpu_a, host_a) in &cpus {
        for (b, _, host_b) in &cpus {
            if a != b && host_a == host_b {
                w.links.push(BoxLink { src: *a, dst: *b, bw: rules::inter_cpu_bw(cpu_a), kind: LinkKind::Sys });
            }
        }
    }
    if w.gpus.is_empty() {
        return Err(missing_gpus(root));
    }
    w.nvlinks()?;
    w.finish()
}

/// The one-line error for a file without GPUs, saying what it is when it is NCCL's partial
/// PCI/NUMA skeleton (GPU functions as bare `<pci class="0x03..">`).
fn missing_gpus(root: &Element) -> CollsynthError {
    fn bare_gpus(el: &Element) -> usize {
        let own = usize::from(
            el.name == "pci"
                && el.attr("class").is_some_and(|c| c.starts_with("0x03"))
                && !el.children.iter().any(|c| c.name == "gpu"),
        );
        own + el.children.iter().map(bare_gpus).sum::<usize>()
    }
    let bare = bare_gpus(root);
    if bare > 0 {
        CollsynthError::bad(format!(
            "no <gpu> element: this is a partial topology (a PCI/NUMA skeleton with {bare} GPU PCI functions \
             but no <gpu>, <nvlink> or <nic>, which NCCL fills in at run time); give a full dump \
             (NCCL_TOPO_DUMP_FILE)"
        ))
    } else {
        CollsynthError::bad(
            "no <gpu> with a rank in the file: nothing to schedule (give a full NCCL_TOPO_DUMP_FILE dump)",
        )
    }
}

impl Walk {
    fn add(&mut self, name: String, kind: NodeKind, role: Role) -> usize {
        self.nodes.push(BoxNode { name, kind, role });
        self.nodes.len() - 1
    }

    fn bilink(&mut self, a: usize, b: usize, bw: Rat, kind: LinkKind) {
        self.links.push(BoxLink { src: a, dst: b, bw, kind });
        self.links.push(BoxLink { src: b, dst: a, bw, kind });
    }

    /// A `<nic>`: a node whose port bandwidth is the sum of its `<net>` speeds. `None` when
    /// every `<net>` is left out (virtual, or a device already listed elsewhere).
    fn nic(&mut self, el: &Element) -> Result<Option<usize>> {
        let mut port = Rat::from_integer(0);
        let (mut ports, mut gdr, mut left_out) = (0, true, 0);
        let here = format!("nic{}", self.nic_count);
        for net in &el.children {
            if net.name != "net" {
                self.warnings.push(format!("{}: ignored under <nic>", net.at()));
                continue;
            }
            let name = net.attr("name").unwrap_or_default().trim();
            if name == "lo" || VIRTUAL_NETS.iter().any(|p| name.starts_with(p)) {
                self.warnings.push(format!("{}: name=\"{name}\" is a virtual interface: left out", net.at()));
                left_out += 1;
                continue;
            }
            // NCCL names a network device by its `dev` (`ncclTopoAddNet`): listed under two
            // CPUs it is still one device, counted at its first place.
            let id = net.attr("dev").map_or_else(|| format!("name {name}"), |d| format!("dev {}", d.trim()));
            if let Some(first) = self.net_seen.get(&id) {
                self.warnings
                    .push(format!("{}: {id} is listed again ({first} already has it): counted once", net.at()));
                left_out += 1;
                continue;
            }
            self.net_seen.insert(id, here.clone());
            let speed =
                match net.attr("speed") {
                    None => None,
                    Some(v) => Some(v.trim().parse::<i64>().ok().filter(|s| *s <= MAX_SPEED).ok_or_else(|| {
                        bad(net, format!("speed=\"{v}\" is not a speed in Mb/s (at most {MAX_SPEED})"))
                    })?),
                };
            match speed {
                Some(s) if s > 0 && !PLAUSIBLE_SPEED.contains(&s) => self.warnings.push(format!(
                    "{}: speed=\"{s}\" Mb/s is outside 1 Gb/s..3.2 Tb/s per port: implausible, taken as given",
                    net.at()
                )),
                Some(s) if s > 0 => {}
                _ => self.warnings.push(format!("{}: no positive speed: NCCL's default 10000 Mb/s assumed", net.at())),
            }
            port += rules::net_bw(speed);
            gdr &= net.attr("gdr").is_some_and(|g| g.trim() == "1");
            ports += 1;
        }
        if ports == 0 && left_out > 0 {
            return Ok(None);
        }
        if ports > 0 {
            self.nic_count += 1;
            let node = self.add(here, NodeKind::Switch, Role::Nic);
            self.nics.push(Nic { node, port, gdr });
            Ok(Some(node))
        } else {
            self.warnings.push(format!("{}: no <net>: not connected to any fabric", el.at()));
            Ok(Some(self.add(format!("nic-unused{}", self.nodes.len()), NodeKind::Switch, Role::Nic)))
        }
    }

    /// A `<pci>` below `parent` (a CPU or a PCI switch) in the NUMA node `cpu`.
    fn pci(&mut self, el: &Element, parent: usize, cpu: usize, dialect: Dialect) -> Result<()> {
        let width = uint(el, "link_width", MAX_COUNT)?.unwrap_or(0);
        let bw = rules::pci_bw(el.attr("link_speed").unwrap_or_default(), width);
        let gpu = el.children.iter().find(|c| c.name == "gpu");
        let nic = el.children.iter().find(|c| c.name == "nic");
        let node = if let Some(g) = gpu {
            let Some(rank) = uint(g, "rank", u64::from(u32::MAX))? else {
                self.warnings.push(format!("{}: no rank attribute: not in the communicator, left out", g.at()));
                return Ok(());
            };
            self.gpu(el, g, rank, cpu, dialect)?
        } else if let Some(n) = nic.map(|n| self.nic(n)).transpose()?.flatten() {
            n
        } else {
            // A bridge, or the slot of a NIC whose every port was left out.
            let busid = el.attr("busid").unwrap_or("?");
            self.add(format!("pci-{busid}"), NodeKind::Switch, Role::Pci)
        };
        if let Some(key) = el.attr("busid").and_then(bus_key) {
            // Links name their ends by bus id: a second device on the same id would make them ambiguous.
            if self.by_bus.insert(key, node).is_some() {
                return Err(bad(el, format!("busid=\"{}\" appears twice", el.attr("busid").unwrap_or_default())));
            }
        }
        self.bilink(node, parent, bw, LinkKind::Pci);
        for child in &el.children {
            match child.name.as_str() {
                "pci" => self.pci(child, node, cpu, dialect)?,
                "gpu" | "nic" => {}
                "pcilink" => self.warnings.push(format!("{}: ignored (a LOC link between PCI switches)", child.at())),
                _ => self.warnings.push(format!("{}: ignored under <pci>", child.at())),
            }
        }
        Ok(())
    }

    fn gpu(&mut self, pci: &Element, g: &Element, rank: u64, cpu: usize, dialect: Dialect) -> Result<usize> {
        if self.gpus.iter().any(|x| x.rank == rank) {
            return Err(bad(g, format!("rank {rank} appears twice")));
        }
        let link_bw = match dialect {
            Dialect::Nccl => rules::nvlink_bw(uint(g, "sm", MAX_COUNT)?.unwrap_or(0)),
            Dialect::Rccl => rules::xgmi_bw(g.attr("gcn").unwrap_or_default()),
        };
        let row = if dialect == Dialect::Nccl { "nvlink" } else { "xgmi" };
        let mut rows = Vec::new();
        let mut c2c = Vec::new();
        for c in &g.children {
            match c.name.as_str() {
                n if n == row => rows.push(c.clone()),
                "c2c" => c2c.push(c.clone()),
                _ => self.warnings.push(format!(
                    "{}: ignored under <gpu> of a version-{} file",
                    c.at(),
                    dialect as u8 + 1
                )),
            }
        }
        let node = self.add(format!("gpu-{}", pci.attr("busid").unwrap_or("?")), NodeKind::Compute, Role::Gpu);
        let dev = uint(g, "dev", u64::from(u32::MAX))?.unwrap_or(rank);
        let gdr = g.attr("gdr").is_some_and(|v| v.trim() == "1");
        self.gpus.push(Gpu { node, rank, dev, gdr, cpu, link_bw, rows, c2c });
        Ok(node)
    }

    /// The NVLink / xGMI rows and C2C links, once every GPU and PCI node is known.
    fn nvlinks(&mut self) -> Result<()> {
        let mut nvswitch: Option<usize> = None;
        let gpus = std::mem::take(&mut self.gpus);
        for g in &gpus {
            for row in &g.rows {
                let count = uint(row, "count", MAX_COUNT)?.unwrap_or(1);
                let bw = g.link_bw * Rat::from_integer(i128::from(count));
                if count == 0 {
                    continue;
                }
                let kind = rules::target_kind(row.attr("tclass").unwrap_or_default());
                let remote = match kind {
                    Target::NvSwitch => *nvswitch
                        .get_or_insert_with(|| self.add("nvswitch".to_string(), NodeKind::Switch, Role::NvSwitch)),
                    Target::Cpu => g.cpu,
                    Target::Gpu | Target::Nic | Target::Pci => {
                        let target = row.attr("target").unwrap_or_default();
                        match bus_key(target).and_then(|k| self.by_bus.get(&k).copied()) {
                            Some(v) if v != g.node => v,
                            // A row to the GPU itself (some VM dumps list one) moves nothing.
                            Some(_) => continue,
                            None => {
                                self.warnings
                                    .push(format!("{}: target \"{target}\" is not in the file: row ignored", row.at()));
                                continue;
                            }
                        }
                    }
                };
                // A GPU's rows give only its own direction (the peer lists its own rows);
                // switches, CPUs and other devices are linked both ways, as in NCCL and RCCL.
                if kind == Target::Gpu && self.nodes[remote].kind == NodeKind::Compute {
                    self.links.push(BoxLink { src: g.node, dst: remote, bw, kind: LinkKind::Nvl });
                } else {
                    self.bilink(g.node, remote, bw, LinkKind::Nvl);
                }
            }
            for c in &g.c2c {
                let per = uint(c, "bw", u64::from(u32::MAX))?.unwrap_or(0);
                let count = uint(c, "count", MAX_COUNT)?.unwrap_or(0);
                if per > 0 && count > 0 {
                    self.bilink(g.node, g.cpu, Rat::new(i128::from(per) * i128::from(count), 1000), LinkKind::C2c);
                }
            }
        }
        self.gpus = gpus;
        Ok(())
    }

    /// Renumber: GPUs first in rank order (named gpu0.. by that order), then the switches.
    fn finish(self) -> Result<BoxModel> {
        let mut order: Vec<usize> = Vec::with_capacity(self.nodes.len());
        let mut gpus: Vec<&Gpu> = self.gpus.iter().collect();
        gpus.sort_by_key(|g| g.rank);
        order.extend(gpus.iter().map(|g| g.node));
        order.extend((0..self.nodes.len()).filter(|&v| self.nodes[v].kind == NodeKind::Switch));
        let mut new_of = vec![usize::MAX; self.nodes.len()];
        for (new, &old) in order.iter().enumerate() {
            new_of[old] = new;
        }
        let mut nodes: Vec<BoxNode> = order.iter().map(|&old| self.nodes[old].clone()).collect();
        for (i, node) in nodes.iter_mut().take(gpus.len()).enumerate() {
            node.name = format!("gpu{i}");
        }
        let links =
            self.links.iter().map(|l| BoxLink { src: new_of[l.src], dst: new_of[l.dst], ..l.clone() }).collect();
        let nics = self.nics.iter().map(|n| Nic { node: new_of[n.node], ..n.clone() }).collect();
        let gpus = gpus.iter().map(|g| GpuInfo { dev: g.dev, gdr: g.gdr, cpu: new_of[g.cpu] }).collect();
        Ok(BoxModel { nodes, links, nics, gpus, warnings: self.warnings })
    }
}
