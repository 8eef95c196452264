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
    use super::super::from_spec;
    use super::super::testutil::shape;
    use crate::rational::{rat, Rat};

    /// Bandwidth of the link u -> v of a spec (None when absent).
    fn bw(spec: &str, u: usize, v: usize) -> Option<Rat> {
        let t = from_spec(spec).unwrap();
        t.link_between(u, v).map(|i| t.links[i].bandwidth)
    }

    #[test]
    fn rings() {
        assert_eq!(shape("ring:8"), (8, 1, 1, 7));
        assert_eq!(shape("biring:8"), (8, 2, 2, 4));
        assert_eq!(shape("biring:2"), (2, 1, 1, 1));
    }

    #[test]
    fn ring_multiplicity() {
        // UniRing(3,8): one link of 3 x bw per arc.
        assert_eq!(shape("ring:8,d=3"), (8, 1, 1, 7));
        assert_eq!((bw("ring:8,d=3", 7, 0), bw("ring:8,d=3", 0, 7)), (Some(rat(300)), None));
        assert_eq!(bw("ring:8,d=2,bw=25", 0, 1), Some(rat(50)));
        // BiRing(4,9): d/2 = 2 parallel links each way.
        assert_eq!(shape("biring:9,d=4"), (9, 2, 2, 4));
        assert_eq!((bw("biring:9,d=4", 0, 8), bw("biring:9,d=4", 0, 1)), (Some(rat(200)), Some(rat(200))));
        assert_eq!(bw("biring:8", 3, 4), Some(rat(100)));
        assert_eq!(bw("biring:2,d=4", 1, 0), Some(rat(200)));
    }

    #[test]
    fn twisted_tori() {
        // RTT(2), RTT(4), RTT(5) of Camara et al.
        assert_eq!(shape("twisted-torus:4x2"), (8, 4, 4, 2));
        assert_eq!(shape("twisted-torus:8x4"), (32, 4, 4, 4));
        assert_eq!(shape("twisted-torus:10x5"), (50, 4, 4, 5));
        // One below the plain torus (4x4: 4).
        assert_eq!(shape("twisted-torus:4x4"), (16, 4, 4, 3));
        // The twisted wrap (x, B-1) <-> (x + A/2, 0): n4 = (0,1) <-> n2 = (2,0) for 4x2.
        assert!(bw("twisted-torus:4x2", 4, 2).is_some() && bw("twisted-torus:4x2", 4, 0).is_some());
        assert!(bw("twisted-torus:4x2,twist=1", 4, 1).is_some() && bw("twisted-torus:4x2,twist=1", 4, 2).is_none());
        // A = 2: the x pair is one link pair; twist 1 makes K4.
        assert_eq!(shape("twisted-torus:2x2"), (4, 3, 3, 1));
        assert_eq!(from_spec("twisted-torus:8x4").unwrap().links.len(), 32 * 4);
    }

    #[test]
    fn hypercubes_and_hamming_graphs() {
        for n in 1..=6 {
            assert_eq!(shape(&format!("hypercube:{n}")), (1 << n, n, n, n), "hypercube:{n}");
        }
        assert_eq!(shape("hamming:2,3"), (9, 4, 4, 2));
        assert_eq!(shape("hamming:3,4"), (64, 9, 9, 3));
        assert_eq!(shape("hamming:1,5"), (5, 4, 4, 1));
        // Node v = (v mod 3, v div 3): 4 = (1,1) is adjacent to 3, 5, 1, 7.
        let t = from_spec("hamming:2,3").unwrap();
        assert_eq!(t.out_links(4).map(|i| t.links[i].dst).collect::<Vec<_>>(), [1, 3, 5, 7]);
        // bw= per dimension.
        assert_eq!(
            (bw("hypercube:2,bw=10/20", 0, 1), bw("hypercube:2,bw=10/20", 0, 2)),
            (Some(rat(10)), Some(rat(20)))
        );
        let (q4, h42) = (from_spec("hypercube:4").unwrap(), from_spec("hamming:4,2").unwrap());
        assert_eq!(q4.links, h42.links);
    }

    #[test]
    fn bad_specs_are_errors() {
        assert_eq!(from_spec("twisted-torus:5x2").unwrap_err().to_string(), "twisted-torus:5x2: A must be even, got 5");
        for bad in [
            "twisted-torus:5x2",
            "twisted-torus:4",
            "twisted-torus:4x2x2",
            "twisted-torus:4x1",
            "twisted-torus:4x2,twist=4",
            "twisted-torus:4x2,twist=0",
            "twisted-torus:4096x4096",
            "ring:8,d=0",
            "ring:8,twist=1",
            "biring:8,d=3",
            "biring:8,d=0",
            "hypercube:0",
            "hypercube:21",
            "hamming:2",
            "hamming:0,3",
            "hamming:2,1",
            "hamming:2,3,4",
            "hamming:2:3",
            "hamming:3,1048576",
            "torus:1048576x1048576x1048576x1048576",
        ] {
            assert!(from_spec(bad).is_err(), "{bad}");
        }
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
