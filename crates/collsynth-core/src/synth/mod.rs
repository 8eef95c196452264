//! Synthesizers: free functions `fn(&Topology, Collective, &Request) -> Result<Schedule>`,
//! registered in [`algorithms`]. Choosing among them per size (`auto`) is the cost model's
//! job (`cost::tuning`), not a synthesizer's.

pub mod baselines;
pub mod bfb;
pub mod forestcoll;
pub mod tacos;
pub mod traff;

#[cfg(test)]
mod registry_tests;

use crate::error::{CollsynthError, Result};
use crate::ir::{Collective, Schedule};
use crate::topology::Topology;
use std::collections::BTreeMap;

/// What the user asked for besides topology and collective.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Root rank of broadcast / reduce.
    pub root: usize,
    /// Algorithm-specific options by name (`max-trees`, `seed`, ...), as written.
    pub options: BTreeMap<String, String>,
    /// The collective size M in bytes the schedule is for (`--size`), for algorithms whose
    /// result depends on it (TACOS's chunk size, the circulant block count); `None` = 1 GiB.
    pub size: Option<crate::rational::Rat>,
}

impl Request {
    pub fn option_usize(&self, key: &str, default: usize) -> Result<usize> {
        match self.options.get(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| CollsynthError::bad(format!("--{key}: '{v}' is not a whole number"))),
        }
    }
}

/// A registered algorithm.
pub struct Algorithm {
    pub name: &'static str,
    pub help: &'static str,
    pub collectives: &'static [Collective],
    /// Options it accepts (without `--`); any other option is an error.
    pub options: &'static [&'static str],
    pub synthesize: fn(&Topology, Collective, &Request) -> Result<Schedule>,
}

/// Every algorithm, in the order `compare` lists them.
pub fn algorithms() -> Vec<&'static Algorithm> {
    [forestcoll::ALGORITHMS, tacos::ALGORITHMS, traff::ALGORITHMS, bfb::ALGORITHMS, baselines::ALGORITHMS].concat()
}

pub fn find(name: &str) -> Result<&'static Algorithm> {
    algorithms().into_iter().find(|a| a.name == name).ok_or_else(|| {
        let names: Vec<&str> = algorithms().iter().map(|a| a.name).collect();
        CollsynthError::bad(format!("unknown algorithm '{name}' (available: {}, auto)", names.join(", ")))
    })
}

/// The algorithm named `algorithm`, after checking that it supports `collective`, that the
/// root is a rank and that every option of `req` applies to it (`BadInput` otherwise): what
/// [`run`] checks before synthesizing, and a `--time-only` path before computing.
pub fn checked(topo: &Topology, collective: Collective, algorithm: &str, req: &Request) -> Result<&'static Algorithm> {
    let alg = find(algorithm)?;
    if !alg.collectives.contains(&collective) {
        return Err(CollsynthError::bad(format!(
            "algorithm '{}' does not support {} (it supports: {})",
            alg.name,
            collective.name(),
            alg.collectives.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
        )));
    }
    if req.root >= topo.n_ranks() {
        return Err(CollsynthError::bad(format!("--root {} is not a rank (N = {})", req.root, topo.n_ranks())));
    }
    if let Some(k) = req.options.keys().find(|k| !alg.options.contains(&k.as_str())) {
        return Err(CollsynthError::bad(format!("option --{k} does not apply to algorithm '{}'", alg.name)));
    }
    Ok(alg)
}

/// Synthesize with one algorithm after [`checked`]. The result is NOT yet verified: callers
/// go through `crate::api::synthesize`, which verifies.
pub fn run(topo: &Topology, collective: Collective, algorithm: &str, req: &Request) -> Result<Schedule> {
    let alg = checked(topo, collective, algorithm, req)?;
    let mut s = (alg.synthesize)(topo, collective, req)?;
    let details = std::mem::take(&mut s.provenance.details);
    s.provenance = crate::ir::Provenance {
        algorithm: alg.name.to_string(),
        options: req.options.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        topology_hash: crate::ir::json::topology_hash(topo),
        details,
    };
    Ok(s)
}
