//! The routes a schedule may take on an imported machine are the runtime's: ForestColl's
//! routes on every real dump, one box and two on rails, never go GPU -> CPU -> GPU beside
//! an NVLink, never turn inside a NIC, never visit a node twice; PCIe-only boxes keep
//! NCCL's path through the lowest common switch, else the CPUs.

use super::*;
use crate::ir::Schedule;

const NVLINK_BOXES: [&str; 6] = [
    "hgx-a100-8gpu-simai.xml",
    "ibm-h100-vsi-8gpu.xml",
    "hgx-b200-8gpu.xml",
    "perlmutter-a100-4gpu-mesh.xml",
    "rccl-mi300x-8gpu.xml",
    "rccl-mi250-16gcd.xml",
];

fn spec(file: &str, tail: &str) -> Topology {
    let path = format!("{}/../../tests/data/nccl-topo/{file}", env!("CARGO_MANIFEST_DIR"));
    crate::zoo::from_spec(&format!("nccl:{path}{tail}")).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Every transfer's route as node names, from its source rank to its destination rank.
fn routes(t: &Topology, s: &Schedule) -> Vec<Vec<String>> {
    let flat = crate::ir::orbit::flat(s).unwrap();
    let flat = crate::ir::ranges::flat(&flat).unwrap().into_owned();
    flat.transfers
        .iter()
        .filter(|x| !x.route.is_empty())
        .map(|x| {
            let mut nodes = vec![t.nodes[t.links[x.route[0]].src].name.clone()];
            nodes.extend(x.route.iter().map(|&l| t.nodes[t.links[l].dst].name.clone()));
            nodes
        })
        .collect()
}

/// The part of a node name after its box prefix (`box1.cpu0` -> `cpu0`).
fn local(name: &str) -> &str {
    name.strip_prefix("box").and_then(|r| r.split_once('.')).map_or(name, |(_, rest)| rest)
}

fn box_of(name: &str) -> Option<&str> {
    name.starts_with("box").then(|| name.split_once('.').map_or(name, |(b, _)| b))
}

/// The properties every route must have; `nvlink` says the box is NVLink-connected.
fn check(route: &[String], nvlink: bool) {
    let mut seen = std::collections::HashSet::new();
    assert!(route.iter().all(|v| seen.insert(v)), "a node twice: {route:?}");
    for (i, v) in route.iter().enumerate() {
        let name = local(v);
        // a NIC's send side leads to the fabric and is entered from its box; the receive
        // side the other way round: no route turns inside a NIC
        if name.ends_with(".tx") {
            assert_eq!(box_of(&route[i - 1]), box_of(v), "{route:?}");
            assert!(box_of(&route[i + 1]).is_none(), "{route:?}");
        }
        if name.ends_with(".rx") {
            assert!(box_of(&route[i - 1]).is_none(), "{route:?}");
            assert_eq!(box_of(&route[i + 1]), box_of(v), "{route:?}");
        }
        if nvlink {
            // GPU to GPU only over NVLink / xGMI: no PCIe switch or CPU anywhere
            assert!(!name.starts_with("cpu") && !name.starts_with("pci-"), "{route:?}");
        }
    }
    let (a, b) = (&route[0], &route[route.len() - 1]);
    if nvlink && box_of(a) == box_of(b) {
        assert!(route[1..route.len() - 1].iter().all(|v| local(v) == "nvswitch"), "{route:?}");
    }
}

fn forestcoll_routes(t: &Topology) -> Vec<Vec<String>> {
    let s = crate::synth::forestcoll::allgather(t, None).unwrap_or_else(|e| panic!("{}: {e}", t.name));
    let r = routes(t, &s);
    assert!(!r.is_empty());
    r
}

#[test]
fn nvlink_boxes_route_over_nvlink_only() {
    for f in NVLINK_BOXES {
        for r in forestcoll_routes(&one_box(f)) {
            check(&r, true);
        }
    }
}

#[test]
fn two_boxes_on_rails_leave_through_the_nics_only() {
    for f in NVLINK_BOXES.iter().take(5) {
        let t = spec(f, "*2,fabric=rails");
        let r = forestcoll_routes(&t);
        for route in &r {
            check(route, true);
        }
        // some data does cross the fabric, through a NIC's send side then a receive side
        assert!(r.iter().any(|x| x.iter().any(|v| v.starts_with("rail"))), "{f}");
    }
}

#[test]
fn pcie_box_routes_through_the_lowest_common_switch() {
    let t = one_box("pcie-rtx3090-8gpu-2socket.xml");
    let r = forestcoll_routes(&t);
    for route in &r {
        check(route, false);
        let (a, b) = (&route[0], &route[route.len() - 1]);
        let socket = |g: &str| g[3..].parse::<usize>().unwrap() / 4;
        // GPUs 0-3 hang on switch 0c under CPU 0, 4-7 on 98 under CPU 1 (the file)
        let expected: Vec<&str> = match (socket(a), socket(b)) {
            (0, 0) => vec!["pci-0000:0c:00.0"],
            (1, 1) => vec!["pci-0000:98:00.0"],
            (0, 1) => vec!["pci-0000:0c:00.0", "cpu0", "cpu1", "pci-0000:98:00.0"],
            _ => vec!["pci-0000:98:00.0", "cpu1", "cpu0", "pci-0000:0c:00.0"],
        };
        assert_eq!(route[1..route.len() - 1], expected, "{route:?}");
    }
    // two boxes on rails: the one NIC (under switch 98) is fed by that switch; the
    // routes still never turn inside a NIC or repeat a node
    let t = spec("pcie-rtx3090-8gpu-2socket.xml", "*2,fabric=rails");
    assert_eq!(bw(&t, "box0.pci-0000:98:00.0", "box0.nic0.tx"), Rat::from_integer(7));
    for route in forestcoll_routes(&t) {
        check(&route, false);
    }
}

#[test]
fn the_exported_program_is_the_one_judged() {
    // ForestColl on two A100 boxes: verified, at the bound over the runtime's routes
    // (8/96 per byte of a shard), and exported to MSCCL XML, as the shipped example does
    let t = spec("hgx-a100-8gpu-simai.xml", "*2,fabric=rails");
    let size = Rat::from_integer(1 << 30);
    let req = crate::synth::Request::default();
    let done = crate::api::synthesize(&t, crate::ir::Collective::Allgather, "forestcoll", &req, size).unwrap();
    let b = crate::api::bounds(&t, crate::ir::Collective::Allgather, 0).unwrap();
    let e = crate::api::evaluate(&done.schedule, &t, size, 1, &b).unwrap();
    assert_eq!(e.optimality, Rat::from_integer(1));
    let o = crate::msccl::lower::Options::default();
    assert!(crate::api::export_msccl(&done.schedule, &t, &o, false).is_ok());
}
