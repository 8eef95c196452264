//! Synthesizers: free functions `fn(&Topology, Collective, &Request) -> Result<Schedule>`,
//! registered in [`algorithms`]. Choosing among them per size (`auto`) is the cost model's
//! job (`cost::tuning`), not a synthesizer's.

pub mod baselines;
pub mod bfb;
pub mod forestcoll;
pub mod nccl;
pub mod tacos;
pub mod traff;

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

/// One algorithm option (`--NAME VALUE` on the command line) and its one line of help: the
/// only place an option is described. An [`Algorithm`] lists the names it takes.
pub struct AlgorithmOption {
    pub name: &'static str,
    pub help: &'static str,
}

/// Every algorithm option, in the order the CLI shows them. `size` is absent on purpose: the
/// CLI's own `--size` fills [`Request::size`], which TACOS reads before its `size` option.
pub const OPTIONS: &[AlgorithmOption] = &[
    AlgorithmOption { name: "max-trees", help: "at most K spanning trees per root (whole number K >= 1)" },
    AlgorithmOption {
        name: "allreduce-lp",
        help: "solve the allreduce LP: auto (default), always or never (then reduce-scatter + allgather)",
    },
    AlgorithmOption { name: "chunks-per-npu", help: "chunks each rank's shard is cut into (1..65536, default 1)" },
    AlgorithmOption { name: "seed", help: "seed of the random tie-breaking (whole number, default 0)" },
    AlgorithmOption { name: "restarts", help: "randomised runs, the fastest kept (at least 1, default 1)" },
    AlgorithmOption { name: "ranks", help: "synthesize on these ranks only, e.g. 0-3,8 (the rest only forward)" },
    AlgorithmOption {
        name: "switch-mode",
        help: "switches as shared ports (ports, default) or as links to the next D ranks (unwind:D)",
    },
    AlgorithmOption { name: "blocks", help: "blocks the buffer is cut into (at least 1; default: the cost model's)" },
    AlgorithmOption {
        name: "counts",
        help: "allgatherv bytes per rank, comma-separated, zeros allowed (default: equal)",
    },
    AlgorithmOption { name: "chunks", help: "cut every shard into exactly P equal chunks (discrete chunked BFB)" },
    AlgorithmOption {
        name: "hetero",
        help: "1/true: balance link time with per-link latency and bandwidth (heterogeneous BFB)",
    },
    AlgorithmOption {
        name: "bi-method",
        help: "schedule of a bi(G) topology: auto (default), split (G -> G^T isomorphism) or union",
    },
    AlgorithmOption {
        name: "variant",
        help: "allreduce: census (latency-optimal) or rs-ag (bandwidth-optimal); default: the cost model's",
    },
];

/// The help line of option `name`; `None` for an option not in [`OPTIONS`].
pub fn option_help(name: &str) -> Option<&'static str> {
    OPTIONS.iter().find(|o| o.name == name).map(|o| o.help)
}

/// Every algorithm, in the order `compare` lists them.
pub fn algorithms() -> Vec<&'static Algorithm> {
    [
        forestcoll::ALGORITHMS,
        tacos::ALGORITHMS,
        traff::ALGORITHMS,
        bfb::ALGORITHMS,
        baselines::ALGORITHMS,
        nccl::ALGORITHMS,
    ]
    .concat()
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

#[cfg(test)]
mod tests;
