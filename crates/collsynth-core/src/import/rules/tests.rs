use super::*;

#[test]
fn nvlink_per_link_by_sm() {
    assert_eq!(nvlink_bw(100), Rat::new(401, 10));
    assert_eq!(nvlink_bw(120), Rat::new(401, 10));
    assert_eq!(nvlink_bw(90), Rat::new(103, 5));
    assert_eq!(nvlink_bw(86), Rat::from_integer(12));
    assert_eq!(nvlink_bw(80), Rat::from_integer(20));
    assert_eq!(nvlink_bw(70), Rat::from_integer(20));
    assert_eq!(nvlink_bw(60), Rat::from_integer(18));
    assert_eq!(nvlink_bw(0), Rat::from_integer(20));
}

#[test]
fn xgmi_per_link_by_arch() {
    assert_eq!(xgmi_bw("910"), Rat::from_integer(36));
    assert_eq!(xgmi_bw("gfx90a:sramecc+:xnack-"), Rat::from_integer(36));
    assert_eq!(xgmi_bw("gfx942"), Rat::from_integer(48));
    assert_eq!(xgmi_bw("942"), Rat::from_integer(48));
    assert_eq!(xgmi_bw("gfx950"), Rat::from_integer(48));
    assert_eq!(xgmi_bw("gfx1250"), Rat::from_integer(64));
    assert_eq!(xgmi_bw("906"), Rat::from_integer(24));
    assert_eq!(xgmi_bw(""), Rat::from_integer(24));
}

#[test]
fn pci_by_speed_and_width() {
    assert_eq!(pci_bw("8 GT/s", 16), Rat::from_integer(12));
    assert_eq!(pci_bw("16 GT/s", 16), Rat::from_integer(24));
    assert_eq!(pci_bw("16.0 GT/s PCIe", 8), Rat::from_integer(12));
    assert_eq!(pci_bw("32.0 GT/s PCIe", 0), Rat::from_integer(48));
    // AWS p5's non-standard string still matches by prefix
    assert_eq!(pci_bw("32 GT/s PCIe/s", 16), Rat::from_integer(48));
    assert_eq!(pci_bw("64.0 GT/s PCIe", 16), Rat::from_integer(96));
    // 2.5 GT/s x1 = 15/80 = 0.1875 (the IBM VM's virtual bridges)
    assert_eq!(pci_bw("2.5 GT/s PCIe", 1), Rat::new(3, 16));
    assert_eq!(pci_bw("", 16), Rat::from_integer(12));
    assert_eq!(pci_bw("garbage", 4), Rat::from_integer(3));
}

#[test]
fn inter_cpu_by_vendor_and_model() {
    let intel = |model| Cpu { arch: "x86_64".into(), vendor: "GenuineIntel".into(), family: 6, model };
    assert_eq!(inter_cpu_bw(&intel(207)), Rat::from_integer(40));
    assert_eq!(inter_cpu_bw(&intel(143)), Rat::from_integer(22));
    assert_eq!(inter_cpu_bw(&intel(106)), Rat::from_integer(10));
    assert_eq!(inter_cpu_bw(&intel(0x4F)), Rat::from_integer(6));
    let amd = Cpu { arch: "x86_64".into(), vendor: "AuthenticAMD".into(), family: 175, model: 1 };
    assert_eq!(inter_cpu_bw(&amd), Rat::from_integer(16));
    assert_eq!(inter_cpu_bw(&Cpu { arch: "ppc64".into(), ..Cpu::default() }), Rat::from_integer(32));
    assert_eq!(inter_cpu_bw(&Cpu { arch: "arm64".into(), ..Cpu::default() }), Rat::from_integer(6));
    let yongfeng = Cpu { arch: "x86_64".into(), vendor: "CentaurHauls".into(), family: 7, model: 0x5B };
    assert_eq!(inter_cpu_bw(&yongfeng), Rat::from_integer(9));
    assert_eq!(inter_cpu_bw(&Cpu::default()), Rat::from_integer(LOC_BW));
}

#[test]
fn net_speed_in_megabits() {
    assert_eq!(net_bw(Some(400_000)), Rat::from_integer(50));
    assert_eq!(net_bw(Some(56_000)), Rat::from_integer(7));
    assert_eq!(net_bw(Some(-1)), Rat::new(5, 4));
    assert_eq!(net_bw(None), Rat::new(5, 4));
}

#[test]
fn target_classes_by_prefix() {
    assert_eq!(target_kind("0x068000"), Target::NvSwitch);
    assert_eq!(target_kind("0x068001"), Target::Cpu);
    assert_eq!(target_kind("0x030200"), Target::Gpu);
    assert_eq!(target_kind("0x120000"), Target::Gpu);
    assert_eq!(target_kind("0x020700"), Target::Nic);
    assert_eq!(target_kind("0x060400"), Target::Pci);
    assert_eq!(target_kind(""), Target::Pci);
}
