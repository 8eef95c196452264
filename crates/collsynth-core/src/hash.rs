//! The hasher of maps keyed by our own integers (ranks, pieces, channels, subproblems).
//!
//! SipHash, std's default, resists keys chosen by an attacker; ours come from a schedule
//! and are hashed in hot loops: in BFB's planner cache it cost a few percent of the whole
//! plan, in MSCCL's lowering a third of `collsynth export`'s time (perf, mi250:2's staggered
//! allreduce). Multiply-rotate per word (FxHash's scheme).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default)]
pub(crate) struct WordHasher(u64);

pub(crate) type Fast = BuildHasherDefault<WordHasher>;

/// A `HashMap` with [`Fast`].
pub(crate) type FastMap<K, V> = HashMap<K, V, Fast>;

/// A `HashSet` with [`Fast`].
pub(crate) type FastSet<K> = HashSet<K, Fast>;

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
