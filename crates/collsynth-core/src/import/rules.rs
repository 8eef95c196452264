//! How NCCL and RCCL turn topology XML attributes into bandwidths (GB/s per direction).
//! The constants and their selection follow NVIDIA/nccl `src/graph/topo.h` and `topo.cc`
//! and ROCm/rccl `src/graph/topo.h` (docs/topology-file.md cites each); all exact.

use crate::rational::Rat;

/// `LOC_BW`: a link inside one device (a socket NIC on its CPU).
pub const LOC_BW: i128 = 5000;

fn tenths(x: i128) -> Rat {
    Rat::new(x, 10)
}

/// Per-link NVLink bandwidth by the GPU's `sm` (`ncclTopoNVLinkBw`): SM100 40.1, SM90 20.6,
/// SM86 12, SM80 / SM70 20, SM60 18, anything else SM80's 20.
pub fn nvlink_bw(sm: u64) -> Rat {
    match sm {
        100.. => tenths(401),
        90..=99 => tenths(206),
        86 => Rat::from_integer(12),
        70..=89 => Rat::from_integer(20),
        60..=69 => Rat::from_integer(18),
        _ => Rat::from_integer(20),
    }
}

/// RCCL's `gcn` as an architecture name: the legacy numbers of `convertGcnArchToGcnArchName`
/// (906, 908, 910 = gfx90a, 940-942) become names; a name stays as written.
pub fn gcn_name(gcn: &str) -> String {
    match gcn.trim() {
        "910" => "gfx90a".to_string(),
        n @ ("906" | "908" | "940" | "941" | "942") => format!("gfx{n}"),
        other => other.to_ascii_lowercase(),
    }
}

/// Per-link xGMI bandwidth by architecture (`ncclTopoXGMISpeed`): gfx90a (MI200) 36,
/// gfx94x (MI300) and gfx95x 48, gfx1250 64, anything else (Vega) 24.
pub fn xgmi_bw(gcn: &str) -> Rat {
    let name = gcn_name(gcn);
    let w = if name.starts_with("gfx90a") {
        36
    } else if name.starts_with("gfx94") || name.starts_with("gfx95") {
        48
    } else if name.starts_with("gfx1250") {
        64
    } else {
        24
    };
    Rat::from_integer(w)
}

/// PCIe per-lane value in units of 100 Mb/s (`kvDictPciGen`, matched by prefix as
/// `kvConvertToInt` does); an unknown or empty speed gives the default 60 (Gen3).
fn pci_lane(speed: &str) -> i128 {
    const GENS: [(&str, i128); 11] = [
        ("2.5 GT/s PCIe", 15),
        ("5.0 GT/s PCIe", 30),
        ("8.0 GT/s PCIe", 60),
        ("16.0 GT/s PCIe", 120),
        ("32.0 GT/s PCIe", 240),
        ("64.0 GT/s PCIe", 480),
        ("2.5 GT/s", 15),
        ("5 GT/s", 30),
        ("8 GT/s", 60),
        ("16 GT/s", 120),
        ("32 GT/s", 240),
    ];
    GENS.iter().find(|(p, _)| speed.starts_with(p)).map_or(60, |&(_, v)| v)
}

/// PCIe link bandwidth (`ncclTopoAddPci`): width x lane value / 80 GB/s, width 0 read as 16.
pub fn pci_bw(speed: &str, width: u64) -> Rat {
    let width = if width == 0 { 16 } else { i128::from(width) };
    Rat::new(width * pci_lane(speed), 80)
}

/// The CPU attributes that decide the inter-socket bandwidth.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cpu {
    pub arch: String,
    pub vendor: String,
    pub family: u64,
    pub model: u64,
}

/// Bandwidth of the SYS link leaving a CPU (`ncclTopoGetInterCpuBw`): POWER 32, ARM 6,
/// Intel by model (Emerald Rapids+ 40, Sapphire Rapids 22, Skylake 10, older 6), AMD 16,
/// Zhaoxin 6 (Yongfeng 9), anything else `LOC_BW`.
pub fn inter_cpu_bw(cpu: &Cpu) -> Rat {
    let bw = match (cpu.arch.as_str(), cpu.vendor.as_str()) {
        ("ppc64", _) => 32,
        ("arm64", _) => 6,
        ("x86_64", "GenuineIntel") if cpu.family == 6 && cpu.model >= 0xCF => 40,
        ("x86_64", "GenuineIntel") if cpu.family == 6 && cpu.model >= 0x8F => 22,
        ("x86_64", "GenuineIntel") if cpu.family == 6 && cpu.model >= 0x55 => 10,
        ("x86_64", "GenuineIntel") => 6,
        ("x86_64", "AuthenticAMD") => 16,
        ("x86_64", "CentaurHauls" | "  Shanghai  ") if cpu.family == 7 && cpu.model == 0x5B => 9,
        ("x86_64", "CentaurHauls" | "  Shanghai  ") => 6,
        _ => LOC_BW,
    };
    Rat::from_integer(bw)
}

/// NIC port bandwidth from `speed` in Mb/s (`ncclTopoAddNet`): speed / 8000 GB/s; a missing
/// or non-positive speed is NCCL's default 10000 Mb/s.
pub fn net_bw(speed_mbps: Option<i64>) -> Rat {
    let speed = match speed_mbps {
        Some(s) if s > 0 => i128::from(s),
        _ => 10_000,
    };
    Rat::new(speed, 8000)
}

/// What an `<nvlink>` / `<xgmi>` row's `tclass` names (`kvDictPciClass`, prefix match).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Gpu,
    NvSwitch,
    Cpu,
    Nic,
    Pci,
}

/// `0x068000` NVSwitch, `0x068001` CPU, `0x03..` GPU (and RCCL's `0x120000` accelerator),
/// `0x02..` NIC, anything else (bridges included) PCI.
pub fn target_kind(tclass: &str) -> Target {
    let t = tclass.trim().to_ascii_lowercase();
    if t.starts_with("0x068000") {
        Target::NvSwitch
    } else if t.starts_with("0x068001") {
        Target::Cpu
    } else if t.starts_with("0x03") || t.starts_with("0x120000") {
        Target::Gpu
    } else if t.starts_with("0x02") {
        Target::Nic
    } else {
        Target::Pci
    }
}

#[cfg(test)]
mod tests;
