//! Sub-collectives: the topology seen by a collective over a subset of the ranks. The other
//! compute nodes become forward-only switch nodes (they still carry traffic, they hold and
//! reduce nothing), so the IR, the verifier and the simulator work unchanged on the result.

use super::{NodeKind, Topology, TopologyBuilder};
use crate::error::{CollsynthError, Result};

/// `topo` with only `ranks` (ranks of `topo`, distinct, at least one) left as compute
/// nodes; node order is kept, so new rank i is the i-th smallest of `ranks`.
pub fn restrict_ranks(topo: &Topology, ranks: &[usize]) -> Result<Topology> {
    let n = topo.n_ranks();
    if ranks.is_empty() {
        return Err(CollsynthError::bad("--ranks: no rank given"));
    }
    let mut keep = vec![false; n];
    for &r in ranks {
        if r >= n {
            return Err(CollsynthError::bad(format!("--ranks: {r} is not a rank (N = {n})")));
        }
        if keep[r] {
            return Err(CollsynthError::bad(format!("--ranks: rank {r} is listed twice")));
        }
        keep[r] = true;
    }
    let mut list: Vec<usize> = ranks.to_vec();
    list.sort_unstable();
    let label = list.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(",");
    let mut b = TopologyBuilder::new(format!("{}[ranks={label}]", topo.name));
    for (v, node) in topo.nodes.iter().enumerate() {
        let kind = match topo.rank_of(v) {
            Some(r) if keep[r] => NodeKind::Compute,
            _ => NodeKind::Switch,
        };
        b.node(node.name.clone(), kind, node.group.as_deref());
    }
    for l in &topo.links {
        b.link(l.src, l.dst, l.bandwidth, l.latency);
    }
    b.build()
}

/// Parse `0,3,5` (or ranges `0-3`).
pub fn parse_ranks(text: &str) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    // Strict: `0-3,` or `,0-3` names an empty item, `0-3 ` a space, `+3` a sign.
    for item in text.split(',') {
        let bad = || CollsynthError::bad(format!("--ranks: {item:?} is not a rank or a range a-b"));
        let number = |s: &str| crate::units::whole_number(s).ok_or_else(bad);
        if let Some((a, b)) = item.split_once('-') {
            let (a, b) = (number(a)?, number(b)?);
            if a > b {
                return Err(bad());
            }
            // Every listed rank is checked against N later; first make sure the list fits.
            let count = (b - a) as u128 + 1 + out.len() as u128;
            crate::budget::check_memory(&format!("--ranks {text}"), Some(count), std::mem::size_of::<usize>() as u128)?;
            out.extend(a..=b);
        } else {
            out.push(number(item)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
