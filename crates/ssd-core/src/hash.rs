//! A fast, deterministic hasher for the simulator's integer-keyed maps (page
//! numbers, sectors, request tags). std's default SipHash is built to resist
//! chosen keys, which a simulator's own keys are not; it cost a fifth of a
//! file-level run's time in the page cache's lookups. The function is
//! rustc-hash's (FxHash: rotate, xor, multiply per word) with its final
//! rotation, which brings the product's well-mixed high bits down to the low
//! bits the table indexes by, so keys at a power-of-two stride (aligned
//! sectors, pages) still spread over every bucket. Nothing iterates these
//! maps in an order that reaches a result.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash over words, finished by a rotation (see the module docs).
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64);
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = self.0.wrapping_add(v).wrapping_mul(K);
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
/// A `HashSet` with [`FastHasher`].
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// Keys at a power-of-two stride reach every low-bit bucket.
    #[test]
    fn strided_keys_spread_over_the_low_bits() {
        let b = BuildHasherDefault::<FastHasher>::default();
        for stride in [1u64, 8, 256, 4096, 1 << 20] {
            let mut seen = [false; 256];
            for i in 0..4096u64 {
                seen[(b.hash_one(i * stride) & 255) as usize] = true;
            }
            let hit = seen.iter().filter(|&&s| s).count();
            assert!(hit >= 240, "stride {stride}: {hit} of 256 buckets");
        }
    }
}
