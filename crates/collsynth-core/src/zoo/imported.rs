//! Machines read from a runtime's own description: `nccl:FILE.xml*N,fabric=F` builds N
//! copies of an NCCL / RCCL topology dump joined by a fabric (crate::import does the work).

use super::{Family, LinkParams, Spec};
use crate::error::{CollsynthError, Result};
use crate::import::{self, ClusterSpec, Fabric};
use crate::topology::Topology;

pub(super) const FAMILIES: &[&Family] = &[&Family {
    name: "nccl",
    args: "FILE.xml[*N]",
    help: "an NCCL/RCCL topology dump (NCCL_TOPO_DUMP_FILE), N boxes; fabric=rails|switch|fat-tree (k=K); bw= fabric; lat= box/fabric",
    options: &["fabric", "k"],
    build: nccl,
}];

/// `FILE*N` -> (FILE, N); a plain `FILE` is one box.
fn path_and_boxes(s: &Spec) -> Result<(String, usize)> {
    s.expect_args(1, 1, "nccl:FILE.xml or nccl:FILE.xml*N (the path may hold no ':' or ',')")?;
    let arg = &s.args[0];
    if arg.len() != 1 {
        return Err(CollsynthError::bad(format!("{}: one file expected", s.text)));
    }
    match arg[0].rsplit_once('*') {
        Some((path, n)) => Ok((
            path.trim().to_string(),
            s.check_range(n.trim().parse().unwrap_or(0), "boxes N", 1, import::fabric::MAX_BOXES)?,
        )),
        None => Ok((arg[0].clone(), 1)),
    }
}

fn fabric(s: &Spec, boxes: usize) -> Result<Option<Fabric>> {
    let k = s.option("k");
    let text = match (s.option("fabric"), k) {
        (None, None) if boxes == 1 => return Ok(None),
        (None, None) => "rails".to_string(),
        (Some("fat-tree"), Some(k)) => format!("fat-tree:{k}"),
        (Some("fat-tree"), None) => return Err(CollsynthError::bad(format!("{}: fabric=fat-tree needs k=K", s.text))),
        (Some(f), None) => f.to_string(),
        (_, Some(_)) => return Err(CollsynthError::bad(format!("{}: k= applies to fabric=fat-tree only", s.text))),
    };
    Fabric::parse(&text).map(Some).map_err(|e| e.context(&s.text))
}

fn nccl(s: &Spec) -> Result<Topology> {
    let (path, boxes) = path_and_boxes(s)?;
    let fabric = fabric(s, boxes)?;
    let [inside, outside]: [LinkParams; 2] =
        s.uniform_params(2)?.try_into().map_err(|_| CollsynthError::internal("two levels"))?;
    let mut spec = ClusterSpec::single();
    spec.boxes = boxes;
    spec.fabric = fabric;
    if s.option("lat").is_some() {
        spec.box_latency = inside.lat;
        spec.fabric_latency = outside.lat;
    }
    if s.option("bw").is_some() {
        if s.option("bw").is_some_and(|v| v.contains('/')) {
            return Err(CollsynthError::bad(format!(
                "{}: bw= is the fabric bandwidth (one value; the box's come from the file)",
                s.text
            )));
        }
        spec.fabric_bandwidth = Some(outside.bw);
    }
    let text = import::read_file(&path)?;
    import::nccl_topology(&s.text, &text, &spec).map(|i| i.topology).map_err(|e| e.context(&path))
}
