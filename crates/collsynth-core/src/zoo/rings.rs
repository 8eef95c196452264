//! Rings, grids and their relatives: `ring`, `biring`, `torus`, `mesh`, `twisted-torus`,
//! `hypercube`, `hamming`.

use super::direct_connect::{bad, check_nodes, from_edges};
use super::{node_name, Family, LinkParams, Spec};
use crate::error::Result;
use crate::rational::Rat;
use crate::topology::{Topology, TopologyBuilder};

pub(super) const FAMILIES: &[&Family] = &[
    &Family {
        name: "ring",
        args: "N",
        help: "unidirectional ring i -> i+1 (mod N); d= multiplicity (UniRing(d,N): d x bw)",
        options: &["d"],
        build: ring,
    },
    &Family {
        name: "biring",
        args: "N",
        help: "bidirectional ring i <-> i+1 (mod N); d= even degree (BiRing(d,N): d/2 x bw each way)",
        options: &["d"],
        build: biring,
    },
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
    &Family {
        name: "twisted-torus",
        args: "AxB",
        help: "rectangular twisted torus (Camara et al.; A even): y wraps to x + twist (default A/2)",
        options: &["twist"],
        build: twisted_torus,
    },
    &Family {
        name: "hypercube",
        args: "n",
        help: "binary hypercube Q_n = H(n,2): 2^n nodes, degree n, diameter n; bw= per dimension",
        options: &[],
        build: hypercube,
    },
    &Family {
        name: "hamming",
        args: "n,q",
        help: "Hamming graph H(n,q) = K_q^n: q^n nodes, degree n(q-1), diameter n; bw= per dimension",
        options: &[],
        build: hamming,
    },
];

/// Largest multiplicity `d=` of `ring` / `biring`.
const MAX_MULTIPLICITY: usize = 1 << 10;

/// `ring:N[,d=D]`: UniRing(d, N), the arc i -> i+1 (mod N) with multiplicity d, i.e. one link
/// of d x bw (parallel links merge). `ring:2` is one link pair.
fn ring(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "ring:N")?;
    let n = s.int(0, "N", 2, 1 << 20)?;
    let d = s.check_range(s.int_option("d", 1)?, "d (multiplicity)", 1, MAX_MULTIPLICITY)?;
    let p = s.uniform_params(1)?[0];
    let bw = p.bw * Rat::from_integer(d as i128);
    let mut b = TopologyBuilder::new(&s.text);
    let v: Vec<usize> = (0..n).map(|i| b.compute(node_name("n", i), None)).collect();
    for i in 0..n {
        b.link(v[i], v[(i + 1) % n], bw, p.lat);
    }
    b.build()
}

/// `biring:N[,d=D]`: BiRing(d, N), d even (default 2): i <-> i+1 (mod N), each direction with
/// multiplicity d/2 (one link of d/2 x bw). `biring:2` is one link pair of d/2 x bw, like a
/// size-2 torus dimension.
fn biring(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "biring:N")?;
    let n = s.int(0, "N", 2, 1 << 20)?;
    let d = s.check_range(s.int_option("d", 2)?, "d (degree)", 2, MAX_MULTIPLICITY)?;
    if d % 2 != 0 {
        return Err(bad(s, format!("d (degree) must be even, got {d}")));
    }
    let mut p = s.uniform_params(1)?;
    p[0].bw *= Rat::from_integer((d / 2) as i128);
    grid_with(s, &[n], true, &p)
}

fn torus(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "torus:AxBx..")?;
    grid(s, &s.dims(0, 1)?, true)
}

fn mesh(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "mesh:AxBx..")?;
    grid(s, &s.dims(0, 1)?, false)
}

/// `twisted-torus:AxB[,twist=T]`: the rectangular twisted torus of Camara et al.,
/// A even, B >= 2, 1 <= T < A (default A/2: RTT(a) is `twisted-torus:2axa`). Node (x, y) is
/// `n{x + A y}`; links (x,y) <-> (x+1 mod A, y) (one pair when A = 2), (x,y) <-> (x,y+1) for
/// y < B-1, and the twisted wrap (x,B-1) <-> (x+T mod A, 0). 4-regular for A >= 4.
fn twisted_torus(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "twisted-torus:AxB")?;
    let dims = s.dims(0, 2)?;
    let &[a, b] = dims.as_slice() else {
        return Err(bad(s, "expected two dimensions AxB"));
    };
    if a % 2 != 0 {
        return Err(bad(s, format!("A must be even, got {a}")));
    }
    let twist = s.check_range(s.int_option("twist", a / 2)?, "twist", 1, a - 1)?;
    check_nodes(s, a.saturating_mul(b), 4)?;
    let id = |x: usize, y: usize| x % a + a * y;
    let mut edges = Vec::new();
    for y in 0..b {
        for x in 0..a {
            if a > 2 || x == 0 {
                edges.push((id(x, y), id(x + 1, y)));
            }
            edges.push(if y + 1 < b { (id(x, y), id(x, y + 1)) } else { (id(x, y), id(x + twist, 0)) });
        }
    }
    from_edges(s, a * b, edges)
}

/// `hypercube:n` (1 <= n <= 20): Q_n = H(n, 2), node bits are the coordinates.
fn hypercube(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "hypercube:n")?;
    let n = s.int(0, "n", 1, 20)?;
    hamming_graph(s, n, 2)
}

/// `hamming:n,q` (n >= 1, q >= 2): H(n, q), vertices Z_q^n (coordinate k of node v is
/// (v / q^k) mod q), adjacent iff they differ in exactly one coordinate.
fn hamming(s: &Spec) -> Result<Topology> {
    s.expect_args(1, 1, "hamming:n,q")?;
    let v = s.ints(0, "n,q")?;
    let &[n, q] = v.as_slice() else {
        return Err(bad(s, "expected hamming:n,q"));
    };
    s.check_range(n, "n (dimensions)", 1, 20)?;
    s.check_range(q, "q (alphabet size)", 2, 1 << 20)?;
    hamming_graph(s, n, q)
}

/// H(n, q) with one `bw=`/`lat=` value per dimension; refuses more than 2^20 nodes or too
/// many links. Every link is one pair (no multi-edges), N = q^n, degree n(q-1).
fn hamming_graph(s: &Spec, n: usize, q: usize) -> Result<Topology> {
    let size = q.checked_pow(n as u32).unwrap_or(usize::MAX);
    check_nodes(s, size, n * (q - 1))?;
    let params = s.link_params(&vec![LinkParams::default(); n])?;
    let mut b = TopologyBuilder::new(&s.text);
    for i in 0..size {
        b.compute(node_name("n", i), None);
    }
    let mut stride = 1;
    for p in params {
        for v in 0..size {
            let base = v - (v / stride) % q * stride;
            for c in (0..q).map(|c| base + c * stride).filter(|&w| w != v) {
                b.link(v, c, p.bw, p.lat);
            }
        }
        stride *= q;
    }
    b.build()
}

/// A grid with `dims` (x fastest), bidirectional links between neighbours along each
/// dimension, wrapping around when `wrap`; `bw=`/`lat=` per dimension. A size-2 dimension
/// gets one link pair (not two parallel ones: Thm 13 of the direct-connect paper needs a simple graph), a
/// size-1 dimension none.
pub(super) fn grid(s: &Spec, dims: &[usize], wrap: bool) -> Result<Topology> {
    grid_with(s, dims, wrap, &s.link_params(&vec![LinkParams::default(); dims.len()])?)
}

/// [`grid`] with explicit link parameters, one per dimension.
fn grid_with(s: &Spec, dims: &[usize], wrap: bool, params: &[LinkParams]) -> Result<Topology> {
    let n = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).filter(|&n| n <= 1 << 22);
    let n = n.ok_or_else(|| bad(s, "too many nodes (at most 2^22)"))?;
    // Two links per node and dimension at most: 22 dimensions of 2 on 2^22 nodes are 10 GiB.
    let links = 2 * n as u128 * dims.iter().filter(|&&d| d >= 2).count() as u128;
    let each = 2 * std::mem::size_of::<crate::topology::Link>() as u128; // the builder's and the topology's
    crate::budget::check_memory(&format!("{}'s {links} links", s.text), Some(links), each)?;
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
mod tests;
