//! Rings and grids: `ring`, `biring`, `torus`, `mesh`.

use super::{node_name, Family, LinkParams, Spec};
use crate::error::Result;
use crate::topology::{Topology, TopologyBuilder};

pub(super) const FAMILIES: &[&Family] = &[
    &Family { name: "ring", args: "N", help: "unidirectional ring i -> i+1 (mod N)", options: &[], build: ring },
    &Family { name: "biring", args: "N", help: "bidirectional ring i <-> i+1 (mod N)", options: &[], build: biring },
    &Family {
        name: "torus",
        args: "AxBx..",
        help: "torus of any dimensions (size-2 dimensions are one link pair); bw= per dimension",
        options: &[],
        build: torus,
    },
    &Family {
        name: "mesh",
        args: "AxBx..",
        help: "grid without wrap-around (TACOS 2D/3D mesh, its '3D hypercube'); bw= per dimension",
        options: &[],
        build: mesh,
    },
];

fn ring(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "ring:N")?;
    let n = s.int(0, "N", 2, 1 << 20)?;
    let p = s.uniform_params(1)?[0];
    let mut b = TopologyBuilder::new(&s.text);
    let v: Vec<usize> = (0..n).map(|i| b.compute(node_name("n", i), None)).collect();
    for i in 0..n {
        b.link(v[i], v[(i + 1) % n], p.bw, p.lat);
    }
    b.build()
}

fn biring(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "biring:N")?;
    let n = s.int(0, "N", 2, 1 << 20)?;
    grid(s, &[n], true)
}

fn torus(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "torus:AxBx..")?;
    grid(s, &s.dims(0, 1)?, true)
}

fn mesh(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "mesh:AxBx..")?;
    grid(s, &s.dims(0, 1)?, false)
}

/// A grid with `dims` (x fastest), bidirectional links between neighbours along each
/// dimension, wrapping around when `wrap`. A size-2 dimension gets one link pair (not two
/// parallel ones: erratum 2 of the direct-connect notes), a size-1 dimension none.
pub(super) fn grid(s: &Spec, dims: &[usize], wrap: bool) -> Result<Topology> {
    let params = s.link_params(&vec![LinkParams::default(); dims.len()])?;
    let n: usize = dims.iter().product();
    if n > 1 << 22 {
        return Err(crate::error::CollsynthError::bad(format!("{}: too many nodes ({n})", s.text)));
    }
    let mut b = TopologyBuilder::new(&s.text);
    for i in 0..n {
        b.compute(node_name("n", i), None);
    }
    let mut stride = 1;
    for (d, &size) in dims.iter().enumerate() {
        let p = params[d];
        for i in 0..n {
            let coord = (i / stride) % size;
            let last = coord + 1 == size;
            if size < 2 || (last && (!wrap || size == 2)) {
                continue;
            }
            let j = if last { i - coord * stride } else { i + stride };
            b.bilink(i, j, p.bw, p.lat);
        }
        stride *= size;
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::super::testutil::shape;

    #[test]
    fn rings() {
        assert_eq!(shape("ring:8"), (8, 1, 1, 7));
        assert_eq!(shape("biring:8"), (8, 2, 2, 4));
        assert_eq!(shape("biring:2"), (2, 1, 1, 1));
    }

    #[test]
    fn tori_have_closed_form_diameter() {
        for dims in [vec![4, 4], vec![4, 4, 2], vec![3, 5], vec![6, 5, 4], vec![2, 2, 2], vec![7]] {
            let spec = format!("torus:{}", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x"));
            let n: usize = dims.iter().product();
            let diam: usize = dims.iter().map(|d| d / 2).sum();
            let deg: usize = dims.iter().map(|&d| if d == 2 { 1 } else { 2 }).sum();
            assert_eq!(shape(&spec), (n, deg, deg, diam), "{spec}");
        }
    }

    #[test]
    fn meshes() {
        assert_eq!(shape("mesh:5x5"), (25, 2, 4, 8));
        assert_eq!(shape("mesh:3x4x5"), (60, 3, 6, 9));
        let t = super::super::from_spec("mesh:5x5").unwrap();
        assert_eq!(t.links.len(), 80);
        let t = super::super::from_spec("mesh:3x4x5").unwrap();
        assert_eq!(t.links.len(), 266);
    }
}
