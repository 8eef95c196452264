//! Real dumps read as NCCL reads them, with a warning wherever we guess: a network device
//! listed under several CPUs counts once, virtual interfaces are left out, an implausible
//! port speed is said, and an `<nvlink>` row to the GPU itself is silently nothing.

use super::*;

const GPU: &str = r#"<pci busid="0000:01:00.0" class="0x030200" link_speed="16 GT/s" link_width="16"><gpu dev="0" sm="80" rank="0" gdr="1"/></pci>"#;

fn net(name: &str, dev: usize, speed: &str) -> String {
    format!(r#"<nic><net name="{name}" dev="{dev}" speed="{speed}" port="1" gdr="0"/></nic>"#)
}

fn read(cpus: &[String]) -> Imported {
    let body: String = cpus
        .iter()
        .map(|c| format!(r#"<cpu numaid="0" arch="x86_64" vendor="AuthenticAMD" host_hash="1">{c}</cpu>"#))
        .collect();
    let spec = ClusterSpec { boxes: 2, fabric: Some(Fabric::Switch), ..ClusterSpec::single() };
    nccl_topology("x", &format!(r#"<system version="1">{body}</system>"#), &spec).unwrap_or_else(|e| panic!("{e}"))
}

fn hub_ports(t: &Topology) -> Rat {
    t.egress(t.node_index("fabric").unwrap())
}

#[test]
fn a_nic_under_two_cpus_counts_once() {
    // eth0 (dev 0, 10000 Mb/s = 1.25) under both CPUs: one port per box, not two
    let got = read(&[format!("{GPU}{}", net("eth0", 0, "10000")), net("eth0", 0, "10000")]);
    assert_eq!(hub_ports(&got.topology), Rat::new(5, 2));
    assert!(got.topology.node_index("box0.nic1.tx").is_none());
    let w = got.warnings.join("\n");
    assert!(w.contains("dev 0 is listed again (nic0 already has it): counted once"), "{w}");
    // a second device (dev 1) is a second NIC; the GPU's local one is the NIC on its own
    // CPU (PHB at 1.25 beats SYS), so only nic0 joins the fabric
    let two = read(&[format!("{GPU}{}", net("eth0", 0, "10000")), net("eth1", 1, "10000")]);
    assert!(two.warnings.iter().any(|w| w.starts_with("nic1: no GPU's local NIC")), "{:?}", two.warnings);
    // the real B200 dump: eth0 under cpu0 and cpu1 is one NIC
    let m = physical("hgx-b200-8gpu.xml");
    assert_eq!(m.nics.len(), 1);
    assert!(m.warnings.iter().any(|w| w.contains("dev 0 is listed again")), "{:?}", m.warnings);
}

#[test]
fn virtual_interfaces_are_left_out() {
    let nics: String = ["docker0", "veth12ab", "cali7", "calico1", "tunl0", "cni0", "flannel.1", "lo"]
        .iter()
        .enumerate()
        .map(|(i, n)| net(n, i + 1, "10000"))
        .collect();
    let got = read(&[format!("{GPU}{nics}{}", net("ib0", 0, "200000"))]);
    // only ib0 (200000 Mb/s = 25) is left; "cali7" is not a listed prefix, so it stays
    // as a NIC too but is no GPU's local NIC (ib0 is faster). ib0 is fed by the GPU's
    // Gen4 x16 uplink, 24 < 25: the fabric sees 2 boxes x 24
    assert_eq!(hub_ports(&got.topology), Rat::from_integer(48));
    let virt = got.warnings.iter().filter(|w| w.contains("is a virtual interface: left out")).count();
    assert_eq!(virt, 7, "{:?}", got.warnings);
    assert!(got.warnings.iter().all(|w| !w.contains('\n')));
    // a box whose only interface is virtual has nothing to join a fabric with
    let spec = ClusterSpec { boxes: 2, fabric: Some(Fabric::Rails), ..ClusterSpec::single() };
    let text = format!(r#"<system version="1"><cpu numaid="0">{GPU}{}</cpu></system>"#, net("docker0", 0, "10000"));
    let e = nccl_topology("x", &text, &spec).err().unwrap().to_string();
    assert!(e.contains("no NIC"), "{e}");
}

#[test]
fn implausible_speeds_are_said() {
    // 100 Mb/s and 6.4 Tb/s are outside 1 Gb/s..3.2 Tb/s; 400 Gb/s and 3.2 Tb/s are not
    let got = read(&[format!(
        "{GPU}{}{}{}{}",
        net("a", 0, "100"),
        net("b", 1, "6400000"),
        net("c", 2, "400000"),
        net("d", 3, "3200000")
    )]);
    let said: Vec<&String> = got.warnings.iter().filter(|w| w.contains("implausible")).collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said[0].contains("speed=\"100\" Mb/s is outside 1 Gb/s..3.2 Tb/s"), "{said:?}");
    assert!(said[1].contains("speed=\"6400000\""), "{said:?}");
    // taken as given: the GPU's local NIC is the fastest, 6.4 Tb/s = 800 GB/s, but its
    // feed is the GPU's Gen4 x16 24 (the LOC_BW socket link is wider)
    assert_eq!(hub_ports(&got.topology), Rat::from_integer(48));
    // a missing speed is NCCL's default 10000 Mb/s, with a note
    let quiet = read(&[format!("{GPU}<nic><net name=\"x\" dev=\"0\"/></nic>")]);
    assert_eq!(hub_ports(&quiet.topology), Rat::new(5, 2));
    assert!(quiet.warnings.iter().any(|w| w.contains("NCCL's default 10000 Mb/s assumed")));
    // the real dumps' speeds are all plausible
    for f in ["hgx-a100-8gpu-simai.xml", "ibm-h100-vsi-8gpu.xml", "hgx-b200-8gpu.xml", "rccl-mi300x-8gpu.xml"] {
        assert!(physical(f).warnings.iter().all(|w| !w.contains("implausible")), "{f}");
    }
}

#[test]
fn an_nvlink_row_to_the_gpu_itself_is_quiet() {
    let own = GPU
        .replace("gdr=\"1\"/>", "gdr=\"1\"><nvlink target=\"0000:01:00.0\" count=\"12\" tclass=\"0x030200\"/></gpu>");
    let other = own.replace("01:00", "02:00").replace("rank=\"0\"", "rank=\"1\"").replace("dev=\"0\"", "dev=\"1\"");
    let text = format!(r#"<system version="1"><cpu numaid="0">{own}{other}</cpu></system>"#);
    let got = nccl_topology("x", &text, &ClusterSpec::single()).unwrap();
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    // no NVLink between the two: they talk over PCIe through the CPU, 24 each way
    assert_eq!(optima(&got.topology).0, Rat::new(1, 24));
    // a row to a bus id that is not in the file still says so
    let missing = text.replacen("target=\"0000:01:00.0\"", "target=\"0000:09:00.0\"", 1);
    let got = nccl_topology("x", &missing, &ClusterSpec::single()).unwrap();
    assert!(got.warnings.iter().any(|w| w.contains("target \"0000:09:00.0\" is not in the file")));
}

#[test]
fn a_nic_no_gpu_picks_is_noted_only_where_boxes_have_a_fabric() {
    // The A100 dump's mlx5_bond_0 hangs on the CPU: no GPU's local NIC. One box has no fabric,
    // so nothing is left out of one; two boxes on rails say so.
    let text = super::data("hgx-a100-8gpu-simai.xml");
    let one = nccl_topology("a", &text, &ClusterSpec::single()).unwrap();
    assert!(!one.warnings.iter().any(|w| w.contains("left out of the fabric")), "{:?}", one.warnings);
    let spec = ClusterSpec { boxes: 2, fabric: Some(Fabric::Rails), ..ClusterSpec::single() };
    let two = nccl_topology("a", &text, &spec).unwrap();
    assert_eq!(two.warnings.iter().filter(|w| w.contains("left out of the fabric")).count(), 1, "{:?}", two.warnings);
}
