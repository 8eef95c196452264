//! A small seeded PRNG (splitmix64): deterministic given `--seed`, no dependency.

#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5851_F42D_4C95_7F2D)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-high (bias below 2^-32 for our sizes).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// The seed of restart `i` for user seed `seed` (restart 0 uses `seed` itself).
pub fn restart_seed(seed: u64, i: usize) -> u64 {
    if i == 0 {
        seed
    } else {
        Rng::new(seed.wrapping_add(i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D)).next_u64()
    }
}

#[cfg(test)]
mod tests;
