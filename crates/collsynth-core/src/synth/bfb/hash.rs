//! The hasher of the planner's cache of solved subproblems.

use std::hash::{BuildHasherDefault, Hasher};

/// The cache's hasher: subproblem keys are short integer vectors hashed once per (u, t), and
/// SipHash (the default, resistant to chosen keys, which these are not) cost a few percent of
/// the whole plan. Multiply-rotate per word (FxHash's scheme).
#[derive(Default)]
pub(super) struct WordHasher(u64);

pub(super) type Fast = BuildHasherDefault<WordHasher>;

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
