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
use crate::ir::{Collective, Details, Schedule};
use crate::progress::Progress;
use crate::rational::Rat;
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
    pub size: Option<Rat>,
}

impl Request {
    pub fn option_usize(&self, key: &str, default: usize) -> Result<usize> {
        match self.options.get(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| CollsynthError::bad(format!("--{key}: '{v}' is not a whole number"))),
        }
    }
}

/// A registered algorithm: what the API, the binding and the CLI know of it. Adding one
/// means its own folder and one line in [`algorithms`]; nothing outside `synth` names it.
pub struct Algorithm {
    pub name: &'static str,
    pub help: &'static str,
    pub collectives: &'static [Collective],
    /// Options it accepts (without `--`), each described once in [`OPTIONS`]; any other
    /// option is an error.
    pub options: &'static [&'static str],
    pub synthesize: SynthesizeFn,
    /// What it offers beyond synthesis.
    pub extras: Extras,
}

/// Synthesis: the schedule, not yet verified (the API verifies).
pub type SynthesizeFn = fn(&Topology, Collective, &Request) -> Result<Schedule>;
/// See [`Extras::bound_hint`].
pub type BoundHintFn = fn(&Topology, Collective) -> Result<Option<Rat>>;
/// See [`Extras::time_only`].
pub type TimeOnlyFn = fn(&Topology, Collective, &Request) -> Result<TimeReport>;

/// The optional parts of an [`Algorithm`]; registrations start from [`Extras::NONE`].
#[derive(Clone, Copy)]
pub struct Extras {
    /// An achievable algbw (GB/s, exact) beyond the cut bound for this collective, which the
    /// bounds report next to it (`lp_algbw`: ForestColl's allreduce LP); `Ok(None)` when it
    /// has none here.
    pub bound_hint: Option<BoundHintFn>,
    /// How to make a smaller schedule when an exporter's limits refuse this one.
    pub shrink: Option<Shrink>,
    /// The collective's time without building the schedule (`synth --time-only`), at
    /// [`Request::size`].
    pub time_only: Option<TimeOnlyFn>,
    /// Progress of the running synthesis, polled by a bar.
    pub progress: Option<&'static Progress>,
    /// Its schedule depends on [`Request::size`] (TACOS's chunk costs, the circulant block
    /// count): sized exports synthesize it again per size range.
    pub sized: bool,
    /// Other option settings worth trying for time (`--tree-shape shallow`): `auto` and the
    /// size windows try each next to the request as given, unless the user set the option.
    pub forms: &'static [(&'static str, &'static str)],
}

impl Extras {
    pub const NONE: Extras =
        Extras { bound_hint: None, shrink: None, time_only: None, progress: None, sized: false, forms: &[] };
}

/// An option that trades quality for a smaller schedule (ForestColl's `max-trees`): when an
/// exporter refuses a schedule for its size, the API bisects the option's value from 1 to
/// one below the schedule's own (its detail `detail`) and keeps the largest that fits.
#[derive(Clone, Copy)]
pub struct Shrink {
    pub option: &'static str,
    pub detail: &'static str,
    /// How the note names what shrinks: the `what` with `detail` = k `unit`.
    pub what: &'static str,
    pub unit: &'static str,
}

/// An algorithm's own account of a collective's time, without the schedule.
#[derive(Debug, Clone)]
pub struct TimeReport {
    pub n_ranks: usize,
    pub time_us: f64,
    /// Which clock gave `time_us` (`alpha-beta`: the analytic model; `tacos`: its engine's).
    pub time_model: &'static str,
    /// Its other `--json` keys, in order.
    pub keys: Details,
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
    AlgorithmOption {
        name: "tree-shape",
        help: "budget (default), shallow: broadcasting trees as low as the optimum allows (switched fast path), or \
               shallow-all: reducing trees too, or boxes: one switch crossing per tree, low trees in each box \
               (identical boxes on one switch, such as mi250:2; not an optimum), or boxes-staggered: boxes with \
               the reduce-scatter's folds ordered so the switch crossings start early, or boxes-weighted: boxes \
               with the in-box trees' shares from an LP (--max-trees K: shares in units of 1/K, default 32)",
    },
    AlgorithmOption {
        name: "crossing",
        help: "where nccl-ring leaves a box: pxn (default, NCCL's: via the NIC the channel entered by) or rail \
               (each box's chain ends at a GPU whose own NIC reaches the next box's first)",
    },
    AlgorithmOption { name: "chunks-per-npu", help: "chunks each rank's shard is cut into (1..65536, default 1)" },
    AlgorithmOption { name: "seed", help: "seed of the random tie-breaking (whole number, default 0)" },
    AlgorithmOption { name: "restarts", help: "randomised runs, the fastest kept (at least 1, default 1)" },
    AlgorithmOption { name: "ranks", help: "synthesize on these ranks only, e.g. 0-3,8 (the rest only forward)" },
    AlgorithmOption {
        name: "switch-mode",
        help: "switches as shared ports (ports, default) or as links to the next D ranks (unwind:D)",
    },
    AlgorithmOption {
        name: "sampler",
        help: "TACOS chunk draws: lists (reference-identical), direct (fast at large fan-in) or auto (default)",
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
        name: "max-channels",
        help: "at most C channels, as NCCL_MAX_NCHANNELS caps them (whole number C >= 1)",
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
    check_root(topo, req.root)?;
    if let Some(k) = req.options.keys().find(|k| !alg.options.contains(&k.as_str())) {
        return Err(CollsynthError::bad(format!("option --{k} does not apply to algorithm '{}'", alg.name)));
    }
    Ok(alg)
}

/// `BadInput` unless `root` is a rank of `topo`: checked before any synthesizer runs (`auto`
/// would otherwise find that none applies, which hides the reason).
pub fn check_root(topo: &Topology, root: usize) -> Result<()> {
    if root >= topo.n_ranks() {
        return Err(CollsynthError::bad(format!("--root {root} is not a rank (N = {})", topo.n_ranks())));
    }
    Ok(())
}

/// Synthesize with one algorithm after [`checked`]. The result is NOT yet verified: callers
/// go through `crate::api::synthesize`, which verifies.
pub fn run(topo: &Topology, collective: Collective, algorithm: &str, req: &Request) -> Result<Schedule> {
    let alg = checked(topo, collective, algorithm, req)?;
    let mut s = (alg.synthesize)(topo, collective, req)?;
    let details = std::mem::take(&mut s.provenance.details);
    s.provenance = crate::ir::Provenance {
        executor: s.provenance.executor,
        algorithm: alg.name.to_string(),
        options: req.options.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        topology_hash: crate::ir::json::topology_hash(topo),
        details,
    };
    Ok(s)
}

#[cfg(test)]
mod tests;
