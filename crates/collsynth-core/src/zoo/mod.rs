//! The topology zoo: every family of the four papers, built from a spec string.
//!
//! One module per family group (like rustworkx's `generators/`); each family is a
//! [`Family`] entry with a builder function `fn(&Spec) -> Result<Topology>`. Expansion
//! expressions over specs (`line^k(..)`, `degree*n(..)`, `power^n(..)`, `product(..; ..)`)
//! are parsed by [`Expr`] and built by [`expand`].

pub mod expand;
pub mod spec;
pub mod symmetry;
pub mod transpose_iso;

mod clusters;
mod direct_connect;
mod drg;
mod imported;
mod machines;
mod rings;

pub use direct_connect::kautz_drops_loops;
pub use direct_connect::traff_skips;
pub use spec::{Expr, LinkParams, Spec};
pub use symmetry::vertex_transitive;

use crate::error::{CollsynthError, Result};
use crate::topology::Topology;

/// One family of the zoo, as listed by `collsynth topo list`.
pub struct Family {
    pub name: &'static str,
    /// Argument synopsis, e.g. `AxBx..`.
    pub args: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// Family-specific options besides `bw` and `lat`.
    pub options: &'static [&'static str],
    pub build: fn(&Spec) -> Result<Topology>,
}

/// Every family, in the order `topo list` shows them.
pub fn families() -> Vec<&'static Family> {
    let mut all: Vec<&'static Family> = Vec::new();
    for group in [
        rings::FAMILIES,
        direct_connect::FAMILIES,
        drg::FAMILIES,
        clusters::FAMILIES,
        machines::FAMILIES,
        imported::FAMILIES,
    ] {
        all.extend(group);
    }
    all
}

/// Build the topology a spec or an expansion expression describes (`ring:8`,
/// `torus:4x4x2,bw=50/50/25`, `line^2(power^2(diamond))`, ...). The topology is named after
/// the (normalised) text; a bad text is a BadInput error.
pub fn from_spec(text: &str) -> Result<Topology> {
    match Expr::parse(text)? {
        Expr::Spec(spec) => build_family(&spec),
        expr => expand::build(&expr),
    }
}

/// Build a plain zoo spec `family:args,...` with its family.
fn build_family(text: &str) -> Result<Topology> {
    let spec = Spec::parse(text)?;
    let family = families().into_iter().find(|f| f.name == spec.family).ok_or_else(|| {
        CollsynthError::bad(format!("unknown topology family '{}' (see `collsynth topo list`)", spec.family))
    })?;
    spec.check_options(family.options)?;
    (family.build)(&spec)
}

/// Node naming shared by the families: compute nodes `n0..`, grouped ones `g.n0`.
pub(crate) fn node_name(prefix: &str, i: usize) -> String {
    format!("{prefix}{i}")
}

#[cfg(test)]
pub(crate) mod testutil {
    use crate::topology::Topology;

    /// (N, min out-degree, max out-degree, diameter) of a spec.
    pub fn shape(spec: &str) -> (usize, usize, usize, usize) {
        let t: Topology = super::from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        let m = t.metrics().unwrap_or_else(|e| panic!("{spec}: {e}"));
        (m.n, m.min_degree, m.max_degree, m.diameter)
    }
}
