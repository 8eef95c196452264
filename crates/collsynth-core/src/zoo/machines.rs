//! Real machines, as the ForestColl paper (§5.2-5.3) and the vendors' published figures
//! define them: `dgx-a100`, `mi250`, `dgx1`, `hgx-h100`.
//!
//! Defaults are the machines' real per-direction bandwidths; `bw=`/`lat=` override them per
//! level. GPUs are `box{b}.gpu{i}` in group `box{b}`, ranks box by box; box-local switches
//! are `box{b}.nvsw` / `box{b}.nic{i}`, shared ones `ib{j}` / `rail{i}` (no group).

use super::clusters::star;
use super::{Family, LinkParams, Spec};
use crate::error::Result;
use crate::rational::Rat;
use crate::topology::{Topology, TopologyBuilder};

pub(super) const FAMILIES: &[&Family] = &[
    &Family {
        name: "dgx-a100",
        args: "N",
        help: "N DGX A100 boxes: 8 GPUs on an NVSwitch (300), a 25 GB/s NIC per GPU on ib{i mod 2}; bw= nvswitch/ib",
        options: &[],
        build: dgx_a100,
    },
    &Family {
        name: "mi250",
        args: "N",
        help: "N MI250 clusters: 16 GCDs on xGMI (50 GB/s x multiplicity), 16 GB/s per GCD to ib0; bw= xgmi/ib; gcds=G keeps GCDs 0..G-1 of each (8: ForestColl's 8+8)",
        options: &["gcds"],
        build: mi250,
    },
    &Family {
        name: "dgx1",
        args: "",
        help: "DGX-1: 8 V100 in the hybrid cube-mesh, 25 GB/s per NVLink (6 per GPU)",
        options: &[],
        build: dgx1,
    },
    &Family {
        name: "hgx-h100",
        args: "N",
        help: "N HGX H100 boxes: 8 GPUs on an NVSwitch (450), GPU i's 50 GB/s NIC on rail{i}; bw= nvswitch/ib",
        options: &[],
        build: hgx_h100,
    },
];

/// xGMI link multiplicity of one MI250 node (16 GCDs), from ForestColl's `MI250_ADJ_MAT`.
const MI250_XGMI: [[u8; 16]; 16] = [
    [0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
    [4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
    [0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0],
    [0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0],
    [2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0],
    [0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0],
    [0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0],
    [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2],
    [0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0],
];

/// NVLink count of the DGX-1 (V100) hybrid cube-mesh, as in msccl-tools.
const DGX1_NVLINK: [[u8; 8]; 8] = [
    [0, 2, 1, 1, 2, 0, 0, 0],
    [2, 0, 1, 2, 0, 1, 0, 0],
    [1, 1, 0, 2, 0, 0, 2, 0],
    [1, 2, 2, 0, 0, 0, 0, 1],
    [2, 0, 0, 0, 0, 2, 1, 1],
    [0, 1, 0, 0, 2, 0, 1, 2],
    [0, 0, 2, 0, 1, 1, 0, 2],
    [0, 0, 0, 1, 1, 2, 2, 0],
];

/// GPUs per DGX A100 / HGX H100 box.
const BOX_GPUS: usize = 8;

/// The box count of `family:N` (1 ..= 4096).
fn boxes(s: &Spec, usage: &str) -> Result<usize> {
    s.expect_args(1, 1, usage)?;
    s.int(0, "N (boxes)", 1, 4096)
}

/// Add `count` GPUs `box{bx}.gpu{i}` in group `box{bx}` (the next ranks); returns their ids.
fn gpus(tb: &mut TopologyBuilder, bx: usize, count: usize) -> Vec<usize> {
    let g = format!("box{bx}");
    (0..count).map(|i| tb.compute(format!("{g}.gpu{i}"), Some(&g))).collect()
}

/// Add box `bx`: 8 GPUs, each linked both ways to the box's NVSwitch `box{bx}.nvsw` with `p`.
fn nvswitch_box(tb: &mut TopologyBuilder, bx: usize, p: LinkParams) -> Vec<usize> {
    let ids = gpus(tb, bx, BOX_GPUS);
    let g = format!("box{bx}");
    let hub = tb.switch(format!("{g}.nvsw"), Some(&g));
    star(tb, hub, &ids, p);
    ids
}

/// Add box `bx`: K GPUs directly linked as the symmetric multiplicity matrix `m` says, the
/// pair (i, j) with `m[i][j]` x `p.bw` each way (parallel links merged).
fn matrix_box<const K: usize>(tb: &mut TopologyBuilder, bx: usize, m: &[[u8; K]; K], p: LinkParams) -> Vec<usize> {
    sub_matrix_box(tb, bx, m, K, p)
}

/// [`matrix_box`] with only GPUs `0..count` and the links among them (the induced subgraph).
fn sub_matrix_box<const K: usize>(
    tb: &mut TopologyBuilder,
    bx: usize,
    m: &[[u8; K]; K],
    count: usize,
    p: LinkParams,
) -> Vec<usize> {
    let ids = gpus(tb, bx, count);
    for i in 0..count {
        for j in i + 1..count {
            if m[i][j] > 0 {
                tb.bilink(ids[i], ids[j], p.bw * Rat::from_integer(m[i][j].into()), p.lat);
            }
        }
    }
    ids
}

/// `dgx-a100:N` (ForestColl's `a100_topology(n)`): per box 8 GPUs on an NVSwitch at 300 GB/s;
/// with N >= 2, GPU i has its own NIC `box{b}.nic{i}` (a switch) at 25 GB/s, linked at 25 GB/s
/// to the shared IB switch `ib{i mod 2}`. N = 1 has no NICs and no IB (GPU ingress 300, the
/// reference algbw 2400/7 needs that). Levels nvswitch/ib, 1 us each.
fn dgx_a100(s: &Spec) -> Result<Topology> {
    let n = boxes(s, "dgx-a100:N")?;
    let [nv, ib]: [LinkParams; 2] =
        s.link_params(&[LinkParams::new(300, 1.0), LinkParams::new(25, 1.0)])?.try_into().expect("2 levels");
    let mut tb = TopologyBuilder::new(&s.text);
    let mut nics = Vec::new();
    for bx in 0..n {
        let ids = nvswitch_box(&mut tb, bx, nv);
        if n >= 2 {
            for (i, &gpu) in ids.iter().enumerate() {
                let nic = tb.switch(format!("box{bx}.nic{i}"), Some(&format!("box{bx}")));
                tb.bilink(gpu, nic, ib.bw, ib.lat);
                nics.push((i, nic));
            }
        }
    }
    if n >= 2 {
        let rails = [tb.switch("ib0", None), tb.switch("ib1", None)];
        for (i, nic) in nics {
            tb.bilink(nic, rails[i % 2], ib.bw, ib.lat);
        }
    }
    tb.build()
}

/// `mi250:N` (ForestColl's `mi250_topology(n)`, simplified model): per cluster 16 GCDs joined
/// by xGMI links of 50 GB/s times [`MI250_XGMI`]'s multiplicity (7 links per GCD); with
/// N >= 2, every GCD links at 16 GB/s each way to the one shared switch `ib0`. Levels
/// xgmi/ib, 1 us each. `gcds=G` keeps GCDs 0..G-1 of each cluster and the xGMI links among
/// them (G = 8 is the paper's "MI250 8+8" of section 5.2: 1/x* = 1/13, 208 GB/s, k = 13); the
/// topology check rejects a G whose induced xGMI graph is disconnected (with N = 1).
fn mi250(s: &Spec) -> Result<Topology> {
    let n = boxes(s, "mi250:N")?;
    let gcds = s.check_range(s.int_option("gcds", 16)?, "gcds", 2, 16)?;
    let [xgmi, ib]: [LinkParams; 2] =
        s.link_params(&[LinkParams::new(50, 1.0), LinkParams::new(16, 1.0)])?.try_into().expect("2 levels");
    let mut tb = TopologyBuilder::new(&s.text);
    let all: Vec<usize> = (0..n).flat_map(|bx| sub_matrix_box(&mut tb, bx, &MI250_XGMI, gcds, xgmi)).collect();
    if n >= 2 {
        let hub = tb.switch("ib0", None);
        star(&mut tb, hub, &all, ib);
    }
    tb.build()
}

/// `dgx1`: one box of 8 V100 linked by [`DGX1_NVLINK`] NVLinks of 25 GB/s each way (6 per
/// GPU, 150 GB/s). One level, 1 us.
fn dgx1(s: &Spec) -> Result<Topology> {
    s.expect_args(0, 0, "dgx1 (no arguments)")?;
    let p = s.link_params(&[LinkParams::new(25, 1.0)])?[0];
    let mut tb = TopologyBuilder::new(&s.text);
    matrix_box(&mut tb, 0, &DGX1_NVLINK, p);
    tb.build()
}

/// `hgx-h100:N`: per box 8 GPUs on an NVSwitch at 450 GB/s each way (docs/contracts.md;
/// ASTRA-sim's configuration uses 400), latency 936.25 ns. With N >= 2 the network is rail-optimized:
/// GPU i's 50 GB/s NIC is modelled as a direct link (1 us) from the GPU to the shared rail
/// switch `rail{i}`. N = 1 has no rails. Levels nvswitch/ib.
fn hgx_h100(s: &Spec) -> Result<Topology> {
    let n = boxes(s, "hgx-h100:N")?;
    let nv_default = LinkParams { bw: Rat::from_integer(450), lat: 0.936_25 };
    let [nv, ib]: [LinkParams; 2] =
        s.link_params(&[nv_default, LinkParams::new(50, 1.0)])?.try_into().expect("2 levels");
    let mut tb = TopologyBuilder::new(&s.text);
    let boxes: Vec<Vec<usize>> = (0..n).map(|bx| nvswitch_box(&mut tb, bx, nv)).collect();
    if n >= 2 {
        for i in 0..BOX_GPUS {
            let rail = tb.switch(format!("rail{i}"), None);
            star(&mut tb, rail, &boxes.iter().map(|ids| ids[i]).collect::<Vec<_>>(), ib);
        }
    }
    tb.build()
}

#[cfg(test)]
mod tests;
