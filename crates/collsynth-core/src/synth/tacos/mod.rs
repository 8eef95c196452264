//! (in progress)

use super::Algorithm;

pub(crate) const ALGORITHMS: &[&Algorithm] = &[];
