//! Link classes and the runtime model's parameters per class, in one table with sources.
//!
//! The class of a link is inferred from the topology (see [`classify`]): the zoo names its
//! switches (`*.nvsw`, `*.nic*`, `ib*`, `rail*`) and the direct GPU-GPU fabric follows from
//! the machine family (`mi250` is xGMI, `dgx1` NVLink). Anything else is [`LinkClass::Generic`],
//! which keeps the topology's own latency, full bandwidth and no message overhead, so the
//! runtime model on a generic topology differs from the store-and-forward simulator only by
//! slicing and cut-through (the closed-form tests use that).

use crate::rational::Rat;
use crate::topology::{NodeKind, Topology};

/// What kind of hardware a directed link is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkClass {
    /// A direct GPU-GPU NVLink (DGX-1).
    NvLink,
    /// A GPU's NVLinks into an NVSwitch (DGX A100, HGX H100), either direction.
    NvSwitch,
    /// A PCIe link (GPU to PCIe switch).
    Pcie,
    /// GPU to NIC and NIC to GPU (PCIe plus the NIC itself).
    Nic,
    /// NIC to IB switch and back (the InfiniBand wire and switch port).
    IbSwitch,
    /// AMD Infinity Fabric between GCDs (MI250).
    Xgmi,
    /// Unknown hardware: the topology's own parameters, nothing added.
    Generic,
}

/// The runtime model's parameters of one link class.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassParams {
    pub class: LinkClass,
    pub name: &'static str,
    /// Wire latency of one hop (us), cut-through; `None`: the topology's link latency.
    pub hop_latency_us: Option<f64>,
    /// Per-message overhead (us) of a GPU-to-GPU message whose route uses this class, by
    /// protocol [LL, LL128, Simple]; a route pays the largest of its classes' overheads once.
    pub overhead_us: [f64; 3],
    /// Throughput (GB/s) of one connection, [copy, reduce]: a thread block moving (or
    /// reducing) a message through one SM, whatever the link's bandwidth; `None`: no limit.
    pub connection_gbps: Option<[f64; 2]>,
    /// Cost (us) of one step of NCCL's own ring and tree kernels over this class, paid by every
    /// transfer of a schedule those kernels run ([`crate::ir::Executor`]) in place of the
    /// message overhead, whatever the protocol: fitted (docs/calibration.md).
    pub nccl_step_us: f64,
    /// The row of NCCL's `hwLat` table this class falls in (the tuner's belief, not the step
    /// cost above); `None`: no latency (generic).
    pub nccl_hw: Option<NcclHw>,
    /// Fraction of the raw bandwidth the Simple protocol reaches on this class (exact); the
    /// protocols' own wire factors ([`super::Protocol::wire_factor`]) multiply it.
    pub efficiency: Rat,
    /// Where the values come from (docs/calibration.md has the details).
    pub source: &'static str,
}

/// The hardware rows of NCCL's tuning tables (src/graph/tuning.cc `NCCL_HW_NVLINK`, `_PCI`,
/// `_NET`), ordered by latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NcclHw {
    NvLink,
    Pci,
    Net,
}

/// One step of NCCL's ring or tree kernel (us) on any GPU fabric, fitted on one cell of the
/// ForestColl paper's table 3 (docs/calibration.md): NCCL's ring allreduce at 16 MB, 807 us
/// for its 30 steps (predicted 20.9 GB/s, measured 20.8). The ring takes 20-22 us a step at
/// 1 MB and 16 MB, size-independent (the 1 MB ring allgather alone would give 21.6). NCCL
/// 2.12's own model charges 0.47-3.4 us per NVLink step and 2.7-28 per network step
/// (`hwLat`); the measured runtime pays several times that on every step, network or not
/// (table 3 cannot separate the classes, so every GPU fabric class has the same value).
pub const NCCL_STEP_US: f64 = 22.5;

/// One GPU thread block's copy and reduce throughput (GB/s), fitted on the ForestColl
/// paper's table 3 (docs/calibration.md): its reduce-scatter is slower than its allgather at
/// 16 MB although both move the same bytes over the same links. NCCL's own per-channel
/// ceiling on SM80 is 40 GB/s (src/graph/search.cc `speedArrayIntra`), its tree (reducing)
/// channels 24 GB/s (src/graph/tuning.cc `perChMaxTreeBw`).
pub const CONNECTION_GBPS: [f64; 2] = [80.0, 48.0];

fn ratio(n: i128, d: i128) -> Rat {
    Rat::new(n, d)
}

/// The table: every class's parameters (docs/simulator.md lists them with their sources).
pub fn params(class: LinkClass) -> ClassParams {
    // Overheads are NCCL 2.12's per-step hardware latencies (src/graph/tuning.cc, `hwLat`,
    // ring row, [LL, LL128, Simple]): the ForestColl measurements ran MSCCL on NCCL 2.12.
    // Efficiencies are fitted on the ForestColl paper's table 3 (docs/calibration.md).
    match class {
        LinkClass::NvLink => ClassParams {
            class,
            name: "nvlink",
            hop_latency_us: Some(0.0),
            overhead_us: [0.47, 1.9, 3.4],
            connection_gbps: Some(CONNECTION_GBPS),
            nccl_step_us: NCCL_STEP_US,
            nccl_hw: Some(NcclHw::NvLink),
            efficiency: ratio(4, 5),
            source: "overhead: NCCL 2.12 tuning.cc hwLat[NVLINK][RING]; efficiency: NCCL topo.h SM80_NVLINK_BW 20 of \
                     25 GB/s per link",
        },
        LinkClass::NvSwitch => ClassParams {
            class,
            name: "nvswitch",
            hop_latency_us: Some(0.0),
            overhead_us: [0.47, 1.9, 3.4],
            connection_gbps: Some(CONNECTION_GBPS),
            nccl_step_us: NCCL_STEP_US,
            nccl_hw: Some(NcclHw::NvLink),
            efficiency: ratio(57, 80),
            source: "overhead: NCCL 2.12 tuning.cc hwLat[NVLINK][RING]; efficiency: fitted, ForestColl allgather 1 GB \
                     on 2x8 A100 (247 of 346.67 GB/s)",
        },
        LinkClass::Pcie => ClassParams {
            class,
            name: "pcie",
            hop_latency_us: Some(0.0),
            overhead_us: [1.0, 2.5, 5.7],
            connection_gbps: Some(CONNECTION_GBPS),
            nccl_step_us: NCCL_STEP_US,
            nccl_hw: Some(NcclHw::Pci),
            efficiency: ratio(24, 25),
            source: "overhead: NCCL tuning.cc hwLat[PCI][RING]; efficiency: NCCL topo.cc Gen4 x16 = 24 GB/s",
        },
        LinkClass::Nic => ClassParams {
            class,
            name: "nic",
            hop_latency_us: Some(0.0),
            overhead_us: [2.7, 4.0, 28.0],
            connection_gbps: Some(CONNECTION_GBPS),
            nccl_step_us: NCCL_STEP_US,
            nccl_hw: Some(NcclHw::Net),
            efficiency: ratio(9, 10),
            source: "overhead: NCCL 2.12 tuning.cc hwLat[NET][RING]; efficiency: fitted, NCCL ring allgather 1 GB \
                     on 2x8 A100 (187 of 213.33 GB/s)",
        },
        LinkClass::IbSwitch => ClassParams {
            class,
            name: "ib-switch",
            hop_latency_us: Some(0.13),
            overhead_us: [2.7, 4.0, 28.0],
            connection_gbps: Some(CONNECTION_GBPS),
            nccl_step_us: NCCL_STEP_US,
            nccl_hw: Some(NcclHw::Net),
            efficiency: ratio(9, 10),
            source: "hop: NVIDIA Quantum HDR switch port-to-port 130 ns; overhead: NCCL 2.12 hwLat[NET][RING]; \
                     efficiency: as nic",
        },
        LinkClass::Xgmi => ClassParams {
            class,
            name: "xgmi",
            hop_latency_us: Some(0.0),
            overhead_us: [0.8, 2.2, 3.6],
            connection_gbps: Some(CONNECTION_GBPS),
            nccl_step_us: NCCL_STEP_US,
            nccl_hw: Some(NcclHw::NvLink),
            efficiency: ratio(18, 25),
            source: "overhead: RCCL tuning.cc hwLat[xGMI][RING] (model 0); efficiency: RCCL topo.h \
                     MI200_XGMI_WIDTH 36 of 50 GB/s",
        },
        LinkClass::Generic => ClassParams {
            class,
            name: "generic",
            hop_latency_us: None,
            overhead_us: [0.0; 3],
            connection_gbps: None,
            nccl_step_us: 0.0,
            nccl_hw: None,
            efficiency: ratio(1, 1),
            source: "the topology's own latency and bandwidth",
        },
    }
}

/// Every class, in table order.
pub const ALL_CLASSES: [LinkClass; 7] = [
    LinkClass::NvLink,
    LinkClass::NvSwitch,
    LinkClass::Pcie,
    LinkClass::Nic,
    LinkClass::IbSwitch,
    LinkClass::Xgmi,
    LinkClass::Generic,
];

/// The class a switch's name says, if any (the zoo's names: `box0.nvsw`, `box0.nic3`,
/// `ib0`, `rail2`, `pcie0`).
fn switch_class(name: &str) -> Option<LinkClass> {
    let last = name.rsplit('.').next().unwrap_or(name);
    let starts = |p: &str| last.starts_with(p) && last[p.len()..].chars().all(|c| c.is_ascii_digit());
    if starts("nvsw") {
        Some(LinkClass::NvSwitch)
    } else if starts("nic") {
        Some(LinkClass::Nic)
    } else if starts("ib") || starts("rail") {
        Some(LinkClass::IbSwitch)
    } else if starts("pcie") || starts("pcisw") {
        Some(LinkClass::Pcie)
    } else {
        None
    }
}

/// The class of direct compute-to-compute links, from the machine family the topology's
/// name starts with (its zoo spec).
fn direct_class(topo: &Topology) -> LinkClass {
    let family = topo.name.split([':', ' ', '+']).next().unwrap_or("");
    match family {
        "mi250" => LinkClass::Xgmi,
        "dgx1" => LinkClass::NvLink,
        _ => LinkClass::Generic,
    }
}

/// The class of every link of `topo` (indexed like `topo.links`). A link touching a named
/// switch takes that switch's class; with a switch at both ends, the IB switch or NVSwitch
/// side decides over the NIC (a NIC-to-IB link is the IB wire); compute-to-compute links take
/// the machine family's direct class.
pub fn classify(topo: &Topology) -> Vec<LinkClass> {
    let node_class = |v: usize| match topo.nodes[v].kind {
        NodeKind::Switch => switch_class(&topo.nodes[v].name),
        NodeKind::Compute => None,
    };
    let direct = direct_class(topo);
    topo.links
        .iter()
        .map(|l| match (node_class(l.src), node_class(l.dst)) {
            (Some(a), Some(b)) => {
                if a == LinkClass::Nic {
                    b
                } else {
                    a
                }
            }
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => {
                let both_compute = topo.is_compute(l.src) && topo.is_compute(l.dst);
                if both_compute {
                    direct
                } else {
                    LinkClass::Generic
                }
            }
        })
        .collect()
}
